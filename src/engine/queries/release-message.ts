import type { Sql } from '../db/sql';
import { asJobText, OutboxState, type JobText } from '../types';
import { jobColumnsOf, type JobRow } from './job-row';

export const LAST_ERROR_MAX_LENGTH = 2000;

const RELEASE_SQL = `WITH released AS (
       UPDATE job_outbox SET state = $3, processing_token = NULL, lease_expires_at = NULL,
         last_error = coalesce(left($4, ${LAST_ERROR_MAX_LENGTH}), last_error),
         processing_attempts = processing_attempts - CASE WHEN $7 THEN 1 ELSE 0 END,
         available_at = now() + make_interval(secs => $5::double precision / 1000), updated_at = now()
       WHERE id = $1 AND state = 'PROCESSING' AND processing_token = $2
       RETURNING job_id
     )
     UPDATE jobs j SET status = 'QUEUED', message = $6, message_code = $8, message_params = $9::jsonb, updated_at = now(), sequence = j.sequence + 1
     FROM released r WHERE j.id = r.job_id AND j.status = 'RUNNING'
     RETURNING ${jobColumnsOf('j')}`;

/**
 * Release after a failed or interrupted attempt, fenced by the token. A retry goes back
 * to PENDING with `available_at` at the end of its back-off: the publisher sends it when
 * due, so the timer lives in PostgreSQL. A shutdown on a durable transport releases to
 * PUBLISHED instead (the delivery is handed back to the broker at once). The job waits
 * as QUEUED meanwhile. `refundAttempt` is for shutdown: a deploy should not use up a
 * job's attempts.
 */
export async function releaseMessage(
  sql: Sql,
  args: {
    outboxId: string;
    token: string;
    releaseTo: OutboxState.PUBLISHED | OutboxState.PENDING;
    error: string | null;
    retryInMs: number;
    message: string | JobText;
    refundAttempt: boolean;
  },
): Promise<JobRow | undefined> {
  const message = asJobText(args.message);
  const rows = await sql<JobRow>(
    RELEASE_SQL,
    [
      args.outboxId,
      args.token,
      args.releaseTo,
      args.error,
      args.retryInMs,
      message.text,
      args.refundAttempt,
      message.code,
      message.params ? JSON.stringify(message.params) : null,
    ],
  );
  return rows[0];
}
