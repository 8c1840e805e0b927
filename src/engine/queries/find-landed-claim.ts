import type { Sql } from '../db/sql';
import type { ClaimRow } from './claim-message';
import { jobColumnsOf } from './job-row';

/**
 * A claim whose answer never came (its connection dropped, the server restarted) may
 * have committed: its row then holds the claim's token. Read back by that token, in
 * the claim's own shape — the job's columns only when the claim started it (RUNNING on
 * the attempt the claim counted), else `job_status` for the caller to decide, as after
 * a claim. FOR SHARE waits for a claim still running on the server with the row
 * locked, so its outcome is what is read; a claim that has not reached the row yet is
 * not seen (and, landing later, leaves the row to its lease). Nothing when the token
 * holds no row: the claim did not land.
 */
export async function findLandedClaim(sql: Sql, args: { outboxId: string; token: string }): Promise<ClaimRow | undefined> {
  const rows = await sql<ClaimRow>(
    `SELECT o.id AS claimed_outbox_id, o.processing_token AS claimed_token, o.processing_attempts, j.status AS job_status,
       j.cancel_requested_at IS NOT NULL AS job_cancel_requested, s.*
     FROM job_outbox o
     JOIN jobs j ON j.id = o.job_id
     LEFT JOIN LATERAL (
       SELECT ${jobColumnsOf('j')} WHERE j.status = 'RUNNING' AND j.attempts = o.processing_attempts
     ) s ON true
     WHERE o.id = $1 AND o.processing_token = $2 AND o.state = 'PROCESSING'
     FOR SHARE OF o`,
    [args.outboxId, args.token],
  );
  return rows[0];
}
