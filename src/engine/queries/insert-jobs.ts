import type { Sql } from '../db/sql';
import { JOB_COLUMNS, type JobRow } from './job-row';
import type { InsertJobArgs } from './insert-job';

/**
 * Many jobs and their outbox rows in one statement that commits on its own (the
 * enqueues of one turn, see `insertJobBatch`). A job whose idempotency key is already
 * used for its kind, or whose exclusive key is active — in the table or earlier in the
 * same batch — inserts nothing and returns no row: `ON CONFLICT DO NOTHING` without a
 * target, so that one taken key never fails the others. The caller reads why.
 * Rows come back in no particular order; match them by `id`.
 */
export async function insertJobs(sql: Sql, jobs: readonly InsertJobArgs[]): Promise<JobRow[]> {
  if (jobs.length === 0) return [];
  // One job: scalar parameters, whose plan PostgreSQL keeps; arrays would be planned on
  // every call, which only a batch should pay (see preparedLookup).
  if (jobs.length === 1) {
    const j = jobs[0]!;
    return sql<JobRow>(insertJobsSql(`SELECT $1::uuid, $2::uuid, $3::text, $4::jsonb, $5::text, $6::text, $7::text, 1`), [
      j.jobId,
      j.outboxId,
      j.kind,
      JSON.stringify(j.input ?? null),
      j.requestedBy,
      j.idempotencyKey,
      j.exclusiveKey,
    ]);
  }
  return sql<JobRow>(
    insertJobsSql(`SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY`),
    [
      jobs.map((j) => j.jobId),
      jobs.map((j) => j.outboxId),
      jobs.map((j) => j.kind),
      jobs.map((j) => JSON.stringify(j.input ?? null)),
      jobs.map((j) => j.requestedBy),
      jobs.map((j) => j.idempotencyKey),
      jobs.map((j) => j.exclusiveKey),
    ],
  );
}

/** The statement, given the rows to insert as (job_id, outbox_id, kind, input, requested_by, idempotency_key, exclusive_key, ord). */
const insertJobsSql = (rows: string) => `WITH req (job_id, outbox_id, kind, input, requested_by, idempotency_key, exclusive_key, ord) AS (
       ${rows}
     ), job AS (
       INSERT INTO jobs (id, kind, status, input, requested_by, idempotency_key, exclusive_key, exclusive_scope, message, message_code)
       SELECT job_id, kind, 'QUEUED', input, requested_by, idempotency_key, exclusive_key, exclusive_key, 'Waiting for a worker', 'job.queued'
         FROM req ORDER BY ord
       ON CONFLICT DO NOTHING
       RETURNING ${JOB_COLUMNS}
     ), outbox AS (
       INSERT INTO job_outbox (id, job_id, kind, state)
       SELECT req.outbox_id, job.id, job.kind, 'PENDING' FROM job JOIN req ON req.job_id = job.id
     )
     SELECT * FROM job`;
