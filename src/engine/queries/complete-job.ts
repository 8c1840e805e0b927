import type { Sql } from '../db/sql';
import { jobColumnsOf, type JobRow } from './job-row';

/**
 * Success: the outbox row COMPLETED and the job SUCCEEDED with its result, fenced by
 * the token — a runner whose lease was stolen gets no row back and changes nothing.
 * The exclusive key is cleared so the next job for the same plan or term may start.
 */
export async function completeJob(
  sql: Sql,
  args: { outboxId: string; token: string; result: unknown; message: string | null; currentStep?: string | null },
): Promise<JobRow | undefined> {
  const rows = await sql<JobRow>(
    `WITH done AS (
       UPDATE job_outbox SET state = 'COMPLETED', processing_token = NULL, lease_expires_at = NULL,
         completed_at = now(), updated_at = now()
       WHERE id = $1 AND state = 'PROCESSING' AND processing_token = $2
       RETURNING job_id
     )
     UPDATE jobs j SET status = 'SUCCEEDED', progress = 1, result = $3::jsonb, message = coalesce($4, 'Completed'), current_step = coalesce($5, j.current_step),
       error_message = NULL, completed_at = now(), updated_at = now(), exclusive_key = NULL, sequence = j.sequence + 1
     FROM done WHERE j.id = done.job_id AND j.status = 'RUNNING'
     RETURNING ${jobColumnsOf('j')}`,
    [args.outboxId, args.token, JSON.stringify(args.result ?? null), args.message, args.currentStep ?? null],
  );
  return rows[0];
}
