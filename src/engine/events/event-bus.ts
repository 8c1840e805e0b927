import type { ConnectionState } from '../transport/transport';
import type { JobEvent } from '../types';

export type JobEventListener = (event: JobEvent) => void;
export type ConnectedListener = () => void;

/**
 * Carries job events to every process that watches: in-memory within one process,
 * a RabbitMQ topic exchange across processes. Delivery is best effort by design —
 * every event is a full snapshot, so a watcher that missed one reads the job again:
 * `onConnected` tells it when events from other processes reach it again, after a
 * stretch in which some may have been lost.
 */
export interface EventBus {
  readonly name: 'rabbitmq' | 'in-memory';
  start(): Promise<void>;
  publish(event: JobEvent): void;
  /** Returns a function that unsubscribes. */
  subscribe(listener: JobEventListener): () => void;
  /**
   * Called each time this process starts receiving other processes' events: after the
   * first connect and after every reconnect (its queue is bound again). What others
   * published before that never reaches this process. Returns a function that stops
   * listening.
   */
  onConnected(listener: ConnectedListener): () => void;
  /** Whether events can leave this process now (in-memory: always while open). */
  connectionState(): ConnectionState;
  close(): Promise<void>;
}

/** Calls each `onConnected` listener; one listener's fault must not keep the others uninformed. */
export function notifyConnected(listeners: Iterable<ConnectedListener>): void {
  for (const listener of listeners) {
    try {
      listener();
    } catch {
      // the listener's own business
    }
  }
}
