import type { Sql } from '../db/sql';

/**
 * Records that this attempt's processor returned, before its delivery is acknowledged
 * and while its completion is still to be written: the attempt is taken back from the
 * outbox row's count. Should the worker die before the completion commits, whatever
 * sends the job again (the lease rescuer, a copy's claim) counts the attempt anew and
 * reaches the same number, so a job whose last attempt succeeded runs again instead of
 * failing at the attempt limit. The completion adds the attempt back. Fenced by the
 * token; false when the lease is no longer ours. (The lease, and with it the attempt
 * count, needs no fsync: see EngineOptions.relaxedPool.)
 */
export async function spareAttempt(sql: Sql, args: { outboxId: string; token: string }): Promise<boolean> {
  const rows = await sql(
    `UPDATE job_outbox SET processing_attempts = processing_attempts - 1
     WHERE id = $1 AND state = 'PROCESSING' AND processing_token = $2
     RETURNING id`,
    [args.outboxId, args.token],
  );
  return rows.length > 0;
}
