import DataLoader from 'dataloader';
import type { Logger } from 'pino';
import type { JobEngine } from '../../engine/engine';
import type { JobEvent, JobSnapshot } from '../../engine/types';
import { DEFAULT_LOCALE, type Locale } from '../../i18n/locale';
import type { Viewer } from '../auth/viewer';
import { CostMeter } from './cost-meter';
import type { BacklogLimit } from './event-stream';
import type { JobEventHub } from './job-event-hub';

/**
 * What the domain modules' resolvers need besides the engine (services, the ORM…).
 * Extend this interface (declaration merging) and pass the values to `createGraphQLMount`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ApiServices {}

export interface ApiDependencies {
  engine: JobEngine;
  hub: JobEventHub;
  logger: Logger;
  services: ApiServices;
}

/** Per-request batching loaders (one per HTTP request or socket operation). */
export type Loaders = {
  job: DataLoader<string, JobSnapshot | null>;
};

/**
 * What a subscription keeps for a client that falls behind, and what is done once it is
 * too far behind: a `BacklogLimit` but for what its events are keyed by, which each
 * stream says.
 */
export type SubscriptionBacklog = Omit<BacklogLimit<JobEvent>, 'keyOf'>;

/** The resolver context. A `type`, not an `interface`, so graphql-ws accepts it. */
export type GraphQLContext = {
  viewer: Viewer | null;
  /** The language of the sentences the server writes for this request (steps, messages, errors). */
  locale: Locale;
  engine: JobEngine;
  hub: JobEventHub;
  logger: Logger;
  services: ApiServices;
  /** Per-execution state (loaders, and what domain modules key on them, like an EntityManager). */
  loaders: Loaders;
  /** Run-time charges of data-dependent fields, within what the operation's cost left. */
  cost: CostMeter;
  /** Socket operations only (subscriptions run nowhere else): the bound on a slow client's backlog. */
  backlog?: SubscriptionBacklog;
  /**
   * Starts a new execution on this context: fresh loaders and cost budget. An HTTP request is one
   * execution; a subscription keeps its context for hours and executes once per event,
   * so the socket server calls this after each event (`onNext` in mount.ts), or the
   * next event would show what an earlier one read.
   */
  newExecution(): void;
};

export function createLoaders(engine: JobEngine): Loaders {
  return {
    job: new DataLoader<string, JobSnapshot | null>(
      async (ids) => {
        const jobs = await engine.getJobs(ids);
        const byId = new Map(jobs.map((job) => [job.id as string, job]));
        // PostgreSQL compares uuids whatever their case and answers in lower case.
        return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
      },
      { maxBatchSize: 200 },
    ),
  };
}

export function createContext(deps: ApiDependencies, viewer: Viewer | null, locale: Locale = DEFAULT_LOCALE): GraphQLContext {
  // Loaders are made on first use: most socket operations (subscriptions) never need one.
  let loaders: Loaders | undefined;
  const cost = new CostMeter();
  return {
    viewer,
    locale,
    engine: deps.engine,
    hub: deps.hub,
    logger: deps.logger,
    services: deps.services,
    get loaders() {
      return (loaders ??= createLoaders(deps.engine));
    },
    cost,
    newExecution() {
      loaders = undefined;
      cost.reset();
    },
  };
}
