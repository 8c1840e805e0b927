// Subscriptions reach the job's final state whatever events were lost on the way:
// an event lost to a crash between commit and emit (the sweep), an event lost on the
// way so the sequence jumps (the gap re-read), the events published while an API
// process's bus was away across a broker restart (the reconnect re-read); and no
// subscriber gets one (jobId, sequence) twice or an older one after a newer one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { RabbitMqEventBus } from '../../src/engine/events/rabbitmq-event-bus';
import { silentLogger } from '../../src/engine/logger';
import { JOB_COLUMNS, toSnapshot, type JobRow } from '../../src/engine/queries/job-row';
import { eventOf, JobEventReason, JobStatus, type JobEvent, type JobSnapshot } from '../../src/engine/types';
import { JobKind } from '../../src/job-kinds';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { privateRabbitSupported, startPrivateRabbit, type PrivateRabbit } from '../support/private-rabbit';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { testKindRegistrations } from '../support/test-kinds';
import { JobEventsDocument, JobProgressDocument } from './generated/graphql';
import { collect, startTestApiServer, waitUntil, wsClient, type TestApiServer } from './support/api-server';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const FAST_RECOVERY = { initialDelay: 100, maxDelay: 1_000, factor: 2, jitter: 0.1 };
/** A sweep interval no test here waits for: only the path under test can deliver. */
const NO_SWEEP_MS = 600_000;
const SWEEP_MS = 500;
/**
 * How long a subscriber may wait for a state it missed: the sweep interval plus the
 * sweep's 1 s settle time plus one query, with ample room for a loaded machine.
 */
const DELIVERY_BOUND_MS = 10_000;

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

let ctx: Awaited<ReturnType<typeof createTestDb>>;

/**
 * What a worker does that then dies before emitting: commits the job's next state
 * (sequence + 1) and sends no event. Returns the committed snapshot.
 */
