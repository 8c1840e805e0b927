import type { Logger } from 'pino';
import type { Sql } from './db/sql';
import type { EventBus } from './events/event-bus';
import { touchJob } from './queries/touch-job';
import { toSnapshot } from './queries/job-row';
import type { ProgressReporter } from './registry';
import { asJobText, eventOf, JobEventReason, type JobSnapshot, type JobText } from './types';

/** Progress that changes between heartbeats is written at most this often. */
export const PROGRESS_FLUSH_INTERVAL_MS = 1_000;
/** The heartbeat never runs more often than this, whatever the lease (the seed's max(5 s, lease/3)). */
export const MIN_HEARTBEAT_MS = 5_000;
/**
 * The shortest lease a worker keeps safely: three heartbeats, as every longer lease has
 * (lease/3). A shorter one meets the heartbeat's floor: a 5 s lease is renewed only
 * after it has run out, when the rescuer or a waiting broker copy may take the job
 * from its live worker.
 */
export const MIN_LEASE_SECONDS = (3 * MIN_HEARTBEAT_MS) / 1_000;

export const heartbeatIntervalMs = (leaseSeconds: number): number => Math.max(MIN_HEARTBEAT_MS, (leaseSeconds * 1_000) / 3);

interface Pending {
  step: JobText | null;
  progress: number | null;
  message: JobText | null;
  reason: JobEventReason | null;
}

/**
 * Keeps one running job's lease alive and its visible state current. Every write is
 * the heartbeat statement (lease + step + progress, fenced by the token) followed by a
 * full-snapshot event on the bus. Steps are written at once, progress at most once a
 * second, and a heartbeat at least every `heartbeatIntervalMs`. Writes never overlap.
 */
export class JobHeartbeat implements ProgressReporter {
  private pending: Pending = { step: null, progress: null, message: null, reason: null };
  private inFlight: Promise<void> | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly heartbeatTimer: NodeJS.Timeout;
  private lastWriteAt = Date.now();
  private stopped = false;
  /** Latest snapshot written by this heartbeat. */
  latest: JobSnapshot;

  constructor(
    private readonly deps: {
      sql: Sql;
      bus: EventBus;
      logger: Logger;
      outboxId: string;
      token: string;
      leaseSeconds: number;
      onLeaseLost: () => void;
      onCancelRequested: () => void;
    },
    initial: JobSnapshot,
  ) {
    this.latest = initial;
    this.heartbeatTimer = setInterval(() => this.schedule(0, JobEventReason.HEARTBEAT), heartbeatIntervalMs(deps.leaseSeconds));
    this.heartbeatTimer.unref();
  }

  step(name: string | JobText, message?: string | JobText): void {
    this.pending.step = asJobText(name);
    this.pending.message = message === undefined ? null : asJobText(message);
    this.schedule(0, JobEventReason.STEP);
  }

  report(fraction: number, message?: string | JobText): void {
    if (!Number.isFinite(fraction)) return;
    this.pending.progress = Math.min(1, Math.max(0, fraction));
    if (message !== undefined) this.pending.message = asJobText(message);
    const wait = Math.max(0, this.lastWriteAt + PROGRESS_FLUSH_INTERVAL_MS - Date.now());
    this.schedule(wait, JobEventReason.PROGRESS);
  }

  /**
   * Stops the timers and waits for a write in progress. Returns the step not yet
   * written, so the final write (complete) can carry it instead of a write of its own.
   */
  async stop(): Promise<{ step: JobText | null }> {
    this.stopped = true;
    clearInterval(this.heartbeatTimer);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.inFlight;
    return { step: this.pending.step };
  }

  private schedule(delayMs: number, reason: JobEventReason): void {
    if (this.stopped) return;
    // A step outranks progress, which outranks a bare heartbeat, in the event's reason.
    const rank = (r: JobEventReason | null) => (r === JobEventReason.STEP ? 3 : r === JobEventReason.PROGRESS ? 2 : r ? 1 : 0);
    if (rank(reason) > rank(this.pending.reason)) this.pending.reason = reason;
    if (this.flushTimer) {
      if (delayMs > 0) return;
      clearTimeout(this.flushTimer);
    }
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      void this.flush();
    }, delayMs);
  }

  private async flush(): Promise<void> {
    if (this.inFlight) {
      await this.inFlight;
      if (this.stopped) return;
    }
    if (this.pending.reason === null) return;
    const pending = this.pending;
    this.pending = { step: null, progress: null, message: null, reason: null };
    this.inFlight = this.write(pending);
    try {
      await this.inFlight;
    } finally {
      this.inFlight = null;
    }
  }

  private async write(pending: Pending): Promise<void> {
    this.lastWriteAt = Date.now();
    try {
      const row = await touchJob(this.deps.sql, {
        outboxId: this.deps.outboxId,
        token: this.deps.token,
        leaseSeconds: this.deps.leaseSeconds,
        currentStep: pending.step,
        progress: pending.progress,
        message: pending.message,
      });
      if (this.stopped) return;
      if (!row) {
        this.deps.onLeaseLost();
        return;
      }
      this.latest = toSnapshot(row);
      this.deps.bus.publish(eventOf(this.latest, pending.reason ?? JobEventReason.HEARTBEAT));
      if (this.latest.cancelRequested) this.deps.onCancelRequested();
    } catch (error) {
      // A failed heartbeat (database briefly away) is retried by the next one; the
      // lease is long enough to survive a few.
      this.deps.logger.warn({ err: error, outboxId: this.deps.outboxId }, 'heartbeat write failed');
    }
  }
}
