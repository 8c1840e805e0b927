import type { JobEngine } from '../../engine/engine';
import { eventOf, isTerminal, JobEventReason, type JobEvent, type JobSnapshot } from '../../engine/types';
import { canSeeJob, type Viewer } from '../auth/viewer';
import type { SubscriptionBacklog } from './context';
import { notFoundError } from './errors';
import { EventStream } from './event-stream';
import { eventRank, isAhead, markAt, type EventMark, type JobEventHub } from './job-event-hub';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isJobId = (id: string): boolean => UUID.test(id);

/** The event a new subscriber gets first: the job's current state. */
export const snapshotEvent = (job: JobSnapshot): JobEvent => eventOf(job, JobEventReason.SNAPSHOT, job.updatedAt);

/**
 * One job's progress: listen first, then read the snapshot, so no event falls
 * between them; deliver the snapshot, then every event with a higher sequence (no
 * duplicate, no step back); end after a terminal status. Events lost on the way are
 * made good by the hub's re-reads (JobResync), which arrive here as SNAPSHOT events.
 */
export async function jobProgressStream(
  deps: { engine: JobEngine; hub: JobEventHub; backlog?: SubscriptionBacklog },
  requestedId: string,
  viewer: Viewer,
): Promise<AsyncIterableIterator<JobEvent>> {
  if (!isJobId(requestedId)) throw notFoundError(`No job with id ${requestedId}`);
  // PostgreSQL compares uuids whatever their case and answers in lower case, and events
  // name their job so: a watch kept under the id as written (`3F2A…`) would hear none.
  const jobId = requestedId.toLowerCase();
  let last: EventMark | null = null;
  let early: JobEvent[] | null = [];
  const deliver = (event: JobEvent) => {
    if (!isAhead(last, event)) return;
    last = markAt(last, event);
    stream.push(event);
    if (isTerminal(event.status)) stream.end();
  };
  const watch = deps.hub.watchJob(jobId, (event) => {
    if (early) early.push(event);
    else deliver(event);
  });
  const stopListening = () => watch.stop();
  // One job: a client far behind gets its newest snapshot, never more than that waits.
  const stream = new EventStream<JobEvent>(stopListening, deps.backlog ? { ...deps.backlog, keyOf: () => jobId } : null);
  let job: JobSnapshot | null;
  try {
    job = await deps.engine.getJob(jobId);
  } catch (error) {
    stopListening();
    throw error;
  }
  if (!job || !canSeeJob(viewer, job)) {
    stopListening();
    throw notFoundError(`No job with id ${jobId}`);
  }
  const snapshot = snapshotEvent(job);
  deliver(snapshot);
  const pending = early.sort((a, b) => eventRank(a.sequence, a.status) - eventRank(b.sequence, b.status));
  early = null;
  for (const event of pending) deliver(event);
  watch.seen(snapshot);
  return stream;
}

/**
 * Every visible job's events, optionally of some kinds only; never ends by itself. The
 * hub gives each job's events in rising sequence, each once.
 */
export function jobEventsStream(
  hub: JobEventHub,
  kinds: readonly string[] | null | undefined,
  viewer: Viewer,
  backlog?: SubscriptionBacklog,
): AsyncIterableIterator<JobEvent> {
  const kindSet = kinds && kinds.length > 0 ? new Set(kinds) : null;
  const stopWatching = hub.watchAll((event) => {
    if (kindSet && !kindSet.has(event.kind)) return;
    if (!canSeeJob(viewer, event.job)) return;
    stream.push(event);
  });
  // Many jobs: a client far behind gets the newest event of each, or is dropped when too many wait.
  const stream: EventStream<JobEvent> = new EventStream<JobEvent>(stopWatching, backlog ? { ...backlog, keyOf: (event) => event.jobId } : null);
  return stream;
}
