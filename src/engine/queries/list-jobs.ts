import type { Sql } from '../db/sql';
import { badInput } from '../errors';
import { JOB_COLUMNS, toSnapshot, type JobRow } from './job-row';
import type { JobSnapshot, JobStatus } from '../types';

/** Filters and window of one page of jobs, newest first by (created_at, id). */
export interface ListJobsRequest {
  /** Page size, 1–MAX_PAGE_SIZE. */
  first: number;
  /** An opaque cursor from a previous page (`endCursor`); the page starts after it. */
  after?: string | null;
  kinds?: readonly string[] | null;
  statuses?: readonly JobStatus[] | null;
  requestedBy?: string | null;
}

export interface ListJobsPage {
  jobs: { job: JobSnapshot; cursor: string }[];
  hasNextPage: boolean;
}

export const MAX_PAGE_SIZE = 200;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EXACT_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

interface CursorKey {
  /** created_at with microseconds, UTC (JavaScript dates hold only milliseconds). */
  t: string;
  id: string;
}

export function encodeJobCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(['j1', key.t, key.id]), 'utf8').toString('base64url');
}

/**
 * The shape alone lets "2024-13-45T25:61:61" through, which PostgreSQL refuses with a
 * database error: the date must exist (no rolling over into the next month) and its
 * year be one PostgreSQL has (there is no year 0).
 */
function isRealInstant(t: string): boolean {
  const millis = Date.parse(t.slice(0, 23) + 'Z');
  return Number.isFinite(millis) && Number(t.slice(0, 4)) >= 1 && new Date(millis).toISOString().slice(0, 23) === t.slice(0, 23);
}

export function decodeJobCursor(cursor: string): CursorKey {
  const refuse = () => badInput('The cursor "after" is not one this service gave out', { after: cursor });
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== 'j1') throw refuse();
  const [, t, id] = parsed as [string, unknown, unknown];
  if (typeof t !== 'string' || !EXACT_TIME.test(t) || !isRealInstant(t) || typeof id !== 'string' || !UUID.test(id)) throw refuse();
  return { t, id };
}

/**
 * One page of jobs, newest first, keyset-paginated on (created_at, id) — served by
 * jobs_created_at_index (and the kind/status and requested_by indexes for filters).
 */
export async function listJobs(sql: Sql, request: ListJobsRequest): Promise<ListJobsPage> {
  if (!Number.isInteger(request.first) || request.first < 1 || request.first > MAX_PAGE_SIZE) {
    throw badInput(`"first" must be an integer from 1 to ${MAX_PAGE_SIZE}`, { first: request.first });
  }
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (request.after) {
    const key = decodeJobCursor(request.after);
    where.push(`(created_at, id) < (${param(key.t)}::timestamptz, ${param(key.id)}::uuid)`);
  }
  if (request.kinds && request.kinds.length > 0) where.push(`kind = ANY(${param(request.kinds)}::text[])`);
  if (request.statuses && request.statuses.length > 0) where.push(`status = ANY(${param(request.statuses)}::text[])`);
  if (request.requestedBy != null) where.push(`requested_by = ${param(request.requestedBy)}`);
  const rows = await sql<JobRow & { cursor_time: string }>(
    `SELECT ${JOB_COLUMNS},
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_time
       FROM jobs
      ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY created_at DESC, id DESC
      LIMIT ${param(request.first + 1)}`,
    params,
  );
  const page = rows.slice(0, request.first);
  return {
    jobs: page.map((row) => ({ job: toSnapshot(row), cursor: encodeJobCursor({ t: row.cursor_time, id: row.id }) })),
    hasNextPage: rows.length > request.first,
  };
}

const BY_IDS_SQL = `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ANY($1::uuid[])`;

/** Jobs by id, in one query (for DataLoader); missing ids are absent from the result. */
export async function getJobsByIds(sql: Sql, ids: readonly string[]): Promise<JobSnapshot[]> {
  const valid = ids.filter((id) => UUID.test(id));
  if (valid.length === 0) return [];
  const rows = await sql<JobRow>(BY_IDS_SQL, [valid]);
  return rows.map(toSnapshot);
}
