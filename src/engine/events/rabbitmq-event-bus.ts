import { randomUUID } from 'node:crypto';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { Logger } from 'pino';
import { closeChannel } from '../transport/close-channel';
import { RabbitMqConnection, type RabbitMqRecoverySettings } from '../transport/rabbitmq-connection';
import { JobEventReason, type JobEvent } from '../types';
import { notifyConnected, type ConnectedListener, type EventBus, type JobEventListener } from './event-bus';
import { InMemoryEventBus } from './in-memory-event-bus';

export interface RabbitMqEventBusOptions {
  url: string;
  /** Prefix of the exchange name, e.g. `jiaowu`. */
  prefix: string;
  logger: Logger;
  connectionName?: string;
  recovery?: RabbitMqRecoverySettings;
  /** Events kept (the latest per job) while disconnected, sent on reconnect. Default 1000. */
  bufferLimit?: number;
  /** `x-expires` of this process's queue: the broker deletes it if this process vanishes. Default 60 s. */
  queueExpiresMs?: number;
  /**
   * Which events this process receives from other processes. `all` (API processes,
   * whose subscribers watch any job) or `control` — only cancel requests, which is all
   * a worker-only process needs; it then does not receive every heartbeat of every job.
   * Default `all`.
   */
  receive?: 'all' | 'control';
  /**
   * How long events wait to leave for other processes, with those published meanwhile
   * (cancel requests never wait). 0 or absent: at the end of this turn of the event loop.
   * How long a process holds them is `jobEventsHoldMs` (publisher.ts): the fast-start
   * head start where it enqueues, 0 elsewhere.
   */
  holdMs?: number;
}

/** Routing key `<reason>.<kind>.<jobId>`: lets a process bind only the reasons it needs. */
export const eventRoutingKey = (event: JobEvent): string => `${event.reason}.${event.kind}.${event.jobId}`;
const CONTROL_BINDING = `${JobEventReason.CANCEL_REQUESTED}.#`;
/** Routing key of a message carrying several events (a JSON array); never a cancel request. */
export const EVENT_BATCH_ROUTING_KEY = 'BATCH.events';

/** The header carrying the id of the bus instance that published an event. */
const ORIGIN_HEADER = 'x-jiaowu-origin';

/**
 * Job events across processes: a durable topic exchange `${prefix}.job-events`, routing
 * key `<reason>.<kind>.<jobId>`. Every process binds its own exclusive, auto-delete,
 * server-named queue (`#`, or only cancel requests for a worker-only process) and hands
 * what arrives to its local listeners.
 *
 * Events are full snapshots, so delivery is best effort: messages are not persistent,
 * `publish` never throws and never waits. While disconnected, the latest event of each
 * job is kept (up to `bufferLimit`) and sent after the reconnect. An event published
 * here reaches this process's own listeners at once (also while the broker is away);
 * its echo from the broker is recognised by its origin header and skipped.
 *
 * Recovery: the same recovering connection as the transport; after every reconnect the
 * exchange is redeclared and a new queue is declared, bound and consumed (the old one
 * was exclusive to the dead connection and is gone). Events published while this
 * process had no queue are missed: `onConnected` fires once the new queue consumes,
 * and the watchers read the jobs they watch again.
 */
