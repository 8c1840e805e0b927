import type { Sql } from '../db/sql';

/** One batch of completed outbox rows past retention, oldest first (served by job_outbox_completed_index, whose predicate is on `stage`). */
export async function deleteCompletedBatch(sql: Sql, args: { retentionDays: number; batchSize: number }): Promise<number> {
  const rows = await sql<{ id: string }>(
    `DELETE FROM job_outbox WHERE id IN (
       SELECT id FROM job_outbox
       WHERE stage = 'COMPLETED' AND completed_at < now() - make_interval(days => $1)
       ORDER BY completed_at LIMIT $2
       FOR UPDATE SKIP LOCKED
     ) RETURNING id`,
    [args.retentionDays, args.batchSize],
  );
  return rows.length;
}
