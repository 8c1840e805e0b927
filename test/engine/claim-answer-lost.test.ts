/**
 * A claim that commits while its connection is cut: its answer never comes, the runner
 * sees a transient error — and the row holds the claim's token. The runner reads the
 * claim back by its token and runs the job on it, rather than leaving the job to wait
 * out the lease for a next claim that would count an attempt which never ran (with one
 * attempt allowed: FAILED without a run).
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/database';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { JobStatus } from '../../src/engine/types';
import { buildEngine, createTestDb, until, waitForJob } from '../support/engine-harness';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const HOLD_LOCK = 4_242_001;
let ctx: Awaited<ReturnType<typeof createTestDb>>;
let proxy: TcpProxy;
let proxied: Database;
let holder: pg.Client;
let engine: JobEngine | undefined;

beforeAll(async () => {
  ctx = await createTestDb('claim_answer_lost');
  proxy = await startTcpProxy(Number(new URL(ctx.db.url).port || 5432));
  proxied = await openDatabase({ url: proxy.urlFor(ctx.db.url), poolSize: 4, logger: silentLogger });
  holder = new pg.Client({ connectionString: ctx.db.url });
  await holder.connect();
  // A claim waits here, its row updated and locked, until the test lets it commit.
  await ctx.db.pool.query(`
    CREATE FUNCTION test_hold_claim() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_lock(${HOLD_LOCK});
      PERFORM pg_advisory_unlock(${HOLD_LOCK});
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_hold_claim AFTER UPDATE ON job_outbox FOR EACH ROW
      WHEN (NEW.state = 'PROCESSING' AND OLD.state <> 'PROCESSING') EXECUTE FUNCTION test_hold_claim();`);
});
afterAll(async () => {
  await engine?.stop(2_000);
  await holder?.end().catch(() => undefined);
  await proxied?.close().catch(() => undefined);
  await proxy?.close();
  await ctx?.close();
});

it('a claim that committed with its answer lost runs the job on that claim: one attempt, SUCCEEDED', async () => {
  await holder.query('SELECT pg_advisory_lock($1)', [HOLD_LOCK]);
  let runs = 0;
  engine = buildEngine({
    // Only the claims' pool (with the heartbeats') goes through the proxy.
    db: { ...ctx.db, relaxedPool: proxied.relaxedPool },
    registrations: [{ kind: 'PLAIN', defaults: { consumers: 1, attemptLimit: 1, leaseSeconds: 15 }, processor: async () => void runs++ }],
  });
  await engine.start();
  const { job } = await engine.enqueue({ kind: 'PLAIN', input: {} });
  await until('the claim waiting in the trigger', async () => {
    const { rows } = await ctx.db.pool.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
    );
    return rows.length > 0;
  });
  // The answer is lost: the claim's connection is cut while the claim is still running.
  expect(proxy.cut()).toBeGreaterThan(0);
  await holder.query('SELECT pg_advisory_unlock($1)', [HOLD_LOCK]);
  const done = await waitForJob(engine, job.id);
  expect(done.status).toBe(JobStatus.SUCCEEDED);
  expect(done.attempts).toBe(1);
  expect(runs).toBe(1);
});
