import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, Options } from 'amqplib';
import type { Logger } from 'pino';
import type { JobMessage } from '../types';
import { ChannelAcks } from './channel-acks';
import { encodeJobMessage, encodeJobMessages, MAX_JOBS_PER_MESSAGE, parseJobMessages, type ParkReason } from './job-message';
import { RabbitMqConnection, type RabbitMqRecoverySettings } from './rabbitmq-connection';
import {
  PublishRefusedError,
  type ConnectionState,
  type ConsumeOptions,
  type ConsumerHandle,
  type JobTransport,
  type MessageHandler,
  type ParkedMessage,
  type Settlement,
} from './transport';

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

/** How long a handler that threw waits before its message comes back. */
const THROWN_HANDLER_RETRY_MS = 1_000;
/** How long a delivery that could not be parked (broker trouble) waits before it is handed back. */
const PARK_FAILED_REQUEUE_MS = 1_000;
/** How long the parked count (for health) may take before it counts as unknown. */
const PARKED_COUNT_TIMEOUT_MS = 2_000;
/**
 * Names each publish on the publishing channel, so that a `basic.return` (unroutable)
 * can be matched to the publish it refuses: the broker sends the return before the
 * confirm of the same message, on the same channel.
 */
const PUBLISH_ID_HEADER = 'x-jiaowu-publish-id';

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
  connectionName?: string;
  /** How long `publish` waits for the broker's confirms before it rejects. Default 10 s. */
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
 * Recovery: the connection is amqplib 2's recovering connection (backoff + jitter);
 * after every (re)connect its setup step redeclares the whole topology, opens a new
 * confirm channel for publishing and re-attaches every consumer with the same handler
 * and concurrency. Deliveries that were in flight on a dead channel are requeued by
 * the broker; the handlers still running for them finish, and their settlement is
 * skipped (the engine's claim makes the redelivered duplicate harmless).
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
export class RabbitMqTransport implements JobTransport {
  readonly name = 'rabbitmq' as const;
  readonly durable = true;
  readonly topology: ReturnType<typeof rabbitMqTopology>;
  private readonly connection: RabbitMqConnection;
  private readonly logger: Logger;
  private readonly publishTimeoutMs: number;
  private readonly kinds = new Set<string>();
  /** Kinds whose queue is declared on the current connection. */
  private declared = new Set<string>();
  private publishChannel: ConfirmChannel | null = null;
  private publishChannelOpening: Promise<ConfirmChannel> | null = null;
  /** @internal shared with KindConsumer */
  readonly consumers = new Map<string, KindConsumer>();
  /** @internal channels known to be closed (settling on them is skipped). */
  readonly closedChannels = new WeakSet<Channel>();
  private closed = false;
  private publishSeq = 0;
  /** Publish ids the broker returned as unroutable, until their confirm arrives. */
  private readonly returned = new Set<string>();
  private readonly parkListeners = new Set<(parked: ParkedMessage) => void>();

  constructor(private readonly options: RabbitMqTransportOptions) {
    this.logger = options.logger;
    this.publishTimeoutMs = options.publishTimeoutMs ?? 10_000;
    for (const [kind, jobs] of Object.entries(options.jobsPerMessage ?? {})) {
      if (!Number.isInteger(jobs) || jobs < 1 || jobs > MAX_JOBS_PER_MESSAGE) {
        throw new Error(`jobsPerMessage of ${kind} must be an integer 1–${MAX_JOBS_PER_MESSAGE} (got ${jobs})`);
      }
    }
    this.topology = rabbitMqTopology(options.prefix, options.delayBucketsMs ?? DEFAULT_DELAY_BUCKETS_MS);
    this.connection = new RabbitMqConnection({
      url: options.url,
      logger: options.logger,
      connectionName: options.connectionName ?? `jiaowu-jobs transport (${options.prefix})`,
      recovery: options.recovery,
    });
    this.connection.onSetup((model) => this.setup(model));
  }

  async start(kinds: readonly string[]): Promise<void> {
    if (this.closed) throw new Error('rabbitmq transport is closed');
    for (const kind of kinds) this.kinds.add(kind);
    await this.connection.open();
    const model = this.connection.model;
    const missing = kinds.filter((kind) => !this.declared.has(kind));
    if (model && missing.length > 0) await this.declareKinds(model, missing);
  }

  async publish(messages: readonly JobMessage[]): Promise<void> {
    if (this.closed) throw new Error('rabbitmq transport is closed');
    if (messages.length === 0) return;
    const model = this.liveModel();
    await withTimeout(
      (async () => {
        const missing = [...new Set(messages.map((m) => m.kind))].filter((kind) => !this.declared.has(kind));
        if (missing.length > 0) await this.declareKinds(model, missing);
        const channel = await this.publisher(model);
        const packed = this.pack(messages);
        const outcomes = await Promise.allSettled(
          packed.map((jobs) =>
            this.confirmPublish(channel, this.topology.workExchange, this.topology.workQueue(jobs[0]!.kind), encodeJobMessages(jobs), {
              persistent: true,
              contentType: 'application/json',
              messageId: jobs[0]!.outboxId,
              type: jobs[0]!.kind,
              timestamp: Math.floor(Date.now() / 1000),
            }),
          ),
        );
        const refused = packed.filter((_jobs, i) => outcomes[i]!.status === 'rejected').flat();
        if (refused.length === 0) return;
        // An unroutable message means the kind's queue or binding is gone: declare it
        // again before the next publish of that kind.
        for (const message of refused) this.declared.delete(message.kind);
        const first = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')!.reason as unknown;
        throw new PublishRefusedError(
          `rabbitmq did not take ${refused.length} of ${messages.length} message(s): ${first instanceof Error ? first.message : String(first)}`,
          refused.map((m) => m.outboxId),
        );
      })(),
      this.publishTimeoutMs,
      `rabbitmq publish of ${messages.length} message(s) not confirmed`,
    );
  }

  /** Groups messages by kind, in order, into broker messages of up to `jobsPerMessage(kind)` jobs. */
  private pack(messages: readonly JobMessage[]): JobMessage[][] {
    const perMessage = this.options.jobsPerMessage;
    if (!perMessage || Object.keys(perMessage).length === 0) return messages.map((message) => [message]);
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
      if (jobs.length >= (perMessage[message.kind] ?? 1)) open.delete(message.kind);
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
    await this.connection.open();
    const model = this.connection.model;
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

  connectionState(): ConnectionState {
    return this.closed ? 'closed' : this.connection.state;
  }

  async waiting(kind: string): Promise<number> {
    const model = this.liveModel();
    // A channel of its own: checkQueue on a missing queue closes the channel it runs on.
    const channel = await model.createChannel();
    try {
      const { messageCount } = await channel.checkQueue(this.topology.workQueue(kind));
      return messageCount;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  async parked(): Promise<number> {
    const model = this.liveModel();
    // Health asks this on every probe: a broker that does not answer must not hold it up.
    return withTimeout(
      (async () => {
        const channel = await model.createChannel();
        channel.on('error', () => undefined);
        try {
          const { messageCount } = await channel.checkQueue(this.topology.parked);
          return messageCount;
        } finally {
          await channel.close().catch(() => undefined);
        }
      })(),
      PARKED_COUNT_TIMEOUT_MS,
      'parked queue count not answered',
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
    if (channel) await channel.close().catch(() => undefined);
    await this.connection.close();
  }

  /** @internal The live connection; throws at once when there is none (no waiting). */
  liveModel(): ChannelModel {
    const model = this.connection.state === 'connected' ? this.connection.model : null;
    if (this.closed) throw new Error('rabbitmq transport is closed');
    if (!model) throw new Error(`rabbitmq transport is ${this.connection.state}; cannot publish now`);
    return model;
  }

  /** @internal The connection a channel may be (re)opened on, also during setup. */
  currentModel(): ChannelModel | null {
    return this.closed ? null : this.connection.model;
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
   */
  private confirmPublish(channel: ConfirmChannel, exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void> {
    const publishId = String(++this.publishSeq);
    return new Promise<void>((resolve, reject) => {
      try {
        const headers = { ...(options.headers ?? {}), [PUBLISH_ID_HEADER]: publishId };
        channel.publish(exchange, routingKey, content, { ...options, headers, mandatory: true }, (error: unknown) => {
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

  /** @internal Declares a kind's queue and binding on a channel of its own. */
  async declareKinds(model: ChannelModel, kinds: readonly string[]): Promise<void> {
    await withChannel(model, async (channel) => {
      for (const kind of kinds) await this.declareKind(channel, kind);
    });
    if (model === this.connection.model) for (const kind of kinds) this.declared.add(kind);
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

  /** Runs on every (re)connect, before the connection counts as connected. */
  private async setup(model: ChannelModel): Promise<void> {
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
    for (const consumer of this.consumers.values()) await consumer.attach(model);
    this.logger.info({ kinds: [...this.kinds], consumers: this.consumers.size }, 'rabbitmq topology declared, consumers attached');
  }

  private publisher(model: ChannelModel): Promise<ConfirmChannel> {
    if (this.publishChannel && !this.closedChannels.has(this.publishChannel)) return Promise.resolve(this.publishChannel);
    this.publishChannelOpening ??= (async () => {
      try {
        const channel = await model.createConfirmChannel();
        channel.on('error', (error: Error) => this.logger.warn({ err: error }, 'rabbitmq publish channel error'));
        channel.on('return', (message: ConsumeMessage) => {
          const publishId = message.properties.headers?.[PUBLISH_ID_HEADER] as unknown;
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

/**
 * A broker message as its consumer holds it: it is acknowledged once every job it
 * carries is settled, or handed back whole if any of them was (a redelivered job
 * already done meets its finished row and is acked at once).
 */
interface BrokerMessage {
  channel: Channel;
  raw: ConsumeMessage;
  /** Its jobs not settled yet. */
  unsettled: number;
  /** A job of it asked to be put back: the whole message goes back to the queue. */
  handBack: boolean;
}

/** One job of a broker message, waiting for or held by a consumer slot. */
interface Delivery {
  source: BrokerMessage;
  message: JobMessage;
}

/**
 * One kind's consumer: its own channel, `prefetch(consumers + prefetch)` broker
 * messages, at most `consumers` handlers at a time; jobs beyond them (a message may
 * carry several) wait in `waiting`, ready for the next free slot (unacknowledged: a
 * dead process hands them back). The limit is also kept locally, across channels:
 * after a channel dies, handlers of its (requeued) deliveries may still run, and
 * deliveries on the new channel wait in `waiting` until a slot is free, so `active`
 * never exceeds `consumers`.
 * (Such a waiting delivery is unacked too; should old handlers outlive `consumer_timeout`
 * again, that channel is closed and re-attached in turn — no message is lost.)
 */
class KindConsumer implements ConsumerHandle {
  private channel: Channel | null = null;
  private consumerTag: string | null = null;
  private attaching: ChannelModel | null = null;
  private running = 0;
  private readonly waiting: Delivery[] = [];
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  private reattachTimer: NodeJS.Timeout | null = null;
  private reattachDelayMs = 500;
  private readonly queue: string;
  /** Acks of each channel this consumer had, sent several to a frame (see ChannelAcks). */
  private readonly acks = new WeakMap<Channel, ChannelAcks>();

  constructor(
    private readonly transport: RabbitMqTransport,
    readonly kind: string,
    private readonly consumers: number,
    /** Deliveries held in `waiting` beyond the running ones: the channel's prefetch is `consumers + prefetch`. */
    private readonly prefetch: number,
    private readonly handler: MessageHandler,
    private readonly logger: Logger,
  ) {
    this.queue = transport.topology.workQueue(kind);
  }

  get active(): number {
    return this.running;
  }

  /** Opens a channel on `model` and starts consuming (idempotent per model). */
  async attach(model: ChannelModel): Promise<void> {
    if (this.stopped || this.attaching === model) return;
    if (this.channel && !this.transport.closedChannels.has(this.channel) && channelModelOf(this.channel) === model) return;
    this.attaching = model;
    let channel: Channel | undefined;
    try {
      channel = await model.createChannel();
      const ch = channel;
      ch.on('error', (error: Error) => this.logger.warn({ err: error }, 'rabbitmq consumer channel error'));
      ch.on('handler-error', (error: Error, event: string) => this.logger.error({ err: error, event }, 'consumer channel listener threw'));
      ch.on('close', () => this.onChannelClosed(ch));
      (ch as ChannelWithModel).__jiaowuModel = model;
      await this.transport.declareKind(ch, this.kind);
      await ch.prefetch(this.consumers + this.prefetch);
      if (this.stopped) {
        await ch.close().catch(() => undefined);
        return;
      }
      this.channel = ch;
      const { consumerTag } = await ch.consume(this.queue, (raw) => this.onDelivery(ch, raw), { noAck: false });
      this.consumerTag = consumerTag;
      this.reattachDelayMs = 500;
      this.logger.debug({ queue: this.queue, consumers: this.consumers }, 'consumer attached');
    } catch (error) {
      if (channel) await channel.close().catch(() => undefined);
      throw error;
    } finally {
      if (this.attaching === model) this.attaching = null;
    }
  }

  /** Re-attaches on the live connection after a pause, unless a reconnect does it first. */
  scheduleReattach(): void {
    if (this.stopped || this.transport.isClosed || this.reattachTimer) return;
    const delay = this.reattachDelayMs;
    this.reattachDelayMs = Math.min(this.reattachDelayMs * 2, 10_000);
    this.reattachTimer = setTimeout(() => {
      this.reattachTimer = null;
      if (this.stopped || this.transport.isClosed) return;
      if (this.channel && !this.transport.closedChannels.has(this.channel)) return;
      const model = this.transport.currentModel();
      // No connection: the recovering connection's setup re-attaches every consumer.
      if (!model) return;
      this.attach(model).catch((error) => {
        this.logger.warn({ err: error }, 'consumer re-attach failed; trying again');
        this.scheduleReattach();
      });
    }, delay);
    this.reattachTimer.unref();
  }

  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      if (this.transport.consumers.get(this.kind) === this) this.transport.consumers.delete(this.kind);
      if (this.reattachTimer) clearTimeout(this.reattachTimer);
      this.reattachTimer = null;
      const channel = this.channel;
      const tag = this.consumerTag;
      if (channel && tag && !this.transport.closedChannels.has(channel)) {
        await withTimeout(channel.cancel(tag), 5_000, 'basic.cancel').catch((error) =>
          this.logger.debug({ err: error }, 'consumer cancel failed'),
        );
      }
      for (const delivery of this.waiting.splice(0)) this.settled(delivery, true);
    }
    if (this.running > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const channel = this.channel;
    this.channel = null;
    this.consumerTag = null;
    if (channel && !this.transport.closedChannels.has(channel)) {
      // Acks still waiting for the end of the turn must leave before the channel closes,
      // or the broker would hand those finished deliveries out again.
      this.acks.get(channel)?.flush();
      await channel.close().catch(() => undefined);
    }
  }

  private onChannelClosed(channel: Channel): void {
    this.transport.closedChannels.add(channel);
    if (this.channel !== channel) return;
    this.channel = null;
    this.consumerTag = null;
    // The broker requeued every unacked delivery of that channel; drop our copies.
    for (let i = this.waiting.length - 1; i >= 0; i--) if (this.waiting[i]!.source.channel === channel) this.waiting.splice(i, 1);
    if (this.stopped || this.transport.isClosed) return;
    this.logger.warn({ queue: this.queue }, 'consumer channel closed; re-attaching');
    this.scheduleReattach();
  }

  private onDelivery(channel: Channel, raw: ConsumeMessage | null): void {
    if (raw === null) {
      // Cancelled by the server (queue deleted, node failover): start over on a new channel.
      this.logger.warn({ queue: this.queue }, 'consumer cancelled by the broker');
      if (this.channel === channel) channel.close().catch(() => undefined);
      return;
    }
    this.acksOf(channel).delivered(raw);
    const parsed = parseJobMessages(raw.content, this.kind);
    const source: BrokerMessage = { channel, raw, unsettled: parsed.ok ? parsed.messages.length : 1, handBack: false };
    if (!parsed.ok) {
      // A poison message must never loop, nor reach the database: park it (outside the
      // consumer slots: it runs nothing).
      void this.park(source, parsed.reason, parsed.detail).then((handBack) => this.settle(source, handBack));
      return;
    }
    if (this.stopped) {
      this.nack(source, true);
      return;
    }
    for (const message of parsed.messages) this.waiting.push({ source, message });
    this.pump();
  }

  private pump(): void {
    while (!this.stopped && this.running < this.consumers && this.waiting.length > 0) {
      const delivery = this.waiting.shift()!;
      if (this.transport.closedChannels.has(delivery.source.channel)) continue;
      this.running++;
      void this.run(delivery);
    }
  }

  private async run(delivery: Delivery): Promise<void> {
    try {
      let settlement: Settlement;
      try {
        settlement = await this.handler(delivery.message);
      } catch (error) {
        this.logger.warn({ err: error, outboxId: delivery.message.outboxId }, 'handler threw; retrying the message in 1 s');
        settlement = { type: 'retry', delayMs: THROWN_HANDLER_RETRY_MS };
      }
      this.settled(delivery, await this.carryOut(delivery, settlement));
    } catch (error) {
      this.logger.error({ err: error }, 'settling a delivery failed');
    } finally {
      this.running--;
      if (this.running === 0 && this.idleWaiters.length > 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
      this.pump();
    }
  }

  /**
   * Carries out what the handler decided for one job; true when its broker message must
   * go back to the queue. A retry or a park sends a copy of this job alone, so the
   * message's other jobs are not repeated.
   */
  private async carryOut(delivery: Delivery, settlement: Settlement): Promise<boolean> {
    const { source, message } = delivery;
    // The channel died while the handler ran: the broker has requeued the message.
    if (this.transport.closedChannels.has(source.channel)) return false;
    switch (settlement.type) {
      case 'ack':
        return false;
      case 'requeue':
        return true;
      case 'park':
        return this.park(source, settlement.reason, settlement.detail, message);
      case 'retry':
        try {
          const bucket = await this.transport.publishDelayed(this.kind, source.raw, message, settlement.delayMs);
          this.logger.debug({ outboxId: message.outboxId, delayMs: settlement.delayMs, bucket }, 'retry scheduled');
          return false;
        } catch (error) {
          // No delayed copy: keep the slot a little (no hot loop), then hand it back.
          this.logger.warn({ err: error, outboxId: message.outboxId }, 'could not schedule a delayed retry; requeueing');
          await sleep(Math.min(settlement.delayMs, 5_000));
          return true;
        }
    }
  }

  /** One job of a broker message is settled; the last one settles the message. */
  private settled(delivery: Delivery, handBack: boolean): void {
    const { source } = delivery;
    source.handBack ||= handBack;
    if (--source.unsettled > 0) return;
    this.settle(source, source.handBack);
  }

  private settle(source: BrokerMessage, handBack: boolean): void {
    if (this.transport.closedChannels.has(source.channel)) {
      this.logger.debug({ messageId: source.raw.properties.messageId }, 'channel gone; settlement skipped');
      return;
    }
    if (handBack) this.nack(source, true);
    else this.ack(source);
  }

  /**
   * Moves a copy of a broker message (or of its `job` alone) to the parked queue; true
   * when the broker could not take it, after a pause, so the message goes back to its
   * queue instead.
   */
  private async park(source: BrokerMessage, reason: ParkReason, detail: string, job?: JobMessage): Promise<boolean> {
    const { raw } = source;
    this.logger.error(
      { queue: this.queue, reason, detail, messageId: job?.outboxId ?? raw.properties.messageId, body: job ?? raw.content.toString('utf8').slice(0, 500) },
      'job message parked: it will not run',
    );
    try {
      await this.transport.park(this.kind, raw, reason, detail, job);
      return false;
    } catch (error) {
      this.logger.warn({ err: error, queue: this.queue }, 'could not park a message; handing it back');
      await sleep(PARK_FAILED_REQUEUE_MS);
      return true;
    }
  }

  private acksOf(channel: Channel): ChannelAcks {
    let acks = this.acks.get(channel);
    if (!acks) {
      acks = new ChannelAcks(channel, () => this.transport.closedChannels.has(channel), (error) =>
        this.logger.debug({ err: error }, 'ack on a closed channel ignored'),
      );
      this.acks.set(channel, acks);
    }
    return acks;
  }

  private ack(source: BrokerMessage): void {
    if (this.transport.closedChannels.has(source.channel)) return;
    this.acksOf(source.channel).ack(source.raw);
  }

  private nack(source: BrokerMessage, requeue: boolean): void {
    if (this.transport.closedChannels.has(source.channel)) return;
    try {
      this.acksOf(source.channel).nack(source.raw, requeue);
    } catch (error) {
      this.logger.debug({ err: error }, 'nack on a closed channel ignored');
    }
  }
}

type ChannelWithModel = Channel & { __jiaowuModel?: ChannelModel };
const channelModelOf = (channel: Channel): ChannelModel | undefined => (channel as ChannelWithModel).__jiaowuModel;

async function withChannel<T>(model: ChannelModel, work: (channel: Channel) => Promise<T>): Promise<T> {
  const channel = await model.createChannel();
  channel.on('error', () => undefined);
  try {
    return await work(channel);
  } finally {
    await channel.close().catch(() => undefined);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
