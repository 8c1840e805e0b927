/**
 * A worker killed (SIGKILL) after its job's processor returned and the delivery was
 * acknowledged, before the completion committed — on the job's last attempt. The job
 * succeeded; it must not end FAILED at the attempt limit. It runs again, on another
 * worker, and ends SUCCEEDED on the same attempt number.
 *
 * To catch the worker in that moment, a trigger installed by this test makes the
 * SUCCEEDED write wait for an advisory lock the test holds; once a completion waits
 * there (the processor returned and the delivery was settled), the worker is killed and
 * its waiting statement ended, as if it had never arrived.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/database';
import { enqueueInPool } from '../../src/engine/enqueue';
import { silentLogger } from '../../src/engine/logger';
import { KindRegistry } from '../../src/engine/registry';
import { JobStatus } from '../../src/engine/types';
import { JobKind } from '../../src/job-kinds';
import { createTestDatabase, type TestDatabase } from '../support/services';
import { spawnService, type ServiceProcess } from '../support/spawn-service';
import { TEST_KINDS_ENV } from '../support/test-kinds';

const HOLD_LOCK = 4_242_001;
const KIND = JobKind.MAKEUP_EXAM_AUTO; // run by the test stand-in: returns { steps, pid }

let testDb: TestDatabase;
let db: Database;
let holder: pg.Client;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase('engine_last_attempt_kill');
  db = await openDatabase({ url: testDb.url, poolSize: 2, logger: silentLogger });
  await db.pool.query(`
    CREATE FUNCTION test_hold_success() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_advisory_xact_lock(${HOLD_LOCK}); RETURN NEW; END $$;
    CREATE TRIGGER test_hold_success BEFORE UPDATE ON jobs FOR EACH ROW
      WHEN (NEW.status = 'SUCCEEDED' AND OLD.status <> 'SUCCEEDED') EXECUTE FUNCTION test_hold_success();`);
  holder = new pg.Client({ connectionString: testDb.url });
  await holder.connect();
  await holder.query('SELECT pg_advisory_lock($1)', [HOLD_LOCK]);
});
afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill9().catch(() => undefined)));
  await holder?.end().catch(() => undefined);
  await db?.close();
  await testDb?.drop();
});

const worker = (extra: Record<string, string> = {}) =>
  spawnService({
    ROLE: 'worker',
    DATABASE_URL: testDb.url,
    [TEST_KINDS_ENV]: KIND,
    JOB_ATTEMPT_LIMIT: '1',
    JOB_LEASE_SECONDS: '15',
    ...extra,
  });

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('a success whose worker dies before its completion commits, on the last attempt, runs again and ends SUCCEEDED', async () => {
  const first = await worker();
  processes.push(first);
  const registry = new KindRegistry();
  registry.register({ kind: KIND, defaults: { consumers: 1 }, processor: async () => null });
  const { job } = await enqueueInPool(db.pool, registry, { kind: KIND, input: { steps: 0 } });
  await db.pool.query(`SELECT pg_notify('jiaowu_outbox', '')`);

  // The processor returned and the delivery is settled: the completion waits in the trigger.
  await waitFor(
    'the completion to wait for the test',
    async () => {
      const { rows } = await db.pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
      );
      return rows.length > 0 ? true : undefined;
    },
    60_000,
  );
  await first.kill9();
  // The dead worker's statement never lands.
  await db.pool.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
  );
  await db.pool.query('DROP TRIGGER test_hold_success ON jobs');
  await holder.query('SELECT pg_advisory_unlock($1)', [HOLD_LOCK]);
  expect((await db.pool.query('SELECT status FROM jobs WHERE id = $1', [job.id])).rows[0].status).toBe(JobStatus.RUNNING);

  // Another worker: its lease rescuer sends the job again once the dead worker's lease ran out.
  const second = await worker({ MAINTENANCE_INTERVAL_SECONDS: '1' });
  processes.push(second);
  const done = await waitFor(
    'the job to end',
    async () => {
      const { rows } = await db.pool.query('SELECT status, attempts, result, error_message FROM jobs WHERE id = $1', [job.id]);
      return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(rows[0].status) ? rows[0] : undefined;
    },
    // Lease (15 s) + a rescuer pass (1 s) + publish and run, on a loaded machine.
    60_000,
  );
  expect(done.error_message).toBeNull();
  expect(done.status).toBe(JobStatus.SUCCEEDED);
  expect(done.result).toMatchObject({ pid: second.pid });
  // The same attempt ran again: a success lost to a crash costs no attempt.
  expect(done.attempts).toBe(1);
}, 120_000);
