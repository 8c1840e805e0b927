import type { Sql } from '../db/sql';
import { jobColumnsOf, type JobRow } from './job-row';

const CANCEL_SQL = `WITH target AS (
       SELECT j.id, j.status,
         EXISTS (SELECT 1 FROM job_outbox o WHERE o.job_id = j.id AND o.stage = 'PROCESSING' AND o.lease_expires_at >= now()) AS held
       FROM jobs j WHERE j.id = $1 AND j.status IN ('QUEUED', 'RUNNING')
       FOR UPDATE OF j
     ), outbox AS (
       UPDATE job_outbox o SET state = 'COMPLETED', processing_token = NULL, lease_expires_at = NULL,
         completed_at = now(), updated_at = now()
       FROM target t
       WHERE o.job_id = t.id AND t.status = 'QUEUED' AND NOT t.held AND o.stage <> 'COMPLETED'
     )
     UPDATE jobs j SET
       cancel_requested_at = coalesce(j.cancel_requested_at, now()),
       status = CASE WHEN t.status = 'QUEUED' AND NOT t.held THEN 'CANCELLED' ELSE j.status END,
       completed_at = CASE WHEN t.status = 'QUEUED' AND NOT t.held THEN now() ELSE j.completed_at END,
       exclusive_key = CASE WHEN t.status = 'QUEUED' AND NOT t.held THEN NULL ELSE j.exclusive_key END,
       message = CASE WHEN t.status = 'QUEUED' AND NOT t.held THEN 'Cancelled before it started' ELSE 'Cancellation requested' END,
       message_code = CASE WHEN t.status = 'QUEUED' AND NOT t.held THEN 'job.cancelled-before-start' ELSE 'job.cancel-requested' END,
       message_params = NULL,
       updated_at = now(), sequence = j.sequence + 1
     FROM target t WHERE j.id = t.id
     RETURNING ${jobColumnsOf('j')}`;

/**
 * A cancel request. A QUEUED job ends CANCELLED at once and its outbox row is
 * completed unless a runner holds it right now (then that runner sees the request).
 * A RUNNING job only gets `cancel_requested_at`: its runner aborts the processor's
 * signal and writes CANCELLED itself, fenced by its token.
 * Returns the job as it is after the request, or nothing if the job is terminal
 * or unknown.
 *
 * Run it in a transaction after `lockLiveOutbox` (as `JobEngine.cancel` does): this
 * statement locks the job row and then writes the outbox row, the reverse of the
 * claim's order, so the outbox row must already be ours.
 */
export async function cancelJob(sql: Sql, jobId: string): Promise<JobRow | undefined> {
  const rows = await sql<JobRow>(
    CANCEL_SQL,
    [jobId],
  );
  return rows[0];
}
