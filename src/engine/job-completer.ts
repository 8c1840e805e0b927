import { Batcher, BATCHES_IN_FLIGHT, statementPerBatch } from './db/batcher';
import { repeatWhileTransient } from './db/repeat-transient';
import type { Sql } from './db/sql';
import { isTransientDbError } from './db/transient-error';
import { completeJob, completeJobs, type CompleteArgs } from './queries/complete-job';
import { getJob } from './queries/get-job';
import type { JobRow } from './queries/job-row';
import { JobStatus, type JobId } from './types';

/** A completion, with what a repeat needs to recognise its own earlier commit. */
export type Completion = CompleteArgs & { jobId: JobId; attempt: number };

/**
 * Commits SUCCEEDED for jobs whose processor returned a plain value. Completions that
 * meet in time share one statement (a Batcher); a result the database refuses fails
 * only its own job. While commits keep up, the runner settles a delivery as soon as its
 * processor returns and leaves the commit here (`commit`, kept by `track`), so a
 * consumer slot never waits for a commit; `pending` bounds how many may wait so.
 */
export class JobCompleter {
  private readonly batch: Batcher<CompleteArgs, JobRow>;
  private readonly pending = new Set<Promise<unknown>>();
  /** Set when shutdown stops waiting: pending commits stop repeating. */
  private givingUp = false;

  constructor(
    private readonly sql: Sql,
    /** How many commits may wait after their settle; one per consumer slot. */
    private readonly maxPending: () => number,
  ) {
    // One result the database refuses (or that cannot be serialised) must not fail the
    // jobs that shared its statement: those are completed one by one.
    this.batch = new Batcher<CompleteArgs, JobRow>(
      statementPerBatch({
        many: (requests) => completeJobs(sql, requests),
        one: (request) => completeJob(sql, request),
        rowKey: (row) => row.completed_outbox_id,
        requestKey: (request) => request.outboxId,
      }),
      64,
      BATCHES_IN_FLIGHT,
    );
  }

  /** Commits waiting after their settle now. */
  pendingCount(): number {
    return this.pending.size;
  }

  /** Whether one more commit may wait after its settle. */
  hasRoom(): boolean {
    return this.pending.size < this.maxPending();
  }

  /** Keeps `work` (a commit after settle, with its follow-up) until it ends. */
  track(work: Promise<unknown>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  /**
   * Completes a job, repeating through a database outage for as long as this process
   * runs (always safe: once the lease is rescued or taken, the write matches no row) —
   * a live worker never gives up a success; the runner keeps the job's lease meanwhile.
   * Returns the SUCCEEDED row, or undefined when the lease was lost; throws what is not
   * transient, and the last failure once shutdown stops waiting (`gaveUp`).
   */
  async commit(args: Completion): Promise<JobRow | undefined> {
    return repeatWhileTransient(async (repeated) => {
      const row = await this.batch.submit(args);
      // A repeat that matches no row may follow a commit whose reply was lost: then
      // the job is SUCCEEDED by this attempt, and its event is still owed. (SUCCEEDED
      // by a later attempt means the lease was lost and another worker finished it.)
      if (!row && repeated) return succeededBy(await getJob(this.sql, args.jobId), args.attempt);
      return row;
    }, () => this.givingUp);
  }

  /** Shutdown: commits that fail transiently from now on are not repeated. */
  stopRepeating(): void {
    this.givingUp = true;
  }

  /** Whether shutdown stopped waiting for pending commits (they then fail with their last error). */
  get gaveUp(): boolean {
    return this.givingUp;
  }

  /** Waits for pending commits up to `timeoutMs`; returns how many were left behind. */
  async drain(timeoutMs: number): Promise<number> {
    if (this.pending.size === 0) return 0;
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      Promise.all([...this.pending]).then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs)))),
    ]);
    clearTimeout(timer);
    if (inTime) return 0;
    this.givingUp = true;
    return this.pending.size;
  }
}

/** The job's row if this attempt made it SUCCEEDED (its commit landed though the reply was lost). */
export const succeededBy = (row: JobRow | undefined, attempt: number) =>
  row?.status === JobStatus.SUCCEEDED && row.attempts === attempt ? row : undefined;
