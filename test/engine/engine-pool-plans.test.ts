import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolSql, type Sql } from '../../src/engine/db/sql';
import { claimMessage } from '../../src/engine/queries/claim-message';
import { completeJob } from '../../src/engine/queries/complete-job';
import type { InsertJobArgs } from '../../src/engine/queries/insert-job';
import { insertJobs } from '../../src/engine/queries/insert-jobs';
import { touchJob } from '../../src/engine/queries/touch-job';
import { createTestDb, newJobArgs } from '../support/engine-harness';

/**
 * A connection keeps a statement's plan. A claim, heartbeat or completion planned while
 * `jobs` looked empty (a new database, or before autovacuum's first ANALYZE) would keep
 * scanning the whole table as it grows; the engine's sessions have sequential scans off,
 * so that plan reads the job by its key (see openDatabase). A session without the
 * setting, on the same tables, shows the scan this guards against.
 */
let ctx: Awaited<ReturnType<typeof createTestDb>>;
const KIND = 'ENGINE_PLAN_KIND';
/** Lone runs that settle a plan: PostgreSQL plans a prepared statement five times before it considers a generic one. */
const RUNS = 8;
/** Rows added after the plans were made, with no ANALYZE. */
const GROWTH = 3_000;

beforeAll(async () => {
  ctx = await createTestDb('engine_pool_plans');
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

type Client = pg.PoolClient;

/** An Sql on `client` that remembers the last statement's text and parameters. */
function recording(client: Client): { sql: Sql; last: () => { text: string; params: readonly unknown[] } } {
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
async function planOf(client: Client, text: string, params: readonly unknown[]): Promise<string> {
  const { rows } = await client.query<{ name: string }>('SELECT name FROM pg_prepared_statements WHERE statement = $1', [text]);
  expect(rows, 'the statement is prepared on this connection').toHaveLength(1);
  const literal = (v: unknown) => (v === null || v === undefined ? 'NULL' : typeof v === 'number' || typeof v === 'boolean' ? String(v) : client.escapeLiteral(String(v)));
  const explained = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${rows[0]!.name}(${params.map(literal).join(', ')})`);
  return explained.rows.map((r) => r['QUERY PLAN']).join('\n');
}

interface Plans {
  claim: string;
  heartbeat: string;
  completion: string;
}

/**
 * Lone claims, heartbeats and completions, the claims and heartbeats on `relaxed`, the
 * completions on `main` (as the runner runs them), remembering the last statement of each.
 */
function loneRunner(relaxed: Client, main: Client) {
  const claims = recording(relaxed);
  const completions = recording(main);
  const last: Partial<Record<keyof Plans, { text: string; params: readonly unknown[] }>> = {};
  return {
    async run(job: InsertJobArgs): Promise<void> {
      const token = randomUUID();
      const claimed = await claimMessage(claims.sql, { outboxId: job.outboxId, jobId: job.jobId, kind: KIND, token, leaseSeconds: 30, attemptLimit: 3 });
      expect(claimed?.id).toBe(job.jobId);
      last.claim = claims.last();
      const touched = await touchJob(claims.sql, { outboxId: job.outboxId, token, leaseSeconds: 30, currentStep: null, progress: 0.5, message: null });
      expect(touched?.id).toBe(job.jobId);
      last.heartbeat = claims.last();
      const completed = await completeJob(completions.sql, { outboxId: job.outboxId, token, result: { done: true }, message: null });
      expect(completed?.status).toBe('SUCCEEDED');
      last.completion = completions.last();
    },
    /** The plans the last claim, heartbeat and completion ran with. */
    async plans(): Promise<Plans> {
      return {
        claim: await planOf(relaxed, last.claim!.text, last.claim!.params),
        heartbeat: await planOf(relaxed, last.heartbeat!.text, last.heartbeat!.params),
        completion: await planOf(main, last.completion!.text, last.completion!.params),
      };
    },
  };
}

const SCANS_JOBS = /Seq Scan on jobs/;
const READS_JOB_BY_KEY = /Index Scan using jobs_pkey on jobs j\b/;

describe("the engine's pools", () => {
  it('read a job by its key with plans made while jobs was empty, where sessions without their setting scan the table', async () => {
    const relaxed = await ctx.db.relaxedPool.connect();
    const main = await ctx.db.pool.connect();
    // Sessions as PostgreSQL opens them by default.
    const plainPool = new pg.Pool({ connectionString: ctx.testDb.url, max: 2 });
    const plain = [await plainPool.connect(), await plainPool.connect()];
    try {
      const sessions = [loneRunner(relaxed, main), loneRunner(plain[0]!, plain[1]!)];
      // Plans made while the table is nearly empty (and its statistics say so)…
      for (const session of sessions) for (const job of await insert(RUNS)) await session.run(job);
      // …kept as it grows.
      await insert(GROWTH);
      for (const session of sessions) await session.run((await insert(1))[0]!);
      const [kept, scanned] = [await sessions[0]!.plans(), await sessions[1]!.plans()];
      for (const plan of Object.values(kept)) {
        expect(plan).toMatch(READS_JOB_BY_KEY);
        expect(plan).not.toMatch(SCANS_JOBS);
      }
      // Without the setting the same statements scan the whole table on every run.
      for (const plan of Object.values(scanned)) expect(plan).toMatch(SCANS_JOBS);
    } finally {
      relaxed.release(true);
      main.release(true);
      for (const client of plain) client.release(true);
      await plainPool.end();
    }
  });
});
