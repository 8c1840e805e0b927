import { randomUUID } from 'node:crypto';
import { InMemoryTransport } from '../../src/engine/transport/in-memory-transport';
import { asJobId, asOutboxId } from '../../src/engine/types';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { poolSql, type Sql } from '../../src/engine/db/sql';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { MAINTENANCE_LOCK_KEY, MaintenanceScheduler } from '../../src/engine/maintenance/maintenance-scheduler';
import { recoverOnStartup } from '../../src/engine/queries/recover-on-startup';
import { JobStatus } from '../../src/engine/types';
import { buildEngine, createTestDb, outboxRows, waitForJob } from '../support/engine-harness';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine | undefined;
const others: JobEngine[] = [];

beforeAll(async () => {
  ctx = await createTestDb('engine_maintenance');
});
beforeEach(async () => {
  // Every pass here works on the whole table: start each test from empty.
  await ctx.db.pool.query('TRUNCATE jobs, job_outbox');
});
afterEach(async () => {
  await engine?.stop(1_000);
  engine = undefined;
  for (const other of others.splice(0)) await other.stop(1_000);
});
afterAll(async () => {
  await ctx?.close();
});

interface SeedRow {
  kind?: string;
  jobStatus?: string;
  /** null: no outbox row at all. */
  state?: string | null;
  /** SQL expressions (relative to now()). */
  updatedAt?: string;
  availableAt?: string;
  completedAt?: string | null;
  leaseExpiresAt?: string | null;
  jobCreatedAt?: string;
  attempts?: number;
}

/** One job and (optionally) its outbox row, written straight with SQL. */
async function seed(row: SeedRow = {}): Promise<{ jobId: string; outboxId: string }> {
  const jobId = randomUUID();
  const outboxId = randomUUID();
  const kind = row.kind ?? 'MAINT';
  await ctx.db.pool.query(
    `INSERT INTO jobs (id, kind, status, input, created_at, started_at)
     VALUES ($1, $2, $3, '{}'::jsonb, ${row.jobCreatedAt ?? 'now()'}, CASE WHEN $3 = 'QUEUED' THEN NULL ELSE now() END)`,
    [jobId, kind, row.jobStatus ?? 'QUEUED'],
  );
  if (row.state !== null) {
    await ctx.db.pool.query(
      `INSERT INTO job_outbox (id, job_id, kind, state, processing_token, lease_expires_at, processing_attempts,
         available_at, updated_at, completed_at)
       VALUES ($1, $2, $3, $4, CASE WHEN $4 = 'PROCESSING' THEN gen_random_uuid() END, ${row.leaseExpiresAt ?? 'NULL'}, $5,
         ${row.availableAt ?? 'now()'}, ${row.updatedAt ?? 'now()'}, ${row.completedAt ?? 'NULL'})`,
      [outboxId, jobId, kind, row.state ?? 'PENDING', row.attempts ?? 0],
    );
  }
  return { jobId, outboxId };
}

async function outboxState(outboxId: string) {
  const { rows } = await ctx.db.pool.query('SELECT * FROM job_outbox WHERE id = $1', [outboxId]);
  return rows[0];
}

async function jobStatus(jobId: string): Promise<string> {
  const { rows } = await ctx.db.pool.query('SELECT status FROM jobs WHERE id = $1', [jobId]);
  return rows[0].status;
}

async function count(where = 'true'): Promise<number> {
  const { rows } = await ctx.db.pool.query(`SELECT count(*)::int AS n FROM job_outbox WHERE ${where}`);
  return rows[0].n;
}

