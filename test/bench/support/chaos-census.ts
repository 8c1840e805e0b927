/**
 * What the database says at the end of a chaos run: jobs by kind and status, the jobs
 * that did not finish (and which of them nothing will ever move), completions counted
 * twice, statuses that changed after they were final, and the delivery records that
 * disagree with their jobs. Every figure is one query against the run's own database.
 */
import type pg from 'pg';
import { MAINTENANCE_LOCK_KEY } from '../../../src/engine/maintenance/maintenance-scheduler';
import { CHAOS_KIND } from '../../support/chaos-kinds';

export const TERMINAL_STATUSES = ['SUCCEEDED', 'FAILED', 'CANCELLED'] as const;

export interface LiveOutboxRow {
  state: string;
  leaseLeftS: number | null;
  availableInS: number;
  attempts: number;
}

export interface UnfinishedJob {
  id: string;
  kind: string;
  status: string;
  attempts: number;
  idleSeconds: number;
  live: LiveOutboxRow[];
  /** Why nothing will move it, or null when something still can (a live lease, a message on its way). */
  stuck: string | null;
}

export interface Census {
  byKind: Record<string, Record<string, number>>;
  byStatus: Record<string, number>;
  total: number;
  unfinished: UnfinishedJob[];
  /** Jobs with more than one effect row (two committed completions of a processor's work). */
  doubledEffects: { jobId: string; count: number }[];
  /** Jobs that entered SUCCEEDED more than once. */
  doubledSuccesses: { jobId: string; count: number }[];
  /** Status changes out of a final status. */
  reopened: { jobId: string; from: string; to: string }[];
  /** Jobs with an effect row whose status is not SUCCEEDED. */
  effectsWithoutSuccess: number;
  /** SUCCEEDED jobs of the kinds that write effects, with no effect row. */
  successesWithoutEffect: number;
  /** Jobs with more than one live (not COMPLETED) outbox row at the end. */
  severalLiveRows: number;
  /** Live outbox rows of jobs that have finished (harmless if the next claim completes them, but a leak if not). */
  liveRowsOfFinishedJobs: number;
  attempts: { total: number; max: number };
  /** RUNNING → QUEUED: retries after a failure, rescues of expired leases, releases at shutdown. */
  backToQueued: number;
  failedReasons: { reason: string; count: number }[];
  /** Wall clock (ms since epoch) of the last job to finish. */
  lastFinishedAtMs: number | null;
  /** Sessions holding the maintenance pass's advisory lock at the end (a pass that never ends shows here). */
  maintenanceLockHolders: { pid: number; state: string; sinceSeconds: number; query: string }[];
}

