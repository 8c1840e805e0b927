/**
 * How much a stream keeps for a consumer that falls behind. A subscription's consumer
 * pulls its next event only once the last one has left for the socket (graphql-ws
 * awaits each send), so every event its client has not taken waits here: without end
 * for a client that reads more slowly than its events come (it answers graphql-ws's
 * keep-alive pings, so nothing else drops it), and until the keep-alive drops it for
 * one that stopped reading.
 */
export interface BacklogLimit<T> {
  /**
   * Values waiting beyond which the backlog is conflated: only the newest value of each
   * key stays (each event is a whole snapshot of its job, so the newest says all).
   */
  maxPending: number;
  keyOf: (value: T) => string;
  /**
   * Called once when more than half of `maxPending` keys still wait after conflating:
   * the consumer is that far behind on that many jobs. The stream has ended by then
   * and keeps nothing more.
   */
  onOverflow: () => void;
}

/**
 * A minimal push-to-pull async iterator: producers `push` values, the consumer
 * (graphql-js's subscription loop) pulls them. Cheap per instance (no buffer until
 * needed), finishes after `end()`, and calls `onReturn` exactly once when the
 * consumer stops or the stream ends. With a `BacklogLimit`, what waits for a slow
 * consumer is bounded.
 */
export class EventStream<T> implements AsyncIterableIterator<T> {
  private buffer: T[] | null = null;
  private waiting: ((result: IteratorResult<T>) => void) | null = null;
  private ended = false;
  private finished = false;

  constructor(
    private onReturn: (() => void) | null,
    private readonly limit: BacklogLimit<T> | null = null,
  ) {}

  push(value: T): void {
    if (this.ended) return;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = null;
      waiting({ value, done: false });
      return;
    }
    const buffer = (this.buffer ??= []);
    buffer.push(value);
    if (this.limit && buffer.length > this.limit.maxPending) this.conflate(this.limit);
  }

  /** No more values after those already pushed. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.release();
    if (this.waiting && !this.buffer?.length) {
      const waiting = this.waiting;
      this.waiting = null;
      this.finished = true;
      waiting({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.buffer && this.buffer.length > 0) {
      const value = this.buffer.shift()!;
      if (this.buffer.length === 0) this.buffer = null;
      return Promise.resolve({ value, done: false });
    }
    if (this.ended || this.finished) {
      this.finished = true;
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.ended = true;
    this.finished = true;
    this.buffer = null;
    this.release();
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<T>> {
    void this.return();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * Keeps the newest value of each key, in the order of those values. Conflating leaves
   * at most half of `maxPending`, or the stream overflows: so it runs at most once per
   * `maxPending / 2` pushes, not on every push of a consumer that stays behind.
   */
  private conflate(limit: BacklogLimit<T>): void {
    const newest = new Map<string, T>();
    for (const value of this.buffer!) {
      const key = limit.keyOf(value);
      newest.delete(key); // re-inserted last: the map's order is that of the newest values
      newest.set(key, value);
    }
    if (newest.size <= limit.maxPending / 2) {
      this.buffer = [...newest.values()];
      return;
    }
    void this.return();
    limit.onOverflow();
  }

  private release(): void {
    const onReturn = this.onReturn;
    this.onReturn = null;
    onReturn?.();
  }
}
