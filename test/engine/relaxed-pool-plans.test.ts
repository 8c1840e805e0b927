import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolSql, type Sql } from '../../src/engine/db/sql';
import { claimMessage } from '../../src/engine/queries/claim-message';
import type { InsertJobArgs } from '../../src/engine/queries/insert-job';
import { insertJobs } from '../../src/engine/queries/insert-jobs';
import { touchJob } from '../../src/engine/queries/touch-job';
import { createTestDb, newJobArgs } from '../support/engine-harness';

/**
 * A connection keeps a statement's plan. A claim or heartbeat planned while `jobs` looked
 * empty (a new database, or before autovacuum's first ANALYZE) would keep scanning the
 * whole table as it grows; the relaxed pool's sessions, which run them, have sequential
 * scans off, so that plan reads the job by its key (see openDatabase). A session without
 * the setting, on the same tables, shows the scan this guards against.
 */
let ctx: Awaited<ReturnType<typeof createTestDb>>;
const KIND = 'RELAXED_PLAN_KIND';
/** Lone runs that settle a plan: PostgreSQL plans a prepared statement five times before it considers a generic one. */
const RUNS = 8;
/** Rows added after the plans were made, with no ANALYZE. */
const GROWTH = 3_000;

beforeAll(async () => {
  ctx = await createTestDb('engine_relaxed_plans');
  // Statistics that say empty, kept so while the table grows: autovacuum must not analyse
  // it midway (this database is the test's own).
  await ctx.db.pool.query('ALTER TABLE jobs SET (autovacuum_enabled = false); ALTER TABLE job_outbox SET (autovacuum_enabled = false)');
  await ctx.db.pool.query('ANALYZE jobs; ANALYZE job_outbox');
});
afterAll(async () => {
  await ctx?.close();
});

async function insert(n: number): Promise<InsertJobArgs[]> {
  const jobs = Array.from({ length: n }, (_, i) => newJobArgs(KIND, { i }));
  for (let start = 0; start < n; start += 1_000) await insertJobs(poolSql(ctx.db.pool), jobs.slice(start, start + 1_000));
  return jobs;
}

/** An Sql on `client` that remembers the last statement's text and parameters. */
function recording(client: PoolClient): { sql: Sql; last: () => { text: string; params: readonly unknown[] } } {
  const run = poolSql(client);
  let last: { text: string; params: readonly unknown[] } | undefined;
  return {
    sql: (text, params = []) => {
      last = { text, params };
      return run(text, params);
    },
    last: () => last!,
  };
}

/** The plan `client` would run its prepared statement `text` with, for `params` (EXPLAIN only: nothing runs). */
async function planOf(client: PoolClient, text: string, params: readonly unknown[]): Promise<string> {
  const { rows } = await client.query<{ name: string }>('SELECT name FROM pg_prepared_statements WHERE statement = $1', [text]);
  expect(rows, 'the statement is prepared on this connection').toHaveLength(1);
  const literal = (v: unknown) => (v === null || v === undefined ? 'NULL' : typeof v === 'number' || typeof v === 'boolean' ? String(v) : client.escapeLiteral(String(v)));
  const explained = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${rows[0]!.name}(${params.map(literal).join(', ')})`);
  return explained.rows.map((r) => r['QUERY PLAN']).join('\n');
}

/** Lone claims and heartbeats on one connection, remembering the last statements of each. */
function loneRunner(client: PoolClient) {
  const { sql, last } = recording(client);
  let claim: { text: string; params: readonly unknown[] } | undefined;
  let heartbeat: { text: string; params: readonly unknown[] } | undefined;
  return {
    async claimAndBeat(job: InsertJobArgs): Promise<void> {
      const token = randomUUID();
      const claimed = await claimMessage(sql, { outboxId: job.outboxId, jobId: job.jobId, kind: KIND, token, leaseSeconds: 30, attemptLimit: 3 });
      expect(claimed?.id).toBe(job.jobId);
      claim = last();
      const row = await touchJob(sql, { outboxId: job.outboxId, token, leaseSeconds: 30, currentStep: null, progress: 0.5, message: null });
      expect(row?.id).toBe(job.jobId);
      heartbeat = last();
    },
    /** The plans the last claim and heartbeat ran with. */
    async plans(): Promise<{ claim: string; heartbeat: string }> {
      return { claim: await planOf(client, claim!.text, claim!.params), heartbeat: await planOf(client, heartbeat!.text, heartbeat!.params) };
    },
  };
}

const SCANS_JOBS = /Seq Scan on jobs/;
const READS_JOB_BY_KEY = /Index Scan using jobs_pkey on jobs j\b/;

describe('the relaxed pool (claims and heartbeats)', () => {
  it('reads a job by its key with a plan made while jobs was empty, where a session without its setting scans the table', async () => {
    const relaxed = await ctx.db.relaxedPool.connect();
    const plain = await ctx.db.pool.connect();
    try {
      const sessions = [loneRunner(relaxed), loneRunner(plain)];
      // Plans made while the table is nearly empty (and its statistics say so)…
      for (const session of sessions) for (const job of await insert(RUNS)) await session.claimAndBeat(job);
      // …kept as it grows.
      await insert(GROWTH);
      for (const session of sessions) await session.claimAndBeat((await insert(1))[0]!);
      const [kept, scanned] = [await sessions[0]!.plans(), await sessions[1]!.plans()];
      expect(kept.claim).toMatch(READS_JOB_BY_KEY);
      expect(kept.claim).not.toMatch(SCANS_JOBS);
      expect(kept.heartbeat).toMatch(READS_JOB_BY_KEY);
      expect(kept.heartbeat).not.toMatch(SCANS_JOBS);
      // Without the setting the same statements scan the whole table on every run.
      expect(scanned.claim).toMatch(SCANS_JOBS);
      expect(scanned.heartbeat).toMatch(SCANS_JOBS);
    } finally {
      relaxed.release(true);
      plain.release(true);
    }
  });
});
