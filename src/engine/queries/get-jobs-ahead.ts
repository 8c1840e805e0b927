import type { Sql } from '../db/sql';
import { jobColumnsOf, toSnapshot, type JobRow } from './job-row';
import { TERMINAL_STATUSES, type JobSnapshot } from '../types';

/** A job a watcher follows, and the newest state it has of it. */
export interface WatchedSequence {
  jobId: string;
  /** -1: none yet. */
  sequence: number;
  /** Whether the state it has at that sequence is terminal. */
  terminal: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const JOBS_AHEAD_SQL = `SELECT ${jobColumnsOf('j')}
       FROM unnest($1::uuid[], $2::bigint[], $3::boolean[]) AS w(id, seen, seen_terminal)
       JOIN jobs j ON j.id = w.id
      WHERE (j.sequence > w.seen OR (NOT w.seen_terminal AND j.status = ANY($5::text[])))
        AND j.updated_at <= now() - make_interval(secs => $4::double precision)`;

/**
 * The watched jobs whose row is ahead of what their watcher has, as full snapshots, in
 * one statement: the ids and sequences go in as arrays and meet the jobs by primary
 * key, so a batch of a thousand costs a thousand index probes and sends back only the
 * rows that changed.
 *
 * Ahead: a greater `sequence`, or a terminal status where the watcher has a
 * non-terminal one, at any sequence — claims, heartbeats and steps (committed without
 * fsync) lost in a database crash after their events went out leave their sequences to
 * the job's next writes, so its end can come at a sequence the watcher already passed.
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
    JOBS_AHEAD_SQL,
    [
      valid.map((w) => w.jobId),
      valid.map((w) => Math.trunc(w.sequence)),
      valid.map((w) => w.terminal),
      Math.max(0, settledForMs) / 1_000,
      TERMINAL_STATUSES,
    ],
  );
  return rows.map(toSnapshot);
}
