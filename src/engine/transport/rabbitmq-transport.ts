import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, Options } from 'amqplib';
import type { Logger } from 'pino';
import type { JobMessage } from '../types';
import { closeChannel } from './close-channel';
import { encodeJobMessage, encodeJobMessages, MAX_JOBS_PER_MESSAGE, type ParkReason } from './job-message';
import { KindConsumer, type KindConsumerHost } from './kind-consumer';
import { RabbitMqConnection, type RabbitMqRecoverySettings } from './rabbitmq-connection';
import {
  PublishRefusedError,
  type ConnectionState,
  type ConsumeOptions,
  type ConsumerHandle,
  type JobTransport,
  type MessageHandler,
  type ParkedMessage,
} from './transport';
import { withTimeout } from './with-timeout';

/**
 * Delays the broker can hold a copy of a delivery for: a duplicate that found its job
 * held by another runner comes back when that lease would run out (job retries wait in
 * the outbox, not here, so losing such a copy loses no work). Each bucket is one classic queue
 * with a per-queue TTL, so messages in it expire in arrival order (no head-of-line
 * blocking, which per-message TTLs would suffer from). Spaced about 1.5× apart: a
 * delay is rounded *up* to a bucket, so a retry never comes back before its back-off
 * and at most ~50 % after it.
 */
export const DEFAULT_DELAY_BUCKETS_MS: readonly number[] = [
  1_000, 2_000, 3_000, 5_000, 8_000, 13_000, 20_000, 30_000, 45_000, 60_000, 90_000, 120_000, 180_000, 300_000, 600_000,
];

/** How long the parked count (for health) may take before it counts as unknown. */
const PARKED_COUNT_TIMEOUT_MS = 2_000;
/** How long a kind's waiting count (for the outbox republisher) may take before it counts as unknown. */
const WAITING_COUNT_TIMEOUT_MS = 2_000;

/** The transport's connection states from the most to the least able; it reports its less able connection's. */
const STATE_RANK: readonly ConnectionState[] = ['connected', 'connecting', 'disconnected', 'closed'];

/** A message the broker could not route to any queue (returned under `mandatory`). */
export class UnroutableError extends Error {
  constructor(exchange: string, routingKey: string) {
    super(`rabbitmq returned the message as unroutable: no queue is bound to ${exchange || '(default exchange)'} for ${routingKey}`);
    this.name = 'UnroutableError';
  }
}

export interface RabbitMqTransportOptions {
  url: string;
  /** Prefix of every queue and exchange name, e.g. `jiaowu`. */
  prefix: string;
  logger: Logger;
  /**
   * Names the two connections in the management UI: `<name>: publish` and `<name>: consume`.
   * Default `jiaowu-jobs transport (<prefix>)`.
   */
  connectionName?: string;
  /** How long `publish` waits for the broker's confirms; messages unconfirmed by then are refused, the rest stand. Default 10 s. */
  publishTimeoutMs?: number;
  /** Reconnect backoff. */
  recovery?: RabbitMqRecoverySettings;
  /** Retry delay buckets (ms), ascending. Default `DEFAULT_DELAY_BUCKETS_MS`. */
  delayBucketsMs?: readonly number[];
  /** How long `close()` waits for running handlers before it closes anyway. Default 30 s. */
  closeGraceMs?: number;
  /**
   * Per kind, how many of its jobs `publish` packs into one broker message
   * (1–`MAX_JOBS_PER_MESSAGE`; a kind absent: 1). Every consumer reads both forms. More
   * than one saves the broker and both ends a message's work per job, but a message's
   * jobs all go to the one process that takes it: worth it only for short jobs.
   */
  jobsPerMessage?: Readonly<Record<string, number>>;
}

/** The names this transport declares under a prefix. */
export function rabbitMqTopology(prefix: string, delayBucketsMs: readonly number[] = DEFAULT_DELAY_BUCKETS_MS) {
  return {
    /** Direct exchange; each work queue is bound to it by its own name. */
    workExchange: `${prefix}.work`,
    /** Durable quorum queue of one kind; also the routing key of its messages. */
    workQueue: (kind: string) => `${prefix}.jobs.${kind}`,
    /**
     * Per bucket, a fanout exchange and a classic queue of the same name. A delayed copy
     * is published to the bucket's fanout exchange *with the work queue's name as its
     * routing key* (fanout ignores it, the message keeps it); when the TTL expires the
     * queue dead-letters it to the work exchange with that original routing key, which
     * routes it back to the right kind's queue.
     */
    delay: (ms: number) => `${prefix}.delay.${ms}`,
    delayBucketsMs,
    /**
     * Durable quorum queue of messages that must never run (malformed, on the wrong
     * queue, or not matching their outbox row), reached through the default exchange.
     * They wait there for a person; nothing consumes it.
     */
    parked: `${prefix}.parked`,
  };
}

