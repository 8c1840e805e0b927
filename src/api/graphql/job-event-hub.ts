import { isTerminal, type JobEvent, type JobStatus } from '../../engine/types';

export type HubListener = (event: JobEvent) => void;

/**
 * How many jobs' newest sequences the hub remembers for its every-job listeners
 * (dashboards) while any listen, to drop a repeated or stale event of those jobs. A
 * repeat comes within seconds of the original (a re-read racing the event, a reconnect
 * flush), long before 50,000 other jobs have changed; the memory is a few MB.
 */
export const RECENT_JOBS_LIMIT = 50_000;

/**
 * Where a listener stands in one job's events: the newest event it was given — its
 * sequence and status, and when its row was written (`job.updatedAt`, from the
 * database's one clock).
 */
export interface EventMark {
  sequence: number;
  status: JobStatus;
  writtenAt: number;
}

/**
 * Orders a job's events. `isAhead` says whether an event is new to a listener standing
 * at `last` (null before its first event); `eventRank` packs a sequence and whether its
 * status is terminal into one number, to sort events held back in that order.
 *
 * An event is ahead when its sequence is higher, or when it is the job's end, the
 * listener has not seen an end, and the end was written after the listener's newest
 * event. Why the end may come at a passed sequence: claims, heartbeats and steps commit
 * without waiting for fsync, so a database crash can lose several of them whose events
 * already went out; the job's next writes then take those sequences again, and its end
 * may come at a sequence the listener has already passed — written later than the lost
 * writes, it must not be dropped as stale. (Terminal writes wait for fsync, so a job's
 * end is never lost.) Why the time: an end repeated or re-read after the job was
 * retried (RETRIED starts above the end's sequence) was written before the retry, and
 * is stale — handing it on would show a queued job as failed, and end its stream.
 */
export const eventRank = (sequence: number, status: JobStatus): number => sequence * 2 + (isTerminal(status) ? 1 : 0);

export function isAhead(last: EventMark | null, event: JobEvent): boolean {
  if (last === null) return true;
  if (event.sequence > last.sequence) return true;
  return isTerminal(event.status) && !isTerminal(last.status) && event.job.updatedAt.getTime() > last.writtenAt;
}

/** Moves `mark` to `event` (in place: one per job, not one per event); a new mark when there is none. */
export function markAt(mark: EventMark | null | undefined, event: JobEvent): EventMark {
  const writtenAt = event.job.updatedAt.getTime();
  if (!mark) return { sequence: event.sequence, status: event.status, writtenAt };
  mark.sequence = event.sequence;
  mark.status = event.status;
  mark.writtenAt = writtenAt;
  return mark;
}

/** A job some listener of this process watches, and the newest state its listeners were given. */
export interface WatchedJob {
  jobId: string;
  /** The newest sequence handed to the job's listeners; -1 before the first. */
  sequence: number;
  /** Its status then; null before the first. */
  status: JobStatus | null;
}

/** One listener of one job. */
export interface JobWatch {
  /** Stops listening. */
  stop(): void;
  /**
   * The listener read `event` itself (its first snapshot, from the database). Raises
   * the job's sequence to it, and hands it to the job's other listeners when it is newer
   * than what they have: they must not lose it when its own event then arrives and is
   * dropped as a repeat.
   */
  seen(event: JobEvent): void;
}

interface JobEntry {
  /** One listener (the common case) is kept without a Set. */
  listeners: HubListener | Set<HubListener>;
  /** Where the job's listeners stand; null before the first event. */
  mark: EventMark | null;
}

/**
 * Fans the engine's one event stream out to this process's subscribers: per-job
 * listener sets looked up by job id (a subscription to one job costs O(1) per event,
 * not a filter over every event), plus a set of listeners for every job (dashboards).
 *
 * Each listener gets a job's events in rising sequence, each sequence once: an event
 * not newer (by eventRank) than what the job's listeners (or, for every-job listeners,
 * the recent window) already had is dropped — a repeat from the broker, a re-read that
 * raced the event, an event overtaken by a newer one. Every event is a whole snapshot,
 * so the newest is all a listener needs.
 *
 * A watched job whose sequence jumps (event > last + 1) lost an event on the way;
 * `onSequenceGap` hears of it, so the job can be read again (see JobResync).
 */
export class JobEventHub {
  private readonly byJob = new Map<string, JobEntry>();
  private readonly everyJob = new Set<HubListener>();
  /** jobId → where the every-job listeners stand in that job's events; kept only while there are any. */
  private readonly recent = new Map<string, EventMark>();
  private readonly unsubscribe: () => void;
  private gapListener: ((jobId: string) => void) | null = null;
  private jobListenerCount = 0;
  private dropped = 0;

