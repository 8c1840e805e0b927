import type { Sql } from '../db/sql';
import { jobColumnsOf, toSnapshot, type JobRow } from './job-row';
import type { JobSnapshot } from '../types';

/** A job a watcher follows, and the newest sequence it has of it (-1: none yet). */
export interface WatchedSequence {
  jobId: string;
  sequence: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The watched jobs whose row is ahead of what their watcher has (`sequence` greater),
 * as full snapshots, in one statement: the ids and sequences go in as two arrays and
 * meet the jobs by primary key, so a batch of a thousand costs a thousand index probes
 * and sends back only the rows that changed.
 *
 * `settledForMs` leaves out rows changed more recently than that: their event is
 * normally still on its way, and a watcher that waits for it keeps the event's reason
 * (STEP, SUCCEEDED…) rather than a SNAPSHOT. 0 returns every row that is ahead.
 *
 * A plain read with no locks: a row that changes after it is read comes back with its
 * own event or at the next read, and the watcher keeps only sequences newer than its
 * own, so a read that races an event delivers nothing twice.
 */
export async function getJobsAhead(sql: Sql, watched: readonly WatchedSequence[], settledForMs: number): Promise<JobSnapshot[]> {
  const valid = watched.filter((w) => UUID.test(w.jobId));
  if (valid.length === 0) return [];
  const rows = await sql<JobRow>(
    `SELECT ${jobColumnsOf('j')}
       FROM unnest($1::uuid[], $2::bigint[]) AS w(id, seen)
       JOIN jobs j ON j.id = w.id
      WHERE j.sequence > w.seen
        AND j.updated_at <= now() - make_interval(secs => $3::double precision)`,
    [valid.map((w) => w.jobId), valid.map((w) => Math.trunc(w.sequence)), Math.max(0, settledForMs) / 1_000],
  );
  return rows.map(toSnapshot);
}
