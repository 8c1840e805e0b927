import type { Sql } from '../db/sql';

export interface StartupRecoveryCounts {
  requeued: number;
  orphansCompleted: number;
  resent: number;
}

/**
 * Set-based repairs at start-up, each one statement — never a scan of history into
 * memory:
 *  - an active job with no live outbox row (NOT EXISTS) gets a fresh PENDING row.
 *    Processes that start together run this at once, and each one's NOT EXISTS sees
 *    the table before the others commit: the unique index on a job's live row
 *    (job_outbox_live_job_id_unique) makes the later insert wait for the earlier and
 *    then do nothing, so a job never gets two live rows. Rows go in job id order, so
 *    two recoveries wait on each other in one direction only (no deadlock);
 *  - a live outbox row whose job is already terminal is completed;
 *  - on a non-durable transport, what was PUBLISHING/PUBLISHED lived only in a
 *    process's memory: back to PENDING so it is sent again.
 */
export async function recoverOnStartup(sql: Sql, args: { durableTransport: boolean }): Promise<StartupRecoveryCounts> {
  const requeued = await sql(
    `INSERT INTO job_outbox (id, job_id, kind, state)
     SELECT gen_random_uuid(), j.id, j.kind, 'PENDING' FROM jobs j
     WHERE j.completed_at IS NULL AND j.status IN ('QUEUED', 'RUNNING')
       AND NOT EXISTS (SELECT 1 FROM job_outbox o WHERE o.job_id = j.id AND o.stage <> 'COMPLETED')
     ORDER BY j.id
     ON CONFLICT (job_id) WHERE stage <> 'COMPLETED' DO NOTHING
     RETURNING id`,
  );
  const orphans = await sql(
    `UPDATE job_outbox o SET state = 'COMPLETED', processing_token = NULL, lease_expires_at = NULL,
       completed_at = now(), updated_at = now()
     FROM jobs j
     WHERE o.job_id = j.id AND o.stage IN ('PENDING', 'SENT')
       AND j.status IN ('SUCCEEDED', 'FAILED', 'CANCELLED')
     RETURNING o.id`,
  );
  let resent: unknown[] = [];
  if (!args.durableTransport) {
    resent = await sql(
      `UPDATE job_outbox SET state = 'PENDING', updated_at = now()
       WHERE stage = 'SENT' RETURNING id`,
    );
  }
  return { requeued: requeued.length, orphansCompleted: orphans.length, resent: resent.length };
}
