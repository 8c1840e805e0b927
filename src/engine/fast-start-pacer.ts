/**
 * When a worker stops listening for job-ready notifications (see FastStartListener).
 * Fast start saves about a millisecond per start, and pays for it with work every
 * listening worker does for every job enqueued anywhere: the notification woken for and
 * read and, when several workers of a kind listen, claims that lose and broker copies
 * that reach a worker which did not run their job. Under a stream of short jobs that
 * work costs more throughput than the millisecond is worth. So a worker that hears more
 * than `maxPerSecond` jobs in one second (every worker hears the whole service's
 * enqueues) stops listening for a pause; its jobs start from their deliveries, as with
 * fast start off. Then it listens again and counts anew. Pure, so the rule is tested on
 * its own.
 */

/** Jobs heard in one second above which a worker pauses fast start (JOB_FAST_START_MAX_RATE). */
export const FAST_START_MAX_RATE_DEFAULT = 200;

/** How long a paused worker does not listen: long beside the second it listens to decide. */
export const FAST_START_PAUSE_MS = 10_000;

const WINDOW_MS = 1_000;

export class FastStartPacer {
  private windowStartMs = Number.NEGATIVE_INFINITY;
  private heard = 0;

  /** `maxPerSecond` 0: never pause. */
  constructor(private readonly maxPerSecond: number) {}

  /** Notes one job heard at `nowMs`; true when the worker should stop listening for a while. */
  heardJob(nowMs: number): boolean {
    if (this.maxPerSecond <= 0) return false;
    if (nowMs - this.windowStartMs >= WINDOW_MS) {
      this.windowStartMs = nowMs;
      this.heard = 0;
    }
    this.heard++;
    if (this.heard <= this.maxPerSecond) return false;
    // Counting starts afresh when listening resumes.
    this.windowStartMs = Number.NEGATIVE_INFINITY;
    this.heard = 0;
    return true;
  }
}
