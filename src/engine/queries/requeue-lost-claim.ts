import type { Sql } from '../db/sql';

/**
 * A runner found its lease gone (heartbeat or fenced completion matched no row). When
 * the claim itself was lost — it commits without fsync, so a database crash can undo
 * it — the row is back where it was before the claim: PUBLISHED (or PUBLISHING) with
 * the attempt count from before, while the broker no longer holds its message (the
 * delivery was, or is about to be, acknowledged). Sent again now, instead of waiting
 * for the republisher.
 *
 * Fencing: only a row nobody holds (not PROCESSING, not COMPLETED, not already PENDING)
 * and whose attempt count is below the claim's — a row the lease rescuer put back and
 * the publisher sent again keeps the count of the claim it rescued, so it is left to
 * the message already on its way; a row another runner claimed is PROCESSING.
 */
export async function requeueLostClaim(sql: Sql, args: { outboxId: string; claimedAttempt: number }): Promise<boolean> {
  const rows = await sql(
    `UPDATE job_outbox SET state = 'PENDING', available_at = now(), updated_at = now(),
       last_error = coalesce(last_error, 'The claim on this message was lost (a database restart undid it); sent again')
     WHERE id = $1 AND state IN ('PUBLISHING', 'PUBLISHED') AND processing_attempts < $2
     RETURNING id`,
    [args.outboxId, args.claimedAttempt],
  );
  return rows.length > 0;
}
