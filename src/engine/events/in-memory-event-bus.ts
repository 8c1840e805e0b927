import type { JobEvent } from '../types';
import type { ConnectionState } from '../transport/transport';
import { notifyConnected, type ConnectedListener, type EventBus, type JobEventListener } from './event-bus';

/** Delivers each event to this process's listeners, asynchronously so a slow listener never delays the writer. */
export class InMemoryEventBus implements EventBus {
  readonly name = 'in-memory' as const;
  private readonly listeners = new Set<JobEventListener>();
  private readonly connectedListeners = new Set<ConnectedListener>();

  /** Connected from here on, and for good: the one `onConnected` call it makes. */
  async start(): Promise<void> {
    if (!this.closed) notifyConnected(this.connectedListeners);
  }

  publish(event: JobEvent): void {
    if (this.listeners.size === 0) return;
    queueMicrotask(() => this.deliver(event));
  }

  /** Hands an event to local listeners; the RabbitMQ bus calls it for events from the broker. */
  deliver(event: JobEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // One listener's fault must not starve the others.
      }
    }
  }

  subscribe(listener: JobEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onConnected(listener: ConnectedListener): () => void {
    this.connectedListeners.add(listener);
    return () => this.connectedListeners.delete(listener);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  private closed = false;

  connectionState(): ConnectionState {
    return this.closed ? 'closed' : 'connected';
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.connectedListeners.clear();
  }
}

