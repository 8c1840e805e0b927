import type { Sql } from '../db/sql';
import { JOB_COLUMNS, type JobRow } from './job-row';

export interface InsertJobArgs {
  jobId: string;
  outboxId: string;
  kind: string;
  input: unknown;
  requestedBy: string | null;
  idempotencyKey: string | null;
  exclusiveKey: string | null;
}

/**
 * The job row and its outbox row in one statement, inside the caller's transaction.
 * An idempotency key already used for this kind inserts nothing and returns no row
 * (the caller then reads the existing job). An active exclusive key raises 23505.
 */
export async function insertJob(sql: Sql, args: InsertJobArgs): Promise<JobRow | undefined> {
  const rows = await sql<JobRow>(
    `WITH job AS (
       INSERT INTO jobs (id, kind, status, input, requested_by, idempotency_key, exclusive_key, exclusive_scope, message, message_code)
       VALUES ($1, $2, 'QUEUED', $3::jsonb, $4, $5, $6, $6, 'Waiting for a worker', 'job.queued')
       ON CONFLICT (kind, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING ${JOB_COLUMNS}
     ), outbox AS (
       INSERT INTO job_outbox (id, job_id, kind, state)
       SELECT $7, job.id, job.kind, 'PENDING' FROM job
     )
     SELECT * FROM job`,
    [args.jobId, args.kind, JSON.stringify(args.input ?? null), args.requestedBy, args.idempotencyKey, args.exclusiveKey, args.outboxId],
  );
  return rows[0];
}
