import type { Sql } from '../db/sql';
import { jobColumnsOf, type JobRow } from './job-row';
import { leaseRanOut } from './lease-ran-out';

/** One rescued outbox row; `job` is the job as it is now when it went back to QUEUED. */
export interface RescuedLease {
  job_id: string;
  job: JobRow | null;
}

/**
 * Rows whose runner stopped heartbeating (process killed, host lost) go back to
 * PENDING so the publisher sends them again; their jobs wait as QUEUED, with a new
 * sequence, and come back whole so the caller can announce the change to watchers.
 * The next claim counts the attempt, so a job that kills its worker every time still
 * ends at the attempt limit — unless that attempt had been spared (spare-attempt.ts):
 * its processor had returned. Bounded by `limit` per call. SKIP LOCKED: a row a runner
 * is writing right now (a late heartbeat, a completion) is not expired for long.
 * Lock order: the outbox rows, then their jobs — the claim's order.
 */
export async function rescueExpiredLeases(sql: Sql, limit: number): Promise<RescuedLease[]> {
  const rows = await sql<{ job_id: string } & Partial<JobRow>>(
    `WITH expired AS (
       SELECT id FROM job_outbox
       WHERE stage = 'PROCESSING' AND ${leaseRanOut('job_outbox')}
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
         message_code = 'job.worker-lost', message_params = NULL,
         updated_at = now(), sequence = j.sequence + 1
       FROM rescued r WHERE j.id = r.job_id AND j.status = 'RUNNING'
       RETURNING ${jobColumnsOf('j')}
     )
     SELECT r.job_id, b.* FROM rescued r LEFT JOIN jobs_back b ON b.id = r.job_id`,
    [limit],
  );
  return rows.map(({ job_id, ...job }) => ({ job_id, job: job.id ? (job as JobRow) : null }));
}
