import type { Sql } from '../db/sql';

/**
 * After the broker confirmed. Only rows still PUBLISHING move: a fast consumer may
 * already have claimed the message (PROCESSING), and that must not be undone. Rows a
 * claim has locked right now are skipped rather than waited for, so this bookkeeping
 * never delays a job's start (the claim moves them on anyway). PUBLISHING and PUBLISHED
 * share a `stage`, the only column the partial indexes read, so this is a HOT update: the
 * row changes in place and no index entry is written.
 */
export async function markPublished(sql: Sql, outboxIds: readonly string[]): Promise<void> {
  if (outboxIds.length === 0) return;
  await sql(
    `UPDATE job_outbox o SET state = 'PUBLISHED', published_at = now(), updated_at = now()
     FROM (
       SELECT id FROM job_outbox WHERE id = ANY($1::uuid[]) AND state = 'PUBLISHING'
       FOR UPDATE SKIP LOCKED
     ) sent
     WHERE o.id = sent.id`,
    [outboxIds],
  );
}

/** The broker refused or did not confirm: back to PENDING for a later try. */
export async function markPublishFailed(sql: Sql, outboxIds: readonly string[], error: string, retryInMs: number): Promise<void> {
  if (outboxIds.length === 0) return;
  await sql(
    `UPDATE job_outbox SET state = 'PENDING', last_error = left($2, 2000),
       available_at = now() + make_interval(secs => $3::double precision / 1000), updated_at = now()
     WHERE id = ANY($1::uuid[]) AND state = 'PUBLISHING'`,
    [outboxIds, error, retryInMs],
  );
}
