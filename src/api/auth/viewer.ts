/**
 * Who is calling, as the API sees it: the token's subject (the jobs' `requestedBy`)
 * and what it may do. Built from a verified JWT only.
 */
export enum ApiRole {
  ADMIN = 'admin',
  SCHEDULER = 'scheduler',
  VIEWER = 'viewer',
}

/** A grant (scope or role) that lets a viewer read every job, not only its own. */
export const READ_ALL_JOBS_GRANT = 'jobs:read-all';

export interface Viewer {
  subject: string;
  roles: ReadonlySet<ApiRole>;
  /** Scopes from the `scope` (space-separated) or `scp` claims, and extra role strings. */
  grants: ReadonlySet<string>;
  /** Seconds since the epoch; the token is no good after it. */
  expiresAt: number | null;
}

/** Roles that may start, cancel and retry jobs and see every job. */
export const OPERATOR_ROLES: readonly ApiRole[] = [ApiRole.ADMIN, ApiRole.SCHEDULER];

export const isOperator = (viewer: Viewer): boolean => OPERATOR_ROLES.some((role) => viewer.roles.has(role));

export const canReadAllJobs = (viewer: Viewer): boolean => isOperator(viewer) || viewer.grants.has(READ_ALL_JOBS_GRANT);

/** Whether the viewer may see this job (otherwise it is reported as NOT_FOUND). */
export const canSeeJob = (viewer: Viewer, job: { requestedBy: string | null }): boolean =>
  canReadAllJobs(viewer) || (job.requestedBy !== null && job.requestedBy === viewer.subject);

export const isExpired = (viewer: Viewer, nowMs = Date.now()): boolean =>
  viewer.expiresAt !== null && viewer.expiresAt * 1000 <= nowMs;
