/**
 * A minimal push-to-pull async iterator: producers `push` values, the consumer
 * (graphql-js's subscription loop) pulls them. Cheap per instance (no buffer until
 * needed), finishes after `end()`, and calls `onReturn` exactly once when the
 * consumer stops or the stream ends.
 */
export class EventStream<T> implements AsyncIterableIterator<T> {
  private buffer: T[] | null = null;
  private waiting: ((result: IteratorResult<T>) => void) | null = null;
  private ended = false;
  private finished = false;

  constructor(private onReturn: (() => void) | null) {}

  push(value: T): void {
    if (this.ended) return;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = null;
      waiting({ value, done: false });
    } else (this.buffer ??= []).push(value);
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

  private release(): void {
    const onReturn = this.onReturn;
    this.onReturn = null;
    onReturn?.();
  }
}
