/**
 * Faults with real processes: a worker killed with SIGKILL mid-job, a broker restart
 * (a private RabbitMQ node) and a database restart (a private embedded PostgreSQL).
 * Each job's effect is written in the transaction that completes it, so "ran to
 * completion exactly once" is one row per job in test_effects.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { openDatabase } from '../../src/database';
import { silentLogger } from '../../src/engine/logger';
import { enqueueInPool } from '../../src/engine/enqueue';
import { KindRegistry } from '../../src/engine/registry';
import { RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import { buildEngine } from '../support/engine-harness';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { startPrivateRabbit, type PrivateRabbit } from '../support/private-rabbit';
import { createTestDatabase, deleteRabbitObjects, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';
import { spawnService, type ServiceProcess } from '../support/spawn-service';
import { TEST_SLEEP_KIND } from '../support/service-process';

const rabbit = requireRabbit();
const processes: ServiceProcess[] = [];
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.kill9().catch(() => undefined)));
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

const registry = new KindRegistry();
registry.register({ kind: TEST_SLEEP_KIND, defaults: { consumers: 1 }, processor: async () => null });

/** A migrated database with the effects table; enqueue goes through NOTIFY to the service processes. */
async function prepareDatabase(url: string) {
  const db = await openDatabase({ url, poolSize: 5, logger: silentLogger });
  await db.pool.query('CREATE TABLE IF NOT EXISTS test_effects (job_id uuid NOT NULL, pid int NOT NULL, at timestamptz NOT NULL DEFAULT now())');
  cleanups.push(() => db.close());
  return db;
}

async function enqueueSleeps(pool: pg.Pool, count: number, ms: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { job } = await enqueueInPool(pool, registry, { kind: TEST_SLEEP_KIND, input: { ms } });
    ids.push(job.id);
  }
  // No publisher runs in this process: wake the services' publishers.
  await pool.query(`SELECT pg_notify('jiaowu_outbox', '')`);
  return ids;
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, explain?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}${explain ? `\n${explain()}` : ''}`);
}

async function statusCounts(pool: pg.Pool, ids: string[]): Promise<Record<string, number>> {
  const { rows } = await pool.query('SELECT status, count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) GROUP BY status', [ids]);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

async function effectsPerJob(pool: pg.Pool, ids: string[]): Promise<number[]> {
  const { rows } = await pool.query(
    `SELECT (SELECT count(*)::int FROM test_effects e WHERE e.job_id = j.id) AS n FROM jobs j WHERE j.id = ANY($1::uuid[])`,
    [ids],
  );
  return rows.map((r) => r.n);
}

/** A database and a broker prefix of the test's own, and the environment of its worker processes (the shortest lease, 15 s; 2 sleep consumers). */
async function workerKillSetup(name: string) {
  const testDb = await createTestDatabase(name);
  cleanups.push(() => testDb.drop());
  const db = await prepareDatabase(testDb.url);
  const prefix = uniquePrefix(name);
  cleanups.push(() => deleteRabbitObjects(prefix, { listWithRabbitmqctl: 'rabbit@localhost' }));
  const env = { ROLE: 'worker', DATABASE_URL: testDb.url, RABBITMQ_URL: rabbitUrl(), RABBITMQ_PREFIX: prefix, JOB_LEASE_SECONDS: '15', TEST_SLEEP_CONSUMERS: '2' };
  return { db, prefix, env };
}

describe.runIf(rabbit)('a worker killed with SIGKILL mid-job', () => {
  it('the job still ends SUCCEEDED exactly once, run by the surviving worker', async () => {
    const { db, env } = await workerKillSetup('faults_kill');
    const [a, b] = await Promise.all([spawnService(env), spawnService(env)]);
    processes.push(a!, b!);

    const ids = await enqueueSleeps(db.pool, 6, 3_000);
    // Wait until both workers run something, then kill the first one.
    await waitUntil(
      'both workers to run jobs',
      async () => {
        const { rows } = await db.pool.query(
          "SELECT DISTINCT current_step FROM jobs WHERE status = 'RUNNING' AND current_step LIKE 'running in pid %'",
        );
        return rows.length >= 2;
      },
      30_000,
    );
    await a!.kill9();
    await waitUntil(
      'every job to succeed',
      async () => (await statusCounts(db.pool, ids)).SUCCEEDED === ids.length,
      60_000,
      () => b!.output(),
    );
    expect(await effectsPerJob(db.pool, ids)).toEqual(ids.map(() => 1));
    const { rows } = await db.pool.query('SELECT max(attempts)::int AS most FROM jobs WHERE id = ANY($1::uuid[])', [ids]);
    expect(rows[0].most).toBeGreaterThanOrEqual(2); // the killed worker's jobs were claimed again
    const { rows: effects } = await db.pool.query('SELECT DISTINCT pid FROM test_effects');
    expect(effects.map((r) => r.pid)).not.toContain(a!.pid); // a dead process completed nothing
  }, 120_000);
});

describe.runIf(rabbit)('a worker killed mid-job it started on the enqueue’s NOTIFY', () => {
  it('the job is handed on by its broker copy and ends SUCCEEDED exactly once', async () => {
    const { db, prefix, env } = await workerKillSetup('faults_fast_kill');
    const a = await spawnService(env);
    processes.push(a);
    // An API process: its enqueues write PUBLISHING rows and send their messages at once.
    const transport = new RabbitMqTransport({ url: rabbitUrl(), prefix, logger: silentLogger });
    const api = buildEngine({ db, transport, roles: { worker: false }, registrations: [{ kind: TEST_SLEEP_KIND, defaults: { consumers: 1 }, processor: async () => null }] });
    await api.start();
    cleanups.push(async () => {
      await api.stop(1_000);
      await transport.close();
    });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await api.enqueue({ kind: TEST_SLEEP_KIND, input: { ms: 4_000 } })).job.id);
    await waitUntil('both jobs to run in the first worker', async () => {
      const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND current_step = $2", [ids, `running in pid ${a.pid}`]);
      return rows[0].n === 2;
    }, 30_000);
    // Both were started by the NOTIFY, not by a delivery.
    const metrics = await (await fetch(`${a.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`jiaowu_background_jobs_fast_started_total\\{[^}]*kind="${TEST_SLEEP_KIND}"[^}]*\\} 2\\b`));
    await a.kill9();
    const b = await spawnService(env);
    processes.push(b);
    await waitUntil('every job to succeed', async () => (await statusCounts(db.pool, ids)).SUCCEEDED === ids.length, 60_000, () => b.output());
    expect(await effectsPerJob(db.pool, ids)).toEqual(ids.map(() => 1));
    const { rows: effects } = await db.pool.query('SELECT DISTINCT pid FROM test_effects');
    expect(effects.map((r) => r.pid)).toEqual([b.pid]);
  }, 120_000);
});