  constructor(source: { subscribe(listener: (event: JobEvent) => void): () => void }) {
    this.unsubscribe = source.subscribe((event) => this.dispatch(event));
  }

  /** An event from the bus. */
  dispatch(event: JobEvent): void {
    this.route(event, true);
  }

  /** A job's state read again from the database: delivered like an event, if newer. */
  offer(event: JobEvent): void {
    this.route(event, false);
  }

  /** Listen to one job's events. */
  watchJob(jobId: string, listener: HubListener): JobWatch {
    let entry = this.byJob.get(jobId);
    if (entry === undefined) {
      entry = { listeners: listener, mark: null };
      this.byJob.set(jobId, entry);
    } else if (typeof entry.listeners === 'function') entry.listeners = new Set([entry.listeners, listener]);
    else entry.listeners.add(listener);
    this.jobListenerCount++;
    const watched = entry;
    let active = true;
    return {
      stop: () => {
        if (!active) return;
        active = false;
        this.jobListenerCount--;
        if (watched.listeners === listener) {
          if (this.byJob.get(jobId) === watched) this.byJob.delete(jobId);
        } else if (typeof watched.listeners !== 'function') {
          watched.listeners.delete(listener);
          if (watched.listeners.size === 1) watched.listeners = watched.listeners.values().next().value!;
        }
      },
      seen: (event) => {
        if (active) this.toJobListeners(watched, event, false, listener);
      },
    };
  }

  /** Listen to every job's events. */
  watchAll(listener: HubListener): () => void {
    this.everyJob.add(listener);
    return () => {
      this.everyJob.delete(listener);
      if (this.everyJob.size === 0) this.recent.clear();
    };
  }

  /** Hears of each watched job whose sequence jumped (one listener). */
  onSequenceGap(listener: (jobId: string) => void): void {
    this.gapListener = listener;
  }

  /** The jobs watched now and what their listeners have. */
  *watchedJobs(): Generator<WatchedJob> {
    for (const [jobId, entry] of this.byJob) yield watched(jobId, entry);
  }

  /** One watched job and what its listeners have; undefined when nobody watches it. */
  watchedJob(jobId: string): WatchedJob | undefined {
    const entry = this.byJob.get(jobId);
    return entry && watched(jobId, entry);
  }

  /** `dropped`: events not given to an audience (the job's watchers, the every-job listeners) that already had them. */
  get stats(): { jobs: number; jobListeners: number; allListeners: number; dropped: number } {
    return { jobs: this.byJob.size, jobListeners: this.jobListenerCount, allListeners: this.everyJob.size, dropped: this.dropped };
  }

  close(): void {
    this.unsubscribe();
    this.byJob.clear();
    this.everyJob.clear();
    this.recent.clear();
    this.gapListener = null;
  }

  private route(event: JobEvent, fromBus: boolean): void {
    const entry = this.byJob.get(event.jobId);
    if (entry !== undefined && !this.toJobListeners(entry, event, fromBus)) this.dropped++;
    if (this.everyJob.size > 0 && this.isNewForEveryJob(event)) {
      for (const listener of this.everyJob) safely(listener, event);
    }
  }

  /** False when the job's listeners already have this sequence or a newer one. */
  private toJobListeners(entry: JobEntry, event: JobEvent, detectGap: boolean, except?: HubListener): boolean {
    if (!isAhead(entry.mark, event)) return false;
    const gap = detectGap && entry.mark !== null && event.sequence > entry.mark.sequence + 1 && !isTerminal(event.status);
    entry.mark = markAt(entry.mark, event);
    const listeners = entry.listeners;
    if (typeof listeners === 'function') {
      if (listeners !== except) safely(listeners, event);
    } else for (const listener of listeners) if (listener !== except) safely(listener, event);
    if (gap) this.gapListener?.(event.jobId);
    return true;
  }

  private isNewForEveryJob(event: JobEvent): boolean {
    const last = this.recent.get(event.jobId);
    if (last !== undefined) {
      if (!isAhead(last, event)) {
        this.dropped++;
        return false;
      }
      this.recent.delete(event.jobId); // re-inserted last: the map's order is recency
    } else if (this.recent.size >= RECENT_JOBS_LIMIT) {
      this.recent.delete(this.recent.keys().next().value!);
    }
    this.recent.set(event.jobId, markAt(last, event));
    return true;
  }
}

const watched = (jobId: string, entry: JobEntry): WatchedJob => ({ jobId, sequence: entry.mark?.sequence ?? -1, status: entry.mark?.status ?? null });

function safely(listener: HubListener, event: JobEvent): void {
  try {
    listener(event);
  } catch {
    // One subscriber's fault must not starve the others.
  }
}
