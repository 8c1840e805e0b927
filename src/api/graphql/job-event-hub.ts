import type { JobEvent } from '../../engine/types';

export type HubListener = (event: JobEvent) => void;

/**
 * Fans the engine's one event stream out to this process's subscribers: per-job
 * listener sets looked up by job id (a subscription to one job costs O(1) per event,
 * not a filter over every event), plus a set of listeners for every job (dashboards).
 */
export class JobEventHub {
  private readonly byJob = new Map<string, Set<HubListener> | HubListener>();
  private readonly everyJob = new Set<HubListener>();
  private readonly unsubscribe: () => void;
  private jobListenerCount = 0;

  constructor(source: { subscribe(listener: (event: JobEvent) => void): () => void }) {
    this.unsubscribe = source.subscribe((event) => this.dispatch(event));
  }

  dispatch(event: JobEvent): void {
    const entry = this.byJob.get(event.jobId);
    if (entry !== undefined) {
      if (typeof entry === 'function') safely(entry, event);
      else for (const listener of entry) safely(listener, event);
    }
    for (const listener of this.everyJob) safely(listener, event);
  }

  /** Listen to one job's events; returns the function that stops listening. */
  watchJob(jobId: string, listener: HubListener): () => void {
    // One listener (the common case) is stored without a Set.
    const entry = this.byJob.get(jobId);
    if (entry === undefined) this.byJob.set(jobId, listener);
    else if (typeof entry === 'function') this.byJob.set(jobId, new Set([entry, listener]));
    else entry.add(listener);
    this.jobListenerCount++;
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      this.jobListenerCount--;
      const current = this.byJob.get(jobId);
      if (current === listener) this.byJob.delete(jobId);
      else if (current !== undefined && typeof current !== 'function') {
        current.delete(listener);
        if (current.size === 1) this.byJob.set(jobId, current.values().next().value!);
        else if (current.size === 0) this.byJob.delete(jobId);
      }
    };
  }

  /** Listen to every job's events. */
  watchAll(listener: HubListener): () => void {
    this.everyJob.add(listener);
    return () => void this.everyJob.delete(listener);
  }

  get stats(): { jobs: number; jobListeners: number; allListeners: number } {
    return { jobs: this.byJob.size, jobListeners: this.jobListenerCount, allListeners: this.everyJob.size };
  }

  close(): void {
    this.unsubscribe();
    this.byJob.clear();
    this.everyJob.clear();
  }
}

function safely(listener: HubListener, event: JobEvent): void {
  try {
    listener(event);
  } catch {
    // One subscriber's fault must not starve the others.
  }
}
