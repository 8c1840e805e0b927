/**
 * How many processors of one kind may run at once in this process. A job claimed
 * ahead (KindDefaults.claimAhead) holds its claim and lease while it waits here for a
 * slot; one whose job is cancelled, whose lease is lost or whose process shuts down
 * stops waiting at once (`acquire` rejects with the signal's reason) and never runs.
 * Slots go to waiters in the order they came.
 */
export class RunSlots {
  private free: number;
  private readonly waiters: Array<{ grant: () => void }> = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`run slots must be a whole number ≥ 1, got ${size}`);
    this.free = size;
  }

  /** Resolves once this caller holds a slot (release it exactly once); rejects if `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next.grant();
    else if (this.free < this.size) this.free++;
    else throw new Error('a run slot was released that was not held');
  }

  /** Slots held now. */
  get held(): number {
    return this.size - this.free;
  }

  /** Claimed jobs waiting for a slot now. */
  get waiting(): number {
    return this.waiters.length;
  }
}
