import type { Pool } from 'pg';
import { poolSql } from './db/sql';
import { messagingFigures, type BacklogRow } from './queries/messaging-health';
import type { EventBus } from './events/event-bus';
import type { ConnectionState, JobTransport } from './transport/transport';
import { OutboxState } from './types';

/** A queued job waiting longer than this makes the service DEGRADED. */
export const OLDEST_WAITING_DEGRADED_SECONDS = 300;

/**
 * How long one check's result answers every caller. A check runs the backlog queries
 * (counts over the live outbox: the bigger the backlog, the dearer) and asks the broker;
 * /health/ready answers anyone, and a viewer may ask `messagingHealth` under twenty
 * aliases a request — one check per asker would let a flood of them take the database
 * from the jobs. A prober that asks every few seconds still sees a fresh result.
 */
export const HEALTH_RESULT_REUSE_MS = 1_000;

export enum HealthStatus {
  HEALTHY = 'HEALTHY',
  /** Works, but something needs a look (see `problems`). */
  DEGRADED = 'DEGRADED',
  /** The database is unreachable or the transport is disconnected. */
  UNHEALTHY = 'UNHEALTHY',
}

export interface MessagingHealth {
  status: HealthStatus;
  /** Why the status is not HEALTHY, in words. */
  problems: string[];
  /** `parked`: messages in the parked queue (null while the transport cannot tell). */
  transport: { name: string; durable: boolean; connection: ConnectionState; parked: number | null };
  eventBus: { name: string; connection: ConnectionState };
  database: { reachable: boolean };
  backlog: { byState: Record<string, number>; byKind: BacklogRow[] };
  expiredLeases: number;
  oldestQueuedJobAgeSeconds: number | null;
  oldestPendingMessageAgeSeconds: number | null;
  checkedAt: Date;
}

const BACKLOG_STATES = [OutboxState.PENDING, OutboxState.PUBLISHING, OutboxState.PUBLISHED, OutboxState.PROCESSING];

/** A driver or server error code (ECONNREFUSED, 57P01…): says what kind of failure without the text, which may name hosts or SQL. */
const describeFailure = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? code : 'see the log';
};

/**
 * The figures /health/messaging and `messagingHealth` report. `problems` are the
 * service's own words: a failed database query is reported by its code only (the
 * reports reach callers that must not see connection details), and its whole error
 * goes to `onDatabaseError` (the log).
 */
export async function checkMessagingHealth(
  pool: Pool,
  transport: JobTransport,
  bus: EventBus,
  onDatabaseError: (error: unknown) => void = () => undefined,
): Promise<MessagingHealth> {
  const connection = transport.connectionState();
  const busConnection = bus.connectionState();
  const problems: string[] = [];
  const byState: Record<string, number> = Object.fromEntries(BACKLOG_STATES.map((s) => [s, 0]));
  let figures;
  const parkedCount = transport.parked().catch(() => null);
  try {
    figures = await messagingFigures(poolSql(pool));
  } catch (error) {
    onDatabaseError(error);
    problems.push(`database unreachable (${describeFailure(error)})`);
  }
  const parked = await parkedCount;
  if (connection !== 'connected') problems.push(`transport ${transport.name} is ${connection}`);
  if (transport.publishBlocked()) {
    problems.push(`transport ${transport.name} is blocked by a broker resource alarm (memory or disk): publishes wait and are refused until it clears; consuming goes on`);
  }
  if (parked) problems.push(`${parked} message(s) parked as malformed or misrouted; they will not run: inspect them, then delete them`);
  // Events only feed live views; a bus that is down degrades, it does not stop jobs.
  if (busConnection !== 'connected') problems.push(`event bus ${bus.name} is ${busConnection}`);
  if (figures) {
    for (const row of figures.backlog) byState[row.state] = (byState[row.state] ?? 0) + row.count;
    if (figures.expiredLeases > 0) problems.push(`${figures.expiredLeases} message(s) hold an expired lease`);
    if ((figures.oldestQueuedJobAgeSeconds ?? 0) > OLDEST_WAITING_DEGRADED_SECONDS) {
      problems.push(`the oldest queued job has waited ${Math.round(figures.oldestQueuedJobAgeSeconds!)} s`);
    }
  }
  const unhealthy = !figures || connection === 'disconnected' || connection === 'closed';
  return {
    status: unhealthy ? HealthStatus.UNHEALTHY : problems.length > 0 ? HealthStatus.DEGRADED : HealthStatus.HEALTHY,
    problems,
    transport: { name: transport.name, durable: transport.durable, connection, parked },
    eventBus: { name: bus.name, connection: busConnection },
    database: { reachable: figures !== undefined },
    backlog: { byState, byKind: figures?.backlog ?? [] },
    expiredLeases: figures?.expiredLeases ?? 0,
    oldestQueuedJobAgeSeconds: figures?.oldestQueuedJobAgeSeconds ?? null,
    oldestPendingMessageAgeSeconds: figures?.oldestPendingMessageAgeSeconds ?? null,
    checkedAt: new Date(),
  };
}

/**
 * One check at a time, its result shared: a caller gets the check in flight if there is
 * one, else the last result while it ended less than HEALTH_RESULT_REUSE_MS ago (its
 * `checkedAt` says when), else a new check.
 */
export class SharedHealthCheck {
  private last: Promise<MessagingHealth> | null = null;
  /** When the last check ended; null while it runs. */
  private endedAt: number | null = null;

  constructor(
    private readonly check: () => Promise<MessagingHealth>,
    private readonly reuseMs = HEALTH_RESULT_REUSE_MS,
  ) {}

  current(): Promise<MessagingHealth> {
    if (this.last && (this.endedAt === null || Date.now() - this.endedAt < this.reuseMs)) return this.last;
    this.endedAt = null;
    const check = this.check();
    this.last = check;
    const ended = () => {
      if (this.last === check) this.endedAt = Date.now();
    };
    check.then(ended, ended);
    return check;
  }
}
