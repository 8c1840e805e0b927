import type { Sql } from '../db/sql';

/**
 * Locks a job's live outbox row (there is at most one), inside the caller's
 * transaction, before it touches the job row. Every statement that writes both takes
 * the outbox row first — the claim, heartbeat, completion, release, rescue — so a
 * writer that starts from the job (cancel) must too: in the opposite order, a cancel
 * and a claim of the same job could each hold the lock the other waits for (40P01).
 */
export async function lockLiveOutbox(sql: Sql, jobId: string): Promise<void> {
  await sql(`SELECT id FROM job_outbox WHERE job_id = $1 AND stage <> 'COMPLETED' FOR UPDATE`, [jobId]);
}
