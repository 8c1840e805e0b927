import type { Sql } from '../db/sql';
import { asJobText, JobStatus, type JobText } from '../types';
import { jobColumnsOf, type JobRow } from './job-row';
import { LAST_ERROR_MAX_LENGTH } from './release-message';

const FINISH_SQL = `WITH done AS (
       UPDATE job_outbox SET state = 'COMPLETED', processing_token = NULL, lease_expires_at = NULL,
         last_error = coalesce(left($10, ${LAST_ERROR_MAX_LENGTH}), last_error), completed_at = now(), updated_at = now()
       WHERE id = $1 AND state = 'PROCESSING' AND processing_token = $2
       RETURNING job_id
     )
     UPDATE jobs j SET status = $3, error_message = left($4, ${LAST_ERROR_MAX_LENGTH}), message = $5,
       error_code = $6, error_params = $7::jsonb, message_code = $8, message_params = $9::jsonb,
       completed_at = now(), updated_at = now(), exclusive_key = NULL, sequence = j.sequence + 1
     FROM done WHERE j.id = done.job_id AND j.status NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED')
     RETURNING ${jobColumnsOf('j')}`;

/**
 * Ends a claimed job as FAILED or CANCELLED: the outbox row is COMPLETED (nothing
 * more to deliver) and the job gets its final status, unless it is terminal already.
 * Fenced by the token like every write after the claim.
 */
export async function finishJob(
  sql: Sql,
  args: {
    outboxId: string;
    token: string;
    status: JobStatus.FAILED | JobStatus.CANCELLED;
    /** The failure's sentence, code and parameters (null for a cancellation): what the job's readers see. */
    error: string | JobText | null;
    /** The failure's cause for operators, kept in the outbox row's `last_error`; defaults to the sentence. */
    cause?: string;
    message: string | JobText;
  },
): Promise<JobRow | undefined> {
  const error = args.error === null ? null : asJobText(args.error);
  const message = asJobText(args.message);
  const rows = await sql<JobRow>(
    FINISH_SQL,
    [
      args.outboxId,
      args.token,
      args.status,
      error?.text ?? null,
      message.text,
      error?.code ?? null,
      jsonOrNull(error?.params),
      message.code,
      jsonOrNull(message.params),
      args.cause ?? error?.text ?? null,
    ],
  );
  return rows[0];
}

const jsonOrNull = (params: Readonly<Record<string, unknown>> | null | undefined): string | null => (params ? JSON.stringify(params) : null);

/** Completes an outbox row whose job is already terminal (nothing left to do). */
export async function completeOrphanMessage(sql: Sql, outboxId: string, token: string): Promise<void> {
  await sql(
    `UPDATE job_outbox SET state = 'COMPLETED', processing_token = NULL, lease_expires_at = NULL,
       completed_at = now(), updated_at = now()
     WHERE id = $1 AND state = 'PROCESSING' AND processing_token = $2`,
    [outboxId, token],
  );
}
