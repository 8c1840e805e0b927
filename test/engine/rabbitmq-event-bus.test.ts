import { randomUUID } from 'node:crypto';
import { connect } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventOnWire, RabbitMqEventBus, reviveJobEvent } from '../../src/engine/events/rabbitmq-event-bus';
import { silentLogger } from '../../src/engine/logger';
import { asJobId, eventOf, JobEventReason, JobStatus, type JobEvent, type JobSnapshot } from '../../src/engine/types';
import { deleteRabbitObjects, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const FAST_RECOVERY = { initialDelay: 100, maxDelay: 1_000, factor: 2, jitter: 0.1 };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function waitUntil(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

function snapshot(overrides: Partial<JobSnapshot> = {}): JobSnapshot {
  return {
    id: asJobId(randomUUID()),
    kind: 'AUTOMATIC_SCHEDULE',
    status: JobStatus.RUNNING,
    currentStep: 'constructing',
    currentStepCode: 'schedule.constructing',
    progress: 0.25,
    message: 'Placing lectures',
    messageCode: 'solver.progress',
    messageParams: { bestPenalty: 12, hardViolations: 0, moves: 3400 },
    sequence: 3,
    attempts: 1,
    errorMessage: null,
    errorCode: null,
    errorParams: null,
    requestedBy: 'staff-1',
    exclusiveKey: 'schedule-plan:7',
    input: { planId: 7 },
    result: null,
    cancelRequested: false,
    createdAt: new Date('2026-01-02T03:04:05.678Z'),
    updatedAt: new Date('2026-01-02T03:05:00.000Z'),
    startedAt: new Date('2026-01-02T03:04:06.000Z'),
    completedAt: null,
    ...overrides,
  };
}

function collector(bus: RabbitMqEventBus) {
  const events: JobEvent[] = [];
  bus.subscribe((event) => events.push(event));
  return events;
}

describe('reviveJobEvent', () => {
  it('turns ISO strings back into Dates and keeps nulls', () => {
    const event = eventOf(snapshot(), JobEventReason.PROGRESS, new Date('2026-01-02T03:05:00.000Z'));
    const revived = reviveJobEvent(JSON.parse(JSON.stringify(event)));
    expect(revived).toEqual(event);
    expect(revived.occurredAt).toBeInstanceOf(Date);
    expect(revived.job.createdAt).toBeInstanceOf(Date);
    expect(revived.job.completedAt).toBeNull();
  });

  it('reads the form events are sent in (times as epoch milliseconds) back into the same event', () => {
    const event = eventOf(snapshot({ startedAt: new Date('2026-01-02T03:04:06.789Z') }), JobEventReason.STARTED, new Date('2026-01-02T03:05:00.001Z'));
    const wire = JSON.parse(JSON.stringify(eventOnWire(event)));
    expect(wire.occurredAt).toBe(Date.parse('2026-01-02T03:05:00.001Z'));
    expect(wire.job.startedAt).toBe(Date.parse('2026-01-02T03:04:06.789Z'));
    expect(wire.job.completedAt).toBeNull();
    const revived = reviveJobEvent(wire);
    expect(revived).toEqual(event);
    expect(revived.job.createdAt).toBeInstanceOf(Date);
  });

  it('rejects what is not an event', () => {
    expect(() => reviveJobEvent({ hello: 1 })).toThrow();
    expect(() => reviveJobEvent(null)).toThrow();
  });
});

describe.runIf(requireRabbit())('RabbitMqEventBus (shared broker)', () => {
  const url = rabbitUrl();
  const prefix = uniquePrefix('rmq_events');
  let a: RabbitMqEventBus;
  let b: RabbitMqEventBus;

  beforeAll(async () => {
    a = new RabbitMqEventBus({ url, prefix, logger: silentLogger, recovery: FAST_RECOVERY });
    b = new RabbitMqEventBus({ url, prefix, logger: silentLogger, recovery: FAST_RECOVERY });
    await a.start();
    await b.start();
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await deleteRabbitObjects(prefix, { exchanges: [`${prefix}.job-events`] });
  });

  it('delivers an event to every bus instance ("process"), with Dates revived, once each', async () => {
    expect(a.name).toBe('rabbitmq');
    const atA = collector(a);
    const atB = collector(b);
    const event = eventOf(snapshot(), JobEventReason.STEP, new Date('2026-01-02T03:05:01.000Z'));
    a.publish(event);
    await waitUntil('B to receive it', () => atB.length === 1);
    expect(atB[0]).toEqual(event);
    expect(atB[0]!.occurredAt).toBeInstanceOf(Date);
    expect(atB[0]!.job.startedAt).toBeInstanceOf(Date);
    expect(atB[0]!.job.startedAt!.toISOString()).toBe('2026-01-02T03:04:06.000Z');
    await sleep(300);
    // The publisher's own listeners get it once (locally), not again from the broker.
    expect(atA).toHaveLength(1);
    expect(atA[0]).toEqual(event);
    expect(atB).toHaveLength(1);
  });

  it('routes with `${reason}.${kind}.${jobId}` on a durable topic exchange, not persistent', async () => {
    const job = snapshot({ kind: 'SCHEDULE_PUBLISH' });
    const model = await connect(url);
    try {
      const channel = await model.createChannel();
      await channel.checkExchange(`${prefix}.job-events`);
      const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
      await channel.bindQueue(queue, `${prefix}.job-events`, `*.SCHEDULE_PUBLISH.${job.id}`);
      const got: Array<{ routingKey: string; deliveryMode: unknown }> = [];
      await channel.consume(queue, (m) => m && got.push({ routingKey: m.fields.routingKey, deliveryMode: m.properties.deliveryMode }), {
        noAck: true,
      });
      // One event per turn of the event loop travels alone, under its own routing key
      // (events of one turn travel together: see the batching test).
      b.publish(eventOf(snapshot(), JobEventReason.PROGRESS)); // another job: must not match
      await sleep(50);
      b.publish(eventOf(job, JobEventReason.SUCCEEDED));
      await waitUntil('the bound event', () => got.length === 1);
      await sleep(200);
      expect(got).toEqual([{ routingKey: `SUCCEEDED.SCHEDULE_PUBLISH.${job.id}`, deliveryMode: 1 }]);
    } finally {
      await model.close();
    }
  });

  it('uses an exclusive, server-named queue per instance', () => {
    expect(a.queue).toMatch(/^amq\.gen-/);
    expect(b.queue).toMatch(/^amq\.gen-/);
    expect(a.queue).not.toBe(b.queue);
  });

  it('unsubscribes', async () => {
    const got: JobEvent[] = [];
    const off = b.subscribe((event) => got.push(event));
    off();
    a.publish(eventOf(snapshot(), JobEventReason.PROGRESS));
    await sleep(300);
    expect(got).toHaveLength(0);
  });

  it("a worker-only bus ('control') receives cancel requests from other processes and nothing else", async () => {
    const worker = new RabbitMqEventBus({ url, prefix, logger: silentLogger, recovery: FAST_RECOVERY, receive: 'control' });
    await worker.start();
    try {
      const got: JobEvent[] = [];
      worker.subscribe((event) => got.push(event));
      const job = snapshot();
      a.publish(eventOf(job, JobEventReason.PROGRESS));
      a.publish(eventOf(job, JobEventReason.HEARTBEAT));
      a.publish(eventOf(job, JobEventReason.CANCEL_REQUESTED));
      await waitUntil('the cancel request', () => got.length >= 1);
      await sleep(300);
      expect(got.map((e) => e.reason)).toEqual([JobEventReason.CANCEL_REQUESTED]);
    } finally {
      await worker.close();
    }
  });
});

describe.runIf(requireRabbit())('RabbitMqEventBus across a connection cut (TCP proxy)', () => {
  const url = rabbitUrl();
  const prefix = uniquePrefix('rmq_events_cut');
  let proxy: TcpProxy;
  let cutBus: RabbitMqEventBus;
  let steady: RabbitMqEventBus;

  beforeAll(async () => {
    proxy = await startTcpProxy(5672);
    cutBus = new RabbitMqEventBus({ url: proxy.urlFor(url), prefix, logger: silentLogger, recovery: FAST_RECOVERY });
    steady = new RabbitMqEventBus({ url, prefix, logger: silentLogger, recovery: FAST_RECOVERY });
    await cutBus.start();
    await steady.start();
  });

  afterAll(async () => {
    await cutBus?.close();
    await steady?.close();
    await proxy?.close();
    await deleteRabbitObjects(prefix, { exchanges: [`${prefix}.job-events`] });
  });

  it('never throws while down, sends the latest buffered snapshot per job on reconnect, re-binds its queue, and says it is back', async () => {
    const atSteady = collector(steady);
    const atCut = collector(cutBus);
    const oldQueue = cutBus.queue;
    let reconnects = 0;
    let queueWhenReconnected: string | null = null;
    cutBus.onConnected(() => {
      reconnects++;
      queueWhenReconnected = cutBus.queue;
    });

    await proxy.pause('refuse');
    proxy.cut();
    await waitUntil('the bus to notice', () => cutBus.connectionState() !== 'connected', 5_000);

    const job = snapshot();
    const first = eventOf({ ...job, sequence: 4 }, JobEventReason.PROGRESS);
    const latest = eventOf({ ...job, sequence: 5, progress: 0.5 }, JobEventReason.PROGRESS);
    expect(() => cutBus.publish(first)).not.toThrow();
    expect(() => cutBus.publish(latest)).not.toThrow();
    // Local listeners still hear it while the broker is away.
    await waitUntil('local delivery', () => atCut.length === 2);

    await proxy.resume();
    await waitUntil('reconnected', () => cutBus.connectionState() === 'connected', 15_000);
    // Said once, when its new queue already consumes (what others send from then on arrives).
    expect(reconnects).toBe(1);
    expect(queueWhenReconnected).toMatch(/^amq\.gen-/);
    expect(queueWhenReconnected).not.toBe(oldQueue);
    await waitUntil('the buffered snapshot to arrive', () => atSteady.length === 1);
    await sleep(200);
    expect(atSteady.map((e) => e.sequence)).toEqual([5]);

    // Its queue was re-declared and re-bound: it hears others again.
    expect(cutBus.queue).toMatch(/^amq\.gen-/);
    expect(cutBus.queue).not.toBe(oldQueue);
    const fromSteady = eventOf(snapshot(), JobEventReason.STARTED);
    steady.publish(fromSteady);
    await waitUntil('the re-bound queue to deliver', () => atCut.some((e) => e.jobId === fromSteady.jobId));
  }, 60_000);
});

describe.runIf(requireRabbit())('RabbitMqEventBus batching', () => {
  /** A sender holding its events `holdMs` (0: to the end of the turn), a receiver, and the routing keys of what the broker carried. */
  async function senderAndReceiver(holdMs: number, run: (pair: { sender: RabbitMqEventBus; got: JobEvent[]; keys: string[] }) => Promise<void>) {
    const url = rabbitUrl();
    const prefix = uniquePrefix('rmq_batch');
    const sender = new RabbitMqEventBus({ url, prefix, logger: silentLogger, recovery: FAST_RECOVERY, holdMs });
    const receiver = new RabbitMqEventBus({ url, prefix, logger: silentLogger, recovery: FAST_RECOVERY });
    await sender.start();
    await receiver.start();
    const model = await connect(url);
    try {
      const channel = await model.createChannel();
      const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
      await channel.bindQueue(queue, `${prefix}.job-events`, '#');
      const keys: string[] = [];
      await channel.consume(queue, (m) => m && keys.push(m.fields.routingKey), { noAck: true });
      const got: JobEvent[] = [];
      receiver.subscribe((event) => got.push(event));
      await run({ sender, got, keys });
    } finally {
      await model.close();
      await sender.close();
      await receiver.close();
      await deleteRabbitObjects(prefix, { exchanges: [`${prefix}.job-events`] });
    }
  }

  it('events published in one turn of the event loop travel as one broker message and arrive in order', async () => {
    await senderAndReceiver(0, async ({ sender, got, keys }) => {
      const job = snapshot();
      for (let sequence = 1; sequence <= 5; sequence++) sender.publish(eventOf({ ...job, sequence }, JobEventReason.PROGRESS));
      await waitUntil('the five events', () => got.length === 5);
      await sleep(200);
      expect(got.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
      expect(got[0]!.job.createdAt).toBeInstanceOf(Date);
      expect(keys).toEqual(['BATCH.events']);
    });
  });

  it('with a hold, events wait it out and leave together, in order; this process hears them at once', async () => {
    const HOLD_MS = 1_000;
    await senderAndReceiver(HOLD_MS, async ({ sender, got, keys }) => {
      const here = collector(sender);
      const job = snapshot();
      const firstAt = performance.now();
      sender.publish(eventOf({ ...job, sequence: 1 }, JobEventReason.STARTED));
      await waitUntil('this process to hear it', () => here.length === 1);
      expect(got).toHaveLength(0);
      await sleep(50);
      sender.publish(eventOf({ ...job, sequence: 2 }, JobEventReason.PROGRESS));
      await waitUntil('both events', () => got.length === 2);
      // A timer never fires early: nothing can have left before the hold was over.
      expect(performance.now() - firstAt).toBeGreaterThanOrEqual(HOLD_MS - 1);
      await sleep(200);
      expect(got.map((e) => e.sequence)).toEqual([1, 2]);
      expect(keys).toEqual(['BATCH.events']);
    });
  });

  it('a cancel request sends the events held before it first, so none arrives behind it', async () => {
    // A hold far longer than the test: only the cancel request can have sent the first event.
    await senderAndReceiver(600_000, async ({ sender, got, keys }) => {
      const job = snapshot();
      sender.publish(eventOf({ ...job, sequence: 4 }, JobEventReason.PROGRESS));
      sender.publish(eventOf({ ...job, sequence: 5, cancelRequested: true }, JobEventReason.CANCEL_REQUESTED));
      await waitUntil('both events', () => got.length === 2 && keys.length === 2);
      expect(got.map((e) => [e.sequence, e.reason])).toEqual([
        [4, JobEventReason.PROGRESS],
        [5, JobEventReason.CANCEL_REQUESTED],
      ]);
      expect(keys).toEqual([`PROGRESS.${job.kind}.${job.id}`, `CANCEL_REQUESTED.${job.kind}.${job.id}`]);
    });
  });
});
