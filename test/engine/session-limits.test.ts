/**
 * Session limits on every pool. A TCP proxy between the service's pools and PostgreSQL
 * stops forwarding — a network partition, or connections a middlebox forgot: without
 * limits a statement in flight waits for the kernel's TCP timeout, and with it the
 * claim and completion batchers that run one statement at a time. With them, the
 * statement fails within its limit, the connection is closed, and the work goes on
 * over a fresh one.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished as onTeardown } from 'vitest';
import { openDatabase, type Database } from '../../src/database';
import { CLIENT_WAIT_MARGIN_MS } from '../../src/engine/db/session-limits';
import { poolSql } from '../../src/engine/db/sql';
import { isTransientDbError } from '../../src/engine/db/transient-error';
import type { JobEngine } from '../../src/engine/engine';
import { enqueueInPool } from '../../src/engine/enqueue';
import { silentLogger } from '../../src/engine/logger';
import { KindRegistry, type KindRegistration } from '../../src/engine/registry';
import { JobStatus } from '../../src/engine/types';
import { buildEngine, waitForJob } from '../support/engine-harness';
import { createTestDatabase, testDatabaseUrl, type TestDatabase } from '../support/services';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const LIMITS = { statementTimeoutMs: 1_000, lockTimeoutMs: 500, idleInTransactionTimeoutMs: 5_000, connectTimeoutMs: 1_000 };
/** The longest a statement may wait for an answer that never comes. */
const CLIENT_WAIT_MS = LIMITS.statementTimeoutMs + CLIENT_WAIT_MARGIN_MS;
/** Slack for a loaded machine on top of a limit; far below any TCP timeout. */
const SLACK_MS = 4_000;

let testDb: TestDatabase;
let proxy: TcpProxy;
let db: Database;

beforeAll(async () => {
  testDb = await createTestDatabase('engine_session_limits');
  const target = new URL(testDatabaseUrl());
  proxy = await startTcpProxy(Number(target.port || 5432), target.hostname);
  db = await openDatabase({ url: proxy.urlFor(testDb.url), poolSize: 2, logger: silentLogger, limits: LIMITS });
});
/** Released at the end in any case, so no processor waits for ever. */
let releaseGate: () => void = () => undefined;
let engine: JobEngine | undefined;
afterAll(async () => {
  releaseGate();
  // Closing the proxy ends the connections it dropped, so nothing waits on them.
  await proxy?.close();
  await engine?.stop(1_000);
  await db?.close().catch(() => undefined);
  await testDb?.drop();
});

/** Settles `work` or reports that it was still waiting after `ms`. */
async function within<T>(ms: number, work: Promise<T>): Promise<{ settled: 'resolved' | 'rejected' | 'still waiting'; error?: unknown; elapsedMs: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    work.then(
      () => ({ settled: 'resolved' as const }),
      (error: unknown) => ({ settled: 'rejected' as const, error }),
    ),
    new Promise<{ settled: 'still waiting' }>((resolve) => (timer = setTimeout(() => resolve({ settled: 'still waiting' }), ms))),
  ]);
  clearTimeout(timer);
  return { ...outcome, elapsedMs: performance.now() - started };
}

