import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { heartbeatIntervalMs, MIN_HEARTBEAT_MS, PROGRESS_FLUSH_INTERVAL_MS } from '../../src/engine/progress-reporter';
import { JobEventReason, JobStatus, type JobEvent } from '../../src/engine/types';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine | undefined;

beforeAll(async () => {
  ctx = await createTestDb('engine_progress');
});
afterEach(async () => {
  await engine?.stop(1_000);
  engine = undefined;
});
afterAll(async () => {
  await ctx?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Seen {
  event: JobEvent;
  at: number;
}

function record(target: JobEngine, jobId: () => string | undefined): Seen[] {
  const seen: Seen[] = [];
  target.subscribe((event) => {
    if (event.jobId === jobId()) seen.push({ event, at: Date.now() });
  });
  return seen;
}

describe('heartbeat interval', () => {
  it('is max(5 s, lease / 3)', () => {
    expect(MIN_HEARTBEAT_MS).toBe(5_000);
    expect(heartbeatIntervalMs(5)).toBe(5_000);
    expect(heartbeatIntervalMs(15)).toBe(5_000);
    expect(heartbeatIntervalMs(16)).toBeCloseTo(5_333.33, 1);
    expect(heartbeatIntervalMs(30)).toBe(10_000);
    expect(heartbeatIntervalMs(60)).toBe(20_000);
    expect(heartbeatIntervalMs(3_600)).toBe(1_200_000);
  });

  it('a running job heartbeats and extends its lease on that schedule', async () => {
    const leaseSeconds = 6; // heartbeat every 5 s (the floor), lease 6 s
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let jobId: string | undefined;
    engine = buildEngine({
      db: ctx.db,
      registrations: [{ kind: 'HB', defaults: { consumers: 1, leaseSeconds }, processor: async () => gate }],
    });
    const seen = record(engine, () => jobId);
    await engine.start();
    jobId = (await engine.enqueue({ kind: 'HB', input: {} })).job.id;
    await waitForJob(engine, jobId, (j) => j.status === JobStatus.RUNNING, 5_000);
    const started = seen.find((s) => s.event.reason === JobEventReason.STARTED)!;
    const deadline = Date.now() + 8_000;
    while (!seen.some((s) => s.event.reason === JobEventReason.HEARTBEAT) && Date.now() < deadline) await sleep(50);
    const beat = seen.find((s) => s.event.reason === JobEventReason.HEARTBEAT);
    expect(beat, 'a heartbeat event').toBeDefined();
    expect(beat!.at - started.at).toBeGreaterThan(4_500);
    expect(beat!.at - started.at).toBeLessThan(6_000);
    const { rows } = await ctx.db.pool.query(
      `SELECT (extract(epoch FROM lease_expires_at - now()) * 1000)::float8 AS left_ms FROM job_outbox WHERE job_id = $1`,
      [jobId],
    );
    // the lease was renewed for another 6 s (without the heartbeat it would have expired by now)
    expect(rows[0].left_ms).toBeGreaterThan(4_000);
    release();
    expect((await waitForJob(engine, jobId)).status).toBe(JobStatus.SUCCEEDED);
  });
});

describe('progress reporting', () => {
  it('progress reported many times a second reaches the bus about once a second, and the latest value within ~1.5 s', async () => {
    expect(PROGRESS_FLUSH_INTERVAL_MS).toBe(1_000);
    let jobId: string | undefined;
    let lastReportAt = 0;
    const FINAL = 0.777;
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: 'CHATTY',
          defaults: { consumers: 1 },
          processor: async ({ progress }) => {
            const start = Date.now();
            let i = 0;
            while (Date.now() - start < 3_500) {
              progress.report(Math.min(0.7, i++ / 1_000), `item ${i}`);
              await sleep(10);
            }
            progress.report(FINAL, 'last report');
            lastReportAt = Date.now();
            await sleep(1_700);
            return 'done';
          },
        },
      ],
    });
    const seen = record(engine, () => jobId);
    await engine.start();
    jobId = (await engine.enqueue({ kind: 'CHATTY', input: {} })).job.id;
    const done = await waitForJob(engine, jobId, undefined, 15_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);

    const progressEvents = seen.filter((s) => s.event.reason === JobEventReason.PROGRESS);
    // ~350 reports in 3.5 s became a handful of writes
    expect(progressEvents.length).toBeGreaterThanOrEqual(3);
    expect(progressEvents.length).toBeLessThanOrEqual(6);
    for (let i = 1; i < progressEvents.length; i++) {
      expect(progressEvents[i]!.at - progressEvents[i - 1]!.at).toBeGreaterThan(900);
    }
    const final = progressEvents.find((s) => s.event.progress === FINAL);
    expect(final, 'the latest value was published').toBeDefined();
    expect(final!.at - lastReportAt).toBeLessThan(1_500);
    expect(final!.event.message).toBe('last report');
    // values only move forward
    const values = progressEvents.map((s) => s.event.progress);
    expect([...values].sort((a, b) => a - b)).toEqual(values);
  });

  it('steps are written at once, and events carry increasing sequences and full snapshots', async () => {
    let jobId: string | undefined;
    const stepCalledAt: Record<string, number> = {};
    const dbStepAfterEvent: Record<string, string> = {};
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: 'STEPS',
          defaults: { consumers: 1 },
          processor: async ({ progress }) => {
            for (const name of ['load', 'solve', 'save']) {
              stepCalledAt[name] = Date.now();
              progress.step(name, `doing ${name}`);
              progress.report(0.1); // a report right after must not hold the step back
              await sleep(250);
            }
            return { ok: true };
          },
        },
      ],
    });
    const seen = record(engine, () => jobId);
    engine.subscribe(async (event) => {
      if (event.jobId === jobId && event.reason === JobEventReason.STEP && event.currentStep) {
        const { rows } = await ctx.db.pool.query('SELECT current_step FROM jobs WHERE id = $1', [jobId]);
        dbStepAfterEvent[event.currentStep] = rows[0].current_step;
      }
    });
    await engine.start();
    const enqueued = await engine.enqueue({ kind: 'STEPS', input: { plan: 7 }, requestedBy: 'tester' });
    jobId = enqueued.job.id;
    const done = await waitForJob(engine, jobId, undefined, 10_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    await sleep(100);

    for (const name of ['load', 'solve', 'save']) {
      const stepEvent = seen.find((s) => s.event.reason === JobEventReason.STEP && s.event.currentStep === name);
      expect(stepEvent, `step ${name} published`).toBeDefined();
      // Goes at once; a step held back behind the report that follows it would come with
      // the next flush (~750 ms here), and one held to the next heartbeat after 5 s.
      expect(stepEvent!.at - stepCalledAt[name]!).toBeLessThan(600);
      expect(stepEvent!.event.message).toBe(`doing ${name}`);
      expect(dbStepAfterEvent[name]).toBe(name);
    }

    const events = seen.map((s) => s.event);
    const sequences = events.map((e) => e.sequence);
    for (let i = 1; i < sequences.length; i++) expect(sequences[i]).toBeGreaterThan(sequences[i - 1]!);
    expect(events[0]!.reason).toBe(JobEventReason.STARTED);
    expect(events.at(-1)!.reason).toBe(JobEventReason.SUCCEEDED);
    for (const event of events) {
      // every event is a whole snapshot, consistent with its own headline fields
      expect(event.job.id).toBe(jobId);
      expect(event.job.kind).toBe('STEPS');
      expect(event.job.input).toEqual({ plan: 7 });
      expect(event.job.requestedBy).toBe('tester');
      expect(event.job.createdAt).toBeInstanceOf(Date);
      expect(event.job.startedAt).toBeInstanceOf(Date);
      expect(event.job.sequence).toBe(event.sequence);
      expect(event.job.status).toBe(event.status);
      expect(event.job.currentStep).toBe(event.currentStep);
      expect(event.job.progress).toBe(event.progress);
    }
    const { rows } = await ctx.db.pool.query('SELECT sequence, current_step FROM jobs WHERE id = $1', [jobId]);
    expect(Number(rows[0].sequence)).toBe(sequences.at(-1));
    expect(rows[0].current_step).toBe('save');
    expect(events.at(-1)!.job.result).toEqual({ ok: true });
  });
});
