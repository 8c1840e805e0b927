import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkMessagingHealth, OLDEST_WAITING_DEGRADED_SECONDS, SharedHealthCheck, type MessagingHealth } from '../../src/engine/health';
import { InMemoryEventBus } from '../../src/engine/events/in-memory-event-bus';
import { InMemoryTransport } from '../../src/engine/transport/in-memory-transport';
import { buildEngine, createTestDb } from '../support/engine-harness';

let ctx: Awaited<ReturnType<typeof createTestDb>>;

beforeAll(async () => {
  ctx = await createTestDb('engine_health');
});
beforeEach(async () => {
  await ctx.db.pool.query('TRUNCATE jobs, job_outbox');
});
afterAll(async () => {
  await ctx?.close();
});

/**
 * Inserts `n` jobs of `kind` (QUEUED unless said otherwise) with one outbox row each in
 * `state`, due since it was made (`rowAge` ago) unless `due` says when (`-30 seconds`: in 30 s).
 */
async function seed(n: number, kind: string, state: string | null, extra: { jobStatus?: string; jobAge?: string; rowAge?: string; due?: string; lease?: string } = {}) {
  await ctx.db.pool.query(
    `WITH j AS (
       INSERT INTO jobs (id, kind, status, input, created_at)
       SELECT gen_random_uuid(), $2, $3, '{}'::jsonb, now() - $4::interval FROM generate_series(1, $1)
       RETURNING id, kind
     )
     INSERT INTO job_outbox (id, job_id, kind, state, processing_token, lease_expires_at, created_at, available_at)
     SELECT gen_random_uuid(), j.id, j.kind, $5, CASE WHEN $5 = 'PROCESSING' THEN gen_random_uuid() END,
       now() + $6::interval, now() - $7::interval, now() - $8::interval
     FROM j WHERE $5::text IS NOT NULL`,
    [n, kind, extra.jobStatus ?? 'QUEUED', extra.jobAge ?? '0 seconds', state, extra.lease ?? '0 seconds', extra.rowAge ?? '0 seconds', extra.due ?? extra.rowAge ?? '0 seconds'],
  );
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('messaging health', () => {
  it('reports exact figures on a known state and is DEGRADED with the problems listed', async () => {
    await seed(3, 'KIND_A', 'PENDING', { rowAge: '2 minutes', jobAge: '1 minute' });
    await seed(2, 'KIND_B', 'PUBLISHED', { jobAge: '1 minute' });
    await seed(1, 'KIND_A', 'PROCESSING', { jobStatus: 'RUNNING', lease: '-30 seconds', jobAge: '20 minutes' });
    await seed(1, 'KIND_C', 'COMPLETED', { jobStatus: 'SUCCEEDED', jobAge: '1 hour' });
    // A queued job waiting ten minutes to start (its message is with the broker).
    await seed(1, 'KIND_C', 'PUBLISHED', { jobAge: '10 minutes', rowAge: '10 minutes' });

    const engine = buildEngine({ db: ctx.db, registrations: [] });
    const health = await engine.health();
    expect(health.backlog.byState).toEqual({ PENDING: 3, PUBLISHING: 0, PUBLISHED: 3, PROCESSING: 1 });
    const byKind = [...health.backlog.byKind].sort((a, b) => `${a.state}${a.kind}`.localeCompare(`${b.state}${b.kind}`));
    expect(byKind).toEqual([
      { state: 'PENDING', kind: 'KIND_A', count: 3 },
      { state: 'PROCESSING', kind: 'KIND_A', count: 1 },
      { state: 'PUBLISHED', kind: 'KIND_B', count: 2 },
      { state: 'PUBLISHED', kind: 'KIND_C', count: 1 },
    ]);
    expect(health.expiredLeases).toBe(1);
    expect(health.oldestQueuedJobAgeSeconds!).toBeGreaterThan(599);
    expect(health.oldestQueuedJobAgeSeconds!).toBeLessThan(610);
    expect(health.oldestPendingMessageAgeSeconds!).toBeGreaterThan(119);
    expect(health.oldestPendingMessageAgeSeconds!).toBeLessThan(130);
    expect(health.database.reachable).toBe(true);
    expect(health.transport).toEqual({ name: 'in-memory', durable: false, connection: 'connected', parked: 0 });
    expect(health.eventBus).toEqual({ name: 'in-memory', connection: 'connected' });
    expect(health.status).toBe('DEGRADED');
    expect(health.problems).toHaveLength(2);
    expect(health.problems.join('\n')).toMatch(/1 message\(s\) hold an expired lease/);
    expect(health.problems.join('\n')).toMatch(/oldest queued job has waited 60\d s/);
  });

  it('counts a wait from when the message became due: a job back in the queue for a retry has not waited while its back-off ran', async () => {
    // Made twenty minutes ago, its attempt failed; its retry is due in 30 s.
    await seed(1, 'KIND_A', 'PENDING', { jobAge: '20 minutes', rowAge: '20 minutes', due: '-30 seconds' });
    let health = await buildEngine({ db: ctx.db, registrations: [] }).health();
    expect(health.status).toBe('HEALTHY');
    expect(health.oldestQueuedJobAgeSeconds).toBeNull();
    expect(health.oldestPendingMessageAgeSeconds).toBeNull();
    // Its back-off ended 10 s ago and nothing has sent it: it has waited 10 s.
    await ctx.db.pool.query(`UPDATE job_outbox SET available_at = now() - interval '10 seconds'`);
    health = await buildEngine({ db: ctx.db, registrations: [] }).health();
    expect(health.status).toBe('HEALTHY');
    for (const age of [health.oldestQueuedJobAgeSeconds!, health.oldestPendingMessageAgeSeconds!]) {
      expect(age).toBeGreaterThan(9);
      expect(age).toBeLessThan(20);
    }
  });

  it('a queued job younger than the threshold is not a problem', async () => {
    await seed(1, 'KIND_A', 'PENDING', { jobAge: `${OLDEST_WAITING_DEGRADED_SECONDS - 30} seconds`, rowAge: `${OLDEST_WAITING_DEGRADED_SECONDS - 30} seconds` });
    const health = await buildEngine({ db: ctx.db, registrations: [] }).health();
    expect(health.status).toBe('HEALTHY');
    expect(health.oldestQueuedJobAgeSeconds!).toBeGreaterThan(OLDEST_WAITING_DEGRADED_SECONDS - 31);
  });

  it('HEALTHY on an empty database', async () => {
    const health = await buildEngine({ db: ctx.db, registrations: [] }).health();
    expect(health.status).toBe('HEALTHY');
    expect(health.problems).toEqual([]);
    expect(health.backlog.byState).toEqual({ PENDING: 0, PUBLISHING: 0, PUBLISHED: 0, PROCESSING: 0 });
    expect(health.backlog.byKind).toEqual([]);
    expect(health.expiredLeases).toBe(0);
    expect(health.oldestQueuedJobAgeSeconds).toBeNull();
    expect(health.oldestPendingMessageAgeSeconds).toBeNull();
  });

  it('UNHEALTHY when the database is unreachable', async () => {
    const port = await closedPort();
    const deadPool = new pg.Pool({ connectionString: `postgres://nobody@127.0.0.1:${port}/nothing`, connectionTimeoutMillis: 2_000 });
    deadPool.on('error', () => undefined);
    try {
      const engine = buildEngine({ db: { ...ctx.db, pool: deadPool }, registrations: [] });
      const health = await engine.health();
      expect(health.status).toBe('UNHEALTHY');
      expect(health.database.reachable).toBe(false);
      expect(health.problems.join('\n')).toMatch(/database unreachable/);
      expect(health.expiredLeases).toBe(0);
      expect(health.oldestQueuedJobAgeSeconds).toBeNull();
    } finally {
      await deadPool.end();
    }
  });

  it('UNHEALTHY when the transport is closed', async () => {
    const transport = new InMemoryTransport();
    await transport.close();
    const health = await checkMessagingHealth(ctx.db.pool, transport, new InMemoryEventBus());
    expect(health.status).toBe('UNHEALTHY');
    expect(health.database.reachable).toBe(true);
    expect(health.problems).toEqual(['transport in-memory is closed']);
  });

  it('DEGRADED (not UNHEALTHY) when only the event bus is down: jobs still run, live views lag', async () => {
    const bus = new InMemoryEventBus();
    await bus.close();
    const health = await buildEngine({ db: ctx.db, registrations: [], bus }).health();
    expect(health.status).toBe('DEGRADED');
    expect(health.eventBus.connection).toBe('closed');
    expect(health.problems).toEqual(['event bus in-memory is closed']);
  });
});

describe('SharedHealthCheck', () => {
  const REUSE_MS = 200;
  const report = (n: number) => ({ status: `check ${n}` }) as unknown as MessagingHealth;

  it('shares the check in flight and its result within the reuse window, then checks again', async () => {
    let checks = 0;
    let finish: () => void = () => undefined;
    const shared = new SharedHealthCheck(() => {
      const n = ++checks;
      return new Promise<MessagingHealth>((resolve) => (finish = () => resolve(report(n))));
    }, REUSE_MS);
    const during = [shared.current(), shared.current(), shared.current()];
    expect(checks).toBe(1);
    finish();
    expect((await Promise.all(during)).map((h) => h.status)).toEqual(['check 1', 'check 1', 'check 1']);
    expect((await shared.current()).status).toBe('check 1');
    expect(checks).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, REUSE_MS + 50));
    const next = shared.current();
    finish();
    expect((await next).status).toBe('check 2');
    expect(checks).toBe(2);
  });

  it('a check still running past the window is not doubled; a failed one is shared too, then tried again', async () => {
    let checks = 0;
    let settle: (ok: boolean) => void = () => undefined;
    const shared = new SharedHealthCheck(() => {
      const n = ++checks;
      return new Promise<MessagingHealth>((resolve, reject) => (settle = (ok) => (ok ? resolve(report(n)) : reject(new Error(`check ${n} failed`)))));
    }, REUSE_MS);
    const first = shared.current();
    await new Promise((resolve) => setTimeout(resolve, REUSE_MS + 50));
    expect(shared.current()).toBe(first);
    expect(checks).toBe(1);
    settle(false);
    await expect(first).rejects.toThrow('check 1 failed');
    await expect(shared.current()).rejects.toThrow('check 1 failed');
    await new Promise((resolve) => setTimeout(resolve, REUSE_MS + 50));
    const again = shared.current();
    settle(true);
    expect((await again).status).toBe('check 2');
  });
});
