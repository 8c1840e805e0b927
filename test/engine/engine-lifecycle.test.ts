import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { PermanentJobError } from '../../src/engine/registry';
import { JobEventReason, JobStatus, type JobEvent } from '../../src/engine/types';
import type { MaintenanceService } from '../../src/engine/maintenance/maintenance-scheduler';
import { buildEngine, createTestDb, outboxRows, waitForJob } from '../support/engine-harness';
import { waitUntil } from '../api/support/api-server';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine | undefined;

beforeAll(async () => {
  ctx = await createTestDb('engine_lifecycle');
});
afterEach(async () => {
  await engine?.stop(1_000);
  engine = undefined;
});
afterAll(async () => {
  await ctx.close();
});

describe('job lifecycle on the in-memory transport', () => {
  it('runs a job: QUEUED → RUNNING → steps and progress → SUCCEEDED, with ordered events', async () => {
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: 'ECHO',
          defaults: { consumers: 1 },
          processor: async ({ input, progress }) => {
            progress.step('first step');
            progress.report(0.5, 'half way');
            await new Promise((r) => setTimeout(r, 1_200));
            progress.step('second step');
            return { echoed: input };
          },
        },
      ],
    });
    const events: JobEvent[] = [];
    engine.subscribe((e) => events.push(e));
    await engine.start();
    const { job, created } = await engine.enqueue({ kind: 'ECHO', input: { hello: 'world' }, requestedBy: 'tester' });
    expect(created).toBe(true);
    expect(job.status).toBe(JobStatus.QUEUED);
    const done = await waitForJob(engine, job.id);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(done.result).toEqual({ echoed: { hello: 'world' } });
    expect(done.progress).toBe(1);
    expect(done.attempts).toBe(1);
    expect(done.completedAt).not.toBeNull();
    await new Promise((r) => setTimeout(r, 50));
    const mine = events.filter((e) => e.jobId === job.id);
    const sequences = mine.map((e) => e.sequence);
    expect([...sequences].sort((a, b) => a - b)).toEqual(sequences);
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(mine[0]!.reason).toBe(JobEventReason.ENQUEUED);
    expect(mine.map((e) => e.reason)).toContain(JobEventReason.STARTED);
    expect(mine.map((e) => e.currentStep)).toContain('first step');
    expect(mine.map((e) => e.currentStep)).toContain('second step');
    expect(mine.at(-1)!.status).toBe(JobStatus.SUCCEEDED);
    const [outbox] = await outboxRows(ctx.db.pool, job.id);
    expect(outbox.state).toBe('COMPLETED');
    expect(outbox.processing_token).toBeNull();
  });

  it('retries a failing job with back-off, keeps the last error, and succeeds', async () => {
    let calls = 0;
    const startedAt: number[] = [];
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: 'FLAKY',
          defaults: { consumers: 1 },
          processor: async () => {
            startedAt.push(Date.now());
            calls++;
            if (calls < 3) throw new Error(`boom ${calls}`);
            return 'ok';
          },
        },
      ],
      settings: { retryBaseMs: 200, retryMaxMs: 1_000, attemptLimit: 5 },
    });
    await engine.start();
    const { job } = await engine.enqueue({ kind: 'FLAKY', input: {} });
    const done = await waitForJob(engine, job.id);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(done.attempts).toBe(3);
    expect(calls).toBe(3);
    // equal jitter: at least half the nominal delay (200 ms, then 400 ms)
    expect(startedAt[1]! - startedAt[0]!).toBeGreaterThanOrEqual(100);
    expect(startedAt[2]! - startedAt[1]!).toBeGreaterThanOrEqual(200);
  });

  it('fails the job at the attempt limit with a message a person can act on', async () => {
    engine = buildEngine({
      db: ctx.db,
      registrations: [{ kind: 'ALWAYS_FAILS', defaults: { consumers: 1 }, processor: async () => Promise.reject(new Error('disk full')) }],
      settings: { attemptLimit: 2, retryBaseMs: 100, retryMaxMs: 100 },
    });
    await engine.start();
    const { job } = await engine.enqueue({ kind: 'ALWAYS_FAILS', input: {}, exclusiveKey: 'thing:1' });
    const done = await waitForJob(engine, job.id);
    expect(done.status).toBe(JobStatus.FAILED);
    expect(done.attempts).toBe(2);
    // An error the processor did not raise for the job's readers is not theirs to read: the outbox row keeps it.
    expect(done.errorMessage).toMatch(/^Internal error \(ref [0-9a-f]{12}\)/);
    expect(done.errorMessage).not.toContain('disk full');
    expect(done.errorMessage).toMatch(/retries stopped/);
    expect(done.exclusiveKey).toBeNull();
    const [outbox] = await outboxRows(ctx.db.pool, job.id);
    expect(outbox.state).toBe('COMPLETED');
    expect(outbox.last_error).toContain('disk full');
  });

  it('fails at once on a PermanentJobError', async () => {
    let calls = 0;
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: 'BAD_DATA',
          defaults: { consumers: 1 },
          processor: async () => {
            calls++;
            throw new PermanentJobError('plan 7 has 3 clashes');
          },
        },
      ],
    });
    await engine.start();
    const { job } = await engine.enqueue({ kind: 'BAD_DATA', input: {} });
    const done = await waitForJob(engine, job.id);
    expect(done.status).toBe(JobStatus.FAILED);
    expect(done.errorMessage).toBe('plan 7 has 3 clashes');
    expect(calls).toBe(1);
  });

  it('idempotency key returns the same job; different input is a conflict', async () => {
    engine = buildEngine({ db: ctx.db, registrations: [{ kind: 'IDEM', defaults: { consumers: 1 }, processor: async () => 1 }] });
    const a = await engine.enqueue({ kind: 'IDEM', input: { b: 1, a: 2 }, idempotencyKey: 'k1' });
    const b = await engine.enqueue({ kind: 'IDEM', input: { a: 2, b: 1 }, idempotencyKey: 'k1' });
    expect(b.created).toBe(false);
    expect(b.job.id).toBe(a.job.id);
    await expect(engine.enqueue({ kind: 'IDEM', input: { a: 3 }, idempotencyKey: 'k1' })).rejects.toMatchObject({ code: 'CONFLICT' });
    const { rows } = await ctx.db.pool.query("SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'k1'");
    expect(rows[0].n).toBe(1);
  });

  it('exclusive key: a second start while one is active is a CONFLICT naming the job; free again after it ends', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    engine = buildEngine({
      db: ctx.db,
      registrations: [{ kind: 'EXCL', defaults: { consumers: 2 }, processor: async () => gate }],
    });
    await engine.start();
    const first = await engine.enqueue({ kind: 'EXCL', input: {}, exclusiveKey: 'schedule-plan:42' });
    const error = await engine.enqueue({ kind: 'EXCL', input: {}, exclusiveKey: 'schedule-plan:42' }).catch((e) => e);
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain(first.job.id);
    release();
    await waitForJob(engine, first.job.id);
    const second = await engine.enqueue({ kind: 'EXCL', input: {}, exclusiveKey: 'schedule-plan:42' });
    expect(second.created).toBe(true);
    await waitForJob(engine, second.job.id);
  });

  it('rejects an unknown kind and leaves nothing behind', async () => {
    engine = buildEngine({ db: ctx.db, registrations: [] });
    const before = await ctx.db.pool.query('SELECT count(*)::int AS n FROM jobs');
    await expect(engine.enqueue({ kind: 'NOPE', input: {} })).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    const after = await ctx.db.pool.query('SELECT count(*)::int AS n FROM jobs');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('enqueue inside a MikroORM transaction commits with it and rolls back with it', async () => {
    engine = buildEngine({ db: ctx.db, registrations: [{ kind: 'TX', defaults: { consumers: 1 }, processor: async () => 'done' }] });
    await engine.start();
    const committed = await ctx.db.orm.em.fork().transactional((em) => engine!.enqueue({ kind: 'TX', input: { n: 1 } }, em));
    const done = await waitForJob(engine, committed.job.id, undefined, 5_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    let rolledBackId = '';
    await expect(
      ctx.db.orm.em.fork().transactional(async (em) => {
        const r = await engine!.enqueue({ kind: 'TX', input: { n: 2 } }, em);
        rolledBackId = r.job.id;
        throw new Error('caller changed its mind');
      }),
    ).rejects.toThrow('caller changed its mind');
    expect(await engine.getJob(rolledBackId)).toBeNull();
  });
});

describe('completeWithin', () => {
  it("commits the processor's writes and the job's result together, whatever characters the result holds", async () => {
    const tricky = { quote: 'say "hi"', backslash: 'C:\\temp\\x', comma: 'a,b', braces: '{x}', unicode: '教务', nothing: null };
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: 'WITHIN',
          defaults: { consumers: 1 },
          processor: async ({ completeWithin }) =>
            completeWithin(async (em) => {
              await em.getConnection().execute('CREATE TABLE IF NOT EXISTS within_effects (n int)', [], 'run', em.getTransactionContext());
              await em.getConnection().execute('INSERT INTO within_effects VALUES (1)', [], 'run', em.getTransactionContext());
              return tricky;
            }),
        },
      ],
    });
    await engine.start();
    const { job } = await engine.enqueue({ kind: 'WITHIN', input: {} });
    const done = await waitForJob(engine, job.id);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(done.result).toEqual(tricky);
    const { rows } = await ctx.db.pool.query('SELECT count(*)::int AS n FROM within_effects');
    expect(rows[0].n).toBe(1);
  });
});