async function commitWithoutEvent(jobId: string, status: JobStatus, currentStep: string | null = null): Promise<JobSnapshot> {
  const terminal = [JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED].includes(status);
  const { rows } = await ctx.db.pool.query<JobRow>(
    `UPDATE jobs SET status = $2, sequence = sequence + 1, updated_at = now(),
            current_step = coalesce($3, current_step),
            progress = CASE WHEN $4 THEN 1 ELSE progress END,
            started_at = coalesce(started_at, now()),
            completed_at = CASE WHEN $4 THEN now() END,
            exclusive_key = CASE WHEN $4 THEN NULL ELSE exclusive_key END
      WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
    [jobId, status, currentStep, terminal],
  );
  return toSnapshot(rows[0]!);
}

beforeAll(async () => {
  ctx = await createTestDb('api_resync');
});
afterAll(async () => {
  await ctx?.close();
});

describe('lost events, one process (in-memory bus)', () => {
  let engine: JobEngine;
  let sweeping: TestApiServer;
  let notSweeping: TestApiServer;

  beforeAll(async () => {
    // No worker: a job stays QUEUED until a test writes its row.
    engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations(), roles: { worker: false, publisher: false } });
    await engine.start();
    sweeping = await startTestApiServer({ engine, settings: { subscriptionResyncIntervalMs: SWEEP_MS } });
    notSweeping = await startTestApiServer({ engine, settings: { subscriptionResyncIntervalMs: NO_SWEEP_MS } });
  });
  afterAll(async () => {
    await sweeping?.close();
    await notSweeping?.close();
    await engine?.stop(1_000);
  });

  const enqueue = async () => (await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { steps: 1 }, requestedBy: 'scheduler-1' })).job;

  it('an event lost between commit and emit: the sweep brings the subscriber the final state within seconds', async () => {
    const job = await enqueue();
    const client = wsClient(sweeping, sweeping.tokens.admin);
    try {
      const progress = collect(client, JobProgressDocument, { jobId: job.id });
      await progress.first(1);
      await commitWithoutEvent(job.id, JobStatus.RUNNING, 'step 1');
      const done = await commitWithoutEvent(job.id, JobStatus.SUCCEEDED);
      await within(progress.done, DELIVERY_BOUND_MS, 'the subscription ending with the committed SUCCEEDED');
      const events = progress.results.map((r) => r.data!.jobProgress);
      expect(events[0]).toMatchObject({ reason: 'SNAPSHOT', status: 'QUEUED', sequence: job.sequence });
      expect(events.at(-1)).toMatchObject({ status: 'SUCCEEDED', sequence: done.sequence, progress: 1 });
      expect(events.at(-1)!.job).toMatchObject({ status: 'SUCCEEDED', sequence: done.sequence });
      const sequences = events.map((e) => e.sequence);
      for (let i = 1; i < sequences.length; i++) expect(sequences[i]).toBeGreaterThan(sequences[i - 1]!);
    } finally {
      await client.dispose();
    }
  });

  it('a sequence gap: the job is read again at once, and the subscriber gets the state whose event was lost', async () => {
    const job = await enqueue();
    const client = wsClient(notSweeping, notSweeping.tokens.admin);
    try {
      const progress = collect(client, JobProgressDocument, { jobId: job.id });
      await progress.first(1);
      await commitWithoutEvent(job.id, JobStatus.RUNNING); // its event is lost
      const step = await commitWithoutEvent(job.id, JobStatus.RUNNING, 'step 1');
      const done = await commitWithoutEvent(job.id, JobStatus.SUCCEEDED); // lost too
      engine.bus.publish(eventOf(step, JobEventReason.STEP));
      await within(progress.done, DELIVERY_BOUND_MS, 'the subscription ending after the gap');
      const events = progress.results.map((r) => r.data!.jobProgress);
      expect(events.map((e) => [e.sequence, e.status])).toEqual([
        [job.sequence, 'QUEUED'],
        [step.sequence, 'RUNNING'],
        [done.sequence, 'SUCCEEDED'],
      ]);
    } finally {
      await client.dispose();
    }
  });

  // Claims and heartbeats commit without fsync: a database crash can lose one whose event
  // already went out, and the job's next write takes its sequence again.
  for (const path of ['its event', 'the sweep'] as const) {
    it(`a sequence lost in a database crash and given again to the terminal write: the subscriber still ends (${path})`, async () => {
      const server = path === 'the sweep' ? sweeping : notSweeping;
      const job = await enqueue();
      const client = wsClient(server, server.tokens.admin);
      try {
        const progress = collect(client, JobProgressDocument, { jobId: job.id });
        await progress.first(1);
        engine.bus.publish(eventOf({ ...job, status: JobStatus.RUNNING, sequence: job.sequence + 1 }, JobEventReason.STARTED));
        await progress.first(2);
        const done = await commitWithoutEvent(job.id, JobStatus.SUCCEEDED);
        expect(done.sequence).toBe(job.sequence + 1);
        if (path === 'its event') engine.bus.publish(eventOf(done, JobEventReason.SUCCEEDED));
        await within(progress.done, DELIVERY_BOUND_MS, 'the subscription ending');
        expect(progress.results.map((r) => [r.data!.jobProgress.sequence, r.data!.jobProgress.status])).toEqual([
          [job.sequence, 'QUEUED'],
          [done.sequence, 'RUNNING'],
          [done.sequence, 'SUCCEEDED'],
        ]);
      } finally {
        await client.dispose();
      }
    });
  }

  it('the same event delivered twice, and an older one after a newer one, reach each subscriber once and in order', async () => {
    const job = await enqueue();
    const client = wsClient(notSweeping, notSweeping.tokens.admin);
    try {
      const progress = collect(client, JobProgressDocument, { jobId: job.id });
      const dashboard = collect(client, JobEventsDocument, { kinds: [JobKind.SCHEDULE_PUBLISH] });
      await progress.first(1);
      // The dashboard listens once it hears of a job enqueued after it subscribed.
      const marker = await enqueue();
      await waitUntil(() => dashboard.results.some((r) => r.data?.jobEvents.jobId === marker.id), 10_000, 'the dashboard to listen');

      const running = await commitWithoutEvent(job.id, JobStatus.RUNNING);
      const done = await commitWithoutEvent(job.id, JobStatus.SUCCEEDED);
      const started = eventOf(running, JobEventReason.STARTED);
      engine.bus.publish(started);
      engine.bus.publish(started); // a repeat
      engine.bus.publish(eventOf(job, JobEventReason.ENQUEUED)); // an older one, late
      const succeeded = eventOf(done, JobEventReason.SUCCEEDED);
      engine.bus.publish(succeeded);
      engine.bus.publish(succeeded);
      await within(progress.done, DELIVERY_BOUND_MS, 'the subscription ending');
      const forJob = () => dashboard.results.map((r) => r.data!.jobEvents).filter((e) => e.jobId === job.id);
      await waitUntil(() => forJob().some((e) => e.status === 'SUCCEEDED'), 10_000, 'the dashboard to see SUCCEEDED');
      // Anything still on its way would arrive by now.
      engine.bus.publish(succeeded);
      await sleep(300);

      expect(progress.results.map((r) => r.data!.jobProgress.sequence)).toEqual([job.sequence, running.sequence, done.sequence]);
      expect(forJob().map((e) => e.sequence)).toEqual([running.sequence, done.sequence]);
      dashboard.stop();
    } finally {
      await client.dispose();
    }
  });
});

const privateSupported = privateRabbitSupported() && process.getuid?.() === 0;

describe.runIf(privateSupported)("lost events across a broker restart, the API's bus back last (private RabbitMQ node)", () => {
  let rabbit: PrivateRabbit;
  let proxy: TcpProxy;
  let apiEngine: JobEngine;
  let workerBus: RabbitMqEventBus;
  let server: TestApiServer;
  const prefix = `t_resync_${process.pid}`;

  beforeAll(async () => {
    rabbit = await startPrivateRabbit();
    // The API process reaches the broker through a proxy, so it can be kept away
    // after the broker is back while the worker is already connected.
    proxy = await startTcpProxy(rabbit.port);
    const apiBus = new RabbitMqEventBus({ url: proxy.urlFor(rabbit.url), prefix, logger: silentLogger, recovery: FAST_RECOVERY });
    apiEngine = buildEngine({
      db: ctx.db,
      registrations: testKindRegistrations(),
      bus: apiBus,
      roles: { worker: false, publisher: false },
    });
    await apiEngine.start();
    workerBus = new RabbitMqEventBus({ url: rabbit.url, prefix, logger: silentLogger, recovery: FAST_RECOVERY, receive: 'control' });
    await workerBus.start();
    server = await startTestApiServer({ engine: apiEngine, settings: { subscriptionResyncIntervalMs: NO_SWEEP_MS } });
  }, 90_000);

  afterAll(async () => {
    await server?.close();
    await apiEngine?.stop(1_000);
    await workerBus?.close();
    await proxy?.close();
    await rabbit?.destroy();
  }, 60_000);

  it('the terminal events published before the API reconnects reach its subscribers once it does', async () => {
    const enqueue = async () => (await apiEngine.enqueue({ kind: JobKind.AUTOMATIC_SCHEDULE, input: {}, requestedBy: 'scheduler-1' })).job;
    const [a, b] = [await enqueue(), await enqueue()];
    const fromBus: JobEvent[] = [];
    apiEngine.subscribe((event) => fromBus.push(event));
    const client = wsClient(server, server.tokens.admin);
    try {
      const progressA = collect(client, JobProgressDocument, { jobId: a.id });
      const progressB = collect(client, JobProgressDocument, { jobId: b.id });
      await progressA.first(1);
      await progressB.first(1);

      await proxy.pause('refuse');
      await rabbit.stop();
      await waitUntil(
        () => apiEngine.bus.connectionState() !== 'connected' && workerBus.connectionState() !== 'connected',
        15_000,
        'both buses to notice the broker is gone',
      );
      // A's worker commits while the broker is down: its event waits in the worker's buffer.
      const doneA = await commitWithoutEvent(a.id, JobStatus.SUCCEEDED);
      workerBus.publish(eventOf(doneA, JobEventReason.SUCCEEDED));

      await rabbit.start();
      await waitUntil(() => workerBus.connectionState() === 'connected', 30_000, 'the worker bus to reconnect');
      // B's worker commits once the broker is back, before the API's bus is.
      const doneB = await commitWithoutEvent(b.id, JobStatus.SUCCEEDED);
      workerBus.publish(eventOf(doneB, JobEventReason.SUCCEEDED));
      await sleep(1_500); // the gap seen in the field
      expect(progressA.results).toHaveLength(1);
      expect(progressB.results).toHaveLength(1);

      await proxy.resume();
      await waitUntil(() => apiEngine.bus.connectionState() === 'connected', 30_000, "the API's bus to reconnect");
      await within(Promise.all([progressA.done, progressB.done]), DELIVERY_BOUND_MS, 'both subscriptions ending after the reconnect');
      for (const [progress, done] of [
        [progressA, doneA],
        [progressB, doneB],
      ] as const) {
        const last = progress.results.at(-1)!.data!.jobProgress;
        expect(last).toMatchObject({ status: 'SUCCEEDED', sequence: done.sequence });
      }
      // The bus never brought them: the re-read on reconnect did.
      expect(fromBus.filter((e) => e.status === JobStatus.SUCCEEDED)).toEqual([]);
    } finally {
      await client.dispose();
    }
  }, 90_000);
});
