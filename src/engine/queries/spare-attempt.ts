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
 *
 * At most MAX_SPARED_ATTEMPTS times per outbox row, or a job whose worker dies every time
 * between its processor's return and the commit (a result too large to write, say) would
 * run again for ever; once spent, false, and the runner holds the delivery until the
 * completion commits, so a further death counts the attempt and the job ends at the limit.
 */
export const MAX_SPARED_ATTEMPTS = 2;

export async function spareAttempt(sql: Sql, args: { outboxId: string; token: string }): Promise<boolean> {
  const rows = await sql(
    `UPDATE job_outbox SET processing_attempts = processing_attempts - 1, spared_attempts = spared_attempts + 1
     WHERE id = $1 AND state = 'PROCESSING' AND processing_token = $2 AND spared_attempts < $3
     RETURNING id`,
    [args.outboxId, args.token, MAX_SPARED_ATTEMPTS],
  );
  return rows.length > 0;
}
