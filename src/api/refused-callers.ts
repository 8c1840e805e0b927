/** Callers remembered at once; past it the longest-standing is forgotten first. */
export const MAX_REMEMBERED_CALLERS = 100_000;
/** Operations waiting at the back at once; past it the next is refused outright (`schedule` → false). */
export const MAX_WAITING_OPERATIONS = 10_000;

/** A caller as the limits know it: the subject of a verified token, or a client address. */
export type CallerKey = `subject:${string}` | `address:${string}`;
export const subjectCaller = (subject: string): CallerKey => `subject:${subject}`;
export const addressCaller = (address: string): CallerKey => `address:${address}`;

/**
 * Callers whose operations were refused within the last `seconds` wait behind everyone
 * else. One API process answers everybody on one event loop: a burst of hostile
 * operations arriving together (each a body parse, a document check, an answer) is work
 * every request that arrives with it waits for. A caller the limits have refused lately
 * — a document the checks refuse, a bad token, an allowance spent — gets its next
 * operations' work done one per turn of the event loop, after whatever I/O that turn
 * brought in (`setImmediate` runs after the poll phase), so a caller in good standing
 * waits for at most one of them at a time, not for the whole burst. The refused caller
 * is still answered, in the same order, only later; a caller with an occasional bad
 * query pays a few turns of the loop, once.
 *
 * A key is a subject for a verified token and an address otherwise, as the rate limits
 * key them: nobody can push another person's subject to the back. In this process's
 * memory, bounded (MAX_REMEMBERED_CALLERS, MAX_WAITING_OPERATIONS). `seconds` 0 turns it off.
 */
export class RefusedCallers {
  /** Caller → when it was last refused (ms); in the order of those times, oldest first. */
  private readonly refusedAt = new Map<CallerKey, number>();
  private readonly waiting: Array<() => void> = [];
  private draining = false;

  constructor(
    /** How long a caller stays at the back after its last refused operation (`REFUSED_CALLER_SECONDS`). */
    readonly seconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** An operation of `key` was refused: its next ones wait behind everyone else's. */
  refused(key: CallerKey): void {
    if (this.seconds <= 0) return;
    this.refusedAt.delete(key); // re-inserted last: the map stays in time order
    this.refusedAt.set(key, this.now());
    this.forgetOld();
  }

  /** Was an operation of `key` refused within the last `seconds`? */
  isBehind(key: CallerKey): boolean {
    const at = this.refusedAt.get(key);
    if (at === undefined) return false;
    if (this.now() - at < this.seconds * 1000) return true;
    this.refusedAt.delete(key);
    return false;
  }

  /**
   * Calls `run` now for a caller in good standing; for one refused lately, in its turn at
   * the back (one per turn of the event loop). False, without calling it, when the back
   * holds MAX_WAITING_OPERATIONS already: the caller is to be refused.
   */
  schedule(key: CallerKey, run: () => void): boolean {
    if (!this.isBehind(key)) {
      run();
      return true;
    }
    if (this.waiting.length >= MAX_WAITING_OPERATIONS) return false;
    this.waiting.push(run);
    if (!this.draining) {
      this.draining = true;
      setImmediate(this.drainOne);
    }
    return true;
  }

  /** `schedule` as a promise: resolves true in the caller's turn, false at once when the back is full. */
  turn(key: CallerKey): Promise<boolean> {
    return new Promise((resolve) => {
      if (!this.schedule(key, () => resolve(true))) resolve(false);
    });
  }

  /** Operations waiting at the back now. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  private readonly drainOne = (): void => {
    const run = this.waiting.shift();
    if (this.waiting.length > 0) setImmediate(this.drainOne);
    else this.draining = false;
    run?.();
  };

  private forgetOld(): void {
    const cutoff = this.now() - this.seconds * 1000;
    for (const [key, at] of this.refusedAt) {
      if (at >= cutoff && this.refusedAt.size <= MAX_REMEMBERED_CALLERS) break;
      this.refusedAt.delete(key);
    }
  }
}
