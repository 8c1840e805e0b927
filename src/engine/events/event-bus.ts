import type { ConnectionState } from '../transport/transport';
import type { JobEvent } from '../types';

export type JobEventListener = (event: JobEvent) => void;

/**
 * Carries job events to every process that watches: in-memory within one process,
 * a RabbitMQ topic exchange across processes. Delivery is best effort by design —
 * every event is a full snapshot, so a watcher that missed one reads the job again.
 */
export interface EventBus {
  readonly name: 'rabbitmq' | 'in-memory';
  start(): Promise<void>;
  publish(event: JobEvent): void;
  /** Returns a function that unsubscribes. */
  subscribe(listener: JobEventListener): () => void;
  /** Whether events can leave this process now (in-memory: always while open). */
  connectionState(): ConnectionState;
  close(): Promise<void>;
}
