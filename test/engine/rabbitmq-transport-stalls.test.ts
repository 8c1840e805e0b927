// The RabbitMQ transport when the broker stops answering, or answers only in part: every
// wait on the broker is bounded, a failed queue count keeps the connection, and a
// publish deadline refuses only what the broker did not confirm.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/engine/logger';
import { DEFAULT_DELAY_BUCKETS_MS, rabbitMqTopology, RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import { PublishRefusedError } from '../../src/engine/transport/transport';
import { asJobId, asOutboxId, type JobMessage } from '../../src/engine/types';
import { deleteRabbitObjects, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';
import { until } from '../support/engine-harness';
import { startTcpProxy } from '../support/tcp-proxy';
import {
  ackOf,
  BASIC_ACK,
  BASIC_PUBLISH,
  CHANNEL_CLOSE,
  CONFIRM_SELECT,
  isMethod,
  publishRoutingKey,
  singleAck,
  startAmqpFrameProxy,
  type AmqpFrame,
  type FrameAction,
} from '../support/amqp-frame-proxy';

const FAST_RECOVERY = { initialDelay: 100, maxDelay: 1_000, factor: 2, jitter: 0.1 };
/**
 * How long a call that must settle on its own (its bounds are 2–3 s) gets before the
 * test counts it as hung: far above those bounds on a loaded machine, far below
 * amqplib's heartbeat (2 × 10 s), which would end a stalled connection anyway.
 */
const HUNG_AFTER_MS = 9_000;

const brokerPort = Number(new URL(rabbitUrl()).port || 5672);

function message(kind: string): JobMessage {
  return { outboxId: asOutboxId(randomUUID()), jobId: asJobId(randomUUID()), kind };
}

function topologyNames(prefix: string, kinds: string[]) {
  const t = rabbitMqTopology(prefix);
  return {
    queues: [...kinds.map(t.workQueue), ...DEFAULT_DELAY_BUCKETS_MS.map(t.delay), t.parked],
    exchanges: [t.workExchange, ...DEFAULT_DELAY_BUCKETS_MS.map(t.delay)],
  };
}

/** How `promise` settled, or `hung` when it had not after `ms`. */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<{ hung: true } | { hung: false; value?: T; error?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<{ hung: true }>((resolve) => (timer = setTimeout(() => resolve({ hung: true }), ms)));
  try {
    return await Promise.race([promise.then((value) => ({ hung: false as const, value }), (error: unknown) => ({ hung: false as const, error })), hung]);
  } finally {
    clearTimeout(timer);
  }
}


describe.runIf(requireRabbit())('RabbitMqTransport when the broker stalls', () => {
  const url = rabbitUrl();
  const prefix = uniquePrefix('rmq_stalls');
  const kinds = ['present', 'absent', 'setup', 'stop', 'ok', 'stuck'];
  const cleanups: Array<() => Promise<unknown>> = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  afterAll(async () => {
    await deleteRabbitObjects(prefix, topologyNames(prefix, kinds));
  });

  /** A transport connected through `proxy`, closed after the test. */
  function transportThrough(proxy: { urlFor(url: string): string }, publishTimeoutMs?: number): RabbitMqTransport {
    const transport = new RabbitMqTransport({ url: proxy.urlFor(url), prefix, logger: silentLogger, recovery: FAST_RECOVERY, publishTimeoutMs });
    cleanups.push(() => transport.close());
    return transport;
  }

  it('waiting() rejects within its bound when the broker stops answering', async () => {
    const proxy = await startTcpProxy(brokerPort);
    cleanups.push(() => proxy.close());
    const transport = transportThrough(proxy);
    await transport.start(['present']);
    expect(await transport.waiting('present')).toBe(0);

    proxy.freeze();
    cleanups.push(async () => proxy.thaw());
    const outcome = await settledWithin(transport.waiting('present'), HUNG_AFTER_MS);
    expect(outcome.hung, 'waiting() still pending').toBe(false);
    expect(outcome.hung === false && outcome.error).toBeInstanceOf(Error);
    expect(String((outcome as { error: Error }).error.message)).toMatch(/not answered/);
  });

  it('waiting() on a kind whose queue is missing rejects and keeps the connection and other kinds’ consumers', async () => {
    const proxy = await startTcpProxy(brokerPort);
    cleanups.push(() => proxy.close());
    const transport = transportThrough(proxy);
    await transport.start(['present']);
    const seen: string[] = [];
    const handle = await transport.consume('present', 1, async (m) => {
      seen.push(m.outboxId);
      return { type: 'ack' };
    });
    cleanups.push(() => handle.stop());

    await expect(transport.waiting('absent')).rejects.toThrow(/NOT_FOUND/);
    expect(transport.connectionState()).toBe('connected');
    const sent = message('present');
    await transport.publish([sent]);
    await until('the delivery on the consumer attached before', () => seen.includes(sent.outboxId));
    // Still the first two connections (publishing, consuming): nothing was torn down and rebuilt meanwhile.
    expect(proxy.totalConnections).toBe(2);
  });

  it('start() connects when the connection is lost while a setup channel waits for its Close-Ok', async () => {
    const proxy = await startAmqpFrameProxy(brokerPort);
    cleanups.push(() => proxy.close());
    const cut = cutAtFirstChannelClose();
    proxy.rules = cut.rules;
    const transport = transportThrough(proxy);

    const outcome = await settledWithin(transport.start(['setup']), HUNG_AFTER_MS);
    expect(cut.done(), 'no Channel.Close was cut').toBe(true);
    expect(outcome.hung, 'start() still pending: setup hangs on the lost channel’s close').toBe(false);
    expect(outcome.hung === false && outcome.error).toBeFalsy();
    expect(transport.connectionState()).toBe('connected');
    // Publishing and consuming, and the one opened again for the connection cut during its setup.
    expect(proxy.totalConnections).toBe(3);
    // Both answer: the consuming one counts, the publishing one publishes.
    expect(await transport.waiting('setup')).toBe(0);
    await transport.publish([message('setup')]);
  });

  it('a consumer’s stop() returns when the connection is lost while its channel waits for its Close-Ok', async () => {
    const proxy = await startAmqpFrameProxy(brokerPort);
    cleanups.push(() => proxy.close());
    const transport = transportThrough(proxy);
    await transport.start(['stop']);
    const handle = await transport.consume('stop', 1, async () => ({ type: 'ack' }));

    const cut = cutAtFirstChannelClose();
    proxy.rules = cut.rules;
    const outcome = await settledWithin(handle.stop(), HUNG_AFTER_MS);
    expect(cut.done(), 'no Channel.Close was cut').toBe(true);
    expect(outcome.hung, 'stop() still pending on the lost channel’s close').toBe(false);
  });

  it('a publish whose one queue does not confirm in time refuses only that message', async () => {
    const proxy = await startAmqpFrameProxy(brokerPort);
    cleanups.push(() => proxy.close());
    const stuckQueue = rabbitMqTopology(prefix).workQueue('stuck');
    proxy.rules = holdBackConfirmsOf(stuckQueue);
    const transport = transportThrough(proxy, 3_000);
    await transport.start(['ok', 'stuck']);

    const stuck = message('stuck');
    const batch = [message('ok'), stuck, message('ok'), message('ok')];
    const error = await transport.publish(batch).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PublishRefusedError);
    expect((error as PublishRefusedError).refusedOutboxIds).toEqual([stuck.outboxId]);
    expect((error as Error).message).toMatch(/not confirmed/);
    // The channel still serves the kinds whose queues confirm.
    await transport.publish([message('ok')]);
  });
});

/** Frame rules cutting the connection at the client's first Channel.Close (before the broker's Close-Ok can come). */
function cutAtFirstChannelClose(): { rules: { fromClient: (frame: AmqpFrame) => FrameAction }; done: () => boolean } {
  let armed = true;
  return {
    rules: {
      fromClient: (frame) => {
        if (armed && isMethod(frame, ...CHANNEL_CLOSE)) {
          armed = false;
          return 'cut';
        }
        return 'forward';
      },
    },
    done: () => !armed,
  };
}

/**
 * Frame rules under which the broker's confirms of messages published to `routingKey`
 * never reach the client (as from a quorum queue without its majority), while every
 * other message's confirm does: a confirm covering several messages (`multiple`) is
 * replaced by one confirm per message it covers, less the held-back ones.
 */
function holdBackConfirmsOf(routingKey: string) {
  /** Per connection and confirm channel: the next delivery tag, the held-back tags and those confirmed. */
  const channels = new Map<string, { next: number; held: Set<number>; confirmed: Set<number> }>();
  const key = (connection: number, frame: AmqpFrame) => `${connection}:${frame.channel}`;
  return {
    fromClient(frame: AmqpFrame, connection: number): FrameAction {
      if (isMethod(frame, ...CONFIRM_SELECT)) channels.set(key(connection, frame), { next: 1, held: new Set(), confirmed: new Set() });
      else if (isMethod(frame, ...BASIC_PUBLISH)) {
        const channel = channels.get(key(connection, frame));
        if (channel) {
          const tag = channel.next++;
          if (publishRoutingKey(frame) === routingKey) channel.held.add(tag);
        }
      }
      return 'forward';
    },
    fromServer(frame: AmqpFrame, connection: number): FrameAction {
      const channel = channels.get(key(connection, frame));
      if (!channel || !isMethod(frame, ...BASIC_ACK)) return 'forward';
      const { deliveryTag, multiple } = ackOf(frame);
      const covered = multiple ? Array.from({ length: deliveryTag }, (_, i) => i + 1) : [deliveryTag];
      const passed = covered.filter((tag) => !channel.held.has(tag) && !channel.confirmed.has(tag));
      for (const tag of passed) channel.confirmed.add(tag);
      return passed.map((tag) => singleAck(frame.channel, tag));
    },
  };
}
