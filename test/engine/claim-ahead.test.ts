/**
 * Claim-ahead (`JOB_CLAIM_AHEAD_<KIND>`): a worker claims held deliveries before a
 * consumer is free, and the job waits RUNNING, its lease kept, for a processor slot. At
 * most `consumers` processors of the kind run at once; a job cancelled while it waits
 * ends CANCELLED without running, and the rest run once each.
 */
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { EngineMetrics, METER_NAME } from '../../src/engine/metrics';
import { poolSql } from '../../src/engine/db/sql';
import { insertJobs } from '../../src/engine/queries/insert-jobs';
import { RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import { JobStatus } from '../../src/engine/types';
import { buildEngine, createTestDb, newJobArgs, until, waitForJob } from '../support/engine-harness';
import { valuesByKind } from '../support/metric-counters';
import { deleteEngineTopology, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';

const KIND = 'CLAIMED_AHEAD';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
const prefix = uniquePrefix('claimahead');
let transport: RabbitMqTransport | undefined;
let engine: JobEngine | undefined;

async function statuses(ids: string[]): Promise<Map<string, string>> {
  const { rows } = await ctx.db.pool.query<{ id: string; status: string }>('SELECT id, status FROM jobs WHERE id = ANY($1::uuid[])', [ids]);
  return new Map(rows.map((r) => [r.id, r.status]));
}

/**
 * One consumer and one job claimed ahead; each processor runs until the test releases
 * it (`release`), and the processors running at once are counted.
 */
function claimAheadEngine(metrics?: EngineMetrics) {
  const runs = new Map<string, number>();
  const release = new Map<string, () => void>();
  const concurrency = { active: 0, max: 0 };
  transport = new RabbitMqTransport({ url: rabbitUrl(), prefix, logger: silentLogger });
  engine = buildEngine({
    db: ctx.db,
    transport,
    metrics,
    registrations: [
      {
        kind: KIND,
        defaults: { consumers: 1, prefetch: 2, claimAhead: 1 },
        processor: async ({ job }) => {
          runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
          concurrency.active++;
          concurrency.max = Math.max(concurrency.max, concurrency.active);
          await new Promise<void>((resolve) => release.set(job.id, resolve));
          concurrency.active--;
          return { done: job.id };
        },
      },
    ],
  });
  return { engine, runs, release, concurrency };
}

/** Queued before the engine starts, so that the publisher's first pass sends them all. */
async function queueJobs(n: number): Promise<string[]> {
  const args = Array.from({ length: n }, (_, i) => newJobArgs(KIND, { i }));
  await insertJobs(poolSql(ctx.db.pool), args);
  return args.map((a) => a.jobId);
}

/** Waits until one job's processor runs and another job is RUNNING without one: [running, claimed ahead]. */
async function oneRunningOneAhead(ids: string[], release: Map<string, () => void>): Promise<[string, string]> {
  let first = '';
  let ahead = '';
  await until('one job running and one claimed ahead', async () => {
    const now = await statuses(ids);
    first = [...release.keys()][0] ?? '';
    ahead = ids.find((id) => id !== first && now.get(id) === JobStatus.RUNNING) ?? '';
    return first !== '' && ahead !== '';
  });
  return [first, ahead];
}

describe.runIf(requireRabbit())('claim-ahead', () => {
  beforeAll(async () => {
    ctx = await createTestDb('engine_claim_ahead');
  });
  afterEach(async () => {
    await engine?.stop(2_000);
    engine = undefined;
    await transport?.close();
    transport = undefined;
  });
  afterAll(async () => {
    await deleteEngineTopology(prefix, [KIND]);
    await ctx?.close();
  });

  it('one consumer, one claimed ahead: the second job waits RUNNING without running; cancelled there, it never runs', async () => {
    const exporter = new PrometheusExporter({ preventServerStart: true });
    const provider = new MeterProvider({ readers: [exporter] });
    const { runs, release, concurrency } = claimAheadEngine(new EngineMetrics(provider.getMeter(METER_NAME)));
    const ids = await queueJobs(3);
    await engine!.start();

    // One runs; one more is claimed (RUNNING) and waits; the third stays QUEUED.
    const [first, ahead] = await oneRunningOneAhead(ids, release);
    const third = ids.find((id) => id !== first && id !== ahead)!;
    // Held for longer than a consumer takes to start a delivered job: still waiting.
    await new Promise((r) => setTimeout(r, 500));
    expect(runs.has(ahead)).toBe(false);
    expect((await statuses([third])).get(third)).toBe(JobStatus.QUEUED);
    const { rows: leases } = await ctx.db.pool.query<{ state: string; held: boolean }>(
      'SELECT state, lease_expires_at > now() AS held FROM job_outbox WHERE job_id = $1',
      [ahead],
    );
    expect(leases).toEqual([{ state: 'PROCESSING', held: true }]);
    expect(await valuesByKind(exporter, 'jiaowu.background_jobs.running')).toEqual({ [KIND]: 1 });
    expect(await valuesByKind(exporter, 'jiaowu.background_jobs.claimed_ahead')).toEqual({ [KIND]: 1 });

    await engine!.cancel(ahead);
    const cancelled = await waitForJob(engine!, ahead, (job) => job.status === JobStatus.CANCELLED, 20_000);
    expect(cancelled.status).toBe(JobStatus.CANCELLED);

    release.get(first)!();
    await until('the third job to start', () => release.has(third), 20_000);
    release.get(third)!();
    expect((await waitForJob(engine!, first, undefined, 20_000)).status).toBe(JobStatus.SUCCEEDED);
    expect((await waitForJob(engine!, third, undefined, 20_000)).status).toBe(JobStatus.SUCCEEDED);
    expect(runs.get(first)).toBe(1);
    expect(runs.get(third)).toBe(1);
    expect(runs.has(ahead)).toBe(false);
    expect(concurrency.max).toBe(1);
  });

  it('a graceful stop hands a job claimed ahead back at once, its attempt refunded; the next process runs it once', async () => {
    const { runs, release } = claimAheadEngine();
    const ids = await queueJobs(2);
    await engine!.start();
    const [first, ahead] = await oneRunningOneAhead(ids, release);

    const stopping = engine!.stop(20_000);
    // Back before the running job ends: it never started here.
    await until('the job claimed ahead to be handed back', async () => (await statuses([ahead])).get(ahead) === JobStatus.QUEUED, 10_000);
    const { rows } = await ctx.db.pool.query<{ attempts: number }>('SELECT processing_attempts AS attempts FROM job_outbox WHERE job_id = $1', [ahead]);
    expect(rows).toEqual([{ attempts: 0 }]);
    expect(runs.has(ahead)).toBe(false);
    release.get(first)!();
    await stopping;
    engine = undefined;
    await transport!.close();
    transport = undefined;
    expect((await statuses([first])).get(first)).toBe(JobStatus.SUCCEEDED);

    const next = claimAheadEngine();
    await next.engine.start();
    await until('the handed-back job to start in the next process', () => next.release.has(ahead), 20_000);
    next.release.get(ahead)!();
    expect((await waitForJob(next.engine, ahead, undefined, 20_000)).status).toBe(JobStatus.SUCCEEDED);
    expect(next.runs.get(ahead)).toBe(1);
    expect(runs.has(ahead)).toBe(false);
  });
});
