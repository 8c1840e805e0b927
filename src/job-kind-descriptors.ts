import { ENGINE_MESSAGES } from './engine/job-messages';
import type { KindDefaults, KindRegistration } from './engine/registry';
import { MAKEUP_EXAM_MESSAGES } from './exams/job-messages';
import { MAKEUP_EXAM_SESSION_KEY, makeupExamArrangementRegistration } from './exams/makeup-exam-arrangement';
import { MessageCatalogError, mergeCatalogs, type MessageCatalog } from './i18n/message-catalog';
import { JobKind, type ExclusiveKeyRule } from './job-kinds';
import { automaticScheduleRegistration, SCHEDULE_PLAN_KEY } from './scheduling/automatic-schedule';
import { AUTOMATIC_SCHEDULE_MESSAGES, SCHEDULE_PUBLISH_MESSAGES } from './scheduling/job-messages';
import { schedulePublishRegistration, TERM_PUBLISH_KEY } from './scheduling/schedule-publish';

/**
 * Everything about a job kind, in one place. The configuration reads `defaultConsumers`
 * (`JOB_CONSUMERS_<KIND>`), the composition root registers `registration` with the
 * engine, the API builds the kind's GraphQL object type from `graphql`, and the kind's
 * start function takes its exclusive key from the rule named here.
 *
 * Adding a kind: a value in `JobKind`, one entry below (the compiler refuses the list
 * without it), the domain module's registration factory, a line in the README's
 * configuration table. Nothing else names the kind.
 */
export interface JobKindDescriptor<K extends string = JobKind> {
  kind: K;
  /** Concurrent jobs of this kind per worker process unless `JOB_CONSUMERS_<KIND>` says otherwise (1–16). */
  defaultConsumers: number;
  /** Keeps one job of this kind active per scope; null when jobs may run side by side. */
  exclusiveKey: ExclusiveKeyRule | null;
  /** The GraphQL object type implementing `Job` for this kind. */
  graphql: { typeName: string; description: string };
  /** The domain module's engine registration, for the consumer count this process runs. */
  registration: (defaults: KindDefaults) => KindRegistration<any, any>;
  /**
   * Every step, message and failure code the kind's jobs may carry, with their sentences
   * in every locale (the API renders them in the request's language). Codes are the
   * domain's (`schedule.*`); `job.*` is the engine's own.
   */
  messages: MessageCatalog;
}

export type JobKindCatalog = { readonly [K in JobKind]: JobKindDescriptor<K> };

/** The one list of job kinds. A kind missing here, or listed under another kind's key, does not compile. */
export const JOB_KINDS: JobKindCatalog = {
  [JobKind.AUTOMATIC_SCHEDULE]: {
    kind: JobKind.AUTOMATIC_SCHEDULE,
    defaultConsumers: 2,
    exclusiveKey: SCHEDULE_PLAN_KEY,
    graphql: { typeName: 'AutomaticScheduleJob', description: 'Automatic course timetabling of a schedule plan.' },
    registration: (defaults) => automaticScheduleRegistration(defaults),
    messages: AUTOMATIC_SCHEDULE_MESSAGES,
  },
  [JobKind.SCHEDULE_PUBLISH]: {
    kind: JobKind.SCHEDULE_PUBLISH,
    defaultConsumers: 1,
    exclusiveKey: TERM_PUBLISH_KEY,
    graphql: { typeName: 'SchedulePublishJob', description: 'Publishing a timetable plan for a term.' },
    registration: (defaults) => schedulePublishRegistration(defaults),
    messages: SCHEDULE_PUBLISH_MESSAGES,
  },
  [JobKind.MAKEUP_EXAM_AUTO]: {
    kind: JobKind.MAKEUP_EXAM_AUTO,
    defaultConsumers: 2,
    exclusiveKey: MAKEUP_EXAM_SESSION_KEY,
    graphql: { typeName: 'MakeupExamAutoJob', description: 'Arranging make-up exams automatically.' },
    registration: (defaults) => makeupExamArrangementRegistration(defaults),
    messages: MAKEUP_EXAM_MESSAGES,
  },
};

/** A kind declared inconsistently: found when the service starts, before anything runs. */
export class JobKindDeclarationError extends Error {
  override readonly name = 'JobKindDeclarationError';
}

/**
 * The engine registrations of every kind in `catalog` (by default the service's), each
 * with its consumer count. Refuses a catalog with a kind wired to another kind's
 * registration (it would fail every enqueue with "Unknown job kind"), or whose GraphQL
 * type names or exclusive-key scopes collide (one kind would block another's jobs).
 */
export function jobKindRegistrations(
  consumers: Readonly<Record<string, number>>,
  catalog: Readonly<Record<string, JobKindDescriptor<string>>> = JOB_KINDS,
): KindRegistration<any, any>[] {
  checkJobKindCatalog(catalog);
  return Object.entries(catalog).map(([kind, descriptor]) => {
    const registration = descriptor.registration({ consumers: consumers[kind] ?? descriptor.defaultConsumers });
    if (registration.kind !== kind) throw new JobKindDeclarationError(`job kind ${kind} is declared with the registration of ${registration.kind}`);
    return registration;
  });
}

/**
 * Every message code a job of `catalog`'s kinds may carry (the engine's `job.*` and each
 * kind's), for rendering in any locale. Refuses a code two kinds declare differently
 * (a shared message is declared once and listed by both) or a kind's code under `job.`.
 */
export function jobMessageCatalog(catalog: Readonly<Record<string, JobKindDescriptor<string>>> = JOB_KINDS): MessageCatalog {
  for (const [kind, descriptor] of Object.entries(catalog)) {
    const reserved = Object.keys(descriptor.messages).find((code) => code.startsWith('job.'));
    if (reserved) throw new JobKindDeclarationError(`job kind ${kind} declares ${reserved}; codes under job. are the engine's`);
  }
  try {
    return mergeCatalogs(ENGINE_MESSAGES, ...Object.values(catalog).map((descriptor) => descriptor.messages));
  } catch (error) {
    if (error instanceof MessageCatalogError) throw new JobKindDeclarationError(error.message);
    throw error;
  }
}

export function checkJobKindCatalog(catalog: Readonly<Record<string, JobKindDescriptor<string>>>): void {
  jobMessageCatalog(catalog);
  const typeNames = new Map<string, string>();
  const scopes = new Map<string, string>();
  for (const [kind, descriptor] of Object.entries(catalog)) {
    if (descriptor.kind !== kind) throw new JobKindDeclarationError(`job kind ${kind} is declared as ${descriptor.kind}`);
    if (!Number.isInteger(descriptor.defaultConsumers) || descriptor.defaultConsumers < 1 || descriptor.defaultConsumers > 16) {
      throw new JobKindDeclarationError(`job kind ${kind}: defaultConsumers must be 1–16, not ${descriptor.defaultConsumers}`);
    }
    const { typeName } = descriptor.graphql;
    if (!/^[A-Z][A-Za-z0-9]*Job$/.test(typeName)) throw new JobKindDeclarationError(`job kind ${kind}: GraphQL type "${typeName}" must be a name ending in Job`);
    if (typeNames.has(typeName)) throw new JobKindDeclarationError(`job kinds ${typeNames.get(typeName)} and ${kind} share the GraphQL type ${typeName}`);
    typeNames.set(typeName, kind);
    const scope = descriptor.exclusiveKey?.scope;
    if (scope !== undefined) {
      if (scopes.has(scope)) throw new JobKindDeclarationError(`job kinds ${scopes.get(scope)} and ${kind} share the exclusive-key scope ${scope}`);
      scopes.set(scope, kind);
    }
  }
}
