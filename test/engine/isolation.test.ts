import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { InMemoryTransport } from '../../src/engine/transport/in-memory-transport';
import { RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import type { JobTransport } from '../../src/engine/transport/transport';
import { JobStatus } from '../../src/engine/types';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';
import { deleteEngineTopology, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine | undefined;
let openGate: (() => void) | undefined;

beforeAll(async () => {
  ctx = await createTestDb('engine_isolation');
});
afterEach(async () => {
  openGate?.();
  await engine?.stop(2_000);
  engine = undefined;
});
afterAll(async () => {
  await ctx?.close();
});

const SLOW = 'ISO_SLOW';
const FAST = 'ISO_FAST';
const SLOW_CONSUMERS = 3;
const FAST_CONSUMERS = 2;
const JOBS_PER_KIND = 10;

/** Counts simultaneous processor runs per kind. */
class Gauge {
  now = 0;
  max = 0;
  enter() {
    this.now++;
    this.max = Math.max(this.max, this.now);
  }
  leave() {
    this.now--;
  }
}

async function isolationScenario(transport: JobTransport, kinds: { slow: string; fast: string }) {
  const slow = new Gauge();
  const fast = new Gauge();
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  engine = buildEngine({
    db: ctx.db,
    transport,
    registrations: [
      {
        kind: kinds.slow,
        defaults: { consumers: 1 },
        processor: async () => {
          slow.enter();
          try {
            await gate;
          } finally {
            slow.leave();
          }
          return 'slow done';
        },
      },
      {
        kind: kinds.fast,
        defaults: { consumers: 1 },
        processor: async () => {
          fast.enter();
          try {
            await new Promise((r) => setTimeout(r, 150));
          } finally {
            fast.leave();
          }
          return 'fast done';
        },
      },
    ],
    // The configured counts override the registrations' default of 1.
    settings: { consumers: { [kinds.slow]: SLOW_CONSUMERS, [kinds.fast]: FAST_CONSUMERS } },
  });
  await engine.start();

  const slowJobs = [];
  for (let i = 0; i < JOBS_PER_KIND; i++) slowJobs.push((await engine.enqueue({ kind: kinds.slow, input: { i } })).job);
  // The slow kind's consumers are all busy before any fast job exists.
  const deadline = Date.now() + 10_000;
  while (slow.now < SLOW_CONSUMERS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(slow.now).toBe(SLOW_CONSUMERS);

  const fastJobs = [];
  for (let i = 0; i < JOBS_PER_KIND; i++) fastJobs.push((await engine.enqueue({ kind: kinds.fast, input: { i } })).job);
  const fastDone = await Promise.all(fastJobs.map((job) => waitForJob(engine!, job.id, undefined, 20_000)));
  expect(fastDone.map((j) => j.status)).toEqual(fastJobs.map(() => JobStatus.SUCCEEDED));

  // Every fast job finished while the slow kind still had all its consumers blocked.
  expect(slow.now).toBe(SLOW_CONSUMERS);
  const { rows } = await ctx.db.pool.query(
    `SELECT status, count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) GROUP BY status ORDER BY status`,
    [slowJobs.map((j) => j.id)],
  );
  expect(rows).toEqual([
    { status: 'QUEUED', n: JOBS_PER_KIND - SLOW_CONSUMERS },
    { status: 'RUNNING', n: SLOW_CONSUMERS },
  ]);

  openGate!();
  const slowDone = await Promise.all(slowJobs.map((job) => waitForJob(engine!, job.id, undefined, 20_000)));
  expect(slowDone.map((j) => j.status)).toEqual(slowJobs.map(() => JobStatus.SUCCEEDED));

  expect(slow.max).toBe(SLOW_CONSUMERS);
  expect(fast.max).toBe(FAST_CONSUMERS);
}

const BACKOFF = 'ISO_BACKOFF';

/** One consumer; the first job fails and waits a 3–6 s back-off; the second must not wait behind it. */
async function backoffScenario(transport: JobTransport) {
  const runs: Array<{ n: number; at: number }> = [];
  engine = buildEngine({
    db: ctx.db,
    transport,
    registrations: [
      {
        kind: BACKOFF,
        defaults: { consumers: 1 },
        processor: async ({ input, attempt }) => {
          const { n } = input as { n: number };
          runs.push({ n, at: Date.now() });
          if (n === 1 && attempt === 1) throw new Error('first attempt fails');
          return n;
        },
      },
    ],
    settings: { retryBaseMs: 6_000, retryMaxMs: 6_000 },
  });
  await engine.start();
  const first = (await engine.enqueue({ kind: BACKOFF, input: { n: 1 } })).job;
  await waitForJob(engine, first.id, (j) => j.status === JobStatus.QUEUED && j.attempts === 1, 10_000);
  const { rows } = await ctx.db.pool.query(
    `SELECT (extract(epoch FROM available_at - updated_at) * 1000)::float8 AS delay_ms FROM job_outbox WHERE job_id = $1`,
    [first.id],
  );
  const delayMs = rows[0].delay_ms as number;
  expect(delayMs).toBeGreaterThanOrEqual(3_000); // equal jitter: at least half of 6 s
  expect(delayMs).toBeLessThanOrEqual(6_000);
  const second = (await engine.enqueue({ kind: BACKOFF, input: { n: 2 } })).job;
  const secondDone = await waitForJob(engine, second.id, undefined, 10_000);
  expect(secondDone.status).toBe(JobStatus.SUCCEEDED);
  // the first job is still waiting out its back-off: it held no consumer slot meanwhile
  expect((await engine.getJob(first.id))!.status).toBe(JobStatus.QUEUED);
  expect(runs.map((r) => r.n)).toEqual([1, 2]);
  expect(runs[1]!.at - runs[0]!.at).toBeLessThan(2_500);
  const firstDone = await waitForJob(engine, first.id, undefined, 15_000);
  expect(firstDone.status).toBe(JobStatus.SUCCEEDED);
  expect(firstDone.attempts).toBe(2);
  // The back-off was honoured (RabbitMQ rounds a delay up to its next delay bucket).
  expect(runs[2]!.at - runs[0]!.at).toBeGreaterThanOrEqual(delayMs - 150);
}

describe('isolation between kinds and concurrency per kind', () => {
  it('in-memory: a blocked kind does not delay another; max concurrency = configured consumers', async () => {
    await isolationScenario(new InMemoryTransport(), { slow: SLOW, fast: FAST });
  });

  it('in-memory: a job waiting out its retry back-off holds no consumer slot', async () => {
    await backoffScenario(new InMemoryTransport());
  });

  describe.runIf(requireRabbit())('RabbitMQ', () => {
    const prefix = uniquePrefix('isolation');
    let transport: RabbitMqTransport | undefined;
    afterAll(async () => {
      openGate?.();
      await engine?.stop(2_000);
      engine = undefined;
      await transport?.close();
      await deleteEngineTopology(prefix, [SLOW, FAST, BACKOFF]);
    });

    it('RabbitMQ: a blocked kind does not delay another; max concurrency = configured consumers', async () => {
      transport = new RabbitMqTransport({ url: rabbitUrl(), prefix, logger: silentLogger });
      await isolationScenario(transport, { slow: SLOW, fast: FAST });
    });

    it('RabbitMQ: a job waiting out its retry back-off holds no consumer slot', async () => {
      await engine?.stop(1_000);
      engine = undefined;
      await transport?.close();
      transport = new RabbitMqTransport({ url: rabbitUrl(), prefix, logger: silentLogger });
      await backoffScenario(transport);
    });
  });
});