describe('lease rescuer', () => {
  it('puts expired PROCESSING rows back to PENDING and their jobs to QUEUED; then each job completes exactly once', async () => {
    const calls = new Map<string, number>();
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: 'MAINT',
          defaults: { consumers: 2 },
          processor: async ({ job }) => {
            calls.set(job.id, (calls.get(job.id) ?? 0) + 1);
            return 'ok';
          },
        },
      ],
    });
    // Three jobs whose worker died mid-run (lease long gone), one still held by a live worker.
    const dead = await Promise.all(
      [1, 2, 3].map(() =>
        seed({ jobStatus: 'RUNNING', state: 'PROCESSING', leaseExpiresAt: `now() - interval '2 minutes'`, attempts: 1 }),
      ),
    );
    const alive = await seed({ jobStatus: 'RUNNING', state: 'PROCESSING', leaseExpiresAt: `now() + interval '5 minutes'`, attempts: 1 });
    const aliveBefore = await outboxState(alive.outboxId);

    expect(await engine.leaseRescuer.runOnce()).toBe(3);
    for (const { jobId, outboxId } of dead) {
      const row = await outboxState(outboxId);
      expect(row.state).toBe('PENDING');
      expect(row.processing_token).toBeNull();
      expect(row.lease_expires_at).toBeNull();
      expect(row.last_error).toMatch(/Lease expired/);
      expect(row.processing_attempts).toBe(1);
      expect(await jobStatus(jobId)).toBe('QUEUED');
    }
    expect(await outboxState(alive.outboxId)).toEqual(aliveBefore);
    expect(await jobStatus(alive.jobId)).toBe('RUNNING');
    // Nothing more to rescue.
    expect(await engine.leaseRescuer.runOnce()).toBe(0);

    await engine.start();
    for (const { jobId } of dead) {
      const done = await waitForJob(engine, jobId, undefined, 10_000);
      expect(done.status).toBe(JobStatus.SUCCEEDED);
      expect(done.attempts).toBe(2);
    }
    await new Promise((r) => setTimeout(r, 300));
    for (const { jobId } of dead) {
      expect(calls.get(jobId)).toBe(1);
      const rows = await outboxRows(ctx.db.pool, jobId);
      expect(rows.map((r) => r.state)).toEqual(['COMPLETED']);
    }
    expect(calls.has(alive.jobId)).toBe(false);
  });
});