/** The smallest bucket ≥ `delayMs` (the largest bucket for longer delays). */
export function pickDelayBucket(delayMs: number, buckets: readonly number[] = DEFAULT_DELAY_BUCKETS_MS): number {
  for (const bucket of buckets) if (bucket >= delayMs) return bucket;
  return buckets[buckets.length - 1]!;
}

/**
 * RabbitMQ work transport: one durable quorum queue per kind, publisher confirms with
 * `mandatory` (a returned message is a refused publish), one channel per kind with
 * `prefetch(consumers)`, broker-side delayed redeliveries that hold no consumer slot, a
 * parked queue for messages that must never run, and recovery from lost connections
 * and closed channels.
 *
 * Two connections, as RabbitMQ advises for clients that publish and consume: during a
 * memory or disk alarm the broker blocks every connection that publishes — it stops
 * reading its socket — and on a connection shared with consumers their acks would no
 * longer be read either: prefetch windows would stay full, no kind would get another
 * delivery, and the unacked messages the broker keeps would feed the alarm.
 * - The publishing connection carries the confirm channel and everything sent on it
 *   (`publish`, delayed retry copies, parked copies), and declares the topology those
 *   publishes are routed by (`declared` tracks the kinds declared on it): a publish
 *   waits there through an alarm and is refused at its deadline.
 * - The consuming connection carries every kind's consumer channel, their acks and
 *   nacks, and the queue counts (`waiting`, `parked`): it never publishes, so the broker
 *   never blocks it, and health and the republisher keep their counts through an alarm.
 *   Each consumer declares its own queue and binding on it, so consuming does not wait
 *   for the publishing connection's setup.
 * The transport is as connected as its less connected connection (`connectionState`);
 * `publishBlocked` says whether an alarm holds the publishing one.
 *
 * Recovery: each connection is amqplib 2's recovering connection (backoff + jitter),
 * recovering on its own; after every (re)connect the publishing connection's setup step
 * redeclares the whole topology and opens a new confirm channel, and the consuming
 * connection's re-attaches every consumer with the same handler and concurrency.
 * Deliveries that were in flight on a dead channel are requeued by the broker; the
 * handlers still running for them finish, and their settlement is skipped (the
 * engine's claim makes the redelivered duplicate harmless).
 *
 * A channel can also be closed by the server while the connection stays up — notably
 * by RabbitMQ's `consumer_timeout` (30 min by default): a delivery left unacknowledged
 * longer than that closes its channel with PRECONDITION_FAILED and requeues every
 * unacked delivery of that channel. A long job therefore loses its delivery (not its
 * claim: the runner keeps its lease and completes the job through the database; the
 * requeued copy later finds it completed and is acked). Each kind's consumer watches
 * its own channel and re-attaches on a fresh one after a short pause, so the kind
 * keeps consuming. Set `consumer_timeout` in rabbitmq.conf above the longest job to
 * avoid the duplicate delivery altogether.
 */
export class RabbitMqTransport implements JobTransport, KindConsumerHost {
  readonly name = 'rabbitmq' as const;
  readonly durable = true;
  readonly topology: ReturnType<typeof rabbitMqTopology>;
  /** Publishes (confirm channel: publish, delayed copies, parks) and declares the topology. */
  private readonly publishing: RabbitMqConnection;
  /** Consumes (every kind's channel and its acks) and counts queues; never publishes. */
  private readonly consuming: RabbitMqConnection;
  private readonly logger: Logger;
  private readonly publishTimeoutMs: number;
  private readonly kinds = new Set<string>();
  /** Kinds whose queue is declared on the current publishing connection. */
  private declared = new Set<string>();
  private publishChannel: ConfirmChannel | null = null;
  private publishChannelOpening: Promise<ConfirmChannel> | null = null;
  /** @internal shared with KindConsumer (KindConsumerHost) */
  readonly consumers = new Map<string, KindConsumer>();
  /** @internal channels known to be closed (settling on them is skipped). */
  readonly closedChannels = new WeakSet<Channel>();
  private closed = false;
  private publishSeq = 0;
  /** Publish ids the broker returned as unroutable, until their confirm arrives. */
  private readonly returned = new Set<string>();
  private readonly parkListeners = new Set<(parked: ParkedMessage) => void>();
  /** Kinds whose jobs `publish` packs several to a message, and how many. */
  private readonly packedKinds = new Map<string, number>();

