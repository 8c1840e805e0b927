import type { Sql } from '../db/sql';
import { asJobText, type JobText } from '../types';
import { jobColumnsOf, type JobRow } from './job-row';

export interface TouchArgs {
  outboxId: string;
  token: string;
  leaseSeconds: number;
  /** The step's sentence and code; null leaves both as they are. */
  currentStep: string | JobText | null;
  progress: number | null;
  /** The message's sentence, code and parameters; null leaves all three as they are. */
  message: string | JobText | null;
}

/**
 * The heartbeat: extends the lease only while this runner still holds the row
 * (PROCESSING with its own token), and stores the job's latest step and progress.
 * No row back means the lease was lost: the caller must stop and write nothing more.
 * `cancel_requested_at` comes back with the job so a cancel from another process
 * is seen here at the latest. A step or message comes with its code and parameters, which
 * replace the old ones only when the sentence does.
 */
export async function touchJob(sql: Sql, args: TouchArgs): Promise<JobRow | undefined> {
  const step = args.currentStep === null ? null : asJobText(args.currentStep);
  const message = args.message === null ? null : asJobText(args.message);
  const rows = await sql<JobRow>(
    `WITH hb AS (
       UPDATE job_outbox SET lease_expires_at = now() + make_interval(secs => $3), updated_at = now()
       WHERE id = $1 AND state = 'PROCESSING' AND processing_token = $2
       RETURNING job_id
     )
     UPDATE jobs j SET sequence = j.sequence + 1, updated_at = now(),
       current_step = coalesce($4, j.current_step),
       current_step_code = CASE WHEN $4::text IS NULL THEN j.current_step_code ELSE $7 END,
       progress = coalesce($5::double precision, j.progress),
       message = coalesce($6, j.message),
       message_code = CASE WHEN $6::text IS NULL THEN j.message_code ELSE $8 END,
       message_params = CASE WHEN $6::text IS NULL THEN j.message_params ELSE $9::jsonb END
     FROM hb WHERE j.id = hb.job_id AND j.status = 'RUNNING'
     RETURNING ${jobColumnsOf('j')}`,
    [
      args.outboxId,
      args.token,
      args.leaseSeconds,
      step?.text ?? null,
      args.progress,
      message?.text ?? null,
      step?.code ?? null,
      message?.code ?? null,
      message?.params ? JSON.stringify(message.params) : null,
    ],
  );
  return rows[0];
}
