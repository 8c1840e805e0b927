import { randomUUID } from 'node:crypto';
import { connect } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/engine/logger';
import { ParkReason, type ConsumerHandle, type Settlement } from '../../src/engine/transport/transport';
import {
  DEFAULT_DELAY_BUCKETS_MS,
  pickDelayBucket,
  rabbitMqTopology,
  RabbitMqTransport,
} from '../../src/engine/transport/rabbitmq-transport';
import { asJobId, asOutboxId, type JobMessage } from '../../src/engine/types';
import { privateRabbitSupported, startPrivateRabbit, type PrivateRabbit } from '../support/private-rabbit';
import { deleteRabbitObjects, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const FAST_RECOVERY = { initialDelay: 100, maxDelay: 1_000, factor: 2, jitter: 0.1 };

function message(kind: string): JobMessage {
  return { outboxId: asOutboxId(randomUUID()), jobId: asJobId(randomUUID()), kind };
}
const messages = (kind: string, n: number) => Array.from({ length: n }, () => message(kind));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function waitUntil(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Every name the transport declares under `prefix` for `kinds`. */
function topologyNames(prefix: string, kinds: string[]) {
  const t = rabbitMqTopology(prefix);
  return {
    queues: [...kinds.map(t.workQueue), ...DEFAULT_DELAY_BUCKETS_MS.map(t.delay), t.parked],
    exchanges: [t.workExchange, ...DEFAULT_DELAY_BUCKETS_MS.map(t.delay)],
  };
}

async function queueDepth(url: string, queue: string): Promise<number> {
  const model = await connect(url);
  try {
    const channel = await model.createChannel();
    const { messageCount } = await channel.checkQueue(queue);
    return messageCount;
  } finally {
    await model.close().catch(() => undefined);
  }
}

describe('pickDelayBucket', () => {
  it('rounds up to the next bucket (never earlier than asked), capped at the largest', () => {
    expect(pickDelayBucket(0)).toBe(1_000);
    expect(pickDelayBucket(999)).toBe(1_000);
    expect(pickDelayBucket(1_000)).toBe(1_000);
    expect(pickDelayBucket(1_999)).toBe(2_000);
    expect(pickDelayBucket(2_500)).toBe(3_000);
    expect(pickDelayBucket(40_000)).toBe(45_000);
    expect(pickDelayBucket(3_600_000)).toBe(600_000);
  });
});

describe.runIf(requireRabbit())('RabbitMqTransport (shared broker)', () => {
  const url = rabbitUrl();
  const prefix = uniquePrefix('rmq_transport');
  const kinds: string[] = [];
  let transport: RabbitMqTransport;
  const handles: ConsumerHandle[] = [];
  const kind = (name: string) => {
    kinds.push(name);
    return name;
  };

  beforeAll(async () => {
    transport = new RabbitMqTransport({ url, prefix, logger: silentLogger, recovery: FAST_RECOVERY });
    await transport.start([kind('A')]);
  });

  afterAll(async () => {
    await transport?.close();
    await deleteRabbitObjects(prefix, topologyNames(prefix, kinds));
  });

  it('declares quorum work queues and is connected', async () => {
    expect(transport.name).toBe('rabbitmq');
    expect(transport.durable).toBe(true);
    expect(transport.connectionState()).toBe('connected');
    const model = await connect(url);
    try {
      const channel = await model.createChannel();
      // Re-declaring with the same arguments succeeds only if the queue is a quorum queue.
      await channel.assertQueue(`${prefix}.jobs.A`, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      await channel.checkExchange(`${prefix}.work`);
      await channel.checkQueue(`${prefix}.delay.1000`);
    } finally {
      await model.close();
    }
  });

  it('carries messages from publish to the kind’s handler', async () => {
    const received: JobMessage[] = [];
    const sent = messages('A', 5);
    handles.push(
      await transport.consume('A', 2, async (m) => {
        received.push(m);
        return { type: 'ack' };
      }),
    );
    await transport.publish(sent);
    await waitUntil('5 deliveries', () => received.length === 5);
    expect(new Set(received.map((m) => m.outboxId))).toEqual(new Set(sent.map((m) => m.outboxId)));
    expect(received.find((m) => m.outboxId === sent[0]!.outboxId)).toEqual(sent[0]);
    await sleep(200);
    expect(received).toHaveLength(5);
    expect(await queueDepth(url, `${prefix}.jobs.A`)).toBe(0);
  });

  it('runs at most `consumers` handlers of a kind at a time, and uses all of them', async () => {
    const k = kind('conc');
    let running = 0;
    let maxRunning = 0;
    let done = 0;
    const handle = await transport.consume(k, 3, async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await sleep(150);
      running--;
      done++;
      return { type: 'ack' };
    });
    handles.push(handle);
    await transport.publish(messages(k, 12));
    await waitUntil('12 handled', () => done === 12);
    expect(maxRunning).toBe(3);
    expect(handle.active).toBe(0);
  });

  it('holds `prefetch` deliveries beyond the running ones, still runs at most `consumers`, and hands held ones back when it stops', async () => {
    const k = kind('prefetch');
    const release = gate();
    let running = 0;
    let maxRunning = 0;
    let started = 0;
    const handle = await transport.consume(
      k,
      2,
      async () => {
        running++;
        started++;
        maxRunning = Math.max(maxRunning, running);
        await release.opened;
        running--;
        return { type: 'ack' };
      },
      { prefetch: 3 },
    );
    await transport.publish(messages(k, 8));
    // 2 running + 3 held leave 3 ready in the queue.
    await waitUntil('5 taken from the queue', () => started === 2);
    const deadline = Date.now() + 15_000;
    while ((await queueDepth(url, `${prefix}.jobs.${k}`)) !== 3 && Date.now() < deadline) await sleep(50);
    expect(await queueDepth(url, `${prefix}.jobs.${k}`)).toBe(3);
    expect(handle.active).toBe(2);
    // Stopping returns the held (never started) deliveries to the queue; the running ones finish.
    const stopped = handle.stop();
    await sleep(200);
    release.open();
    await stopped;
    expect(maxRunning).toBe(2);
    expect(started).toBe(2);
    const back = Date.now() + 15_000;
    while ((await queueDepth(url, `${prefix}.jobs.${k}`)) !== 6 && Date.now() < back) await sleep(50);
    expect(await queueDepth(url, `${prefix}.jobs.${k}`)).toBe(6);
  });

  it('keeps a slow kind from delaying another kind', async () => {
    const slow = kind('slow');
    const fast = kind('fast');
    const release = gate();
    let slowStarted = 0;
    const fastDone: string[] = [];
    const slowHandle = await transport.consume(slow, 1, async () => {
      slowStarted++;
      await release.opened;
      return { type: 'ack' };
    });
    handles.push(slowHandle);
    handles.push(
      await transport.consume(fast, 1, async (m) => {
        fastDone.push(m.outboxId);
        return { type: 'ack' };
      }),
    );
    await transport.publish([...messages(slow, 3), ...messages(fast, 5)]);
    await waitUntil('fast kind drained', () => fastDone.length === 5);
    expect(slowStarted).toBe(1);
    expect(slowHandle.active).toBe(1);
    release.open();
    await waitUntil('slow kind drained', () => slowStarted === 3);
  });

  it('retries after about the delay without holding the consumer slot', async () => {
    const k = kind('retry');
    const first = message(k);
    const others = messages(k, 4);
    const seen: Array<{ id: string; at: number }> = [];
    let firstAttempts = 0;
    handles.push(
      await transport.consume(k, 1, async (m): Promise<Settlement> => {
        seen.push({ id: m.outboxId, at: Date.now() });
        if (m.outboxId === first.outboxId && firstAttempts++ === 0) return { type: 'retry', delayMs: 2_000 };
        return { type: 'ack' };
      }),
    );
    await transport.publish([first]);
    await waitUntil('first attempt', () => seen.length === 1);
    await transport.publish(others);
    await waitUntil('second attempt of the retried message', () => firstAttempts === 2, 10_000);
    const attempts = seen.filter((s) => s.id === first.outboxId);
    const gap = attempts[1]!.at - attempts[0]!.at;
    expect(gap).toBeGreaterThanOrEqual(1_900);
    expect(gap).toBeLessThan(4_500);
    // With one consumer, the others ran while the retried message waited in the broker.
    const othersDone = seen.filter((s) => s.id !== first.outboxId);
    expect(othersDone).toHaveLength(4);
    for (const other of othersDone) expect(other.at).toBeLessThan(attempts[1]!.at);
    expect(await queueDepth(url, `${prefix}.delay.2000`)).toBe(0);
  });

  it('routes delayed copies of two kinds sharing one bucket back to their own kinds', async () => {
    const kinds2 = [kind('rA'), kind('rB')];
    const seen = new Map<string, string[]>(); // outboxId → queues (kinds) it was delivered on
    for (const k of kinds2) {
      handles.push(
        await transport.consume(k, 2, async (m): Promise<Settlement> => {
          const list = seen.get(m.outboxId) ?? [];
          list.push(k);
          seen.set(m.outboxId, list);
          return list.length === 1 ? { type: 'retry', delayMs: 1_200 } : { type: 'ack' };
        }),
      );
    }
    const sent = [...messages('rA', 3), ...messages('rB', 3)];
    await transport.publish(sent);
    await waitUntil('every message twice', () => sent.every((m) => seen.get(m.outboxId)?.length === 2), 10_000);
    for (const m of sent) expect(seen.get(m.outboxId)).toEqual([m.kind, m.kind]);
  });

  it('brings a message back after 1 s when the handler throws', async () => {
    const k = kind('throws');
    const times: number[] = [];
    handles.push(
      await transport.consume(k, 1, async () => {
        times.push(Date.now());
        if (times.length === 1) throw new Error('boom');
        return { type: 'ack' };
      }),
    );
    await transport.publish([message(k)]);
    await waitUntil('redelivery', () => times.length === 2, 8_000);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(900);
  });

  it('requeues at once on `requeue`', async () => {
    const k = kind('requeue');
    const m = message(k);
    const times: number[] = [];
    handles.push(
      await transport.consume(k, 1, async () => {
        times.push(Date.now());
        return times.length === 1 ? { type: 'requeue' } : { type: 'ack' };
      }),
    );
    await transport.publish([m]);
    await waitUntil('redelivery', () => times.length === 2, 5_000);
    expect(times[1]! - times[0]!).toBeLessThan(900);
    await sleep(200);
    expect(times).toHaveLength(2);
  });

  it('parks malformed bodies (no poison loop, no handler call) and keeps consuming', async () => {
    const k = kind('poison');
    const received: JobMessage[] = [];
    let calls = 0;
    handles.push(
      await transport.consume(k, 1, async (m) => {
        calls++;
        received.push(m);
        return { type: 'ack' };
      }),
    );
    const model = await connect(url);
    try {
      const channel = await model.createConfirmChannel();
      const queue = `${prefix}.jobs.${k}`;
      channel.publish(`${prefix}.work`, queue, Buffer.from('not json'));
      channel.publish(`${prefix}.work`, queue, Buffer.from(JSON.stringify({ outboxId: 1 })));
      await channel.waitForConfirms();
    } finally {
      await model.close();
    }
    const good = message(k);
    await transport.publish([good]);
    await waitUntil('the good message', () => received.length === 1);
    await sleep(300);
    expect(calls).toBe(1);
    expect(received[0]).toEqual(good);
    expect(await queueDepth(url, `${prefix}.jobs.${k}`)).toBe(0);
    expect(await queueDepth(url, `${prefix}.parked`)).toBe(2);
    expect(await transport.parked()).toBe(2);
  });

  it('stop() cancels the consumer and waits for running handlers', async () => {
    const k = kind('stop');
    const release = gate();
    let started = 0;
    const handle = await transport.consume(k, 2, async () => {
      started++;
      await release.opened;
      return { type: 'ack' };
    });
    await transport.publish(messages(k, 2));
    await waitUntil('two running', () => handle.active === 2);
    let stopped = false;
    const stopping = handle.stop().then(() => (stopped = true));
    await sleep(300);
    expect(stopped).toBe(false);
    release.open();
    await stopping;
    expect(handle.active).toBe(0);
    // No new deliveries after stop: the message waits in the queue.
    await transport.publish([message(k)]);
    await sleep(500);
    expect(started).toBe(2);
    expect(await queueDepth(url, `${prefix}.jobs.${k}`)).toBe(1);
  });

  it('re-attaches a consumer whose channel the server closed (as consumer_timeout does)', async () => {
    const k = kind('chanclose');
    const received: string[] = [];
    const handle = await transport.consume(k, 1, async (m) => {
      received.push(m.outboxId);
      return { type: 'ack' };
    });
    handles.push(handle);
    await transport.publish([message(k)]);
    await waitUntil('first', () => received.length === 1);
    // Make the server close this consumer's channel (404 on a passive declare).
    const channel = (handle as unknown as { channel: import('amqplib').Channel }).channel;
    channel.on('error', () => undefined);
    await channel.checkQueue(`${prefix}.no-such-queue`).catch(() => undefined);
    await transport.publish(messages(k, 3));
    // The first delivery's ack may share a frame batch with the failing declare and be
    // dropped with the channel: the broker then sends it again (a duplicate the claim
    // makes harmless). What matters here: every message arrives on the new channel.
    await waitUntil('all after the channel was re-opened', () => new Set(received).size === 4, 10_000);
    expect(transport.connectionState()).toBe('connected');
  });

  it('declares the queue of a kind published before anyone consumes it', async () => {
    const k = kind('lazy');
    await transport.publish([message(k)]);
    expect(await queueDepth(url, `${prefix}.jobs.${k}`)).toBe(1);
  });
});

describe.runIf(requireRabbit())('RabbitMqTransport with several jobs in one broker message', () => {
  const url = rabbitUrl();
  const prefix = uniquePrefix('rmq_packed');
  const kinds = ['P1', 'P2', 'P3', 'P4', 'P5', 'Q'];
  let transport: RabbitMqTransport;

  beforeAll(async () => {
    transport = new RabbitMqTransport({
      url,
      prefix,
      logger: silentLogger,
      recovery: FAST_RECOVERY,
      jobsPerMessage: { P1: 4, P2: 4, P3: 4, P4: 4, P5: 4 },
    });
    await transport.start(kinds);
  });

  afterAll(async () => {
    await transport?.close();
    await deleteRabbitObjects(prefix, topologyNames(prefix, kinds));
  });

  /** The bodies of the messages now in a queue (taken off it). */
  async function drainBodies(queue: string): Promise<unknown[]> {
    const model = await connect(url);
    try {
      const channel = await model.createChannel();
      const bodies: unknown[] = [];
      for (;;) {
        const got = await channel.get(queue, { noAck: true });
        if (!got) return bodies;
        bodies.push(JSON.parse(got.content.toString('utf8')));
      }
    } finally {
      await model.close();
    }
  }

  it('refuses a jobsPerMessage outside 1–64', () => {
    expect(() => new RabbitMqTransport({ url, prefix, logger: silentLogger, jobsPerMessage: { X: 0 } })).toThrow(/1–64/);
    expect(() => new RabbitMqTransport({ url, prefix, logger: silentLogger, jobsPerMessage: { X: 65 } })).toThrow(/1–64/);
  });

  it('packs each kind’s jobs, in order, into messages of up to jobsPerMessage; a kind absent goes one per message', async () => {
    const p1 = messages('P1', 10);
    const q = messages('Q', 2);
    await transport.publish([...p1.slice(0, 5), q[0]!, ...p1.slice(5), q[1]!]);
    const bodies = await drainBodies(`${prefix}.jobs.P1`);
    expect(bodies).toEqual([p1.slice(0, 4), p1.slice(4, 8), p1.slice(8)]);
    expect(await drainBodies(`${prefix}.jobs.Q`)).toEqual(q);
  });

  it('runs every job of a message once, at most `consumers` at a time, and acks the message when all are done', async () => {
    const sent = messages('P2', 9);
    const seen: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const handle = await transport.consume('P2', 2, async (m) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      seen.push(m.outboxId);
      await sleep(30);
      running--;
      return { type: 'ack' };
    });
    await transport.publish(sent);
    await waitUntil('9 jobs', () => seen.length === 9);
    await sleep(300);
    await handle.stop();
    expect([...seen].sort()).toEqual(sent.map((m) => m.outboxId).sort());
    expect(maxRunning).toBe(2);
    expect(await queueDepth(url, `${prefix}.jobs.P2`)).toBe(0);
  });

  it('a job put back hands its whole message back once its other jobs are settled', async () => {
    const sent = messages('P3', 4);
    const seen: string[] = [];
    const handle = await transport.consume('P3', 4, async (m) => {
      seen.push(m.outboxId);
      // The first delivery of the third job asks to go back (as at a graceful shutdown).
      return m.outboxId === sent[2]!.outboxId && seen.filter((id) => id === m.outboxId).length === 1 ? { type: 'requeue' } : { type: 'ack' };
    });
    await transport.publish(sent);
    // All four again: the engine's claim answers the done ones at once.
    await waitUntil('the message twice', () => seen.length === 8);
    await sleep(300);
    await handle.stop();
    expect(seen).toHaveLength(8);
    for (const m of sent) expect(seen.filter((id) => id === m.outboxId)).toHaveLength(2);
    expect(await queueDepth(url, `${prefix}.jobs.P3`)).toBe(0);
  });

  it('a retried or parked job goes alone: the delayed or parked copy carries that job only', async () => {
    const sent = messages('P4', 4);
    const seen: string[] = [];
    const handle = await transport.consume('P4', 4, async (m): Promise<Settlement> => {
      seen.push(m.outboxId);
      if (m.outboxId === sent[0]!.outboxId && seen.filter((id) => id === m.outboxId).length === 1) return { type: 'retry', delayMs: 1_000 };
      if (m.outboxId === sent[1]!.outboxId) return { type: 'park', reason: ParkReason.MISMATCH, detail: 'test' };
      return { type: 'ack' };
    });
    await transport.publish(sent);
    await waitUntil('the retried job again', () => seen.filter((id) => id === sent[0]!.outboxId).length === 2, 10_000);
    await sleep(300);
    await handle.stop();
    // Four jobs, plus the retried one's copy: the others were not repeated.
    expect(seen).toHaveLength(5);
    expect(await queueDepth(url, `${prefix}.jobs.P4`)).toBe(0);
    expect(await drainBodies(`${prefix}.parked`)).toEqual([sent[1]]);
  });

  it('parks a message whose array holds one bad job, running none of it', async () => {
    let calls = 0;
    const handle = await transport.consume('P5', 2, async () => {
      calls++;
      return { type: 'ack' };
    });
    const good = message('P5');
    const model = await connect(url);
    try {
      const channel = await model.createConfirmChannel();
      channel.publish(`${prefix}.work`, `${prefix}.jobs.P5`, Buffer.from(JSON.stringify([good, { ...good, outboxId: 'x' }])));
      await channel.waitForConfirms();
    } finally {
      await model.close();
    }
    const deadline = Date.now() + 10_000;
    while ((await queueDepth(url, `${prefix}.parked`)) !== 1 && Date.now() < deadline) await sleep(50);
    await handle.stop();
    expect(calls).toBe(0);
    expect(await queueDepth(url, `${prefix}.jobs.P5`)).toBe(0);
    expect(await drainBodies(`${prefix}.parked`)).toEqual([[good, { ...good, outboxId: 'x' }]]);
  });
});

describe.runIf(requireRabbit())('RabbitMqTransport connection cut (TCP proxy)', () => {
  const url = rabbitUrl();
  const prefix = uniquePrefix('rmq_cut');
  let proxy: TcpProxy;
  let transport: RabbitMqTransport;
  let direct: RabbitMqTransport;

  beforeAll(async () => {
    proxy = await startTcpProxy(5672);
    transport = new RabbitMqTransport({ url: proxy.urlFor(url), prefix, logger: silentLogger, recovery: FAST_RECOVERY, publishTimeoutMs: 3_000 });
    direct = new RabbitMqTransport({ url, prefix, logger: silentLogger, recovery: FAST_RECOVERY });
    await transport.start(['cut']);
    await direct.start(['cut']);
  });

  afterAll(async () => {
    await transport?.close();
    await direct?.close();
    await proxy?.close();
    await deleteRabbitObjects(prefix, topologyNames(prefix, ['cut']));
  });

  it('reconnects, re-attaches the consumer and loses no message', async () => {
    const seen = new Set<string>();
    let running = 0;
    let maxRunning = 0;
    const slowRelease = gate();
    const slow = message('cut');
    let slowFinished = false;
    const handle = await transport.consume('cut', 2, async (m) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      try {
        if (m.outboxId === slow.outboxId && !seen.has(slow.outboxId)) {
          seen.add(m.outboxId);
          await slowRelease.opened; // still running when the connection dies
          slowFinished = true;
          return { type: 'ack' };
        }
        seen.add(m.outboxId);
        await sleep(20);
        return { type: 'ack' };
      } finally {
        running--;
      }
    });

    const before = messages('cut', 5);
    await transport.publish([slow, ...before]);
    await waitUntil('messages before the cut', () => before.every((m) => seen.has(m.outboxId)));

    await proxy.pause('refuse');
    expect(proxy.cut()).toBeGreaterThan(0);
    await waitUntil('the transport to notice', () => transport.connectionState() !== 'connected', 5_000);
    expect(transport.connectionState()).toBe('connecting');

    // Publishing while down fails fast (the publisher puts rows back to PENDING).
    const t0 = Date.now();
    await expect(transport.publish([message('cut')])).rejects.toThrow();
    expect(Date.now() - t0).toBeLessThan(1_000);

    // Another process publishes meanwhile; the handler caught by the cut finishes and acks a dead channel.
    const during = messages('cut', 5);
    await direct.publish(during);
    slowRelease.open();
    await waitUntil('the cut handler to finish', () => slowFinished);

    await proxy.resume();
    await waitUntil('reconnected', () => transport.connectionState() === 'connected', 15_000);
    const after = messages('cut', 5);
    await transport.publish(after);

    const all = [slow, ...before, ...during, ...after];
    await waitUntil('every message consumed', () => all.every((m) => seen.has(m.outboxId)), 20_000);
    expect(maxRunning).toBeLessThanOrEqual(2);
    await handle.stop();
    expect(await queueDepth(url, `${prefix}.jobs.cut`)).toBe(0);
  }, 60_000);

  it('rejects a publish whose confirms never come (a stalled connection) after the timeout', async () => {
    proxy.freeze();
    try {
      const t0 = Date.now();
      await expect(transport.publish([message('cut')])).rejects.toThrow(/not confirmed/);
      const waited = Date.now() - t0;
      expect(waited).toBeGreaterThanOrEqual(2_900);
      expect(waited).toBeLessThan(5_000);
    } finally {
      proxy.thaw();
    }
  }, 30_000);

  it('does not reconnect after close()', async () => {
    const ownProxy = await startTcpProxy(5672);
    try {
      const extra = new RabbitMqTransport({ url: ownProxy.urlFor(url), prefix, logger: silentLogger, recovery: FAST_RECOVERY });
      await extra.start(['cut']);
      const connections = ownProxy.totalConnections;
      expect(connections).toBe(2); // one to publish, one to consume
      await extra.close();
      expect(extra.connectionState()).toBe('closed');
      ownProxy.cut();
      await sleep(1_500);
      expect(ownProxy.totalConnections).toBe(connections);
      await expect(extra.publish([message('cut')])).rejects.toThrow(/closed/);
    } finally {
      await ownProxy.close();
    }
  });
});

