/**
 * The kinds of job this service runs. The engine never names them: each domain
 * module registers its own kinds; this enum is the shared list the configuration,
 * the domain modules and the GraphQL API agree on. Everything else about a kind is
 * declared once, in `job-kind-descriptors.ts`.
 */
export enum JobKind {
  AUTOMATIC_SCHEDULE = 'AUTOMATIC_SCHEDULE',
  SCHEDULE_PUBLISH = 'SCHEDULE_PUBLISH',
  MAKEUP_EXAM_AUTO = 'MAKEUP_EXAM_AUTO',
}

export const ALL_JOB_KINDS: readonly JobKind[] = Object.values(JobKind);

/** One active job per `<scope>:<id>`: a second start while one is active is a CONFLICT. */
export interface ExclusiveKeyRule {
  /** What the key stands for, e.g. `schedule-plan`; no two kinds share a scope. */
  readonly scope: string;
  key(id: string): string;
}

export const exclusivePer = (scope: string): ExclusiveKeyRule => ({ scope, key: (id) => `${scope}:${id}` });
