import type { Sql } from '../db/sql';

/**
 * Messages that left for the broker but were never picked up: PUBLISHING for too
 * long (the publisher died before the confirm) or PUBLISHED and due for too long
 * (the broker or an in-memory queue lost them). Back to PENDING; a duplicate
 * delivery is harmless because only one claim can win.
 *
 * PUBLISHED rows of the kinds in `backloggedKinds` are left alone at first: their
 * queue still holds messages, so a row waiting there is most likely a backlog, not a
 * loss, and a copy would only lengthen the queue. But a queue that never empties
 * would hide a lost message for ever, so once a row has waited `maxWaitSeconds` it
 * is sent again whatever the queue holds: a row still waiting in the queue then has
 * two copies, and the second finds it claimed or completed (one failed claim).
 */
export async function republishStranded(
  sql: Sql,
  args: { olderThanSeconds: number; limit: number; backloggedKinds?: readonly string[]; maxWaitSeconds: number },
): Promise<number> {
  const rows = await sql<{ id: string }>(
    `UPDATE job_outbox o SET state = 'PENDING', available_at = now(), updated_at = now()
     FROM (
       SELECT id FROM job_outbox
       WHERE stage = 'SENT'
         AND updated_at < now() - make_interval(secs => $1)
         AND available_at < now() - make_interval(secs => $1)
         AND (state = 'PUBLISHING' OR NOT (kind = ANY($3::text[]))
              OR (updated_at < now() - make_interval(secs => $4) AND available_at < now() - make_interval(secs => $4)))
       ORDER BY available_at LIMIT $2
       FOR UPDATE SKIP LOCKED
     ) stranded
     WHERE o.id = stranded.id
     RETURNING o.id`,
    [args.olderThanSeconds, args.limit, args.backloggedKinds ?? [], args.maxWaitSeconds],
  );
  return rows.length;
}
