import type { Sql } from '../db/sql';
import { JOB_COLUMNS, type JobRow } from './job-row';

/**
 * Starts a new attempt series for a FAILED or CANCELLED job: the job goes back to
 * QUEUED (taking its exclusive key again) and gets a fresh outbox row, so the
 * attempt limit counts anew. Returns nothing when the job is not in a retryable
 * status. Raises 23505 when another job holds the exclusive key meanwhile.
 */
export async function retryJob(sql: Sql, args: { jobId: string; outboxId: string }): Promise<JobRow | undefined> {
  const rows = await sql<JobRow>(
    `WITH job AS (
       UPDATE jobs SET status = 'QUEUED', error_message = NULL, error_code = NULL, error_params = NULL, result = NULL, progress = 0,
         current_step = NULL, current_step_code = NULL,
         message = 'Retry requested; waiting for a worker', message_code = 'job.retry-requested', message_params = NULL, cancel_requested_at = NULL, completed_at = NULL,
         exclusive_key = exclusive_scope, attempts = 0, updated_at = now(), sequence = sequence + 1
       WHERE id = $1 AND status IN ('FAILED', 'CANCELLED')
       RETURNING ${JOB_COLUMNS}
     ), outbox AS (
       INSERT INTO job_outbox (id, job_id, kind, state) SELECT $2, job.id, job.kind, 'PENDING' FROM job
     )
     SELECT * FROM job`,
    [args.jobId, args.outboxId],
  );
  return rows[0];
}