describe('maintenance in a running engine', () => {
  it('on its interval, rescues an expired lease and the woken publisher gets the job run', async () => {
    let calls = 0;
    engine = buildEngine({
      db: ctx.db,
      registrations: [{ kind: 'MAINT', defaults: { consumers: 1 }, processor: async () => ++calls }],
      // A long poll: only the rescuer's wake-up can get the job published in time.
      settings: { maintenanceIntervalSeconds: 1, publisherPollMs: 60_000 },
      roles: { maintenance: true },
    });
    await engine.start();
    const dead = await seed({ jobStatus: 'RUNNING', state: 'PROCESSING', leaseExpiresAt: `now() - interval '1 minute'`, attempts: 1 });
    const done = await waitForJob(engine, dead.jobId, undefined, 6_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(calls).toBe(1);
  });
});

describe('outbox republisher', () => {
  it('moves PUBLISHING/PUBLISHED rows stranded past the threshold (and due) to PENDING, and leaves the rest', async () => {
    engine = buildEngine({ db: ctx.db, registrations: [], settings: { republishAfterSeconds: 60 } });
    const old = `now() - interval '10 minutes'`;
    const strandedPublishing = await seed({ state: 'PUBLISHING', updatedAt: old, availableAt: old });
    const strandedPublished = await seed({ state: 'PUBLISHED', updatedAt: old, availableAt: old });
    const freshPublished = await seed({ state: 'PUBLISHED', updatedAt: `now() - interval '10 seconds'`, availableAt: old });
    const freshPublishing = await seed({ state: 'PUBLISHING' });
    // Released for a retry long ago but its back-off is not over: the broker still holds it.
    const backingOff = await seed({ state: 'PUBLISHED', updatedAt: old, availableAt: `now() + interval '5 minutes'` });
    // Became due only just now (back-off ended 10 s ago): the broker has had no time yet.
    const justDue = await seed({ state: 'PUBLISHED', updatedAt: old, availableAt: `now() - interval '10 seconds'` });
    const oldPending = await seed({ state: 'PENDING', updatedAt: old, availableAt: old });
    const oldProcessing = await seed({ jobStatus: 'RUNNING', state: 'PROCESSING', updatedAt: old, leaseExpiresAt: `now() + interval '1 minute'` });
    const untouched = [freshPublished, freshPublishing, backingOff, justDue, oldPending, oldProcessing];
    const before = await Promise.all(untouched.map((s) => outboxState(s.outboxId)));

    expect(await engine.outboxRepublisher.runOnce()).toBe(2);
    for (const s of [strandedPublishing, strandedPublished]) {
      const row = await outboxState(s.outboxId);
      expect(row.state).toBe('PENDING');
      expect(Date.now() - new Date(row.available_at).getTime()).toBeLessThan(60_000);
    }
    expect(await Promise.all(untouched.map((s) => outboxState(s.outboxId)))).toEqual(before);
    expect(await engine.outboxRepublisher.runOnce()).toBe(0);
  });

  it('leaves PUBLISHED rows of a kind whose queue still holds messages (a backlog, not a loss)', async () => {
    const transport = new InMemoryTransport();
    const noop = async () => null;
    engine = buildEngine({
      db: ctx.db,
      transport,
      registrations: [
        { kind: 'BACKLOGGED', defaults: { consumers: 1 }, processor: noop },
        { kind: 'DRAINED', defaults: { consumers: 1 }, processor: noop },
      ],
      settings: { republishAfterSeconds: 60 },
    });
    // No consumer runs: one message waits in BACKLOGGED's queue.
    await transport.publish([{ outboxId: asOutboxId(randomUUID()), jobId: asJobId(randomUUID()), kind: 'BACKLOGGED' }]);
    const old = `now() - interval '10 minutes'`;
    const waitingInQueue = await seed({ kind: 'BACKLOGGED', state: 'PUBLISHED', updatedAt: old, availableAt: old });
    const neverConfirmed = await seed({ kind: 'BACKLOGGED', state: 'PUBLISHING', updatedAt: old, availableAt: old });
    const lost = await seed({ kind: 'DRAINED', state: 'PUBLISHED', updatedAt: old, availableAt: old });

    expect(await engine.outboxRepublisher.runOnce()).toBe(2);
    expect((await outboxState(waitingInQueue.outboxId)).state).toBe('PUBLISHED');
    expect((await outboxState(neverConfirmed.outboxId)).state).toBe('PENDING');
    expect((await outboxState(lost.outboxId)).state).toBe('PENDING');
  });
});

describe('retention cleaner', () => {
  it('deletes only COMPLETED rows past retention, in batches of the configured size', async () => {
    engine = buildEngine({ db: ctx.db, registrations: [], settings: { retentionDays: 14, cleanupBatchSize: 500 } });
    const insertMany = (n: number, state: string, completedAt: string | null, kind: string) =>
      ctx.db.pool.query(
        `INSERT INTO job_outbox (id, job_id, kind, state, completed_at, created_at, updated_at)
         SELECT gen_random_uuid(), gen_random_uuid(), $2, $3, ${completedAt ?? 'NULL'}, now() - interval '30 days', now() - interval '30 days'
         FROM generate_series(1, $1)`,
        [n, kind, state],
      );
    await insertMany(1_234, 'COMPLETED', `now() - interval '15 days'`, 'OLD_DONE');
    await insertMany(7, 'COMPLETED', `now() - interval '13 days 23 hours'`, 'RECENT_DONE');
    await insertMany(5, 'PENDING', null, 'OLD_PENDING');
    await insertMany(4, 'PUBLISHED', null, 'OLD_PUBLISHED');
    await insertMany(3, 'PROCESSING', null, 'OLD_PROCESSING');

    const result = await engine.retentionCleaner.runOnce();
    expect(result).toEqual({ deleted: 1_234, batches: [500, 500, 234] });
    const { rows } = await ctx.db.pool.query(`SELECT kind, count(*)::int AS n FROM job_outbox GROUP BY kind ORDER BY kind`);
    expect(rows).toEqual([
      { kind: 'OLD_PENDING', n: 5 },
      { kind: 'OLD_PROCESSING', n: 3 },
      { kind: 'OLD_PUBLISHED', n: 4 },
      { kind: 'RECENT_DONE', n: 7 },
    ]);
    expect(await engine.retentionCleaner.runOnce()).toEqual({ deleted: 0, batches: [] });
  });

  it('an exact multiple of the batch size ends with an empty batch, not a loop', async () => {
    engine = buildEngine({ db: ctx.db, registrations: [], settings: { retentionDays: 1, cleanupBatchSize: 100 } });
    await ctx.db.pool.query(
      `INSERT INTO job_outbox (id, job_id, kind, state, completed_at)
       SELECT gen_random_uuid(), gen_random_uuid(), 'X', 'COMPLETED', now() - interval '2 days' FROM generate_series(1, 300)`,
    );
    expect(await engine.retentionCleaner.runOnce()).toEqual({ deleted: 300, batches: [100, 100, 100] });
    expect(await count()).toBe(0);
  });
});

describe('startup recovery', () => {
  /** Counts the statements recovery sends (a spy on the real connection). */
  function countingSql(): { sql: Sql; statements: string[] } {
    const inner = poolSql(ctx.db.pool);
    const statements: string[] = [];
    const sql: Sql = (text, params) => {
      statements.push(text);
      return inner(text, params);
    };
    return { sql, statements };
  }

  async function seedRecoveryState() {
    return {
      // active jobs without a live outbox row
      queuedNoRow: await seed({ jobStatus: 'QUEUED', state: null }),
      runningOnlyCompleted: await seed({ jobStatus: 'RUNNING', state: 'COMPLETED', completedAt: 'now()' }),
      // live rows of terminal jobs
      succeededPending: await seed({ jobStatus: 'SUCCEEDED', state: 'PENDING' }),
      cancelledPublished: await seed({ jobStatus: 'CANCELLED', state: 'PUBLISHED' }),
      // in flight for a live job
      queuedPublished: await seed({ jobStatus: 'QUEUED', state: 'PUBLISHED' }),
      queuedPublishing: await seed({ jobStatus: 'QUEUED', state: 'PUBLISHING' }),
      // healthy, nothing to do
      runningHeld: await seed({ jobStatus: 'RUNNING', state: 'PROCESSING', leaseExpiresAt: `now() + interval '1 minute'` }),
      queuedPending: await seed({ jobStatus: 'QUEUED', state: 'PENDING' }),
      doneDone: await seed({ jobStatus: 'SUCCEEDED', state: 'COMPLETED', completedAt: 'now()' }),
    };
  }

  it('durable transport: one statement each for missing rows and orphans; in-flight messages stay with the broker', async () => {
    const s = await seedRecoveryState();
    const rowsBefore = await count();
    const { sql, statements } = countingSql();
    const result = await recoverOnStartup(sql, { durableTransport: true });
    expect(result).toEqual({ requeued: 2, orphansCompleted: 2, resent: 0 });
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatch(/NOT EXISTS/);
    expect(await count()).toBe(rowsBefore + 2);
    for (const job of [s.queuedNoRow, s.runningOnlyCompleted]) {
      const { rows } = await ctx.db.pool.query(`SELECT state FROM job_outbox WHERE job_id = $1 AND state <> 'COMPLETED'`, [job.jobId]);
      expect(rows).toEqual([{ state: 'PENDING' }]);
    }
    expect((await outboxState(s.succeededPending.outboxId)).state).toBe('COMPLETED');
    expect((await outboxState(s.cancelledPublished.outboxId)).state).toBe('COMPLETED');
    expect((await outboxState(s.queuedPublished.outboxId)).state).toBe('PUBLISHED');
    expect((await outboxState(s.queuedPublishing.outboxId)).state).toBe('PUBLISHING');
    expect((await outboxState(s.runningHeld.outboxId)).state).toBe('PROCESSING');
    expect((await outboxState(s.queuedPending.outboxId)).state).toBe('PENDING');

    // Idempotent: a second start finds nothing to do.
    expect(await recoverOnStartup(sql, { durableTransport: true })).toEqual({ requeued: 0, orphansCompleted: 0, resent: 0 });
    expect(await count()).toBe(rowsBefore + 2);
  });

  it('non-durable transport: also resends PUBLISHING/PUBLISHED (the memory that held them is gone), in one more statement', async () => {
    const s = await seedRecoveryState();
    const rowsBefore = await count();
    const { sql, statements } = countingSql();
    const result = await recoverOnStartup(sql, { durableTransport: false });
    expect(result).toEqual({ requeued: 2, orphansCompleted: 2, resent: 2 });
    expect(statements).toHaveLength(3);
    expect(await count()).toBe(rowsBefore + 2);
    expect((await outboxState(s.queuedPublished.outboxId)).state).toBe('PENDING');
    expect((await outboxState(s.queuedPublishing.outboxId)).state).toBe('PENDING');
    // orphans were completed before the resend, so they are not sent again
    expect((await outboxState(s.cancelledPublished.outboxId)).state).toBe('COMPLETED');
    expect((await outboxState(s.runningHeld.outboxId)).state).toBe('PROCESSING');
    expect(await count(`state = 'PENDING'`)).toBe(5);
  });

  it('engine.start() runs it: a job left with no outbox row is run', async () => {
    let calls = 0;
    engine = buildEngine({
      db: ctx.db,
      registrations: [{ kind: 'MAINT', defaults: { consumers: 1 }, processor: async () => ++calls }],
    });
    const lost = await seed({ jobStatus: 'QUEUED', state: null });
    await engine.start();
    const done = await waitForJob(engine, lost.jobId, undefined, 10_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(calls).toBe(1);
  });
});

describe('maintenance scheduler', () => {
  it('runs in one process at a time: while another session holds the advisory lock, runOnce returns null', async () => {
    const make = () => buildEngine({ db: ctx.db, registrations: [], roles: { maintenance: true } });
    engine = make();
    const second = make();
    others.push(second);
    const holder = new pg.Client({ connectionString: ctx.db.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MAINTENANCE_LOCK_KEY]);
      expect(await engine.maintenance.runOnce()).toBeNull();
      expect(await second.maintenance.runOnce()).toBeNull();
      await holder.query('SELECT pg_advisory_unlock($1)', [MAINTENANCE_LOCK_KEY]);
      const ran = await engine.maintenance.runOnce();
      expect(ran).not.toBeNull();
      expect(Object.keys(ran!).sort()).toEqual(['lease-rescuer', 'outbox-republisher', 'retention-cleaner']);
      // the pass released the lock: the other process can run next
      expect(await second.maintenance.runOnce()).not.toBeNull();
    } finally {
      await holder.end();
    }
  });

  it('two schedulers on separate pools, started together: exactly one pass runs', async () => {
    let running = 0;
    let maxRunning = 0;
    let passes = 0;
    const slow = {
      name: 'slow',
      runOnce: async () => {
        running++;
        passes++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((r) => setTimeout(r, 400));
        running--;
        return 'done';
      },
    };
    const pools = [new pg.Pool({ connectionString: ctx.db.url, max: 2 }), new pg.Pool({ connectionString: ctx.db.url, max: 2 })];
    try {
      // Connections open before the race, so both passes try the lock at the same moment.
      await Promise.all(pools.map((p) => p.query('SELECT 1')));
      const schedulers = pools.map((pool) => new MaintenanceScheduler({ pool, logger: silentLogger, services: [slow], intervalMs: 60_000 }));
      const results = await Promise.all(schedulers.map((s) => s.runOnce()));
      expect(results.filter((r) => r !== null)).toEqual([{ slow: 'done' }]);
      expect(passes).toBe(1);
      expect(maxRunning).toBe(1);
      // and afterwards either may run
      expect(await schedulers[1]!.runOnce()).toEqual({ slow: 'done' });
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});