  constructor(private readonly options: RabbitMqTransportOptions) {
    this.logger = options.logger;
    this.publishTimeoutMs = options.publishTimeoutMs ?? 10_000;
    for (const [kind, jobs] of Object.entries(options.jobsPerMessage ?? {})) {
      if (!Number.isInteger(jobs) || jobs < 1 || jobs > MAX_JOBS_PER_MESSAGE) {
        throw new Error(`jobsPerMessage of ${kind} must be an integer 1–${MAX_JOBS_PER_MESSAGE} (got ${jobs})`);
      }
      if (jobs > 1) this.packedKinds.set(kind, jobs);
    }
    this.topology = rabbitMqTopology(options.prefix, options.delayBucketsMs ?? DEFAULT_DELAY_BUCKETS_MS);
    const name = options.connectionName ?? `jiaowu-jobs transport (${options.prefix})`;
    const connection = (role: string) =>
      new RabbitMqConnection({ url: options.url, logger: options.logger, connectionName: `${name}: ${role}`, recovery: options.recovery });
    this.publishing = connection('publish');
    this.consuming = connection('consume');
    this.publishing.onSetup((model) => this.setupPublishing(model));
    this.consuming.onSetup((model) => this.setupConsuming(model));
  }

  /** Opens both connections; rejects once both have settled if either gave up. */
  private async open(): Promise<void> {
    const outcomes = await Promise.allSettled([this.publishing.open(), this.consuming.open()]);
    for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
  }

  async start(kinds: readonly string[]): Promise<void> {
    if (this.closed) throw new Error('rabbitmq transport is closed');
    for (const kind of kinds) this.kinds.add(kind);
    await this.open();
    const model = this.publishing.model;
    const missing = kinds.filter((kind) => !this.declared.has(kind));
    if (model && missing.length > 0) await this.declareKinds(model, missing);
  }

  async publish(messages: readonly JobMessage[]): Promise<void> {
    if (this.closed) throw new Error('rabbitmq transport is closed');
    if (messages.length === 0) return;
    const model = this.liveModel();
    const packed = this.pack(messages);
    /** Per broker message, the broker's answer once it came. */
    const outcomes: Array<PromiseSettledResult<void> | undefined> = packed.map(() => undefined);
    let sent = false;
    let expired = false;
    const sending = (async () => {
      const missing = [...new Set(messages.map((m) => m.kind))].filter((kind) => !this.declared.has(kind));
      if (missing.length > 0) await this.declareKinds(model, missing);
      const channel = await this.publisher(model);
      // Past the deadline every message counts as refused and goes back to the outbox:
      // sending it now would only make a duplicate.
      if (expired) return;
      sent = true;
      await Promise.all(
        packed.map((jobs, i) =>
          this.confirmPublish(channel, this.topology.workExchange, this.topology.workQueue(jobs[0]!.kind), encodeJobMessages(jobs), {
            persistent: true,
            contentType: 'application/json',
            messageId: jobs[0]!.outboxId,
            type: jobs[0]!.kind,
            timestamp: Math.floor(Date.now() / 1000),
          }).then(
            () => void (outcomes[i] = { status: 'fulfilled', value: undefined }),
            (reason: unknown) => void (outcomes[i] = { status: 'rejected', reason }),
          ),
        ),
      );
    })();
    // The deadline holds each message apart: one queue that cannot confirm (a quorum
    // queue without its majority) leaves the messages the broker confirmed in time
    // published, so only the unconfirmed ones are sent again, not the whole batch.
    let deadlineError: unknown = null;
    await withTimeout(sending, this.publishTimeoutMs, `rabbitmq publish of ${messages.length} message(s) not confirmed`).catch((error: unknown) => {
      expired = true;
      // Nothing left for the broker (a declare or the channel failed): every message is refused.
      if (!sent) throw error;
      deadlineError = error;
    });
    const refused = packed.filter((_jobs, i) => outcomes[i]?.status !== 'fulfilled').flat();
    if (refused.length === 0) return;
    const rejected = packed.filter((_jobs, i) => outcomes[i]?.status === 'rejected').flat();
    // An unroutable message means the kind's queue or binding is gone: declare it
    // again before the next publish of that kind.
    for (const message of rejected) this.declared.delete(message.kind);
    const first = outcomes.find((o): o is PromiseRejectedResult => o?.status === 'rejected')?.reason ?? deadlineError;
    throw new PublishRefusedError(
      `rabbitmq did not take ${refused.length} of ${messages.length} message(s): ${first instanceof Error ? first.message : String(first)}`,
      refused.map((m) => m.outboxId),
    );
  }

