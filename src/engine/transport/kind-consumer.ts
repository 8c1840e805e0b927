import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { Logger } from 'pino';
import type { JobMessage } from '../types';
import { ChannelAcks } from './channel-acks';
import { closeChannel } from './close-channel';
import { parseJobMessages, type ParkReason } from './job-message';
import type { ConsumerHandle, MessageHandler, Settlement } from './transport';
import { withTimeout } from './with-timeout';

/**
 * What a kind's consumer uses of the transport that owns it (`RabbitMqTransport`):
 * the consuming connection of the moment, the channels already closed, and the broker
 * work it hands back — declaring its queue, and, on the publishing connection, a delayed
 * retry or parking a message.
 */
export interface KindConsumerHost {
  readonly topology: { workQueue(kind: string): string };
  /** The consumer removes itself here when it stops. */
  readonly consumers: Map<string, KindConsumer>;
  readonly closedChannels: WeakSet<Channel>;
  readonly isClosed: boolean;
  /** The consuming connection (which never publishes, so a resource alarm never blocks it); null while it reconnects. */
  currentModel(): ChannelModel | null;
  declareKind(channel: Channel, kind: string): Promise<void>;
  publishDelayed(kind: string, message: ConsumeMessage, job: JobMessage, delayMs: number): Promise<number>;
  park(kind: string, message: ConsumeMessage, reason: ParkReason, detail: string, job?: JobMessage): Promise<void>;
}

/** How long a handler that threw waits before its message comes back. */
const THROWN_HANDLER_RETRY_MS = 1_000;
/** How long a delivery that could not be parked (broker trouble) waits before it is handed back. */
const PARK_FAILED_REQUEUE_MS = 1_000;

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
export class KindConsumer implements ConsumerHandle {
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
  /** Jobs running by `offer`, by outbox id, with the broker copies that arrived meanwhile. */
  private readonly directRuns = new Map<string, { message: JobMessage; copies: Delivery[] }>();

  constructor(
    private readonly transport: KindConsumerHost,
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

  /**
   * Runs a job in a free slot without its delivery (see ConsumerHandle.offer). Refused
   * while a delivery waits: those came first, and a full consumer has no slot to give.
   * Its broker copy, when it comes during the run, waits beside it without a slot of its
   * own and is settled as the run's delivery would have been: acknowledged after it, or —
   * when the run did not take the job (another claimer won) — handled as any delivery.
   * A copy that comes after the run is handled as any delivery too (its claim loses, and
   * the row it then reads says it is done): once the run is over, a copy of the same
   * outbox row may be a later publish of it (a retry), which must run.
   */
  offer(message: JobMessage): boolean {
    const id = message.outboxId;
    if (this.stopped || this.running >= this.consumers || this.waiting.length > 0) return false;
    if (this.directRuns.has(id)) return false;
    this.running++;
    this.directRuns.set(id, { message, copies: [] });
    void this.runDirect(message);
    return true;
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
        await closeChannel(ch);
        return;
      }
      this.channel = ch;
      const { consumerTag } = await ch.consume(this.queue, (raw) => this.onDelivery(ch, raw), { noAck: false });
      this.consumerTag = consumerTag;
      this.reattachDelayMs = 500;
      this.logger.debug({ queue: this.queue, consumers: this.consumers }, 'consumer attached');
    } catch (error) {
      if (channel) await closeChannel(channel);
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
      await closeChannel(channel);
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
    for (const message of parsed.messages) {
      const delivery: Delivery = { source, message };
      const run = this.directRuns.get(message.outboxId);
      // Only a copy that says what the run's message said; anything else is checked as any delivery is.
      if (run && run.message.jobId === message.jobId) run.copies.push(delivery);
      else this.waiting.push(delivery);
    }
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
      this.slotFreed();
    }
  }

  private async runDirect(message: JobMessage): Promise<void> {
    const id = message.outboxId;
    let settlement: Settlement | undefined;
    try {
      settlement = await this.handler(message, { direct: true });
    } catch (error) {
      this.logger.warn({ err: error, outboxId: id }, 'handler threw on a job started directly; its broker message brings it again');
    } finally {
      // The slot is free now; a copy still attaches until the job's outcome is written.
      if (settlement?.type === 'ack' && settlement.committed) {
        void settlement.committed.then(
          (taken) => this.settleCopies(id, taken),
          () => this.settleCopies(id, false),
        );
      } else this.settleCopies(id, settlement?.type === 'ack');
      this.slotFreed();
    }
  }

  /** Ends a direct run's attachment: its copies are acknowledged with it (`taken`), or become the job's way on. */
  private settleCopies(outboxId: string, taken: boolean): void {
    const copies = this.directRuns.get(outboxId)?.copies ?? [];
    this.directRuns.delete(outboxId);
    for (const copy of copies) {
      if (taken) this.settled(copy, false);
      else if (this.stopped) this.settled(copy, true);
      else this.waiting.push(copy);
    }
    // Copies settled after the run's slot was freed (its outcome committed later) start here.
    if (!taken) this.pump();
  }

  private slotFreed(): void {
    this.running--;
    if (this.running === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
    this.pump();
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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
