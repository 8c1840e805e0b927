import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { InMemoryTransport } from '../../src/engine/transport/in-memory-transport';
import { RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import type { JobTransport } from '../../src/engine/transport/transport';
import { JobEventReason, JobStatus } from '../../src/engine/types';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';
import { deleteEngineTopology, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';

// A processor's plain return value is committed after its delivery has been settled
// (src/engine/runner.ts, `completeAfterSettling`). These tests hold that path to what the
// seed asks of any outcome: recorded once, never lost, never stuck.

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine | undefined;

beforeAll(async () => {
  ctx = await createTestDb('engine_settled');
});
afterEach(async () => {
  await engine?.stop(1_000);
  engine = undefined;
});
afterAll(async () => {
  await ctx.close();
});

const UNSTORABLE = 'SETTLED_UNSTORABLE';
const SLOW_FINISH = 'SETTLED_SLOW_FINISH';
const SHARED_BATCH = 'SETTLED_SHARED_BATCH';

/** PostgreSQL's jsonb refuses \u0000 in a string: the completion fails the same way every time. */
async function unstorableResultScenario(transport: JobTransport) {
  let runs = 0;
  engine = buildEngine({
    db: ctx.db,
    transport,
    registrations: [
      {
        kind: UNSTORABLE,
        defaults: { consumers: 2 },
        processor: async () => {
          runs++;
          return { text: 'nul \u0000 inside' };
        },
      },
    ],
    settings: { attemptLimit: 2, retryBaseMs: 100, retryMaxMs: 200 },
  });
  await engine.start();
  const { job } = await engine.enqueue({ kind: UNSTORABLE, input: {} });
  const done = await waitForJob(engine, job.id, undefined, 20_000);
  expect(done.status).toBe(JobStatus.FAILED);
  expect(done.attempts).toBe(2);
  expect(runs).toBe(2);
  // The database's refusal is an internal error: its readers get a ref, operators the cause.
  expect(done.errorMessage).toMatch(/^Internal error \(ref [0-9a-f]{12}\).*attempt 2 of 2/);
  const { rows: outbox } = await ctx.db.pool.query('SELECT last_error FROM job_outbox WHERE job_id = $1', [job.id]);
  expect(outbox[0].last_error).toMatch(/unicode|\\u0000/i);
  // Nothing is left behind for the publisher or a consumer.
  const { rows } = await ctx.db.pool.query('SELECT state FROM job_outbox WHERE job_id = $1', [job.id]);
  expect(rows).toEqual([{ state: 'COMPLETED' }]);
}

describe('completion after the delivery is settled', () => {
  it('in-memory: a result the database refuses is retried through the outbox and FAILED at the limit', async () => {
    await unstorableResultScenario(new InMemoryTransport());
  });

  it("stop() returns only once finished jobs' completions are committed", async () => {
    let finished = 0;
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: SLOW_FINISH,
          defaults: { consumers: 4 },
          processor: async ({ input }) => {
            await new Promise((r) => setTimeout(r, 300));
            finished++;
            return { n: (input as { n: number }).n };
          },
        },
      ],
    });
    let stopReturned = false;
    let started = 0;
    const succeeded: boolean[] = [];
    engine.subscribe((event) => {
      if (event.reason === JobEventReason.STARTED) started++;
      if (event.status === JobStatus.SUCCEEDED) succeeded.push(stopReturned);
    });
    await engine.start();
    const jobs = [];
    for (let n = 0; n < 4; n++) jobs.push((await engine.enqueue({ kind: SLOW_FINISH, input: { n } })).job);
    for (const deadline = Date.now() + 10_000; started < 4 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
    expect(started).toBe(4);
    // Hold the job rows from another connection, so the completions are still waiting
    // to commit when the processors are done and stop() is called.
    const blocker = await ctx.db.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM jobs WHERE id = ANY($1::uuid[]) FOR UPDATE', [jobs.map((j) => j.id)]);
    const released = new Promise((r) => setTimeout(r, 800)).then(async () => {
      await blocker.query('COMMIT');
      blocker.release();
    });
    await engine.stop(5_000);
    stopReturned = true;
    await released;
    engine = undefined;
    expect(finished).toBe(4);
    // Every completion was committed (and announced) before stop() returned.
    expect(succeeded).toEqual([false, false, false, false]);
    const { rows } = await ctx.db.pool.query('SELECT status, result FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY (result->>$2)::int', [
      jobs.map((j) => j.id),
      'n',
    ]);
    expect(rows).toEqual([0, 1, 2, 3].map((n) => ({ status: 'SUCCEEDED', result: { n } })));
  });

  it('a refused result fails only its own job, not the others that shared its commit', async () => {
    const JOBS = 8;
    let waiting = 0;
    let everyoneWaits!: () => void;
    const allWaiting = new Promise<void>((resolve) => (everyoneWaits = resolve));
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: SHARED_BATCH,
          defaults: { consumers: JOBS },
          processor: async ({ input }) => {
            if (++waiting === JOBS) everyoneWaits();
            await gate;
            const { n } = input as { n: number };
            if (n !== 0) return { n };
            // Last to finish, so it joins the others' statement rather than going first.
            await new Promise((r) => setTimeout(r, 20));
            return { text: 'nul \u0000 inside' };
          },
        },
      ],
      settings: { attemptLimit: 1 },
    });
    await engine.start();
    const jobs = [];
    for (let n = 0; n < JOBS; n++) jobs.push((await engine.enqueue({ kind: SHARED_BATCH, input: { n } })).job);
    await allWaiting;
    // Every job is claimed. Hold their rows: the first completion statement waits on the
    // lock, and every other completion, the refused one among them, queues up behind it
    // to share the next statement.
    const blocker = await ctx.db.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM jobs WHERE id = ANY($1::uuid[]) FOR UPDATE', [jobs.map((j) => j.id)]);
    openGate();
    await new Promise((r) => setTimeout(r, 300));
    await blocker.query('COMMIT');
    blocker.release();
    const done = await Promise.all(jobs.map((job) => waitForJob(engine!, job.id, undefined, 20_000)));
    expect(done[0]!.status).toBe(JobStatus.FAILED);
    // The others succeeded at their first (and only allowed) attempt.
    expect(done.slice(1).map((j) => [j.status, j.attempts, j.result])).toEqual(
      jobs.slice(1).map((_, i) => [JobStatus.SUCCEEDED, 1, { n: i + 1 }]),
    );
  });

  describe.runIf(requireRabbit())('RabbitMQ', () => {
    const prefix = uniquePrefix('settled');
    let transport: RabbitMqTransport | undefined;
    afterAll(async () => {
      await engine?.stop(1_000);
      engine = undefined;
      await transport?.close();
      await deleteEngineTopology(prefix, [UNSTORABLE]);
    });

    it('RabbitMQ: a result the database refuses is retried through the outbox (the broker no longer holds it) and FAILED at the limit', async () => {
      transport = new RabbitMqTransport({ url: rabbitUrl(), prefix, logger: silentLogger });
      await unstorableResultScenario(transport);
    });
  });
});
