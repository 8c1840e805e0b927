import type { Sql } from '../db/sql';

export interface PublishableRow {
  id: string;
  job_id: string;
  kind: string;
}

/**
 * Moves up to `limit` due PENDING rows to PUBLISHING. SKIP LOCKED lets several
 * publishers (one per process) share the table without waiting on each other. Asks by
 * `stage` (PENDING is a stage of its own), the predicate of job_outbox_pending_index.
 */
export async function claimForPublish(sql: Sql, limit: number): Promise<PublishableRow[]> {
  return sql<PublishableRow>(
    `UPDATE job_outbox o SET state = 'PUBLISHING', updated_at = now()
     FROM (
       SELECT id FROM job_outbox
       WHERE stage = 'PENDING' AND available_at <= now()
       ORDER BY available_at, created_at
       LIMIT $1
       FOR UPDATE SKIP LOCKED
     ) due
     WHERE o.id = due.id
     RETURNING o.id, o.job_id, o.kind`,
    [limit],
  );
}

/** When the next PENDING row falls due (for the publisher's timer), or null if none waits. */
export async function nextPendingDueAt(sql: Sql): Promise<Date | null> {
  const rows = await sql<{ due: Date | null }>(
    `SELECT min(available_at) AS due FROM job_outbox WHERE stage = 'PENDING'`,
  );
  return rows[0]?.due ?? null;
}