describe('RabbitMqTransport without a broker', () => {
  it('start() gives up after the initial retries; publish rejects at once', async () => {
    const transport = new RabbitMqTransport({
      url: 'amqp://guest:guest@127.0.0.1:1',
      prefix: 'unused',
      logger: silentLogger,
      recovery: { initialDelay: 10, maxDelay: 20, initialMaxRetries: 2 },
    });
    expect(transport.connectionState()).toBe('disconnected');
    await expect(transport.start(['x'])).rejects.toThrow();
    expect(transport.connectionState()).toBe('disconnected');
    await expect(transport.publish([message('x')])).rejects.toThrow(/disconnected/);
    await transport.close();
    expect(transport.connectionState()).toBe('closed');
  });
});

const privateSupported = privateRabbitSupported() && process.getuid?.() === 0;

describe.runIf(privateSupported)('RabbitMqTransport broker restart (private node)', () => {
  let rabbit: PrivateRabbit;
  let consumerSide: RabbitMqTransport;
  let publisherSide: RabbitMqTransport;
  const prefix = uniquePrefix('rmq_restart');

  beforeAll(async () => {
    rabbit = await startPrivateRabbit();
    consumerSide = new RabbitMqTransport({ url: rabbit.url, prefix, logger: silentLogger, recovery: FAST_RECOVERY, publishTimeoutMs: 3_000 });
    publisherSide = new RabbitMqTransport({ url: rabbit.url, prefix, logger: silentLogger, recovery: FAST_RECOVERY, publishTimeoutMs: 3_000 });
    await consumerSide.start(['restart']);
    await publisherSide.start(['restart']);
  }, 90_000);

  afterAll(async () => {
    await consumerSide?.close();
    await publisherSide?.close();
    await rabbit?.destroy();
  }, 60_000);

  it('recovers after the broker restarts; durable messages survive; none is lost', async () => {
    const seen = new Set<string>();
    const hold = gate();
    let holding = true;
    const handle = await consumerSide.consume('restart', 2, async (m) => {
      if (holding) await hold.opened;
      seen.add(m.outboxId);
      return { type: 'ack' };
    });
    // Both consumer slots block, the rest wait in the quorum queue across the restart.
    const before = messages('restart', 6);
    await publisherSide.publish(before);
    await waitUntil('two handlers blocked', () => handle.active === 2);

    await rabbit.stop();
    await waitUntil('both notice', () =>
      consumerSide.connectionState() === 'connecting' && publisherSide.connectionState() === 'connecting',
    );
    await expect(publisherSide.publish([message('restart')])).rejects.toThrow();
    // The handlers caught by the restart finish; their acks go nowhere and must not crash.
    holding = false;
    hold.open();

    await rabbit.start();
    await waitUntil(
      'both reconnected',
      () => consumerSide.connectionState() === 'connected' && publisherSide.connectionState() === 'connected',
      30_000,
    );
    const after = messages('restart', 4);
    await publisherSide.publish(after);
    await waitUntil('every message consumed', () => [...before, ...after].every((m) => seen.has(m.outboxId)), 20_000);
    await handle.stop();
  }, 60_000);
});
