// The cost of making lost events good is bounded: one query at a time per process, at
// most `batchSize` ids per query, one sweep query per interval (the watched jobs taken
// in turn when there are more), and a reconnect reads every watched job in batches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRole, type Viewer } from '../../src/api/auth/viewer';
import { JobEventHub } from '../../src/api/graphql/job-event-hub';
import { JobResync, type JobResyncSource } from '../../src/api/graphql/job-resync';
import { jobProgressStream, snapshotEvent } from '../../src/api/graphql/job-streams';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { JOB_COLUMNS, toSnapshot, type JobRow } from '../../src/engine/queries/job-row';
import { eventOf, JobEventReason, JobStatus, type JobEvent, type JobSnapshot } from '../../src/engine/types';
import { JobKind } from '../../src/job-kinds';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { waitUntil } from './support/api-server';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;

beforeAll(async () => {
  ctx = await createTestDb('api_job_resync');
  // No worker: jobs stay QUEUED until a test writes their row.
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations(), roles: { worker: false, publisher: false } });
  await engine.start();
});
afterAll(async () => {
  await engine?.stop(1_000);
  await ctx?.close();
});

/** A job that SUCCEEDED in the database with no event sent (its worker died in between). */
async function succeedWithoutEvent(jobId: string): Promise<JobSnapshot> {
  const { rows } = await ctx.db.pool.query<JobRow>(
    `UPDATE jobs SET status = 'SUCCEEDED', sequence = sequence + 1, progress = 1, updated_at = now(),
            started_at = coalesce(started_at, now()), completed_at = now(), exclusive_key = NULL
      WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
    [jobId],
  );
  return toSnapshot(rows[0]!);
}

/** The engine as the resync sees it, recording the size of each query. */
function recordingSource(queries: number[]): JobResyncSource {
  return {
    onEventsConnected: (listener) => engine.onEventsConnected(listener),
    getJobsAhead: async (watched, settledForMs) => {
      queries.push(watched.length);
      return engine.getJobsAhead(watched, settledForMs);
    },
  };
}

async function watchedJobs(hub: JobEventHub, count: number) {
  const jobs: JobSnapshot[] = [];
  for (let i = 0; i < count; i++) jobs.push((await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { i }, requestedBy: 'scheduler-1' })).job);
  const received = new Map<string, JobEvent[]>(jobs.map((job) => [job.id, []]));
  for (const job of jobs) hub.watchJob(job.id, (event) => received.get(job.id)!.push(event)).seen(snapshotEvent(job));
  const lastStatus = (jobId: string) => received.get(jobId)!.at(-1)?.status;
  return { jobs, received, lastStatus };
}

describe('JobResync', () => {
  it('sweeps with one query of at most batchSize ids per interval, taking the watched jobs in turn', async () => {
    const hub = new JobEventHub(engine);
    const queries: number[] = [];
    const intervalMs = 200;
    const resync = new JobResync({ engine: recordingSource(queries), hub, logger: silentLogger }, { intervalMs, batchSize: 2 });
    try {
      const { jobs, received, lastStatus } = await watchedJobs(hub, 5);
      const started = Date.now();
      resync.start();
      const done = await Promise.all(jobs.map((job) => succeedWithoutEvent(job.id)));
      await waitUntil(() => jobs.every((job) => lastStatus(job.id) === JobStatus.SUCCEEDED), 15_000, 'every watcher to get SUCCEEDED');
      const elapsed = Date.now() - started;
      expect(queries.length).toBeGreaterThan(0);
      expect(Math.max(...queries)).toBeLessThanOrEqual(2);
      // One query per sweep at most (a loaded machine only makes sweeps fewer).
      expect(queries.length).toBeLessThanOrEqual(Math.ceil(elapsed / intervalMs) + 1);
      for (const [i, job] of jobs.entries()) {
        expect(received.get(job.id)!.map((e) => [e.sequence, e.status, e.reason])).toEqual([[done[i]!.sequence, 'SUCCEEDED', 'SNAPSHOT']]);
      }
      // Terminal jobs are swept no more: with nothing open, no query.
      const before = queries.length;
      await new Promise((resolve) => setTimeout(resolve, 3 * intervalMs));
      expect(queries.length).toBe(before);
    } finally {
      await resync.close();
      hub.close();
    }
  });

  it('after a reconnect reads every watched job at once, in batches of batchSize, one query at a time', async () => {
    const hub = new JobEventHub(engine);
    const queries: number[] = [];
    const resync = new JobResync({ engine: recordingSource(queries), hub, logger: silentLogger }, { intervalMs: 600_000, batchSize: 2 });
    try {
      const { jobs, lastStatus } = await watchedJobs(hub, 5);
      resync.start();
      for (const job of jobs) await succeedWithoutEvent(job.id);
      // What the bus's onConnected calls.
      resync.requestAll();
      await waitUntil(() => jobs.every((job) => lastStatus(job.id) === JobStatus.SUCCEEDED), 10_000, 'every watcher to get SUCCEEDED');
      expect(queries).toEqual([2, 2, 1]);
    } finally {
      await resync.close();
      hub.close();
    }
  });
});

describe('JobEventHub', () => {
  it("gives each listener a job's sequences once, rising; shares a watcher's fresher snapshot with the job's other watchers; reports gaps", async () => {
    const hub = new JobEventHub(engine);
    const gaps: string[] = [];
    hub.onSequenceGap((jobId) => gaps.push(jobId));
    try {
      const job = (await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: {}, requestedBy: 'scheduler-1' })).job;
      const at = (sequence: number) => ({ ...job, sequence });
      const first: JobEvent[] = [];
      const second: JobEvent[] = [];
      const dashboard: JobEvent[] = [];
      hub.watchAll((e) => dashboard.push(e));
      hub.watchJob(job.id, (e) => first.push(e)).seen(snapshotEvent(at(1)));
      // A later watcher read sequence 2 before its event arrived: the first watcher gets it
      // now, and neither gets the event again when it arrives; the dashboard gets the event.
      hub.watchJob(job.id, (e) => second.push(e)).seen(snapshotEvent(at(2)));
      hub.dispatch(eventOf(at(2), JobEventReason.STEP));
      hub.dispatch(eventOf(at(2), JobEventReason.STEP));
      hub.dispatch(eventOf(at(4), JobEventReason.PROGRESS)); // 3 was lost: a gap
      hub.dispatch(eventOf(at(3), JobEventReason.STEP)); // late: older than 4
      const seen = (events: JobEvent[]) => events.map((e) => [e.sequence, e.reason]);
      expect(seen(first)).toEqual([
        [2, 'SNAPSHOT'],
        [4, 'PROGRESS'],
      ]);
      expect(seen(second)).toEqual([[4, 'PROGRESS']]);
      expect(seen(dashboard)).toEqual([
        [2, 'STEP'],
        [4, 'PROGRESS'],
      ]);
      expect(gaps).toEqual([job.id]);
      expect(hub.stats.dropped).toBe(5); // three for the job's watchers, two for the dashboard
    } finally {
      hub.close();
    }
  });
  it("delivers a job's end even at a sequence its watchers already passed (writes lost in a database crash took their sequences again)", async () => {
    const hub = new JobEventHub(engine);
    try {
      const job = (await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: {}, requestedBy: 'scheduler-1' })).job;
      // Each write a second after the one before, as the database's clock would stamp them.
      let clock = job.updatedAt.getTime();
      const at = (sequence: number, status: JobStatus) => ({ ...job, sequence, status, updatedAt: new Date((clock += 1_000)) });
      const watcher: JobEvent[] = [];
      const dashboard: JobEvent[] = [];
      hub.watchAll((e) => dashboard.push(e));
      hub.watchJob(job.id, (e) => watcher.push(e)).seen(snapshotEvent(job));
      // The claim (2) and two steps (3, 4) went out, then the database lost them in a crash.
      for (const sequence of [2, 3, 4]) hub.dispatch(eventOf(at(sequence, JobStatus.RUNNING), JobEventReason.STEP));
      // The job ran again from sequence 1: its claim (2) is stale, its end (3) is not.
      hub.dispatch(eventOf(at(2, JobStatus.RUNNING), JobEventReason.STARTED));
      const end = eventOf(at(3, JobStatus.SUCCEEDED), JobEventReason.SUCCEEDED);
      hub.dispatch(end);
      hub.dispatch(end); // a repeat
      const seen = (events: JobEvent[]) => events.map((e) => [e.sequence, e.status]);
      const expected = [
        [2, 'RUNNING'],
        [3, 'RUNNING'],
        [4, 'RUNNING'],
        [3, 'SUCCEEDED'],
      ];
      expect(seen(watcher)).toEqual(expected);
      expect(seen(dashboard)).toEqual(expected);
    } finally {
      hub.close();
    }
  });

  it("drops a job's end that comes again after the job was retried: the job stays queued and its progress stream goes on", async () => {
    const hub = new JobEventHub(engine);
    try {
      const job = (await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: {}, requestedBy: 'scheduler-1' })).job;
      const { rows } = await ctx.db.pool.query<JobRow>(
        `WITH done AS (UPDATE job_outbox SET state = 'COMPLETED', completed_at = now() WHERE job_id = $1)
         UPDATE jobs SET status = 'FAILED', sequence = sequence + 1, updated_at = now(), completed_at = now(), exclusive_key = NULL
          WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
        [job.id],
      );
      const failed = eventOf(toSnapshot(rows[0]!), JobEventReason.FAILED);
      const dashboard: JobEvent[] = [];
      hub.watchAll((e) => dashboard.push(e));
      hub.dispatch(failed);
      const retried = await engine.retry(job.id);
      hub.dispatch(eventOf(retried, JobEventReason.RETRIED));
      // A UI subscribes to the retried job; the broker then hands the hub the end again.
      const scheduler: Viewer = { subject: 'scheduler-1', roles: new Set([ApiRole.SCHEDULER]), grants: new Set(), expiresAt: null };
      const stream = await jobProgressStream({ engine, hub }, job.id, scheduler);
      hub.dispatch(failed);
      hub.offer(failed); // as a re-read that raced the retry would
      const statuses = (events: JobEvent[]) => events.map((e) => `${e.sequence} ${e.status}`);
      expect(statuses(dashboard)).toEqual([`${failed.sequence} FAILED`, `${retried.sequence} QUEUED`]);
      expect(statuses([(await stream.next()).value as JobEvent])).toEqual([`${retried.sequence} QUEUED`]);
      // Nothing else waits: the stale end neither arrived nor ended the stream.
      const next = stream.next();
      const outcome = await Promise.race([next.then(() => 'delivered'), new Promise((resolve) => setTimeout(resolve, 50, 'waiting'))]);
      expect(outcome).toBe('waiting');
      await stream.return?.();
    } finally {
      hub.close();
    }
  });
});
