import type { Sql } from '../db/sql';
import { jobColumnsOf, type JobRow } from './job-row';

export interface TouchArgs {
  outboxId: string;
  token: string;
  leaseSeconds: number;
  currentStep: string | null;
  progress: number | null;
  message: string | null;
}

/**
 * The heartbeat: extends the lease only while this runner still holds the row
 * (PROCESSING with its own token), and stores the job's latest step and progress.
 * No row back means the lease was lost: the caller must stop and write nothing more.
 * `cancel_requested_at` comes back with the job so a cancel from another process
 * is seen here at the latest.
 */
export async function touchJob(sql: Sql, args: TouchArgs): Promise<JobRow | undefined> {
  const rows = await sql<JobRow>(
    `WITH hb AS (
       UPDATE job_outbox SET lease_expires_at = now() + make_interval(secs => $3), updated_at = now()
       WHERE id = $1 AND state = 'PROCESSING' AND processing_token = $2
       RETURNING job_id
     )
     UPDATE jobs j SET sequence = j.sequence + 1, updated_at = now(),
       current_step = coalesce($4, j.current_step),
       progress = coalesce($5::double precision, j.progress),
       message = coalesce($6, j.message)
     FROM hb WHERE j.id = hb.job_id AND j.status = 'RUNNING'
     RETURNING ${jobColumnsOf('j')}`,
    [args.outboxId, args.token, args.leaseSeconds, args.currentStep, args.progress, args.message],
  );
  return rows[0];
}
