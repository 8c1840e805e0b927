import type { Sql } from '../db/sql';

export interface BacklogRow {
  state: string;
  kind: string;
  count: number;
}

export interface MessagingFigures {
  backlog: BacklogRow[];
  expiredLeases: number;
  oldestQueuedJobAgeSeconds: number | null;
  oldestPendingMessageAgeSeconds: number | null;
}

/**
 * The health figures in one round trip; each sub-query is served by a partial index.
 * Waits count from when a message became due (`available_at`: its enqueue, or the end of
 * its retry back-off), and only messages due now: a job back in the queue for a retry
 * after a ten-minute attempt has not waited ten minutes to start.
 */
export async function messagingFigures(sql: Sql): Promise<MessagingFigures> {
  const rows = await sql<{ backlog: BacklogRow[] | null; expired: number; oldest_job: number | null; oldest_pending: number | null }>(
    `SELECT
       (SELECT json_agg(json_build_object('state', state, 'kind', kind, 'count', n))
          FROM (
            -- one branch per partial index, so no index on stage alone is needed
            SELECT state, kind, count(*)::int AS n FROM job_outbox WHERE stage = 'PENDING' GROUP BY state, kind
            UNION ALL
            SELECT state, kind, count(*)::int FROM job_outbox WHERE stage = 'SENT' GROUP BY state, kind
            UNION ALL
            SELECT state, kind, count(*)::int FROM job_outbox WHERE stage = 'PROCESSING' GROUP BY state, kind
          ) b) AS backlog,
       (SELECT count(*)::int FROM job_outbox WHERE stage = 'PROCESSING' AND lease_expires_at < now()) AS expired,
       -- least() passes over a NULL: the longest due of both, or of the one that has rows.
       extract(epoch FROM now() - least(due.pending, due.sent))::float8 AS oldest_job,
       extract(epoch FROM now() - due.pending)::float8 AS oldest_pending
     FROM (SELECT
       (SELECT min(available_at) FROM job_outbox WHERE stage = 'PENDING' AND available_at <= now()) AS pending,
       (SELECT min(available_at) FROM job_outbox WHERE stage = 'SENT' AND available_at <= now()) AS sent
     ) due`,
  );
  const row = rows[0]!;
  return {
    backlog: row.backlog ?? [],
    expiredLeases: row.expired,
    oldestQueuedJobAgeSeconds: row.oldest_job,
    oldestPendingMessageAgeSeconds: row.oldest_pending,
  };
}
