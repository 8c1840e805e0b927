/**
 * The kinds of job this service runs. The engine never names them: each domain
 * module registers its own kinds; this enum is the shared list the configuration,
 * the domain modules and the GraphQL API agree on.
 */
export enum JobKind {
  AUTOMATIC_SCHEDULE = 'AUTOMATIC_SCHEDULE',
  SCHEDULE_PUBLISH = 'SCHEDULE_PUBLISH',
  MAKEUP_EXAM_AUTO = 'MAKEUP_EXAM_AUTO',
}

export const ALL_JOB_KINDS: readonly JobKind[] = Object.values(JobKind);