  /** Groups messages by kind, in order, into broker messages of up to `jobsPerMessage` of their kind. */
  private pack(messages: readonly JobMessage[]): JobMessage[][] {
    if (this.packedKinds.size === 0) return messages.map((message) => [message]);
    const packed: JobMessage[][] = [];
    const open = new Map<string, JobMessage[]>();
    for (const message of messages) {
      let jobs = open.get(message.kind);
      if (!jobs) {
        jobs = [];
        open.set(message.kind, jobs);
        packed.push(jobs);
      }
      jobs.push(message);
      if (jobs.length >= (this.packedKinds.get(message.kind) ?? 1)) open.delete(message.kind);
    }
    return packed;
  }

  async consume(kind: string, consumers: number, handler: MessageHandler, options: ConsumeOptions = {}): Promise<ConsumerHandle> {
    if (this.closed) throw new Error('rabbitmq transport is closed');
    if (!Number.isInteger(consumers) || consumers < 1) throw new Error(`consumers must be a positive integer (got ${consumers})`);
    const prefetch = options.prefetch ?? 0;
    if (!Number.isInteger(prefetch) || prefetch < 0) throw new Error(`prefetch must be an integer ≥ 0 (got ${prefetch})`);
    if (this.consumers.has(kind)) throw new Error(`kind ${kind} already has a consumer in this process`);
    this.kinds.add(kind);
    const consumer = new KindConsumer(this, kind, consumers, prefetch, handler, this.logger.child({ kind }));
    this.consumers.set(kind, consumer);
    // The publishing connection too: the consumer's retries and parks are sent on it.
    await this.open();
    const model = this.consuming.model;
    if (model) {
      try {
        await consumer.attach(model);
      } catch (error) {
        // The connection went away meanwhile: the next setup attaches it.
        this.logger.warn({ err: error, kind }, 'could not attach consumer yet; will attach on reconnect');
        consumer.scheduleReattach();
      }
    }
    return consumer;
  }

  /** The less able connection's state: a transport that cannot publish, or cannot consume, is not connected. */
  connectionState(): ConnectionState {
    if (this.closed) return 'closed';
    const ranks = [this.publishing.state, this.consuming.state].map((state) => STATE_RANK.indexOf(state));
    return STATE_RANK[Math.max(...ranks)]!;
  }

  /**
   * True while RabbitMQ blocks the publishing connection (a memory or disk alarm): publishes
   * wait and are refused at their deadline, while consuming and acknowledging go on.
   */
  publishBlocked(): boolean {
    return !this.closed && this.publishing.blocked;
  }

  async waiting(kind: string): Promise<number> {
    // The outbox republisher asks this inside the maintenance pass, which holds the
    // cluster-wide maintenance lock: a broker that does not answer must not hold it up.
    return this.countQueue(this.topology.workQueue(kind), WAITING_COUNT_TIMEOUT_MS, `waiting count of ${kind} not answered`);
  }

  async parked(): Promise<number> {
    // Health asks this on every probe: a broker that does not answer must not hold it up.
    return this.countQueue(this.topology.parked, PARKED_COUNT_TIMEOUT_MS, 'parked queue count not answered');
  }

  /**
   * The ready messages of `queue`, on a channel of its own: checkQueue on a missing queue
   * makes the broker close the channel it runs on, which amqplib reports as an 'error'
   * on that channel; without a listener there, it would end the whole connection (every
   * kind's consumers with it). On the consuming connection: a blocked publishing
   * connection would leave the count unanswered for as long as the alarm lasts.
   */
  private async countQueue(queue: string, timeoutMs: number, what: string): Promise<number> {
    const model = this.live(this.consuming, 'consuming', 'count queues');
    return withTimeout(
      (async () => {
        const channel = await model.createChannel();
        channel.on('error', () => undefined);
        try {
          const { messageCount } = await channel.checkQueue(queue);
          return messageCount;
        } finally {
          await closeChannel(channel);
        }
      })(),
      timeoutMs,
      what,
    );
  }