describe('service processes survive restarts of what they depend on', () => {
  let privatePg: PrivatePostgres | undefined;
  let privateRabbit: PrivateRabbit | undefined;
  afterAll(async () => {
    await privatePg?.destroy();
    await privateRabbit?.destroy();
  });

  it('PostgreSQL restarted mid-flight: every job ends SUCCEEDED exactly once, with no manual action', async () => {
    privatePg = await startPrivatePostgres();
    const db = await prepareDatabase(privatePg.url);
    // Maintenance often and a short republish age: the slowest legitimate path (a publish
    // mark whose commit reply was lost in the restart waits for the outbox republisher)
    // then fits the bound below even on a loaded machine.
    const service = await spawnService({
      DATABASE_URL: privatePg.url,
      JOB_LEASE_SECONDS: '15',
      TEST_SLEEP_CONSUMERS: '4',
      MAINTENANCE_INTERVAL_SECONDS: '2',
      OUTBOX_REPUBLISH_AFTER_SECONDS: '5',
    });
    processes.push(service);
    const ids = await enqueueSleeps(db.pool, 8, 1_500);
    await waitUntil('a job to run', async () => ((await statusCounts(db.pool, ids)).RUNNING ?? 0) > 0, 30_000);
    await privatePg.stop();
    await new Promise((r) => setTimeout(r, 2_000));
    await privatePg.start();
    // Running jobs resume within seconds (their completions repeat, their leases are
    // kept). The slowest legitimate path: the lease rescuer's restart grace (10 s), the
    // republish age (5 s) and a maintenance pass (2 s), then the job (1.5 s) — about
    // 20 s; the bound allows four times that for a loaded machine.
    await waitUntil(
      'every job to succeed after the restart',
      async () => (await statusCounts(db.pool, ids)).SUCCEEDED === ids.length,
      80_000,
      () => service.output(),
    );
    expect(await effectsPerJob(db.pool, ids)).toEqual(ids.map(() => 1));
    // The service is healthy again on its own.
    const health = await fetch(`${service.url}/health/ready`);
    expect(health.status).toBe(200);
  }, 150_000);

  it.runIf(rabbit)('the broker restarted: publishing and consuming resume with nothing lost', async () => {
    privateRabbit = await startPrivateRabbit();
    const testDb = await createTestDatabase('faults_broker');
    cleanups.push(() => testDb.drop());
    const db = await prepareDatabase(testDb.url);
    const service = await spawnService({
      DATABASE_URL: testDb.url,
      RABBITMQ_URL: privateRabbit.url,
      RABBITMQ_PREFIX: 'jiaowu',
      TEST_SLEEP_CONSUMERS: '4',
    });
    processes.push(service);
    const before = await enqueueSleeps(db.pool, 8, 800);
    await waitUntil('a job to run', async () => ((await statusCounts(db.pool, before)).RUNNING ?? 0) > 0, 30_000);
    await privateRabbit.stop();
    // Enqueued while the broker is down: they wait in the outbox.
    const during = await enqueueSleeps(db.pool, 8, 200);
    await new Promise((r) => setTimeout(r, 1_000));
    const ready = await fetch(`${service.url}/health/ready`);
    expect(ready.status).toBe(503);
    await privateRabbit.start();
    const ids = [...before, ...during];
    await waitUntil(
      'every job to succeed after the broker restart',
      async () => (await statusCounts(db.pool, ids)).SUCCEEDED === ids.length,
      90_000,
      () => service.output(),
    );
    expect(await effectsPerJob(db.pool, ids)).toEqual(ids.map(() => 1));
  }, 150_000);
});
