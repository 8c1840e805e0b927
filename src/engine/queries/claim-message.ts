import type { Sql } from '../db/sql';
import { jobColumnsOf, type JobRow } from './job-row';

export type ClaimRow = { processing_attempts: number; job_status: string | null } & Partial<JobRow>;

/**
 * The claim: one conditional UPDATE gives the row a fresh token and lease and counts
 * the attempt — only if nobody holds it (PENDING/PUBLISHING/PUBLISHED) or the
 * holder's lease has expired. Exactly one concurrent claimer gets a row back.
 * In the same statement the job turns RUNNING, unless it is over the attempt
 * limit, already terminal or asked to cancel (then `id` is null and the caller
 * decides from `processing_attempts` and `job_status`).
 */
export async function claimMessage(
  sql: Sql,
  args: { outboxId: string; token: string; leaseSeconds: number; attemptLimit: number },
): Promise<ClaimRow | undefined> {
  const rows = await sql<ClaimRow>(
    `WITH claimed AS (
       UPDATE job_outbox
       SET state = 'PROCESSING', processing_token = $2,
           lease_expires_at = now() + make_interval(secs => $3),
           processing_attempts = processing_attempts + 1, last_error = NULL, updated_at = now()
       WHERE id = $1
         AND (state IN ('PENDING', 'PUBLISHING', 'PUBLISHED')
              OR (state = 'PROCESSING' AND lease_expires_at < now()))
       RETURNING job_id, processing_attempts
     ), started AS (
       UPDATE jobs j
       SET status = 'RUNNING', attempts = c.processing_attempts,
           started_at = coalesce(j.started_at, now()), updated_at = now(), sequence = j.sequence + 1,
           message = CASE WHEN c.processing_attempts > 1 THEN 'Attempt ' || c.processing_attempts || ' started' ELSE 'Started' END
       FROM claimed c
       WHERE j.id = c.job_id AND j.status IN ('QUEUED', 'RUNNING')
         AND j.cancel_requested_at IS NULL AND c.processing_attempts <= $4
       RETURNING ${jobColumnsOf('j')}
     )
     SELECT c.processing_attempts,
       -- only looked up when the job did not start (CASE evaluates the sub-query lazily)
       CASE WHEN s.id IS NULL THEN (SELECT status FROM jobs WHERE id = c.job_id) ELSE s.status END AS job_status,
       s.*
     FROM claimed c LEFT JOIN started s ON true`,
    [args.outboxId, args.token, args.leaseSeconds, args.attemptLimit],
  );
  return rows[0];
}

/** What a losing claimer needs to decide: is the message done, or held by a live lease? */
export async function getOutboxState(
  sql: Sql,
  outboxId: string,
): Promise<{ state: string; lease_ms_left: number | null } | undefined> {
  const rows = await sql<{ state: string; lease_ms_left: number | null }>(
    `SELECT state, (extract(epoch FROM (lease_expires_at - now())) * 1000)::float8 AS lease_ms_left
     FROM job_outbox WHERE id = $1`,
    [outboxId],
  );
  return rows[0];
}