describe('every pool has limits', () => {
  it('sessions run with the configured statement, lock and idle-in-transaction limits', async () => {
    for (const sql of [poolSql(db.pool), poolSql(db.relaxedPool)]) {
      const [row] = await sql<Record<string, string>>(
        `SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock,
                current_setting('idle_in_transaction_session_timeout') AS idle`,
      );
      expect(row).toEqual({ statement: '1s', lock: '500ms', idle: '5s' });
    }
    const [orm] = await db.orm.em
      .fork()
      .getConnection()
      .execute(`SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock`);
    expect(orm).toEqual({ statement: '1s', lock: '500ms' });
    // The server enforces them.
    await expect(poolSql(db.pool)('SELECT pg_sleep(3)')).rejects.toMatchObject({ code: '57014' });
  });

  it('a statement on a connection that stopped answering fails within its limit, on every pool, and the pool replaces that connection', async () => {
    const pools = {
      engine: { run: () => poolSql(db.pool)('SELECT 1'), size: 2 },
      relaxed: { run: () => poolSql(db.relaxedPool)('SELECT 1'), size: 2 },
      orm: { run: () => db.orm.em.fork().getConnection().execute('SELECT 1'), size: 10 },
    };
    // Each pool holds open connections, then the network stops carrying them.
    for (const { run } of Object.values(pools)) await run();
    expect(proxy.drop()).toBeGreaterThanOrEqual(3);

    await Promise.all(
      Object.entries(pools).map(async ([name, { run, size }]) => {
        // Every statement that meets a lost connection fails within the limit and costs
        // the pool that connection; at most one per connection the pool held.
        const failures: string[] = [];
        for (;;) {
          const attempt = await within(CLIENT_WAIT_MS + SLACK_MS, run());
          expect(attempt.settled, `${name}: the statement was still waiting after ${attempt.elapsedMs.toFixed(0)} ms`).not.toBe('still waiting');
          if (attempt.settled === 'resolved') break;
          failures.push(String(attempt.error));
          expect(isTransientDbError(attempt.error), `${name}: ${String(attempt.error)}`).toBe(true);
          expect(failures.length, `${name}: ${failures.join('; ')}`).toBeLessThanOrEqual(size);
        }
      }),
    );
  });

  it('opening a connection to a server that does not answer fails within the connect limit', async () => {
    await proxy.pause('hold');
    try {
      const client = await within(LIMITS.connectTimeoutMs + SLACK_MS, db.pool.connect().then((c) => c.release()));
      // The pool may still hold an idle connection; take both, so one must be new.
      const second = await within(LIMITS.connectTimeoutMs + SLACK_MS, Promise.all([db.pool.connect(), db.pool.connect()]).then((cs) => cs.forEach((c) => c.release())));
      expect([client.settled, second.settled]).not.toContain('still waiting');
      expect(second.settled).toBe('rejected');
      expect(isTransientDbError(second.error), String(second.error)).toBe(true);
    } finally {
      await proxy.resume();
    }
  });
});

describe('the engine over connections that stop answering', () => {
  it('a completion and a claim caught on lost connections fail within the limit and are repeated on fresh ones', async () => {
    const gates = new Map<string, Promise<void>>();
    const limited: KindRegistration = {
      kind: 'LIMITED',
      defaults: { consumers: 2 },
      processor: async ({ input }) => {
        const gate = gates.get((input as { gate?: string }).gate ?? '');
        if (gate) await gate;
        return 'done';
      },
    };
    const registry = new KindRegistry();
    registry.register(limited);
    const direct = new pg.Pool({ connectionString: testDb.url, max: 1 });
    onTeardown(() => direct.end());
    engine = buildEngine({ db, registrations: [limited] });
    await engine.start();
    // Warm the pools: their connections are open when the network loses them.
    const { job: first } = await engine.enqueue({ kind: 'LIMITED', input: {} });
    expect((await waitForJob(engine, first.id)).status).toBe(JobStatus.SUCCEEDED);

    gates.set('b', new Promise<void>((resolve) => (releaseGate = resolve)));
    const { job: b } = await engine.enqueue({ kind: 'LIMITED', input: { gate: 'b' } });
    await waitForJob(engine, b.id, (job) => job.status === JobStatus.RUNNING);
    proxy.drop();
    // B's processor returns: its completion goes out on a connection that no longer answers.
    releaseGate();
    const started = performance.now();
    // A job enqueued now (by another process, straight to the database): its publish and
    // its claim meet lost connections too.
    const c = await enqueueInPool(direct, registry, { kind: 'LIMITED', input: {} });
    // Bound: a lost connection per pool statement in the way (pool of 2), each ending
    // after the client-side wait, plus the repeats' back-off — far below a TCP timeout.
    const bound = 4 * CLIENT_WAIT_MS + 2 * SLACK_MS;
    const [doneB, doneC] = await Promise.all([waitForJob(engine, b.id, undefined, bound), waitForJob(engine, c.job.id, undefined, bound)]);
    expect(doneB.status).toBe(JobStatus.SUCCEEDED);
    expect(doneC.status).toBe(JobStatus.SUCCEEDED);
    expect(doneB.attempts).toBe(1);
    expect(performance.now() - started).toBeLessThan(bound);
  }, 90_000);
});
