import type { JobMessage } from '../types';
import type { ConnectionState, ConsumerHandle, JobTransport, MessageHandler, ParkedMessage, Settlement } from './transport';

/** Parked messages kept for inspection (the count goes on beyond it). */
const PARKED_KEPT = 100;

/**
 * One FIFO queue per kind inside this process, each drained by its own number of
 * concurrent handlers. Not durable: what it holds is gone with the process, which is
 * why released messages go back to PENDING and startup recovery re-sends the rest.
 */
export class InMemoryTransport implements JobTransport {
  readonly name = 'in-memory' as const;
  readonly durable = false;
  private readonly queues = new Map<string, KindQueue>();
  private closed = false;
  private parkedCount = 0;
  /** The latest parked messages, oldest first (for a person or a test to read). */
  readonly parkedMessages: Array<ParkedMessage & { message: JobMessage }> = [];
  private readonly parkListeners = new Set<(parked: ParkedMessage) => void>();

  async start(kinds: readonly string[]): Promise<void> {
    for (const kind of kinds) this.queueOf(kind);
  }

  async publish(messages: readonly JobMessage[]): Promise<void> {
    if (this.closed) throw new Error('in-memory transport is closed');
    for (const message of messages) this.queueOf(message.kind).push(message);
  }

  async consume(kind: string, consumers: number, handler: MessageHandler): Promise<ConsumerHandle> {
    return this.queueOf(kind).attach(consumers, handler);
  }

  connectionState(): ConnectionState {
    return this.closed ? 'closed' : 'connected';
  }

  /** Nothing here can block a publish. */
  publishBlocked(): boolean {
    return false;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const queue of this.queues.values()) queue.close();
  }

  async waiting(kind: string): Promise<number> {
    return this.queues.get(kind)?.depth ?? 0;
  }

  async parked(): Promise<number> {
    return this.parkedCount;
  }

  onParked(listener: (parked: ParkedMessage) => void): () => void {
    this.parkListeners.add(listener);
    return () => this.parkListeners.delete(listener);
  }

  private park(parked: ParkedMessage, message: JobMessage): void {
    this.parkedCount++;
    this.parkedMessages.push({ ...parked, message });
    if (this.parkedMessages.length > PARKED_KEPT) this.parkedMessages.shift();
    for (const listener of this.parkListeners) listener(parked);
  }

  private queueOf(kind: string): KindQueue {
    let queue = this.queues.get(kind);
    if (!queue) {
      queue = new KindQueue(kind, (parked, message) => this.park(parked, message));
      this.queues.set(kind, queue);
    }
    return queue;
  }
}

class KindQueue {
  private readonly items: JobMessage[] = [];
  private head = 0;
  private handler: MessageHandler | undefined;
  private consumers = 0;
  private running = 0;
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly kind: string,
    private readonly park: (parked: ParkedMessage, message: JobMessage) => void,
  ) {}

  get depth(): number {
    return this.items.length - this.head;
  }

  push(message: JobMessage): void {
    this.items.push(message);
    this.pump();
  }

  attach(consumers: number, handler: MessageHandler): ConsumerHandle {
    if (this.handler) throw new Error('this kind already has a consumer in this process');
    this.handler = handler;
    this.consumers = consumers;
    this.stopped = false;
    this.pump();
    const queue = this;
    return {
      get active() {
        return queue.running;
      },
      stop: () => queue.detach(),
    };
  }

  close(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private async detach(): Promise<void> {
    this.stopped = true;
    if (this.running > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.handler = undefined;
  }

  private pump(): void {
    while (!this.stopped && this.handler && this.running < this.consumers && this.depth > 0) {
      const message = this.items[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items.splice(0, this.head);
        this.head = 0;
      }
      this.running++;
      void this.run(this.handler, message);
    }
  }

  private async run(handler: MessageHandler, message: JobMessage): Promise<void> {
    let settlement: Settlement;
    try {
      settlement = await handler(message);
    } catch {
      // A handler that throws has not settled: deliver again shortly, as a broker would.
      settlement = { type: 'retry', delayMs: 1_000 };
    }
    this.running--;
    if (settlement.type === 'retry') {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.push(message);
      }, settlement.delayMs);
      timer.unref();
      this.timers.add(timer);
    } else if (settlement.type === 'requeue') {
      this.items.splice(this.head, 0, message);
    } else if (settlement.type === 'park') {
      this.park({ kind: this.kind, reason: settlement.reason, detail: settlement.detail }, message);
    }
    if (this.running === 0 && this.stopped) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
    this.pump();
  }
}
