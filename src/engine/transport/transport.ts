import type { JobMessage } from '../types';
import type { ParkReason } from './job-message';

export { ParkReason } from './job-message';

/** What the runner tells the transport to do with a delivery once it is handled. */
export type Settlement =
  /**
   * Done with it (completed, failed for good, or handed back to the outbox). `committed`:
   * the job's outcome is still being written and is settled when it resolves — true
   * when this run wrote it, false when the run found the job no longer its own (a run
   * without a delivery keeps its broker copies attached until then; see
   * ConsumerHandle.offer).
   */
  | { type: 'ack'; committed?: Promise<boolean> }
  /** Deliver it again after `delayMs`, without holding a consumer slot meanwhile. */
  | { type: 'retry'; delayMs: number }
  /**
   * Put it back at once for another consumer (graceful shutdown). From a run without a
   * delivery: the run did not settle the job, so its broker copies go on as deliveries.
   */
  | { type: 'requeue' }
  /** Never run it: move it to the parked queue for a person to look at. */
  | { type: 'park'; reason: ParkReason; detail: string };

/** How a handler is called for one job. */
export interface HandleOptions {
  /**
   * No broker delivery is held for this run (`ConsumerHandle.offer`): the job's message
   * is on its way or handled elsewhere, so nothing may be handed back to the broker —
   * a release goes through the outbox — and a claim that loses needs no follow-up.
   */
  direct: boolean;
}

export type MessageHandler = (message: JobMessage, options?: HandleOptions) => Promise<Settlement>;

export type ConnectionState = 'connected' | 'connecting' | 'disconnected' | 'closed';

export interface ConsumerHandle {
  /** Stop taking new deliveries; resolves when no handler of this consumer runs. */
  stop(): Promise<void>;
  /** Handlers running right now. */
  readonly active: number;
  /**
   * Runs the handler for `message` now, without a delivery (`direct`), if a consumer
   * slot is free and no delivery waits for one; false otherwise. The broker copies of the
   * message, arriving while that run lasts or its outcome is being written, are settled
   * with it instead of being run — unless the run ends without having settled the job
   * (it lost its lease: a copy may be the one sent after the job was put back), when
   * they go on as any delivery. Transports whose deliveries never leave the process
   * have no use for it.
   */
  offer?(message: JobMessage): boolean;
}

/** A delivery moved to the parked queue (malformed, or not what its queue or outbox row says). */
export interface ParkedMessage {
  /** The queue's kind it arrived on. */
  kind: string;
  reason: ParkReason;
  detail: string;
}

/**
 * A publish the transport did not take for some of its messages (the broker refused,
 * did not confirm, or returned them as unroutable). The others were taken.
 */
export class PublishRefusedError extends Error {
  constructor(
    message: string,
    /** The outbox ids of the messages not taken; every other message of the publish was. */
    readonly refusedOutboxIds: readonly string[],
  ) {
    super(message);
    this.name = 'PublishRefusedError';
  }
}

/**
 * Carries work messages from the outbox publisher to the runners, one queue per
 * kind so that a slow kind never holds up another.
 */
export interface ConsumeOptions {
  /** Deliveries held beyond the running ones (default 0). */
  prefetch?: number;
}

export interface JobTransport {
  readonly name: 'rabbitmq' | 'in-memory';
  /** True when the transport keeps a message until it is acknowledged, across restarts. */
  readonly durable: boolean;
  start(kinds: readonly string[]): Promise<void>;
  /**
   * Resolves only after the transport has taken every message (broker confirms, and
   * routed to a queue). Rejects with `PublishRefusedError` naming the messages not taken.
   */
  publish(messages: readonly JobMessage[]): Promise<void>;
  /**
   * Runs `handler` for deliveries of `kind`, at most `consumers` at a time; a broker
   * transport holds up to `prefetch` more deliveries ready (unacknowledged, so they go
   * back to the queue if this process dies).
   */
  consume(kind: string, consumers: number, handler: MessageHandler, options?: ConsumeOptions): Promise<ConsumerHandle>;
  connectionState(): ConnectionState;
  /**
   * True while the broker holds back this transport's publishes (a RabbitMQ memory or disk
   * alarm): they are refused at their deadline, while deliveries and acks go on.
   */
  publishBlocked(): boolean;
  /**
   * Messages of `kind` waiting in the transport for a consumer (not counting those a
   * consumer holds). Lets the republisher tell a backlog from a lost message.
   */
  waiting(kind: string): Promise<number>;
  /** Messages in the parked queue now (they stay until a person removes them). */
  parked(): Promise<number>;
  /** Calls `listener` for every delivery parked from now on; returns the function that stops it. */
  onParked(listener: (parked: ParkedMessage) => void): () => void;
  close(): Promise<void>;
}
