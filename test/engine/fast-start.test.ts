/**
 * A worker with a free slot starts a job on its enqueue's NOTIFY, before the broker's
 * copy comes (FastStartListener, KindConsumer.offer). The copy stays the guarantee and
 * is settled with the run: every job runs to completion once, the queue ends empty, a
 * job stopped mid-run is handed on through the outbox.
 */
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import amqp from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { parseJobReady } from '../../src/engine/fast-start-listener';
import { silentLogger } from '../../src/engine/logger';
import { EngineMetrics, METER_NAME } from '../../src/engine/metrics';
import { poolSql } from '../../src/engine/db/sql';
import { insertJob } from '../../src/engine/queries/insert-job';
import { insertJobs } from '../../src/engine/queries/insert-jobs';
import type { Processor } from '../../src/engine/registry';
import { rabbitMqTopology, RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import { JobStatus, OutboxState } from '../../src/engine/types';
import { buildEngine, createTestDb, newJobArgs, waitForJob, until } from '../support/engine-harness';
import { counterTotal } from '../support/metric-counters';
import { deleteEngineTopology, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';

const KIND = 'FAST';
const prefix = uniquePrefix('fast_start');
let ctx: Awaited<ReturnType<typeof createTestDb>>;
const engines: JobEngine[] = [];
const transports: RabbitMqTransport[] = [];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An engine on the shared test broker, started; `roles` says what it does. */
async function startEngine(options: {
  processor?: Processor<unknown, unknown>;
  consumers?: number;
  worker?: boolean;
  publisher?: boolean;
  fastStart?: boolean;
  fastStartMaxRate?: number;
  fastStartHeadStartMs?: number;
  metrics?: EngineMetrics;
  leaseSeconds?: number;
}): Promise<JobEngine> {
  const transport = new RabbitMqTransport({ url: rabbitUrl(), prefix, logger: silentLogger });
  transports.push(transport);
  const engine = buildEngine({
    db: ctx.db,
    transport,
    settings: { fastStart: options.fastStart ?? true, fastStartMaxRate: options.fastStartMaxRate, fastStartHeadStartMs: options.fastStartHeadStartMs },
    roles: { worker: options.worker ?? true, publisher: options.publisher ?? true },
    metrics: options.metrics,
    registrations: [{ kind: KIND, defaults: { consumers: options.consumers ?? 4, leaseSeconds: options.leaseSeconds }, processor: options.processor ?? (async () => ({ ok: true })) }],
  });
  await engine.start();
  engines.push(engine);
  return engine;
}

/** Messages ready in the kind's queue (a stopped consumer's unacknowledged ones are back among them). */
async function readyInQueue(): Promise<number> {
  return messagesIn([rabbitMqTopology(prefix).workQueue(KIND)]);
}

/** Copies waiting out a delay (a claim that lost to a live lease sends its copy there). */
async function delayedCopies(): Promise<number> {
  const topology = rabbitMqTopology(prefix);
  return messagesIn(topology.delayBucketsMs.map((ms) => topology.delay(ms)));
}

async function messagesIn(queues: string[]): Promise<number> {
  const connection = await amqp.connect(rabbitUrl());
  try {
    let total = 0;
    for (const queue of queues) {
      const channel = await connection.createChannel();
      // A delay queue is declared on first use: one not there holds nothing.
      total += await channel.checkQueue(queue).then(
        (q) => q.messageCount,
        () => 0,
      );
    }
    return total;
  } finally {
    await connection.close();
  }
}

/** Jobs fast-started, over all kinds. */
const fastStartedCount = (exporter: PrometheusExporter) => counterTotal(exporter, 'jiaowu.background_jobs.fast_started');

async function stopAll(): Promise<void> {
  for (const engine of engines.splice(0)) await engine.stop(2_000);
}

describe('parseJobReady', () => {
  const id = '0b7e7d3c-8f0c-4a57-9b43-0d6d9d8f1a01';
  const job = '9d1f0b6e-2c5a-4e1b-8c7d-3f4a5b6c7d8e';
  it('reads `<outbox id> <job id> <kind>`', () => {
    expect(parseJobReady(`${id} ${job} AUTOMATIC_SCHEDULE`)).toEqual({ outboxId: id, jobId: job, kind: 'AUTOMATIC_SCHEDULE' });
  });
  it.each([[''], ['x y z'], [`${id} ${job}`], [`${id} ${job} K extra`], [`${id}x ${job} K`]])('refuses %j', (payload) => {
    expect(parseJobReady(payload)).toBeUndefined();
  });
});

describe.runIf(requireRabbit())('fast start on RabbitMQ', () => {
  beforeAll(async () => {
    ctx = await createTestDb('engine_fast_start');
  });
  afterEach(async () => {
    await stopAll();
    await ctx.db.pool.query('DELETE FROM jobs');
  });
  afterAll(async () => {
    await stopAll();
    for (const transport of transports) await transport.close();
    await deleteEngineTopology(prefix, [KIND]);
    await ctx?.close();
  });

  it('a worker starts a job on its NOTIFY alone: with no publisher anywhere, a job whose message is on its way runs (and does not without fast start)', async () => {
    // Rows written PUBLISHING, as an API process writes those it publishes itself — but
    // no process publishes here, so the broker never gets a message: only the NOTIFY can start them.
    const worker = await startEngine({ publisher: false, fastStart: false });
    const sql = poolSql(ctx.db.pool);
    const unseen = newJobArgs(KIND, {});
    await insertJob(sql, unseen, OutboxState.PUBLISHING);
    await sleep(1_500);
    expect((await worker.getJob(unseen.jobId))?.status).toBe(JobStatus.QUEUED);
    await stopAll();

    const fast = await startEngine({ publisher: false });
    const args = newJobArgs(KIND, {});
    await insertJob(sql, args, OutboxState.PUBLISHING);
    expect((await waitForJob(fast, args.jobId)).status).toBe(JobStatus.SUCCEEDED);
    // The job queued before this worker listened was not notified to it: it waits for its message.
    expect((await fast.getJob(unseen.jobId))?.status).toBe(JobStatus.QUEUED);
  });

  it('a worker that hears more jobs in a second than JOB_FAST_START_MAX_RATE stops listening, and counts the pause', async () => {
    const exporter = new PrometheusExporter({ preventServerStart: true });
    const provider = new MeterProvider({ readers: [exporter] });
    const fast = await startEngine({ publisher: false, consumers: 16, fastStartMaxRate: 3, metrics: new EngineMetrics(provider.getMeter(METER_NAME)) });
    // Six in one statement, heard together (no publisher: only a NOTIFY heard starts one).
    const jobs = Array.from({ length: 6 }, (_, i) => newJobArgs(KIND, { i }));
    await insertJobs(poolSql(ctx.db.pool), jobs, OutboxState.PUBLISHING);
    await until('the pause counted', async () => (await counterTotal(exporter, 'jiaowu.background_jobs.fast_start_paused')) === 1);
    // The fourth was one more than 3 in a second: the four heard run, the rest wait for a message.
    await until('four fast-started', async () => (await fastStartedCount(exporter)) === 4);
    const statuses = await Promise.all(jobs.map(async (j) => (await fast.getJob(j.jobId))?.status));
    expect(statuses.filter((s) => s === JobStatus.QUEUED)).toHaveLength(2);
    await provider.shutdown();
  });

  it('a job whose message is not sent yet (PENDING) is left to the publisher: a worker that died with it would have no copy to hand it on', async () => {
    const fast = await startEngine({ publisher: false });
    const args = newJobArgs(KIND, {});
    await insertJob(poolSql(ctx.db.pool), args);
    await sleep(1_500);
    expect((await fast.getJob(args.jobId))?.status).toBe(JobStatus.QUEUED);
    // A publisher sends it, and its delivery runs it.
    const api = await startEngine({ worker: false });
    expect((await waitForJob(api, args.jobId)).status).toBe(JobStatus.SUCCEEDED);
  });

  it('each job enqueued runs once; every broker copy is acknowledged without a second run or a delayed copy', async () => {
    const exporter = new PrometheusExporter({ preventServerStart: true });
    const provider = new MeterProvider({ readers: [exporter] });
    const runs = new Map<string, number>();
    await startEngine({
      metrics: new EngineMetrics(provider.getMeter(METER_NAME)),
      publisher: false,
      // A no-op: its run is over before its copy comes, while its completion still commits.
      processor: async ({ job }) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        return { ok: true };
      },
    });
    const api = await startEngine({ worker: false });
    const ids: string[] = [];
    // Four at a time, as many as the worker's slots: their claims and completions batch,
    // so a completion commits a moment after its run is over, when its copy comes.
    for (let i = 0; i < 10; i++) {
      const burst = await Promise.all(Array.from({ length: 4 }, (_, j) => api.enqueue({ kind: KIND, input: { i, j } })));
      ids.push(...burst.map((r) => r.job.id));
      await sleep(20);
    }
    for (const id of ids) expect((await waitForJob(api, id)).status).toBe(JobStatus.SUCCEEDED);
    // The copies of jobs already running or done here were settled with them.
    expect(await fastStartedCount(exporter)).toBeGreaterThan(0);
    expect([...runs.values()].every((n) => n === 1) && runs.size === ids.length).toBe(true);
    const { rows } = await ctx.db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM job_outbox WHERE job_id = ANY($1::uuid[]) AND state = 'COMPLETED' AND processing_attempts = 1`,
      [ids],
    );
    expect(Number(rows[0]!.n)).toBe(ids.length);
    await until('every copy acknowledged', async () => (await readyInQueue()) === 0 && (await fastStartedCount(exporter)) > 0);
    await stopAll();
    // Stopped consumers hand back what they did not acknowledge: nothing. And no copy
    // was sent to wait out the lease of a job this worker had already finished.
    expect(await readyInQueue()).toBe(0);
    expect(await delayedCopies()).toBe(0);
    await provider.shutdown();
  });

  it("the enqueuing process holds a job's message back for the head start: an idle worker runs the job first, and its copy, sent after, is acknowledged without a second run", async () => {
    // Far longer than the service's bound (JOB_FAST_START_HEAD_START_MS ≤ 100), so that
    // what happens inside it is plain however slow this machine is at the moment.
    const HEAD_START_MS = 5_000;
    const outboxStateOf = async (jobId: string) =>
      (await ctx.db.pool.query<{ state: string }>('SELECT state FROM job_outbox WHERE job_id = $1', [jobId])).rows[0]?.state;

    // No worker: the row waits PUBLISHING with nothing in the broker, then the copy goes.
    const api = await startEngine({ worker: false, fastStartHeadStartMs: HEAD_START_MS });
    const held = await api.enqueue({ kind: KIND, input: { held: true } });
    const enqueuedAt = Date.now();
    expect(await readyInQueue()).toBe(0);
    expect(await outboxStateOf(held.job.id)).toBe(OutboxState.PUBLISHING);
    await until('the held message sent', async () => (await readyInQueue()) === 1, HEAD_START_MS + 30_000);
    expect(Date.now() - enqueuedAt).toBeGreaterThanOrEqual(HEAD_START_MS - 50);

    // An idle worker: it runs the held job from its delivery, and the next one on its
    // NOTIFY, long before that one's copy leaves; the copy is then settled as done.
    const runs = new Map<string, number>();
    await startEngine({
      publisher: false,
      processor: async ({ job }) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        return { ok: true };
      },
    });
    expect((await waitForJob(api, held.job.id)).status).toBe(JobStatus.SUCCEEDED);
    const fast = await api.enqueue({ kind: KIND, input: { fast: true } });
    const fastEnqueuedAt = Date.now();
    expect((await waitForJob(api, fast.job.id)).status).toBe(JobStatus.SUCCEEDED);
    expect(Date.now() - fastEnqueuedAt).toBeLessThan(HEAD_START_MS);
    // Its copy comes when the head start ends, and finds the job done.
    await sleep(HEAD_START_MS);
    await until('every copy acknowledged', async () => (await readyInQueue()) === 0);
    expect(await delayedCopies()).toBe(0);
    expect(Object.fromEntries(runs)).toEqual({ [held.job.id]: 1, [fast.job.id]: 1 });
    await stopAll();

    // With fast start off nothing is held back: the copy is the only way to a worker.
    const plain = await startEngine({ worker: false, fastStart: false, fastStartHeadStartMs: HEAD_START_MS });
    await plain.enqueue({ kind: KIND, input: { plain: true } });
    await until('the message sent at once', async () => (await readyInQueue()) === 1, HEAD_START_MS / 2);
  });

  it('two idle workers take each job once between them', async () => {
    const runs = new Map<string, number>();
    const processor: Processor<unknown, unknown> = async ({ job }) => {
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
      return { ok: true };
    };
    await startEngine({ publisher: false, processor, consumers: 2 });
    await startEngine({ publisher: false, processor, consumers: 2 });
    const api = await startEngine({ worker: false });
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const { job } = await api.enqueue({ kind: KIND, input: { i } });
      ids.push(job.id);
      if (i % 4 === 0) await sleep(5);
    }
    for (const id of ids) expect((await waitForJob(api, id)).status).toBe(JobStatus.SUCCEEDED);
    // A copy that reached the other worker waits out the holder's lease, then finds the job done.
    await sleep(500);
    expect(runs.size).toBe(ids.length);
    expect([...runs.values()].filter((n) => n !== 1)).toEqual([]);
  });

  it.each([
    ['its completion', false],
    ['its heartbeat', true],
  ])('a fast-started job whose lease runs out mid-run (%s finds it gone) runs again from the message sent after the rescue: that message, attached to the run, is not acknowledged with it', async (_finder, heartbeatFirst) => {
    const exporter = new PrometheusExporter({ preventServerStart: true });
    const provider = new MeterProvider({ readers: [exporter] });
    let runs = 0;
    let aborted = false;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstStarted!: () => void;
    const started = new Promise<void>((resolve) => (firstStarted = resolve));
    await startEngine({
      metrics: new EngineMetrics(provider.getMeter(METER_NAME)),
      publisher: false,
      // The shortest lease: its heartbeat comes 5 s after the start.
      leaseSeconds: 5,
      processor: async ({ signal }) => {
        runs++;
        if (runs === 1) {
          signal.addEventListener('abort', () => (aborted = true), { once: true });
          firstStarted();
          await released;
        }
        return { ok: true };
      },
    });
    // Written PUBLISHING with no publisher anywhere: only the NOTIFY starts it, and no broker copy exists yet.
    const args = newJobArgs(KIND, {});
    await insertJob(poolSql(ctx.db.pool), args, OutboxState.PUBLISHING);
    await started;
    expect(await fastStartedCount(exporter)).toBe(1);
    // As if the worker's heartbeats had stopped reaching the database: the lease runs out,
    // the rescuer puts the job back, and a publisher sends it again — to this worker, whose
    // run is still going, so the message attaches to it.
    await ctx.db.pool.query(`UPDATE job_outbox SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [args.outboxId]);
    const api = await startEngine({ worker: false });
    expect(await api.leaseRescuer.runOnce()).toBe(1);
    const outboxState = async () => (await ctx.db.pool.query<{ state: string }>('SELECT state FROM job_outbox WHERE id = $1', [args.outboxId])).rows[0]!.state;
    await until('the job sent again and delivered to the worker', async () => (await outboxState()) === 'PUBLISHED' && (await readyInQueue()) === 0);
    if (heartbeatFirst) await until('the heartbeat finding the lease gone', () => aborted);
    // The run ends without the job: the attached message brings it again.
    release();
    const done = await waitForJob(api, args.jobId);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(runs).toBe(2);
    expect(done.attempts).toBe(2);
    expect(aborted).toBe(heartbeatFirst);
    await until('every copy acknowledged', async () => (await readyInQueue()) === 0 && (await delayedCopies()) === 0);
    await provider.shutdown();
  });

  it('a worker stopped in the middle of a fast-started job hands it on through the outbox, its attempt refunded', async () => {
    let firstStarted!: () => void;
    const started = new Promise<void>((resolve) => (firstStarted = resolve));
    const holder = await startEngine({
      publisher: false,
      processor: async ({ signal }) => {
        firstStarted();
        await new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      },
    });
    const api = await startEngine({ worker: false });
    const { job } = await api.enqueue({ kind: KIND, input: {} });
    await started;
    expect((await api.getJob(job.id))?.status).toBe(JobStatus.RUNNING);
    engines.splice(engines.indexOf(holder), 1);
    await holder.stop(100);
    const taker = await startEngine({ publisher: false });
    const done = await waitForJob(taker, job.id);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(done.attempts).toBe(1);
  });
});