  onParked(listener: (parked: ParkedMessage) => void): () => void {
    this.parkListeners.add(listener);
    return () => this.parkListeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const grace = this.options.closeGraceMs ?? 30_000;
    const stops = Promise.all([...this.consumers.values()].map((consumer) => consumer.stop()));
    await withTimeout(stops, grace, 'consumers still busy at close').catch((error) =>
      this.logger.warn({ err: error }, 'closing rabbitmq transport with handlers still running'),
    );
    const channel = this.publishChannel;
    this.publishChannel = null;
    // A blocked connection does not read the channel's Close; amqplib closes a blocked
    // connection at once, its channels with it.
    if (channel && !this.publishing.blocked) await closeChannel(channel);
    await Promise.all([this.publishing.close(), this.consuming.close()]);
  }

  /** @internal The live publishing connection; throws at once when there is none (no waiting). */
  liveModel(): ChannelModel {
    return this.live(this.publishing, 'publishing', 'publish');
  }

  private live(connection: RabbitMqConnection, role: string, action: string): ChannelModel {
    const model = connection.state === 'connected' ? connection.model : null;
    if (this.closed) throw new Error('rabbitmq transport is closed');
    if (!model) throw new Error(`rabbitmq transport's ${role} connection is ${connection.state}; cannot ${action} now`);
    return model;
  }

