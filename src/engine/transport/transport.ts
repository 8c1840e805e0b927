import type { JobMessage } from '../types';

/** What the runner tells the transport to do with a delivery once it is handled. */
export type Settlement =
  /** Done with it (completed, failed for good, or handed back to the outbox). */
  | { type: 'ack' }
  /** Deliver it again after `delayMs`, without holding a consumer slot meanwhile. */
  | { type: 'retry'; delayMs: number }
  /** Put it back at once for another consumer (graceful shutdown). */
  | { type: 'requeue' };

export type MessageHandler = (message: JobMessage) => Promise<Settlement>;

export type ConnectionState = 'connected' | 'connecting' | 'disconnected' | 'closed';

export interface ConsumerHandle {
  /** Stop taking new deliveries; resolves when no handler of this consumer runs. */
  stop(): Promise<void>;
  /** Handlers running right now. */
  readonly active: number;
}

/**
 * Carries work messages from the outbox publisher to the runners, one queue per
 * kind so that a slow kind never holds up another.
 */
export interface JobTransport {
  readonly name: 'rabbitmq' | 'in-memory';
  /** True when the transport keeps a message until it is acknowledged, across restarts. */
  readonly durable: boolean;
  start(kinds: readonly string[]): Promise<void>;
  /** Resolves only after the transport has taken every message (broker confirms). */
  publish(messages: readonly JobMessage[]): Promise<void>;
  /** Runs `handler` for deliveries of `kind`, at most `consumers` at a time. */
  consume(kind: string, consumers: number, handler: MessageHandler): Promise<ConsumerHandle>;
  connectionState(): ConnectionState;
  /**
   * Messages of `kind` waiting in the transport for a consumer (not counting those a
   * consumer holds). Lets the republisher tell a backlog from a lost message.
   */
  waiting(kind: string): Promise<number>;
  close(): Promise<void>;
}