export class RabbitMqEventBus implements EventBus {
  readonly name = 'rabbitmq' as const;
  readonly exchange: string;
  private readonly local = new InMemoryEventBus();
  private readonly connection: RabbitMqConnection;
  private readonly logger: Logger;
  private readonly origin = randomUUID();
  /**
   * One headers object for every message: amqplib makes a message's headers the prototype
   * of the table it encodes, and V8 keeps a young object made a prototype through
   * young-generation collections (see confirmPublish in rabbitmq-transport.ts).
   */
  private readonly originHeaders = { [ORIGIN_HEADER]: this.origin };
  private readonly bufferLimit: number;
  private readonly buffer = new Map<string, JobEvent>();
  private readonly connectedListeners = new Set<ConnectedListener>();
  private outgoing: JobEvent[] = [];
  private holdTimer: NodeJS.Timeout | null = null;
  private channel: Channel | null = null;
  private queueName: string | null = null;
  private closed = false;
  private reopenTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: RabbitMqEventBusOptions) {
    this.logger = options.logger;
    this.exchange = `${options.prefix}.job-events`;
    this.bufferLimit = options.bufferLimit ?? 1_000;
    this.connection = new RabbitMqConnection({
      url: options.url,
      logger: options.logger,
      connectionName: options.connectionName ?? `jiaowu-jobs events (${options.prefix})`,
      recovery: options.recovery,
    });
    this.connection.onSetup((model) => this.setup(model));
    // 'connected' comes after every setup step: the new queue is bound and consuming.
    this.connection.on('connected', () => this.receiving());
  }

  async start(): Promise<void> {
    if (this.closed) throw new Error('rabbitmq event bus is closed');
    await this.connection.open();
  }

  /** The broker's name for this process's queue (for tests and diagnostics). */
  get queue(): string | null {
    return this.queueName;
  }

  connectionState() {
    return this.closed ? ('closed' as const) : this.connection.state;
  }

  publish(event: JobEvent): void {
    if (this.closed) return;
    this.local.publish(event);
    // Cancel requests go at once and alone (worker-only processes bind only those), after
    // the events waiting to leave, so that none of a job's events arrives behind its
    // cancel request. Other events wait for the end of this turn of the event loop (or
    // `holdMs`) and leave together: under load one broker message carries many, which
    // halves the broker's work.
    if (event.reason === JobEventReason.CANCEL_REQUESTED) {
      this.sendOutgoing();
      if (!this.send([event])) this.keep(event);
      return;
    }
    this.outgoing.push(event);
    if (this.outgoing.length > 1) return;
    const holdMs = this.options.holdMs ?? 0;
    if (holdMs > 0) this.holdTimer = setTimeout(() => this.sendOutgoing(), holdMs);
    else setImmediate(() => this.sendOutgoing());
  }

  private sendOutgoing(): void {
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = null;
    const events = this.outgoing;
    this.outgoing = [];
    if (events.length === 0 || this.closed) return;
    if (!this.send(events)) for (const event of events) this.keep(event);
  }

  subscribe(listener: JobEventListener): () => void {
    return this.local.subscribe(listener);
  }

  onConnected(listener: ConnectedListener): () => void {
    this.connectedListeners.add(listener);
    return () => this.connectedListeners.delete(listener);
  }

  /** A queue of this process consumes again (a new connection, or a re-opened channel). */
  private receiving(): void {
    this.flush();
    if (!this.closed) notifyConnected(this.connectedListeners);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.sendOutgoing();
    this.closed = true;
    if (this.reopenTimer) clearTimeout(this.reopenTimer);
    const channel = this.channel;
    this.channel = null;
    if (channel) await closeChannel(channel);
    await this.connection.close();
    this.buffer.clear();
    this.connectedListeners.clear();
    await this.local.close();
  }

  /** Sends events (one alone, several as a batch); false when there is no usable channel now. Never throws. */
  private send(events: JobEvent[]): boolean {
    const channel = this.channel;
    if (!channel || this.connection.state !== 'connected') return false;
    const single = events.length === 1;
    try {
      const key = single ? eventRoutingKey(events[0]!) : EVENT_BATCH_ROUTING_KEY;
      channel.publish(this.exchange, key, Buffer.from(JSON.stringify(single ? eventOnWire(events[0]!) : events.map(eventOnWire))), {
        persistent: false,
        contentType: 'application/json',
        headers: this.originHeaders,
      });
      return true;
    } catch (error) {
      this.logger.debug({ err: error, events: events.length }, 'job events not sent');
      return false;
    }
  }

  private keep(event: JobEvent): void {
    // A snapshot supersedes the job's older ones: keep the latest per job.
    this.buffer.delete(event.jobId);
    if (this.buffer.size >= this.bufferLimit) {
      const oldest = this.buffer.keys().next().value;
      if (oldest !== undefined) this.buffer.delete(oldest);
    }
    this.buffer.set(event.jobId, event);
    this.logger.debug({ jobId: event.jobId, buffered: this.buffer.size }, 'event bus disconnected; job event buffered');
  }

  private flush(): void {
    if (this.buffer.size === 0) return;
    const events = [...this.buffer.values()];
    this.buffer.clear();
    let sent = 0;
    for (const event of events) {
      if (this.send([event])) sent++;
      else this.keep(event);
    }
    this.logger.debug({ sent }, 'buffered job events sent');
  }

  private async setup(model: ChannelModel): Promise<void> {
    this.channel = null;
    this.queueName = null;
    await this.openChannel(model);
  }

  private async openChannel(model: ChannelModel): Promise<void> {
    const channel = await model.createChannel();
    channel.on('error', (error: Error) => this.logger.warn({ err: error }, 'event bus channel error'));
    channel.on('close', () => {
      if (this.channel !== channel) return;
      this.channel = null;
      this.queueName = null;
      // Closed by the server while the connection lives on: open a new one shortly.
      if (!this.closed) this.scheduleReopen();
    });
    try {
      await channel.assertExchange(this.exchange, 'topic', { durable: true });
      const { queue } = await channel.assertQueue('', {
        exclusive: true,
        autoDelete: true,
        durable: false,
        arguments: { 'x-queue-type': 'classic', 'x-expires': this.options.queueExpiresMs ?? 60_000 },
      });
      await channel.bindQueue(queue, this.exchange, this.options.receive === 'control' ? CONTROL_BINDING : '#');
      await channel.consume(queue, (message) => this.onMessage(channel, message), { noAck: true, exclusive: true });
      this.channel = channel;
      this.queueName = queue;
    } catch (error) {
      await closeChannel(channel);
      throw error;
    }
  }

  private scheduleReopen(): void {
    if (this.reopenTimer || this.closed) return;
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = null;
      if (this.closed || this.channel) return;
      const model = this.connection.state === 'connected' ? this.connection.model : null;
      if (!model) return; // the reconnect's setup opens it
      this.openChannel(model).then(
        () => this.receiving(),
        (error) => {
          this.logger.warn({ err: error }, 'event bus channel reopen failed');
          this.scheduleReopen();
        },
      );
    }, 1_000);
    this.reopenTimer.unref();
  }

  private onMessage(channel: Channel, message: ConsumeMessage | null): void {
    if (message === null) {
      if (this.channel === channel) channel.close().catch(() => undefined);
      return;
    }
    if (message.properties.headers?.[ORIGIN_HEADER] === this.origin) return; // already delivered locally
    let events: JobEvent[];
    try {
      const body: unknown = JSON.parse(message.content.toString('utf8'));
      events = Array.isArray(body) ? body.map(reviveJobEvent) : [reviveJobEvent(body)];
    } catch (error) {
      this.logger.warn({ err: error }, 'malformed job event ignored');
      return;
    }
    for (const event of events) this.local.deliver(event);
  }
}