export async function takeCensus(pool: pg.Pool): Promise<Census> {
  const q = async <T extends pg.QueryResultRow>(text: string, params: unknown[] = []) => (await pool.query<T>(text, params)).rows;
  const byKind: Census['byKind'] = {};
  const byStatus: Census['byStatus'] = {};
  let total = 0;
  for (const row of await q<{ kind: string; status: string; n: number }>('SELECT kind, status, count(*)::int AS n FROM jobs GROUP BY 1, 2 ORDER BY 1, 2')) {
    (byKind[row.kind] ??= {})[row.status] = row.n;
    byStatus[row.status] = (byStatus[row.status] ?? 0) + row.n;
    total += row.n;
  }
  const unfinishedRows = await q<{ id: string; kind: string; status: string; attempts: number; idle_s: number; live: LiveOutboxRow[] }>(
    `SELECT j.id, j.kind, j.status, j.attempts, extract(epoch FROM now() - j.updated_at)::float8 AS idle_s,
       coalesce((SELECT json_agg(json_build_object(
           'state', o.state,
           'leaseLeftS', extract(epoch FROM o.lease_expires_at - now()),
           'availableInS', extract(epoch FROM o.available_at - now()),
           'attempts', o.processing_attempts))
         FROM job_outbox o WHERE o.job_id = j.id AND o.state <> 'COMPLETED'), '[]'::json) AS live
     FROM jobs j WHERE j.status NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED') ORDER BY j.created_at`,
  );
  const unfinished = unfinishedRows.map((row) => ({
    id: row.id,
    kind: row.kind,
    status: row.status,
    attempts: row.attempts,
    idleSeconds: Math.round(row.idle_s),
    live: row.live,
    stuck: whyStuck(row.status, row.live),
  }));
  const doubledEffects = (await q<{ job_id: string; n: number }>('SELECT job_id, count(*)::int AS n FROM chaos_effects GROUP BY 1 HAVING count(*) > 1')).map((r) => ({ jobId: r.job_id, count: r.n }));
  const doubledSuccesses = (
    await q<{ job_id: string; n: number }>("SELECT job_id, count(*)::int AS n FROM chaos_transitions WHERE to_status = 'SUCCEEDED' GROUP BY 1 HAVING count(*) > 1")
  ).map((r) => ({ jobId: r.job_id, count: r.n }));
  const reopened = (
    await q<{ job_id: string; from_status: string; to_status: string }>(
      "SELECT job_id, from_status, to_status FROM chaos_transitions WHERE from_status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') ORDER BY at",
    )
  ).map((r) => ({ jobId: r.job_id, from: r.from_status, to: r.to_status }));
  const [{ n: effectsWithoutSuccess }] = await q<{ n: number }>(
    "SELECT count(DISTINCT e.job_id)::int AS n FROM chaos_effects e JOIN jobs j ON j.id = e.job_id WHERE j.status <> 'SUCCEEDED'",
  );
  const [{ n: successesWithoutEffect }] = await q<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs j WHERE j.status = 'SUCCEEDED' AND j.kind = ANY($1::text[])
       AND NOT EXISTS (SELECT 1 FROM chaos_effects e WHERE e.job_id = j.id)`,
    [[CHAOS_KIND.flaky, CHAOS_KIND.slow]],
  );
  const [{ n: severalLiveRows }] = await q<{ n: number }>(
    "SELECT count(*)::int AS n FROM (SELECT job_id FROM job_outbox WHERE state <> 'COMPLETED' GROUP BY job_id HAVING count(*) > 1) several",
  );
  const [{ n: liveRowsOfFinishedJobs }] = await q<{ n: number }>(
    "SELECT count(*)::int AS n FROM job_outbox o JOIN jobs j ON j.id = o.job_id WHERE o.state <> 'COMPLETED' AND j.status IN ('SUCCEEDED', 'FAILED', 'CANCELLED')",
  );
  const [attempts] = await q<{ total: number; max: number }>('SELECT coalesce(sum(attempts), 0)::int AS total, coalesce(max(attempts), 0)::int AS max FROM jobs');
  const [{ n: backToQueued }] = await q<{ n: number }>("SELECT count(*)::int AS n FROM chaos_transitions WHERE from_status = 'RUNNING' AND to_status = 'QUEUED'");
  const failedReasons = (
    await q<{ reason: string; n: number }>(
      `SELECT regexp_replace(left(coalesce(error_message, '(none)'), 90), '[0-9a-f]{8}-[0-9a-f-]{27}', '<id>', 'g') AS reason, count(*)::int AS n
       FROM jobs WHERE status = 'FAILED' GROUP BY 1 ORDER BY 2 DESC LIMIT 5`,
    )
  ).map((r) => ({ reason: r.reason, count: r.n }));
  const [{ ms }] = await q<{ ms: number | null }>('SELECT (extract(epoch FROM max(completed_at)) * 1000)::float8 AS ms FROM jobs');
  const maintenanceLockHolders = (
    await q<{ pid: number; state: string; since_s: number; query: string }>(
      `SELECT a.pid, coalesce(a.state, '?') AS state, extract(epoch FROM now() - a.state_change)::float8 AS since_s, left(a.query, 160) AS query
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted AND ((l.classid::bigint << 32) | l.objid::bigint) = $1`,
      [MAINTENANCE_LOCK_KEY],
    )
  ).map((r) => ({ pid: r.pid, state: r.state, sinceSeconds: Math.round(r.since_s), query: r.query.replace(/\s+/g, ' ') }));
  return {
    byKind,
    byStatus,
    total,
    unfinished,
    doubledEffects,
    doubledSuccesses,
    reopened,
    effectsWithoutSuccess,
    successesWithoutEffect,
    severalLiveRows,
    liveRowsOfFinishedJobs,
    attempts,
    backToQueued,
    failedReasons,
    lastFinishedAtMs: ms,
    maintenanceLockHolders,
  };
}

/**
 * A job nothing will move: no live outbox row (no message, no lease), RUNNING with no
 * live lease (no worker owns it), or a lease that expired and was not rescued.
 */
function whyStuck(status: string, live: LiveOutboxRow[]): string | null {
  if (live.length === 0) return `${status} with no live outbox row`;
  const expired = live.find((row) => row.state === 'PROCESSING' && (row.leaseLeftS ?? 0) <= 0);
  if (expired) return `${status}, its lease expired ${Math.round(-(expired.leaseLeftS ?? 0))} s ago and was not rescued`;
  if (status === 'RUNNING' && !live.some((row) => row.state === 'PROCESSING')) return 'RUNNING with no owner (no leased outbox row)';
  return null;
}

/** Final status and finish time (ms since epoch) of some jobs. */
export async function finalStatuses(pool: pg.Pool, ids: readonly string[]): Promise<Map<string, { status: string; finishedAtMs: number | null }>> {
  const result = new Map<string, { status: string; finishedAtMs: number | null }>();
  for (let i = 0; i < ids.length; i += 5_000) {
    const { rows } = await pool.query<{ id: string; status: string; ms: number | null }>(
      'SELECT id, status, (extract(epoch FROM completed_at) * 1000)::float8 AS ms FROM jobs WHERE id = ANY($1::uuid[])',
      [ids.slice(i, i + 5_000)],
    );
    for (const row of rows) result.set(row.id, { status: row.status, finishedAtMs: row.ms });
  }
  return result;
}