  /** @internal The consuming connection a consumer's channel may be (re)opened on, also during setup. */
  currentModel(): ChannelModel | null {
    return this.closed ? null : this.consuming.model;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** @internal Publishes a delayed copy of one job of a delivery (the job alone); resolves when confirmed. */
  async publishDelayed(kind: string, message: ConsumeMessage, job: JobMessage, delayMs: number): Promise<number> {
    const bucket = pickDelayBucket(delayMs, this.topology.delayBucketsMs);
    const model = this.liveModel();
    const channel = await this.publisher(model);
    await withTimeout(
      this.confirmPublish(channel, this.topology.delay(bucket), this.topology.workQueue(kind), encodeJobMessage(job), {
        persistent: true,
        contentType: message.properties.contentType ?? 'application/json',
        messageId: job.outboxId,
        type: kind,
        timestamp: Math.floor(Date.now() / 1000),
        headers: { 'x-jiaowu-retry-delay-ms': delayMs },
      }),
      this.publishTimeoutMs,
      'delayed retry copy not confirmed',
    );
    return bucket;
  }

  /**
   * @internal Moves a copy of a delivery to the parked queue (confirmed and routed),
   * with why, from where and when in its headers; the caller then acks the original.
   * Given `job`, the copy carries that job alone (one of a message carrying several).
   */
  async park(kind: string, message: ConsumeMessage, reason: ParkReason, detail: string, job?: JobMessage): Promise<void> {
    const model = this.liveModel();
    const { properties } = message;
    const content = job ? encodeJobMessage(job) : message.content;
    const options: Options.Publish = {
      persistent: true,
      contentType: properties.contentType,
      messageId: job ? job.outboxId : properties.messageId,
      type: properties.type,
      timestamp: properties.timestamp,
      headers: {
        ...(properties.headers ?? {}),
        'x-jiaowu-parked-reason': reason,
        'x-jiaowu-parked-detail': detail,
        'x-jiaowu-parked-from': this.topology.workQueue(kind),
        'x-jiaowu-parked-at': new Date().toISOString(),
      },
    };
    const send = async () =>
      withTimeout(
        this.confirmPublish(await this.publisher(model), '', this.topology.parked, content, options),
        this.publishTimeoutMs,
        'parked copy not confirmed',
      );
    try {
      await send();
    } catch (error) {
      if (!(error instanceof UnroutableError)) throw error;
      // The parked queue was deleted (by hand, say): declare it again and send once more.
      await withChannel(model, (channel) => this.declareParked(channel));
      await send();
    }
    const parked: ParkedMessage = { kind, reason, detail };
    for (const listener of this.parkListeners) listener(parked);
  }

  /**
   * Publishes with `mandatory` and resolves once the broker confirmed it *and* routed
   * it: a message returned as unroutable (no queue bound for its routing key) is still
   * confirmed by the broker, but it reached no queue, so it rejects.
   *
   * Each publish is named by its `correlationId`, so that a `basic.return` can be matched
   * to it (the broker sends the return before the confirm of the same message, on the
   * same channel). Not by a header: amqplib makes a message's `headers` object the
   * prototype of the table it encodes (`Object.create(options.headers)`), and a fresh
   * young prototype per publish, like a spread copy of `options`, outlives the young
   * generation with all it reaches (see `serverFor` in src/api/server.ts).
   */
  private confirmPublish(channel: ConfirmChannel, exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void> {
    const publishId = String(++this.publishSeq);
    return new Promise<void>((resolve, reject) => {
      try {
        channel.publish(exchange, routingKey, content, Object.assign({}, options, { correlationId: publishId, mandatory: true }), (error: unknown) => {
          const unroutable = this.returned.delete(publishId);
          if (error) reject(error instanceof Error ? error : new Error(String(error)));
          else if (unroutable) reject(new UnroutableError(exchange, routingKey));
          else resolve();
        });
      } catch (error) {
        reject(error);
      }
    });
  }

  /** @internal Declares kinds' queues and bindings on a channel of its own of the publishing connection `model`. */
  async declareKinds(model: ChannelModel, kinds: readonly string[]): Promise<void> {
    await withChannel(model, async (channel) => {
      for (const kind of kinds) await this.declareKind(channel, kind);
    });
    if (model === this.publishing.model) for (const kind of kinds) this.declared.add(kind);
  }

  private async declareParked(channel: Channel): Promise<void> {
    await channel.assertQueue(this.topology.parked, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  }

  /** @internal */
  async declareKind(channel: Channel, kind: string): Promise<void> {
    const queue = this.topology.workQueue(kind);
    await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await channel.bindQueue(queue, this.topology.workExchange, queue);
  }

  /** Runs on every (re)connect of the publishing connection, before it counts as connected. */
  private async setupPublishing(model: ChannelModel): Promise<void> {
    this.declared = new Set();
    this.publishChannel = null;
    this.publishChannelOpening = null;
    const { workExchange, delay, delayBucketsMs } = this.topology;
    await withChannel(model, async (channel) => {
      await channel.assertExchange(workExchange, 'direct', { durable: true });
      await this.declareParked(channel);
      for (const ms of delayBucketsMs) {
        await channel.assertExchange(delay(ms), 'fanout', { durable: true });
        await channel.assertQueue(delay(ms), {
          durable: true,
          arguments: { 'x-queue-type': 'classic', 'x-message-ttl': ms, 'x-dead-letter-exchange': workExchange },
        });
        await channel.bindQueue(delay(ms), delay(ms), '');
      }
      for (const kind of this.kinds) await this.declareKind(channel, kind);
    });
    this.declared = new Set(this.kinds);
    await this.publisher(model);
    this.logger.info({ kinds: [...this.kinds] }, 'rabbitmq topology declared, publish channel open');
  }

  /** Runs on every (re)connect of the consuming connection, before it counts as connected. */
  private async setupConsuming(model: ChannelModel): Promise<void> {
    // Each consumer declares its queue and binds it to the work exchange, which must exist
    // for that: this connection may be set up before the publishing one declared it.
    await withChannel(model, (channel) => channel.assertExchange(this.topology.workExchange, 'direct', { durable: true }));
    for (const consumer of this.consumers.values()) await consumer.attach(model);
    this.logger.info({ consumers: this.consumers.size }, 'rabbitmq consumers attached');
  }

  private publisher(model: ChannelModel): Promise<ConfirmChannel> {
    if (this.publishChannel && !this.closedChannels.has(this.publishChannel)) return Promise.resolve(this.publishChannel);
    this.publishChannelOpening ??= (async () => {
      try {
        const channel = await model.createConfirmChannel();
        channel.on('error', (error: Error) => this.logger.warn({ err: error }, 'rabbitmq publish channel error'));
        channel.on('return', (message: ConsumeMessage) => {
          const publishId = message.properties.correlationId as unknown;
          if (publishId !== undefined) this.returned.add(String(publishId));
          this.logger.error(
            { exchange: message.fields.exchange, routingKey: message.fields.routingKey, messageId: message.properties.messageId },
            'message returned unroutable; its publish counts as failed',
          );
        });
        channel.on('close', () => {
          this.closedChannels.add(channel);
          if (this.publishChannel === channel) this.publishChannel = null;
        });
        this.publishChannel = channel;
        return channel;
      } finally {
        this.publishChannelOpening = null;
      }
    })();
    return this.publishChannelOpening;
  }
}

async function withChannel<T>(model: ChannelModel, work: (channel: Channel) => Promise<T>): Promise<T> {
  const channel = await model.createChannel();
  channel.on('error', () => undefined);
  try {
    return await work(channel);
  } finally {
    // Bounded: setup runs here, and amqplib's recovery waits for setup without a limit.
    await closeChannel(channel);
  }
}
