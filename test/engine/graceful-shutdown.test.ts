/**
 * Graceful shutdown with real processes on RabbitMQ: SIGTERM stops taking work, lets a
 * running job finish within the grace period, and releases one that does not (back to
 * the queue, its attempt refunded) to another worker. No job stays RUNNING unowned.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { openDatabase } from '../../src/database';
import { enqueueInPool } from '../../src/engine/enqueue';
import { silentLogger } from '../../src/engine/logger';
import { KindRegistry } from '../../src/engine/registry';
import { TEST_SLEEP_KIND } from '../support/service-process';
import { createTestDatabase, deleteRabbitObjects, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';
import { spawnService, type ServiceProcess } from '../support/spawn-service';

const rabbit = requireRabbit();
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

const registry = new KindRegistry();
registry.register({ kind: TEST_SLEEP_KIND, defaults: { consumers: 1 }, processor: async () => null });

async function waitFor<T>(what: string, read: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function jobRow(pool: pg.Pool, id: string) {
  const { rows } = await pool.query('SELECT status, attempts, current_step, result, message, message_code FROM jobs WHERE id = $1', [id]);
  return rows[0];
}

describe.runIf(rabbit)('graceful shutdown', () => {
  it('finishes a job within the grace period, releases one that overruns it to another worker', async () => {
    const testDb = await createTestDatabase('graceful');
    cleanups.push(() => testDb.drop());
    const db = await openDatabase({ url: testDb.url, poolSize: 5, logger: silentLogger });
    cleanups.push(() => db.close());
    await db.pool.query('CREATE TABLE test_effects (job_id uuid NOT NULL, pid int NOT NULL, at timestamptz NOT NULL DEFAULT now())');
    const prefix = uniquePrefix('graceful');
    cleanups.push(() => deleteRabbitObjects(prefix, { listWithRabbitmqctl: 'rabbit@localhost' }));
    const env = { ROLE: 'worker', DATABASE_URL: testDb.url, RABBITMQ_URL: rabbitUrl(), RABBITMQ_PREFIX: prefix, TEST_SLEEP_CONSUMERS: '1' };

    // 1. A short job finishes during the grace period, in the process that was stopped.
    const first: ServiceProcess = await spawnService({ ...env, SHUTDOWN_GRACE_SECONDS: '20' });
    cleanups.push(() => first.kill9());
    const short = (await enqueueInPool(db.pool, registry, { kind: TEST_SLEEP_KIND, input: { ms: 2_000 } })).job;
    await db.pool.query(`SELECT pg_notify('jiaowu_outbox', '')`);
    await waitFor('the short job to run', async () => ((await jobRow(db.pool, short.id))?.status === 'RUNNING' ? true : undefined), 20_000);
    const exitCode = await first.terminate();
    expect(exitCode).toBe(0);
    const finished = await jobRow(db.pool, short.id);
    expect(finished.status).toBe('SUCCEEDED');
    expect(finished.result).toEqual({ pid: first.pid });

    // 2. A long job overruns a 1 s grace period: released, attempt refunded, completed by another worker.
    const second = await spawnService({ ...env, SHUTDOWN_GRACE_SECONDS: '1' });
    cleanups.push(() => second.kill9());
    const long = (await enqueueInPool(db.pool, registry, { kind: TEST_SLEEP_KIND, input: { ms: 6_000 } })).job;
    await db.pool.query(`SELECT pg_notify('jiaowu_outbox', '')`);
    await waitFor('the long job to run', async () => ((await jobRow(db.pool, long.id))?.status === 'RUNNING' ? true : undefined), 20_000);
    const stoppedAt = Date.now();
    expect(await second.terminate()).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
    const released = await jobRow(db.pool, long.id);
    expect(released.status).toBe('QUEUED');
    expect(released).toMatchObject({ message: 'Interrupted by a worker shutdown; waiting for another worker', message_code: 'job.interrupted-by-shutdown' });
    const { rows: outbox } = await db.pool.query('SELECT state, processing_attempts FROM job_outbox WHERE job_id = $1', [long.id]);
    expect(outbox[0]).toMatchObject({ state: 'PUBLISHED', processing_attempts: 0 });

    const third = await spawnService(env);
    cleanups.push(() => third.kill9());
    const done = await waitFor(
      'the released job to complete elsewhere',
      async () => {
        const row = await jobRow(db.pool, long.id);
        return row?.status === 'SUCCEEDED' ? row : undefined;
      },
      40_000,
    );
    expect(done.result).toEqual({ pid: third.pid });
    expect(done.attempts).toBe(1);
    const { rows: effects } = await db.pool.query('SELECT job_id, pid FROM test_effects ORDER BY at');
    expect(effects).toEqual([
      { job_id: short.id, pid: first.pid },
      { job_id: long.id, pid: third.pid },
    ]);
    await third.terminate();
  }, 120_000);
});
