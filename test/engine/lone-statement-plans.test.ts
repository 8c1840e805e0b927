import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolSql, type Sql } from '../../src/engine/db/sql';
import { claimMessage } from '../../src/engine/queries/claim-message';
import { completeJob } from '../../src/engine/queries/complete-job';
import type { InsertJobArgs } from '../../src/engine/queries/insert-job';
import { insertJobs } from '../../src/engine/queries/insert-jobs';
import { createTestDb, newJobArgs } from '../support/engine-harness';

/**
 * A lone claim and a lone completion (an idle service, a job at a time) run statements
 * over scalar parameters, whose plan PostgreSQL keeps after its first few runs (the
 * array form a batch uses is costed for ten rows when generic, so PostgreSQL keeps
 * planning it per call on a real table). Read from the connection's own
 * `pg_prepared_statements` (generic and custom plan counts, PostgreSQL 14+).
 */
let ctx: Awaited<ReturnType<typeof createTestDb>>;
const KIND = 'PLAN_KIND';
const RUNS = 10;
/** Rows beside the claimed ones, analysed, so that the planner costs a table of some size. */
const BACKGROUND_JOBS = 3_000;

beforeAll(async () => {
  ctx = await createTestDb('engine_lone_plans');
  const sql = poolSql(ctx.db.pool);
  for (let start = 0; start < BACKGROUND_JOBS; start += 1_000) {
    await insertJobs(sql, Array.from({ length: 1_000 }, (_, i) => jobArgs({ background: start + i })));
  }
  await ctx.db.pool.query('ANALYZE jobs; ANALYZE job_outbox');
});
afterAll(async () => {
  await ctx?.close();
});

/** A job of KIND to insert, with new ids. */
const jobArgs = (input: unknown): InsertJobArgs => newJobArgs(KIND, input);

async function seedJobs(n: number): Promise<InsertJobArgs[]> {
  const jobs = Array.from({ length: n }, (_, i) => jobArgs({ i }));
  await insertJobs(poolSql(ctx.db.pool), jobs);
  return jobs;
}

/** Plan counts of the prepared statement on `client` whose text contains `marker`. */
async function plansOf(client: PoolClient, marker: string): Promise<{ generic: number; custom: number }> {
  const { rows } = await client.query(`SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE statement LIKE '%' || $1 || '%'`, [marker]);
  expect(rows, `one prepared statement containing ${marker}`).toHaveLength(1);
  return rows[0];
}

/** Claims and completes RUNS jobs one at a time, each statement kind on a connection of its own. */
async function runLone(): Promise<{ claim: { generic: number; custom: number }; complete: { generic: number; custom: number } }> {
  const jobs = await seedJobs(RUNS);
  const claimClient = await ctx.db.relaxedPool.connect();
  const completeClient = await ctx.db.pool.connect();
  try {
    const claimSql: Sql = poolSql(claimClient);
    const completeSql: Sql = poolSql(completeClient);
    for (const job of jobs) {
      const token = randomUUID();
      const args = { outboxId: job.outboxId, jobId: job.jobId, kind: KIND, token, leaseSeconds: 30, attemptLimit: 3 };
      const claimed = await claimMessage(claimSql, args);
      expect(claimed?.id).toBe(job.jobId);
      const completion = { outboxId: job.outboxId, token, result: { done: true }, message: null };
      const completed = await completeJob(completeSql, completion);
      expect(completed?.status).toBe('SUCCEEDED');
    }
    return {
      claim: await plansOf(claimClient, 'SELECT $1::uuid, $2::uuid, $3::float8'),
      complete: await plansOf(completeClient, 'SELECT $1::uuid, $2::uuid, $3::jsonb'),
    };
  } finally {
    claimClient.release(true);
    completeClient.release(true);
  }
}

describe('lone claims and completions', () => {
  it('keep their plan: after the first runs PostgreSQL plans them no more', async () => {
    const { claim, complete } = await runLone();
    // PostgreSQL plans a prepared statement five times before it considers a generic plan.
    expect(claim.generic + claim.custom).toBe(RUNS);
    expect(claim.generic).toBeGreaterThanOrEqual(RUNS - 5);
    expect(complete.generic).toBeGreaterThanOrEqual(RUNS - 5);
  });
});
