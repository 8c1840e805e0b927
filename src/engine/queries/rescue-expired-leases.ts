import type { Sql } from '../db/sql';

/**
 * Rows whose runner stopped heartbeating (process killed, host lost) go back to
 * PENDING so the publisher sends them again; their jobs wait as QUEUED. The next
 * claim counts the attempt, so a job that kills its worker every time still ends
 * at the attempt limit. Bounded by `limit` per call.
 */
export async function rescueExpiredLeases(sql: Sql, limit: number): Promise<Array<{ job_id: string }>> {
  return sql<{ job_id: string }>(
    `WITH expired AS (
       SELECT id FROM job_outbox
       WHERE state = 'PROCESSING' AND lease_expires_at < now()
       ORDER BY lease_expires_at LIMIT $1
       FOR UPDATE SKIP LOCKED
     ), rescued AS (
       UPDATE job_outbox o SET state = 'PENDING', processing_token = NULL, lease_expires_at = NULL,
         last_error = coalesce(o.last_error, 'Lease expired: the worker stopped heartbeating'),
         available_at = now(), updated_at = now()
       FROM expired e WHERE o.id = e.id
       RETURNING o.job_id
     ), jobs_back AS (
       UPDATE jobs j SET status = 'QUEUED', message = 'The worker running this job stopped responding; it will be retried',
         updated_at = now(), sequence = j.sequence + 1
       FROM rescued r WHERE j.id = r.job_id AND j.status = 'RUNNING'
     )
     SELECT job_id FROM rescued`,
    [limit],
  );
}
