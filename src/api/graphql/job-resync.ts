import type { Logger } from 'pino';
import type { WatchedSequence } from '../../engine/engine';
import { isTerminal, type JobSnapshot } from '../../engine/types';
import type { JobEventHub, WatchedJob } from './job-event-hub';
import { snapshotEvent } from './job-streams';

/** How often the sweep compares the watched jobs with the database. */
export const DEFAULT_RESYNC_INTERVAL_MS = 3_000;
/** Most job ids one re-read sends to the database. */
export const DEFAULT_RESYNC_BATCH_SIZE = 1_000;
/**
 * The sweep leaves alone a change younger than this: its event is normally still on its
 * way (milliseconds; more under load), and the watcher had better get the event itself.
 */
export const SWEEP_SETTLED_MS = 1_000;
/** Gaps seen within this long are read in one query. */
const GAP_COALESCE_MS = 50;
/** A re-read that failed (database away) is tried again after this long. */
const RETRY_AFTER_MS = 1_000;

export interface JobResyncSettings {
  intervalMs: number;
  batchSize: number;
}

/** What the re-reads need of the engine. */
export interface JobResyncSource {
  onEventsConnected(listener: () => void): () => void;
  getJobsAhead(watched: readonly WatchedSequence[], settledForMs?: number): Promise<JobSnapshot[]>;
}

/** Why the watched jobs were read again. */
export enum ResyncCause {
  /** The event bus (re)connected: everything published while it was away is lost here. */
  RECONNECT = 'reconnect',
  /** A watched job's sequence jumped: an event was lost on the way. */
  GAP = 'gap',
  /** The periodic safety net: an event lost anywhere (a crash between commit and emit). */
  SWEEP = 'sweep',
}

/**
 * Makes good the job events this process lost, for the jobs its subscriptions watch.
 * Events are best effort (a process whose bus is away misses what others publish; a
 * process that dies between a commit and its event never sends it), and every event is
 * a whole snapshot, so a lost one is made good by reading the job again and handing
 * the row to the hub when it is newer than what the job's watchers have
 * (`JobEventHub.offer`, a SNAPSHOT event; the hub drops anything not newer).
 *
 * Three triggers, one query at a time per process, each query at most `batchSize` ids
 * (`getJobsAhead`: one statement, only the rows that are ahead come back):
 * - every (re)connect of the event bus: all watched jobs, in batches;
 * - a sequence gap on a watched job: that job, batched with other gaps of the moment;
 * - every `intervalMs`, the sweep: one query over the watched jobs not yet terminal
 *   (more than `batchSize` of them: the next `batchSize` in turn), skipping changes
 *   younger than SWEEP_SETTLED_MS — the bound on how long any lost event stays lost.
 */
export class JobResync {
  private readonly settings: JobResyncSettings;
  /** Jobs still to read for a reconnect (the pass runs in batches). */
  private reconnectQueue: string[] = [];
  private reconnectRequested = false;
  private readonly gaps = new Set<string>();
  private sweepDue = false;
  private sweepCursor = 0;
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private stopListening: (() => void) | null = null;
  private closed = false;
  /** Whether the last query failed: an outage is logged once as a warning, not every try. */
  private failing = false;

  constructor(
    private readonly deps: { engine: JobResyncSource; hub: JobEventHub; logger: Logger },
    settings: Partial<JobResyncSettings> = {},
  ) {
    this.settings = {
      intervalMs: settings.intervalMs ?? DEFAULT_RESYNC_INTERVAL_MS,
      batchSize: settings.batchSize ?? DEFAULT_RESYNC_BATCH_SIZE,
    };
    if (!(this.settings.intervalMs >= 1) || !Number.isInteger(this.settings.batchSize) || this.settings.batchSize < 1) {
      throw new RangeError(`JobResync needs intervalMs ≥ 1 and an integer batchSize ≥ 1 (got ${JSON.stringify(this.settings)})`);
    }
  }

  start(): void {
    if (this.closed || this.sweepTimer) return;
    this.stopListening = this.deps.engine.onEventsConnected(() => this.requestAll());
    this.deps.hub.onSequenceGap((jobId) => this.requestJob(jobId));
    this.sweepTimer = setInterval(() => {
      this.sweepDue = true;
      this.schedule(0);
    }, this.settings.intervalMs);
    this.sweepTimer.unref();
  }

  /** Read every watched job again (the bus reconnected). */
  requestAll(): void {
    this.reconnectRequested = true;
    this.schedule(0);
  }

