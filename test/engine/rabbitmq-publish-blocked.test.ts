// The RabbitMQ transport publishes and consumes on connections of their own. During a
// resource alarm the broker blocks the connection that publishes (it stops reading its
// socket), so the consumers go on acknowledging and receiving; publishes are refused at
// their deadline until the alarm clears, and work again after it. And one connection
// away leaves the other working, the transport reporting itself not connected meanwhile.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMessagingHealth } from '../../src/engine/health';
import { InMemoryEventBus } from '../../src/engine/events/in-memory-event-bus';
import { silentLogger } from '../../src/engine/logger';
import { createTestDb, until } from '../support/engine-harness';
import { DEFAULT_DELAY_BUCKETS_MS, rabbitMqTopology, RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import { PublishRefusedError } from '../../src/engine/transport/transport';
import { asJobId, asOutboxId, type JobMessage } from '../../src/engine/types';
import { privateRabbitSupported, startPrivateRabbit, type PrivateRabbit } from '../support/private-rabbit';
import { isMethod, startAmqpFrameProxy } from '../support/amqp-frame-proxy';
import { deleteRabbitObjects, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';

const FAST_RECOVERY = { initialDelay: 100, maxDelay: 1_000, factor: 2, jitter: 0.1 };
/** A blocked publish is refused after this; short, so the test does not wait long for it. */
const PUBLISH_TIMEOUT_MS = 2_000;
/** Far above what a delivery, an ack or a close takes on a loaded machine. */
const SETTLE_MS = 15_000;
/** Probes sent before giving up on the alarm reaching the publishing connection. */
const MAX_PROBES = 5;
const CONNECTION_NAME = 'alarm test transport';
/**
 * How often (ms) the private node refreshes a quorum queue's figures (`list_queues
 * messages`; RabbitMQ's default is 5 s), set before the queues are declared: the test
 * waits for those figures twice per alarm.
 */
const QUORUM_TICK_INTERVAL_MS = 500;
/** Connection.Start-Ok: the client's first frame, carrying its connection name. */
const CONNECTION_START_OK = [10, 11] as const;

const privateSupported = privateRabbitSupported() && process.getuid?.() === 0;

function message(kind: string): JobMessage {
  return { outboxId: asOutboxId(randomUUID()), jobId: asJobId(randomUUID()), kind };
}
const messages = (kind: string, n: number) => Array.from({ length: n }, () => message(kind));

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const waitUntil = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = SETTLE_MS): Promise<void> => until(what, check, timeoutMs);

describe.runIf(privateSupported)('RabbitMqTransport during a resource alarm (private node)', () => {
  let rabbit: PrivateRabbit;
  let transport: RabbitMqTransport;
  const prefix = uniquePrefix('rmq_blocked');
  const topology = rabbitMqTopology(prefix);

  const raiseAlarm = () => rabbit.rabbitmqctl('set_vm_memory_high_watermark', 'absolute', '1');
  const clearAlarm = () => rabbit.rabbitmqctl('set_vm_memory_high_watermark', '0.4');

  /**
   * Messages of `queue` in the broker, ready and unacknowledged together. The broker
   * refreshes these figures every few seconds: a test sees them show a message before it
   * counts their 0 as that message gone.
   */
  async function brokerHolds(queue: string): Promise<number> {
    const lines = (await rabbit.rabbitmqctl('-q', 'list_queues', '--no-table-headers', 'name', 'messages')).split('\n');
    const row = lines.map((line) => line.trim().split(/\s+/)).find(([name]) => name === queue);
    if (!row) throw new Error(`${queue} not listed: ${lines.join(' | ')}`);
    return Number(row[1]);
  }

  /**
   * Publishes one probe at a time until the broker holds one back (the alarm reaches the
   * connection a moment after rabbitmqctl returns); the refusal comes at the deadline.
   */
  async function publishUntilRefused(on: RabbitMqTransport): Promise<unknown> {
    for (let probe = 0; probe < MAX_PROBES; probe++) {
      const error = await on.publish([message('probe')]).then(
        () => null,
        (e: unknown) => e,
      );
      if (error) return error;
    }
    throw new Error(`the alarm held back none of ${MAX_PROBES} publishes`);
  }

  /** A database for the health report's figures. */
  let db: Awaited<ReturnType<typeof createTestDb>>;

  beforeAll(async () => {
    db = await createTestDb('rmq_blocked_health');
    rabbit = await startPrivateRabbit();
    await rabbit.rabbitmqctl('eval', `application:set_env(rabbit, quorum_tick_interval, ${QUORUM_TICK_INTERVAL_MS}).`);
    transport = new RabbitMqTransport({
      url: rabbit.url,
      prefix,
      logger: silentLogger,
      recovery: FAST_RECOVERY,
      publishTimeoutMs: PUBLISH_TIMEOUT_MS,
      connectionName: CONNECTION_NAME,
    });
    await transport.start(['held', 'probe']);
  }, 90_000);

  afterAll(async () => {
    await transport?.close();
    await rabbit?.destroy();
    await db?.close();
  }, 60_000);

  it('acknowledges and receives while the publishing connection is blocked, and publishes again after', async () => {
    const handled = new Set<string>();
    const hold = gate();
    let holding = true;
    // Prefetch = consumers = 2: the third and fourth messages come only once the broker took acks.
    const handle = await transport.consume('held', 2, async (m) => {
      if (holding) await hold.opened;
      handled.add(m.outboxId);
      return { type: 'ack' };
    });
    const before = messages('held', 4);
    await transport.publish(before);
    await waitUntil('two deliveries held', () => handle.active === 2);

    await raiseAlarm();
    try {
      const refused = await publishUntilRefused(transport);
      expect(refused).toBeInstanceOf(PublishRefusedError);
      expect(String((refused as Error).message)).toMatch(/not confirmed/);
      const queue = topology.workQueue('held');
      await waitUntil('the broker’s figures to show the four messages', async () => (await brokerHolds(queue)) === 4);

      // The held deliveries are acknowledged; the broker reads those acks and delivers the rest.
      holding = false;
      hold.open();
      await waitUntil('every message handled while the alarm lasts', () => before.every((m) => handled.has(m.outboxId)));
      await waitUntil('the broker to hold none of them, acked or not', async () => (await brokerHolds(queue)) === 0);
      // Counts answer too (health's parked count, the republisher's waiting count).
      expect(await transport.waiting('held')).toBe(0);
      expect(await transport.parked()).toBe(0);
      expect(transport.publishBlocked()).toBe(true);
      // Still up: consuming works, publishing waits for the alarm; health says why publishes fail.
      expect(transport.connectionState()).toBe('connected');
      const health = await checkMessagingHealth(db.db.pool, transport, new InMemoryEventBus());
      expect(health.status).toBe('DEGRADED');
      expect(health.problems).toContain(
        'transport rabbitmq is blocked by a broker resource alarm (memory or disk): publishes wait and are refused until it clears; consuming goes on',
      );
    } finally {
      await clearAlarm();
    }

    await waitUntil('the publishing connection unblocked', () => !transport.publishBlocked());
    const after = messages('held', 3);
    await transport.publish(after);
    await waitUntil('the messages published after the alarm handled', () => after.every((m) => handled.has(m.outboxId)));
    await handle.stop();
  }, 60_000);

  it('closes without waiting for the alarm while a consumer holds a delivery', async () => {
    const own = new RabbitMqTransport({ url: rabbit.url, prefix, logger: silentLogger, recovery: FAST_RECOVERY, publishTimeoutMs: PUBLISH_TIMEOUT_MS });
    await own.start(['held', 'probe']);
    const release = gate();
    const handle = await own.consume('held', 1, async () => {
      await release.opened;
      return { type: 'ack' };
    });
    const held = message('held');
    await own.publish([held]);
    await waitUntil('the delivery held', () => handle.active === 1);

    await raiseAlarm();
    try {
      await publishUntilRefused(own);
      expect(own.publishBlocked()).toBe(true);
      const queue = topology.workQueue('held');
      await waitUntil('the broker’s figures to show the held message', async () => (await brokerHolds(queue)) === 1);
      release.open();
      const started = Date.now();
      await own.close();
      expect(Date.now() - started).toBeLessThan(SETTLE_MS);
      expect(own.connectionState()).toBe('closed');
      // Its ack left before its channel closed, and the broker took it: the message is gone, not requeued.
      await waitUntil('the broker to hold nothing of the kind', async () => (await brokerHolds(queue)) === 0);
    } finally {
      await own.close();
      await clearAlarm();
    }
  }, 60_000);

  it('names its two connections apart in the management UI', async () => {
    const listed = await rabbit.rabbitmqctl('-q', 'list_connections', '--no-table-headers', 'client_properties');
    expect(listed).toContain(`${CONNECTION_NAME}: publish`);
    expect(listed).toContain(`${CONNECTION_NAME}: consume`);
  });
});

describe.runIf(requireRabbit())('RabbitMqTransport with one of its connections away (shared broker, frame proxy)', () => {
  const prefix = uniquePrefix('rmq_one_away');
  const cleanups: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    const t = rabbitMqTopology(prefix);
    await deleteRabbitObjects(prefix, {
      queues: [t.workQueue('away'), ...DEFAULT_DELAY_BUCKETS_MS.map(t.delay), t.parked],
      exchanges: [t.workExchange, ...DEFAULT_DELAY_BUCKETS_MS.map(t.delay)],
    });
  });

  it('reports connecting while its consuming connection is away, publishes meanwhile, and consumes again once it is back', async () => {
    const name = 'one away test transport';
    const proxy = await startAmqpFrameProxy(Number(new URL(rabbitUrl()).port || 5672));
    cleanups.push(() => proxy.close());
    /** The proxy's numbers of the consuming connections, told by the name in their Start-Ok. */
    const consuming = new Set<number>();
    let consumingAway = false;
    proxy.rules = {
      fromClient: (frame, connection) => {
        if (isMethod(frame, ...CONNECTION_START_OK) && frame.payload.includes(`${name}: consume`)) consuming.add(connection);
        return consumingAway && consuming.has(connection) ? 'cut' : 'forward';
      },
    };
    const transport = new RabbitMqTransport({ url: proxy.urlFor(rabbitUrl()), prefix, logger: silentLogger, recovery: FAST_RECOVERY, connectionName: name });
    cleanups.push(() => transport.close());
    await transport.start(['away']);
    const handled = new Set<string>();
    const handle = await transport.consume('away', 1, async (m) => {
      handled.add(m.outboxId);
      return { type: 'ack' };
    });
    cleanups.push(() => handle.stop());
    expect(consuming.size).toBe(1);

    consumingAway = true;
    // A count is the next frame on the consuming connection: it is cut there, and every reconnect after it.
    await expect(transport.waiting('away')).rejects.toThrow();
    await waitUntil('the transport to notice', () => transport.connectionState() !== 'connected');
    expect(transport.connectionState()).toBe('connecting');
    await expect(transport.waiting('away')).rejects.toThrow(/consuming connection is connecting/);
    const during = messages('away', 3);
    await transport.publish(during);

    consumingAway = false;
    await waitUntil('reconnected', () => transport.connectionState() === 'connected');
    await waitUntil('the messages published meanwhile handled', () => during.every((m) => handled.has(m.outboxId)));
    expect(consuming.size).toBeGreaterThan(1);
  }, 60_000);
});
