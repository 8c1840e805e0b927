/**
 * Poison and misrouted work messages: checked in full, parked (counted, visible in
 * health), never run, never looped, and never able to fail the claims batched with them.
 */
import { randomUUID } from 'node:crypto';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { connect } from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { claimBatch } from '../../src/engine/claim-batch';
import { ItemFailure } from '../../src/engine/db/batcher';
import { poolSql } from '../../src/engine/db/sql';
import type { JobEngine } from '../../src/engine/engine';
import { HealthStatus } from '../../src/engine/health';
import { silentLogger } from '../../src/engine/logger';
import { lostClaimFinding, settleLostClaim } from '../../src/engine/lost-claim-policy';
import { EngineMetrics, METER_NAME } from '../../src/engine/metrics';
import type { OutboxStateRow } from '../../src/engine/queries/get-outbox-state';
import { insertJob } from '../../src/engine/queries/insert-job';
import type { KindRegistration } from '../../src/engine/registry';
import { InMemoryTransport } from '../../src/engine/transport/in-memory-transport';
import { parseJobMessages, ParkReason } from '../../src/engine/transport/job-message';
import { rabbitMqTopology, RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import { asJobId, asOutboxId, JobStatus, type JobMessage } from '../../src/engine/types';
import { buildEngine, createTestDb, outboxRows, waitForJob, until } from '../support/engine-harness';
import { counterValues } from '../support/metric-counters';
import { countSql } from '../support/sql-counter';
import { deleteEngineTopology, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine | undefined;

beforeAll(async () => {
  ctx = await createTestDb('engine_poison');
});
afterEach(async () => {
  await engine?.stop(1_000);
  engine = undefined;
});
afterAll(async () => {
  await ctx?.close();
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const body = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
const uuid = () => randomUUID();

/** A job and its outbox row, as enqueue writes them, without a publisher to send it. */
async function seedJob(kind: string, state = 'PENDING'): Promise<{ jobId: string; outboxId: string }> {
  const jobId = uuid();
  const outboxId = uuid();
  await insertJob(poolSql(ctx.db.pool), { jobId, outboxId, kind, input: {}, requestedBy: null, idempotencyKey: null, exclusiveKey: null });
  await ctx.db.pool.query(`UPDATE job_outbox SET state = $2 WHERE id = $1`, [outboxId, state]);
  return { jobId, outboxId };
}

/** The parked counter's value per `kind/reason`. */
const parkedCounts = (exporter: PrometheusExporter) => counterValues(exporter, 'jiaowu.background_jobs.parked', 'reason');

/** An engine on an in-memory transport with no publisher, its metrics read through `exporter`. */
async function startInMemory(registrations: KindRegistration[]) {
  const transport = new InMemoryTransport();
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  engine = buildEngine({ db: ctx.db, transport, registrations, roles: { publisher: false }, metrics: new EngineMetrics(provider.getMeter(METER_NAME)) });
  await engine.start();
  return { engine, transport, exporter, provider };
}

describe('parseJobMessages checks a message in full', () => {
  const outboxId = uuid();
  const jobId = uuid();
  it('accepts a well-formed message of the queue’s kind', () => {
    expect(parseJobMessages(body({ outboxId, jobId, kind: 'K' }), 'K')).toEqual({ ok: true, messages: [{ outboxId, jobId, kind: 'K' }] });
  });
  it('accepts an array of jobs of the queue’s kind (several jobs in one message)', () => {
    const second = { outboxId: uuid(), jobId: uuid(), kind: 'K' };
    expect(parseJobMessages(body([{ outboxId, jobId, kind: 'K' }, second]), 'K')).toEqual({
      ok: true,
      messages: [{ outboxId, jobId, kind: 'K' }, second],
    });
  });
  it.each([
    ['not JSON', 'not json', ParkReason.MALFORMED],
    ['a number', 7, ParkReason.MALFORMED],
    ['an array of numbers', [1, 2], ParkReason.MALFORMED],
    ['an empty array', [], ParkReason.MALFORMED],
    ['an array of 65 jobs', Array.from({ length: 65 }, () => ({ outboxId: uuid(), jobId: uuid(), kind: 'K' })), ParkReason.MALFORMED],
    ['an array with one bad job', [{ outboxId, jobId, kind: 'K' }, { outboxId: 'abc', jobId, kind: 'K' }], ParkReason.MALFORMED],
    ['an array with a job of another kind', [{ outboxId, jobId, kind: 'K' }, { outboxId, jobId, kind: 'OTHER' }], ParkReason.WRONG_QUEUE],
    ['a non-UUID outboxId', { outboxId: 'abc', jobId, kind: 'K' }, ParkReason.MALFORMED],
    ['a numeric outboxId', { outboxId: 1, jobId, kind: 'K' }, ParkReason.MALFORMED],
    ['a non-UUID jobId', { outboxId, jobId: `${jobId}x`, kind: 'K' }, ParkReason.MALFORMED],
    ['no kind', { outboxId, jobId }, ParkReason.MALFORMED],
    ['another kind than its queue', { outboxId, jobId, kind: 'OTHER' }, ParkReason.WRONG_QUEUE],
  ])('refuses %s', (_what, value, reason) => {
    const parsed = parseJobMessages(body(value), 'K');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toBe(reason);
  });
});

/** A message of kind K, and its outbox row as a losing claimer reads it (PUBLISHED and due unless `over` says otherwise). */
const message: JobMessage = { outboxId: asOutboxId(uuid()), jobId: asJobId(uuid()), kind: 'K' };
const row = (over: Partial<OutboxStateRow>): OutboxStateRow => ({
  id: message.outboxId,
  state: 'PUBLISHED',
  job_id: message.jobId,
  kind: 'K',
  lease_ms_left: null,
  due_ms: -5,
  ...over,
});

describe('settleLostClaim decides from the row read after a lost claim', () => {
  it('no row (deleted after retention), COMPLETED, or PENDING (the outbox sends it when due): ack', () => {
    expect(settleLostClaim(undefined, message, 30)).toEqual({ type: 'ack' });
    expect(settleLostClaim(row({ state: 'COMPLETED' }), message, 30)).toEqual({ type: 'ack' });
    expect(settleLostClaim(row({ state: 'PENDING', due_ms: 4_000 }), message, 30)).toEqual({ type: 'ack' });
  });
  it('a row of another job or another kind: park, whatever its state', () => {
    for (const state of ['PENDING', 'PUBLISHED', 'PROCESSING', 'COMPLETED']) {
      expect(settleLostClaim(row({ state, job_id: uuid() }), message, 30)).toMatchObject({ type: 'park', reason: ParkReason.MISMATCH });
      expect(settleLostClaim(row({ state, kind: 'OTHER' }), message, 30)).toMatchObject({ type: 'park', reason: ParkReason.MISMATCH });
    }
  });
  it('PROCESSING: come back when the holder’s lease would run out (1 s … lease)', () => {
    expect(settleLostClaim(row({ state: 'PROCESSING', lease_ms_left: 12_000 }), message, 30)).toEqual({ type: 'retry', delayMs: 12_000 });
    expect(settleLostClaim(row({ state: 'PROCESSING', lease_ms_left: 90_000 }), message, 30)).toEqual({ type: 'retry', delayMs: 30_000 });
    expect(settleLostClaim(row({ state: 'PROCESSING', lease_ms_left: -50 }), message, 30)).toEqual({ type: 'retry', delayMs: 1_000 });
  });
  it('PUBLISHED not yet due: come back when due; due: after 1 s', () => {
    expect(settleLostClaim(row({ due_ms: 7_500 }), message, 30)).toEqual({ type: 'retry', delayMs: 7_500 });
    expect(settleLostClaim(row({ due_ms: -10 }), message, 30)).toEqual({ type: 'retry', delayMs: 1_000 });
  });
});

describe('lostClaimFinding names what the row said, for the claims_lost metric', () => {
  it('the row’s state in lower case; gone without a row; mismatch for another job’s or kind’s row', () => {
    expect(lostClaimFinding(row({ state: 'COMPLETED' }), message)).toBe('completed');
    expect(lostClaimFinding(row({ state: 'PROCESSING', lease_ms_left: 9_000 }), message)).toBe('processing');
    expect(lostClaimFinding(row({ state: 'PENDING' }), message)).toBe('pending');
    expect(lostClaimFinding(undefined, message)).toBe('gone');
    expect(lostClaimFinding(row({ state: 'COMPLETED', job_id: uuid() }), message)).toBe('mismatch');
    expect(lostClaimFinding(row({ state: 'PROCESSING', kind: 'OTHER' }), message)).toBe('mismatch');
  });
});

describe('in-memory: a copy whose claim loses is counted by what the row said', () => {
  it('a copy of a finished job counts completed (acknowledged); a copy of a running one counts processing (sent back to wait out the lease); neither runs the job again', async () => {
    const runs = new Map<string, number>();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let heldStarted!: () => void;
    const heldRunning = new Promise<void>((resolve) => (heldStarted = resolve));
    const { engine, transport, exporter, provider } = await startInMemory([
      {
        kind: 'MEM_COPY',
        defaults: { consumers: 2 },
        processor: async ({ job, input }) => {
          runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
          if ((input as { hold?: boolean }).hold) {
            heldStarted();
            await held;
          }
          return 'ok';
        },
      },
    ]);
    const lost = () => counterValues(exporter, 'jiaowu.background_jobs.claims_lost', 'found');
    const message = (job: { jobId: string; outboxId: string }): JobMessage => ({ outboxId: asOutboxId(job.outboxId), jobId: asJobId(job.jobId), kind: 'MEM_COPY' });

    const done = await seedJob('MEM_COPY');
    await transport.publish([message(done)]);
    expect((await waitForJob(engine, done.jobId)).status).toBe(JobStatus.SUCCEEDED);
    expect(await lost()).toEqual({});
    await transport.publish([message(done)]);
    await until('the finished job’s copy counted', async () => (await lost())['MEM_COPY/completed'] === 1);

    const running = await seedJob('MEM_COPY');
    await ctx.db.pool.query(`UPDATE jobs SET input = '{"hold": true}'::jsonb WHERE id = $1`, [running.jobId]);
    await transport.publish([message(running)]);
    await heldRunning;
    await transport.publish([message(running)]);
    await until('the running job’s copy counted', async () => (await lost())['MEM_COPY/processing'] === 1);
    release();
    expect((await waitForJob(engine, running.jobId)).status).toBe(JobStatus.SUCCEEDED);
    expect(await lost()).toEqual({ 'MEM_COPY/completed': 1, 'MEM_COPY/processing': 1 });
    expect([...runs.values()]).toEqual([1, 1]);
    await provider.shutdown();
  });

  it('the rows of copies whose claims lost in one turn are read by one statement, each copy settled by its own row', async () => {
    const runs = new Map<string, number>();
    const { engine, transport, exporter, provider } = await startInMemory([
      { kind: 'MEM_COPIES', defaults: { consumers: 16 }, processor: async ({ job }) => void runs.set(job.id, (runs.get(job.id) ?? 0) + 1) },
    ]);
    const jobs = await Promise.all(Array.from({ length: 12 }, () => seedJob('MEM_COPIES')));
    const messages = jobs.map((j): JobMessage => ({ outboxId: asOutboxId(j.outboxId), jobId: asJobId(j.jobId), kind: 'MEM_COPIES' }));
    await transport.publish(messages);
    for (const j of jobs) expect((await waitForJob(engine, j.jobId)).status).toBe(JobStatus.SUCCEEDED);

    const lostCompleted = async () => (await counterValues(exporter, 'jiaowu.background_jobs.claims_lost', 'found'))['MEM_COPIES/completed'] ?? 0;
    // A second copy of each, delivered at once: twelve claims lose in one turn.
    const { count } = await countSql(async () => {
      await transport.publish(messages);
      await until('every copy counted', async () => (await lostCompleted()) === 12);
    });
    // Read one by one, twelve statements; a turn's worth at a time, one (two if a batch was in flight).
    const reads = count.texts.filter((text) => text.startsWith('SELECT id, state, job_id, kind,'));
    expect(reads.length).toBeGreaterThanOrEqual(1);
    expect(reads.length).toBeLessThanOrEqual(2);
    expect(await transport.parked()).toBe(0);
    expect([...runs.values()]).toEqual(Array(12).fill(1));
    await provider.shutdown();
  });
});

describe('a bad claim fails alone, never the claims batched with it', () => {
  it('a statement the database refuses is run again claim by claim', async () => {
    const kind = 'BATCH';
    const good = await Promise.all([seedJob(kind), seedJob(kind)]);
    const request = (r: { jobId: string; outboxId: string }) => ({ ...r, kind, token: uuid(), leaseSeconds: 30, attemptLimit: 5 });
    // The message parser keeps such an id out; the batch must hold even if one slips through.
    const bad = { outboxId: 'not-a-uuid', jobId: uuid(), kind, token: uuid(), leaseSeconds: 30, attemptLimit: 5 };
    const results = await claimBatch(poolSql(ctx.db.pool))([request(good[0]!), bad, request(good[1]!)]);
    expect(results[1]).toBeInstanceOf(ItemFailure);
    expect(results[0]).toMatchObject({ claimed_outbox_id: good[0]!.outboxId, status: 'RUNNING' });
    expect(results[2]).toMatchObject({ claimed_outbox_id: good[1]!.outboxId, status: 'RUNNING' });
  });
});

describe('in-memory: a message whose outbox row is another kind’s is parked, not run', () => {
  it('the claim matches outbox id, job id and kind; a mismatch runs nothing and is counted', async () => {
    const ran: Record<string, string[]> = { MEM_A: [], MEM_B: [] };
    const registration = (kind: string): KindRegistration => ({
      kind,
      defaults: { consumers: 1 },
      processor: async ({ job }) => {
        ran[kind]!.push(job.id);
        return 'ok';
      },
    });
    const { engine, transport, exporter, provider } = await startInMemory([registration('MEM_A'), registration('MEM_B')]);
    const a = await seedJob('MEM_A');
    // A's row, sent to B's queue as a B message.
    await transport.publish([{ outboxId: asOutboxId(a.outboxId), jobId: asJobId(a.jobId), kind: 'MEM_B' }]);
    await until('the misrouted message parked', async () => (await transport.parked()) === 1);
    expect(ran).toEqual({ MEM_A: [], MEM_B: [] });
    expect(transport.parkedMessages[0]).toMatchObject({ kind: 'MEM_B', reason: ParkReason.MISMATCH });
    expect((await outboxRows(ctx.db.pool, a.jobId))[0]).toMatchObject({ state: 'PENDING', processing_attempts: 0 });
    expect(await parkedCounts(exporter)).toEqual({ 'MEM_B/mismatch': 1 });
    // The real message still runs the job, once, by its own kind.
    await transport.publish([{ outboxId: asOutboxId(a.outboxId), jobId: asJobId(a.jobId), kind: 'MEM_A' }]);
    expect((await waitForJob(engine, a.jobId)).status).toBe(JobStatus.SUCCEEDED);
    expect(ran).toEqual({ MEM_A: [a.jobId], MEM_B: [] });
    await provider.shutdown();
  });
});

describe.runIf(requireRabbit())('RabbitMQ: poison and misrouted messages are parked', () => {
  const url = rabbitUrl();
  const prefix = uniquePrefix('poison');
  const topology = rabbitMqTopology(prefix);
  const kinds = ['PA', 'PB'];
  let transport: RabbitMqTransport | undefined;
  let mqEngine: JobEngine | undefined;
  let exporter: PrometheusExporter;
  let provider: MeterProvider;
  const ran: Record<string, string[]> = { PA: [], PB: [] };

  beforeAll(async () => {
    exporter = new PrometheusExporter({ preventServerStart: true });
    provider = new MeterProvider({ readers: [exporter] });
    transport = new RabbitMqTransport({ url, prefix, logger: silentLogger, recovery: { initialDelay: 100, maxDelay: 1_000 } });
    mqEngine = buildEngine({
      db: ctx.db,
      transport,
      registrations: kinds.map((kind) => ({
        kind,
        defaults: { consumers: 4 },
        processor: async ({ job }: { job: { id: string } }) => {
          ran[kind]!.push(job.id);
          return 'ok';
        },
      })),
      metrics: new EngineMetrics(provider.getMeter(METER_NAME)),
    });
    await mqEngine.start();
  });
  afterAll(async () => {
    await mqEngine?.stop(1_000);
    await transport?.close();
    await provider?.shutdown();
    await deleteEngineTopology(prefix, kinds);
  });

  /** Publishes raw bodies onto a kind's work queue, as a foreign or broken publisher would. */
  async function publishRaw(kind: string, bodies: Buffer[]): Promise<void> {
    const model = await connect(url);
    try {
      const channel = await model.createConfirmChannel();
      for (const content of bodies) channel.publish(topology.workExchange, topology.workQueue(kind), content, { persistent: true });
      await channel.waitForConfirms();
    } finally {
      await model.close();
    }
  }

  async function queueDepth(queue: string): Promise<number> {
    const model = await connect(url);
    try {
      const channel = await model.createChannel();
      return (await channel.checkQueue(queue)).messageCount;
    } finally {
      await model.close();
    }
  }

  it('malformed bodies never loop, never fail the jobs claimed beside them, and show in the metric and in health', async () => {
    // Valid jobs enqueued together with the poison, so their claims meet in the batcher.
    const enqueued = await Promise.all(Array.from({ length: 12 }, () => mqEngine!.enqueue({ kind: 'PA', input: {} })));
    await publishRaw('PA', [
      body({ outboxId: 'not-a-uuid', jobId: uuid(), kind: 'PA' }),
      body('{ not json'),
      body({ outboxId: uuid(), jobId: uuid(), kind: 'PB' }),
    ]);
    for (const { job } of enqueued) expect((await waitForJob(mqEngine!, job.id)).status).toBe(JobStatus.SUCCEEDED);
    await until('three parked', async () => (await transport!.parked()) === 3);
    // Nothing loops: after several would-be redelivery periods nothing is back in the
    // work queue or waiting in a delay queue, and nothing more was parked.
    await sleep(2_500);
    expect(await queueDepth(topology.workQueue('PA'))).toBe(0);
    for (const ms of topology.delayBucketsMs) expect(await queueDepth(topology.delay(ms))).toBe(0);
    expect(await queueDepth(topology.parked)).toBe(3);
    expect(await parkedCounts(exporter)).toEqual({ 'PA/malformed': 2, 'PA/wrong-queue': 1 });
    expect(ran.PA.sort()).toEqual(enqueued.map((e) => e.job.id).sort());
    const health = await mqEngine!.health();
    expect(health.transport.parked).toBe(3);
    expect(health.status).toBe(HealthStatus.DEGRADED);
    expect(health.problems.some((p) => /3 message\(s\) parked/.test(p))).toBe(true);
  });

  it('a message naming another kind’s row, or another job, runs nothing and is parked; the job still runs once by its own kind', async () => {
    const before = await transport!.parked();
    // PUBLISHED and due (claimable), as if their own messages were on the way: the
    // publisher leaves them alone while the misrouted copies arrive.
    const a = await seedJob('PA', 'PUBLISHED');
    const b = await seedJob('PB', 'PUBLISHED');
    // A's row, on B's queue as a B message (a misrouted or forged message); and B's row named with another job.
    await publishRaw('PB', [body({ outboxId: a.outboxId, jobId: a.jobId, kind: 'PB' }), body({ outboxId: b.outboxId, jobId: a.jobId, kind: 'PB' })]);
    await until('both parked', async () => (await transport!.parked()) === before + 2);
    // A never ran as a PB job. (B may already have run by its own kind: a maintenance pass
    // can send a due PUBLISHED row again while the copies are parked.)
    expect(ran.PB).not.toContain(a.jobId);
    expect(await parkedCounts(exporter)).toMatchObject({ 'PB/mismatch': 2 });
    // Their own messages: the publisher sends them on its next poll, each to its own kind.
    await ctx.db.pool.query(`UPDATE job_outbox SET state = 'PENDING' WHERE id = ANY($1::uuid[]) AND state = 'PUBLISHED'`, [[a.outboxId, b.outboxId]]);
    expect((await waitForJob(mqEngine!, a.jobId)).status).toBe(JobStatus.SUCCEEDED);
    expect((await waitForJob(mqEngine!, b.jobId)).status).toBe(JobStatus.SUCCEEDED);
    expect(ran.PA.filter((id) => id === a.jobId)).toHaveLength(1);
    expect(ran.PB.filter((id) => id === b.jobId)).toHaveLength(1);
    expect(ran.PB).not.toContain(a.jobId);
  });

  it('a parked queue deleted by hand is declared again by the next park', async () => {
    const model = await connect(url);
    try {
      await (await model.createChannel()).deleteQueue(topology.parked);
    } finally {
      await model.close();
    }
    await publishRaw('PA', [body({ outboxId: 42, jobId: uuid(), kind: 'PA' })]);
    await until('the message parked in a new parked queue', async () => (await queueDepth(topology.parked).catch(() => 0)) === 1);
    expect(await queueDepth(topology.workQueue('PA'))).toBe(0);
  });
});
