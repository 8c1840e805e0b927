import type { Sql } from '../db/sql';
import { JOB_COLUMNS, type JobRow } from './job-row';

const BY_ID_SQL = `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`;
const BY_IDEMPOTENCY_KEY_SQL = `SELECT ${JOB_COLUMNS} FROM jobs WHERE kind = $1 AND idempotency_key = $2`;
const BY_EXCLUSIVE_KEY_SQL = `SELECT ${JOB_COLUMNS} FROM jobs WHERE exclusive_key = $1`;

export async function getJob(sql: Sql, jobId: string): Promise<JobRow | undefined> {
  const rows = await sql<JobRow>(BY_ID_SQL, [jobId]);
  return rows[0];
}

export async function getJobByIdempotencyKey(sql: Sql, kind: string, key: string): Promise<JobRow | undefined> {
  const rows = await sql<JobRow>(BY_IDEMPOTENCY_KEY_SQL, [kind, key]);
  return rows[0];
}

export async function getActiveJobByExclusiveKey(sql: Sql, exclusiveKey: string): Promise<JobRow | undefined> {
  const rows = await sql<JobRow>(BY_EXCLUSIVE_KEY_SQL, [exclusiveKey]);
  return rows[0];
}