describe('cancel and retry', () => {
  it('cancels a queued job at once and a running job through its signal', async () => {
    const seenAbort: boolean[] = [];
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: 'LONG',
          defaults: { consumers: 1 },
          processor: async ({ signal, progress }) => {
            progress.step('working');
            while (!signal.aborted) await new Promise((r) => setTimeout(r, 20));
            seenAbort.push(true);
            throw signal.reason;
          },
        },
      ],
    });
    await engine.start();
    const running = await engine.enqueue({ kind: 'LONG', input: { n: 1 } });
    const queued = await engine.enqueue({ kind: 'LONG', input: { n: 2 } });
    await waitForJob(engine, running.job.id, (j) => j.status === JobStatus.RUNNING);
    const cancelledQueued = await engine.cancel(queued.job.id);
    expect(cancelledQueued.status).toBe(JobStatus.CANCELLED);
    const requested = await engine.cancel(running.job.id);
    expect(requested.status).toBe(JobStatus.RUNNING);
    expect(requested.cancelRequested).toBe(true);
    const done = await waitForJob(engine, running.job.id);
    expect(done.status).toBe(JobStatus.CANCELLED);
    expect(seenAbort).toEqual([true]);
    await expect(engine.cancel(running.job.id)).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(engine.cancel('00000000-0000-0000-0000-000000000000')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // the cancelled queued job never ran
    await new Promise((r) => setTimeout(r, 300));
    expect((await engine.getJob(queued.job.id))!.startedAt).toBeNull();
  });

  it('retries a failed job as a new attempt series and refuses to retry a succeeded one', async () => {
    let fail = true;
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: 'RETRYABLE',
          defaults: { consumers: 1 },
          processor: async () => {
            if (fail) throw new PermanentJobError('not yet');
            return 'fine';
          },
        },
      ],
    });
    await engine.start();
    const { job } = await engine.enqueue({ kind: 'RETRYABLE', input: {}, exclusiveKey: 'term-publish:9' });
    expect((await waitForJob(engine, job.id)).status).toBe(JobStatus.FAILED);
    fail = false;
    const retried = await engine.retry(job.id);
    expect(retried.status).toBe(JobStatus.QUEUED);
    expect(retried.exclusiveKey).toBe('term-publish:9');
    const done = await waitForJob(engine, job.id);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(done.errorMessage).toBeNull();
    await expect(engine.retry(job.id)).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await outboxRows(ctx.db.pool, job.id)).length).toBe(2);
  });

  it('stops taking work at once on stop, while a maintenance pass under way finishes', async () => {
    engine = buildEngine({
      db: ctx.db,
      registrations: [{ kind: 'ECHO', defaults: { consumers: 1 }, processor: async ({ input }) => input }],
      roles: { maintenance: true },
    });
    await engine.start();
    // A pass that takes as long as the test says (its batches run to the statement timeout, say).
    let endPass!: () => void;
    const passEnds = new Promise<void>((resolve) => (endPass = resolve));
    const scheduler = engine.maintenance as unknown as { deps: { services: MaintenanceService[] } };
    scheduler.deps.services.unshift({ name: 'long pass', runOnce: () => passEnds });
    const pass = engine.maintenance.runOnce();
    const stopped = engine.stop(10_000);
    const runner = (engine as unknown as { runner: { shuttingDown: boolean } }).runner;
    await waitUntil(() => runner.shuttingDown, 5_000, 'the runner stopping while the pass runs');
    // Enqueued now, the job stays QUEUED: no consumer takes it.
    const { job } = await engine.enqueue({ kind: 'ECHO', input: { late: true } });
    await new Promise((r) => setTimeout(r, 500));
    expect((await engine.getJob(job.id))!.status).toBe(JobStatus.QUEUED);
    let done = false;
    void stopped.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(done).toBe(false); // the stop waits for the pass
    endPass();
    await pass;
    await stopped;
    engine = undefined;
  });
});
