import { reactive, ref, shallowRef } from 'vue';
import { request, subscribe, type ApiError, type Subscription } from '../../api/client';
import { FrameBatch } from '../../api/frame-batch';
import { JobEventsDocument, JobsDocument, type JobEventsSubscription, type JobKind, type JobRowFragment, type JobsQuery, type JobStatus } from '../../api/generated/graphql';
import { bestPenalty } from '../../i18n/job-text';
import { isNewerEvent, isTerminalStatus } from '../../api/job-event-order';

export type JobEvent = JobEventsSubscription['jobEvents'];
export type JobRow = JobRowFragment & { bestPenalty: number | null };

/** How many jobs the list shows. */
export const LIST_SIZE = 50;
/** New jobs seen on the socket are read in full (requested by, created) at most this often. */
const REFETCH_MS = 1_000;

type ListedJob = JobsQuery['jobs']['edges'][number]['node'];

/** The penalty a job reports: its result's once it has one, else the solver's latest message. */
function penaltyOf(job: ListedJob): number | null {
  if ('scheduleResult' in job && job.scheduleResult) return job.scheduleResult.penalty;
  if ('arrangementResult' in job && job.arrangementResult) return job.arrangementResult.cost;
  return bestPenalty(job);
}

export interface Filters {
  kind: JobKind | '';
  status: JobStatus | '';
}

/**
 * The live list of recent jobs: the first page from `jobs`, then kept current from
 * `jobEvents`, applied once per animation frame. Each row is its own reactive object,
 * so an event re-renders that row only. An event of a job the list does not hold
 * (new, or scrolled in by a filter) adds it at once and reads the page again soon.
 */
export function useLiveJobs(filters: Filters) {
  const rows = shallowRef<JobRow[]>([]);
  const loading = ref(true);
  const error = ref<ApiError | null>(null);
  const byId = new Map<string, JobRow>();
  let subscription: Subscription | null = null;
  let refetchTimer: ReturnType<typeof setTimeout> | null = null;
  let generation = 0;

  const matches = (job: { kind: string; status: string }) =>
    (filters.kind === '' || job.kind === filters.kind) && (filters.status === '' || job.status === filters.status);

  async function load(): Promise<void> {
    const mine = ++generation;
    try {
      const data = await request(JobsDocument, {
        first: LIST_SIZE,
        kinds: filters.kind ? [filters.kind] : null,
        statuses: filters.status ? [filters.status] : null,
      });
      if (mine !== generation) return;
      const next: JobRow[] = [];
      for (const { node } of data.jobs.edges) {
        const { scheduleResult: _s, arrangementResult: _a, ...fields } = node as ListedJob & { scheduleResult?: unknown; arrangementResult?: unknown };
        const known = byId.get(node.id);
        if (!known) {
          next.push(reactive({ ...fields, bestPenalty: penaltyOf(node) }) as JobRow);
          continue;
        }
        // What events do not carry, always; the rest only when the page is not newer than
        // the events already applied. Unchanged values do not re-render the row.
        known.requestedBy = node.requestedBy;
        known.createdAt = node.createdAt;
        known.startedAt = node.startedAt;
        known.completedAt = node.completedAt;
        known.attempts = node.attempts;
        known.errorMessage = node.errorMessage;
        known.errorCode = node.errorCode;
        known.bestPenalty = penaltyOf(node) ?? known.bestPenalty;
        if (node.sequence > known.sequence) Object.assign(known, fields, { bestPenalty: known.bestPenalty });
        next.push(known);
      }
      byId.clear();
      for (const row of next) byId.set(row.id, row);
      rows.value = next;
      error.value = null;
    } catch (e) {
      if (mine === generation) error.value = e as ApiError;
    } finally {
      if (mine === generation) loading.value = false;
    }
  }

  function scheduleRefetch(): void {
    if (refetchTimer !== null) return;
    refetchTimer = setTimeout(() => {
      refetchTimer = null;
      void load();
    }, REFETCH_MS);
  }

  /** One frame's events: each job's newest wins; rows update in place, new jobs go on top. */
  function apply(events: JobEvent[]): void {
    let added = false;
    let changed = false;
    for (const event of events) {
      const row = byId.get(event.jobId);
      if (row) {
        if (!isNewerEvent(row, event)) continue;
        row.sequence = event.sequence;
        row.status = event.status;
        row.currentStep = event.currentStep;
        row.currentStepCode = event.currentStepCode;
        row.progress = event.progress;
        row.message = event.message;
        row.messageCode = event.messageCode;
        row.messageParams = event.messageParams;
        row.updatedAt = event.occurredAt;
        row.bestPenalty = bestPenalty(event) ?? row.bestPenalty;
        if (event.reason === 'CANCEL_REQUESTED') row.cancelRequested = true;
        // The result (its penalty) and the completion time are read with the page.
        if (isTerminalStatus(event.status)) scheduleRefetch();
        // Filtered by status, a job that moved on (started, retried) leaves the list.
        if (!matches(row)) changed = true;
        continue;
      }
      if (!matches(event)) continue;
      const fresh = reactive({
        id: event.jobId,
        kind: event.kind,
        status: event.status,
        currentStep: event.currentStep,
        currentStepCode: event.currentStepCode,
        progress: event.progress,
        message: event.message,
        messageCode: event.messageCode,
        messageParams: event.messageParams,
        requestedBy: null,
        createdAt: event.occurredAt,
        updatedAt: event.occurredAt,
        startedAt: null,
        completedAt: null,
        sequence: event.sequence,
        attempts: 0,
        cancelRequested: false,
        errorMessage: null,
        errorCode: null,
        errorParams: null,
        bestPenalty: bestPenalty(event),
      }) as JobRow;
      byId.set(fresh.id, fresh);
      added = true;
    }
    if (added || changed) {
      const sorted = [...byId.values()]
        .filter(matches)
        .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))
        .slice(0, LIST_SIZE);
      byId.clear();
      for (const row of sorted) byId.set(row.id, row);
      rows.value = sorted;
      scheduleRefetch();
    }
  }

  const batch = new FrameBatch<JobEvent>(apply);

  function start(): void {
    stop();
    loading.value = rows.value.length === 0;
    subscription = subscribe(JobEventsDocument, { kinds: filters.kind ? [filters.kind] : null }, {
      next: (data) => {
        batch.push(data.jobEvents);
      },
      error: (e) => {
        error.value = e;
      },
    });
    void load();
  }

  function stop(): void {
    subscription?.stop();
    subscription = null;
    batch.stop();
    if (refetchTimer !== null) clearTimeout(refetchTimer);
    refetchTimer = null;
  }

  return { rows, loading, error, start, stop, reload: load };
}