  /** Read one watched job again (its sequence jumped). */
  requestJob(jobId: string): void {
    this.gaps.add(jobId);
    this.schedule(GAP_COALESCE_MS);
  }

  /**
   * Does what is due now — a reconnect pass, the gaps, a sweep — one query at a time,
   * and resolves with how many snapshots it handed to the hub. A failed query rejects;
   * a reconnect pass or gaps stay due (tried again after RETRY_AFTER_MS), a sweep waits
   * for its next interval.
   */
  async runOnce(): Promise<number> {
    let delivered = 0;
    while (!this.closed) {
      if (this.reconnectRequested) {
        this.reconnectRequested = false;
        this.reconnectQueue = [...this.deps.hub.watchedJobs()].map((w) => w.jobId);
      }
      if (this.reconnectQueue.length > 0) {
        const batch = this.reconnectQueue.slice(0, this.settings.batchSize);
        delivered += await this.read(this.current(batch), 0, ResyncCause.RECONNECT);
        this.reconnectQueue = this.reconnectQueue.slice(batch.length);
        continue;
      }
      if (this.gaps.size > 0) {
        const batch = [...this.gaps].slice(0, this.settings.batchSize);
        delivered += await this.read(this.current(batch), 0, ResyncCause.GAP);
        for (const jobId of batch) this.gaps.delete(jobId);
        continue;
      }
      if (this.sweepDue) {
        // A failed sweep is not repeated before its next interval.
        this.sweepDue = false;
        delivered += await this.read(this.nextSweepBatch(), SWEEP_SETTLED_MS, ResyncCause.SWEEP);
        continue;
      }
      break;
    }
    return delivered;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopListening?.();
    this.stopListening = null;
    if (this.timer) clearTimeout(this.timer);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.timer = null;
    this.sweepTimer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.closed || this.running || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      let failed = false;
      this.running = this.runOnce()
        .then(
          () => {
            if (this.failing) this.deps.logger.info('reading watched jobs again works again');
            this.failing = false;
          },
          (error: unknown) => {
            failed = true;
            if (this.failing) this.deps.logger.debug({ err: error }, 'reading watched jobs again failed');
            else this.deps.logger.warn({ err: error }, 'reading watched jobs again failed; trying again shortly');
            this.failing = true;
          },
        )
        .finally(() => {
          this.running = null;
          if (this.due()) this.schedule(failed ? RETRY_AFTER_MS : 0);
        });
    }, delayMs);
    this.timer.unref();
  }

  private due(): boolean {
    return this.reconnectRequested || this.reconnectQueue.length > 0 || this.gaps.size > 0 || this.sweepDue;
  }

  /** The ids still watched, with the sequence their listeners have now. */
  private current(jobIds: readonly string[]): WatchedSequence[] {
    const watched: WatchedSequence[] = [];
    for (const jobId of jobIds) {
      const job = this.deps.hub.watchedJob(jobId);
      if (job) watched.push(watchedSequence(job));
    }
    return watched;
  }

  /**
   * The watched jobs not yet terminal; beyond `batchSize` of them, the next ones in turn.
   * A job whose watchers have nothing yet is left out: its first read is under way.
   */
  private nextSweepBatch(): WatchedSequence[] {
    const open: WatchedJob[] = [];
    for (const job of this.deps.hub.watchedJobs()) {
      if (job.sequence >= 0 && (job.status === null || !isTerminal(job.status))) open.push(job);
    }
    const size = this.settings.batchSize;
    let batch = open;
    if (open.length > size) {
      const start = this.sweepCursor % open.length;
      batch = open.slice(start, start + size);
      if (batch.length < size) batch = batch.concat(open.slice(0, size - batch.length));
      this.sweepCursor = (start + size) % open.length;
    }
    return batch.map(watchedSequence);
  }

  private async read(watched: WatchedSequence[], settledForMs: number, cause: ResyncCause): Promise<number> {
    if (watched.length === 0) return 0;
    const jobs = await this.deps.engine.getJobsAhead(watched, settledForMs);
    if (this.closed) return 0;
    for (const job of jobs) this.deps.hub.offer(snapshotEvent(job));
    if (jobs.length > 0) {
      this.deps.logger.info({ cause, read: watched.length, ahead: jobs.length }, 'watched jobs were ahead of their events; snapshots delivered');
    }
    return jobs.length;
  }
}

const watchedSequence = (job: WatchedJob): WatchedSequence => ({
  jobId: job.jobId,
  sequence: job.sequence,
  terminal: job.status !== null && isTerminal(job.status),
});