/**
 * An event as it is sent: its times as epoch milliseconds. JSON would write a Date
 * through `toISOString`, which took two thirds of serialising an event (7.4 against 2.6 µs
 * an event, two events a job); `reviveJobEvent` has always read numbers as well as ISO
 * strings, so every receiver reads this form.
 */
export function eventOnWire(event: JobEvent): unknown {
  const job = event.job;
  return {
    ...event,
    occurredAt: event.occurredAt.getTime(),
    job: { ...job, createdAt: epochMs(job.createdAt), updatedAt: epochMs(job.updatedAt), startedAt: epochMs(job.startedAt), completedAt: epochMs(job.completedAt) },
  };
}

const epochMs = (date: Date | null) => (date === null ? null : date.getTime());

/** Turns a JSON-parsed event back into a `JobEvent` (Date fields revived, from ISO strings or epoch milliseconds). */
export function reviveJobEvent(value: unknown): JobEvent {
  if (!value || typeof value !== 'object') throw new Error('a job event must be an object');
  const event = value as JobEvent;
  if (typeof event.jobId !== 'string' || typeof event.kind !== 'string' || !event.job || typeof event.job !== 'object') {
    throw new Error('not a job event');
  }
  event.occurredAt = toDate(event.occurredAt as unknown) ?? new Date();
  const job = event.job as unknown as Record<string, unknown>;
  for (const field of ['createdAt', 'updatedAt', 'startedAt', 'completedAt'] as const) {
    job[field] = toDate(job[field]);
  }
  // An event from a process older than message codes has none: absent means null.
  const fields = event as unknown as Record<string, unknown>;
  for (const field of ['currentStepCode', 'messageCode', 'messageParams'] as const) fields[field] ??= null;
  for (const field of ['currentStepCode', 'messageCode', 'messageParams', 'errorCode', 'errorParams'] as const) job[field] ??= null;
  return event as JobEvent;
}

function toDate(value: unknown): Date | null {
  if (value == null) return null;
  if (value instanceof Date) return value;
  if (typeof value === 'string' || typeof value === 'number') {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? null : date;
  }
  return null;
}
