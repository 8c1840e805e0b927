/**
 * Claim-ahead (`JOB_CLAIM_AHEAD_<KIND>`): a worker claims held deliveries before a
 * consumer is free, and the job waits RUNNING, its lease kept, for a processor slot. At
 * most `consumers` processors of the kind run at once; a job cancelled while it waits
 * ends CANCELLED without running, and the rest run once each.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { poolSql } from '../../src/engine/db/sql';
import { insertJobs } from '../../src/engine/queries/insert-jobs';
import { RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import { JobStatus } from '../../src/engine/types';
import { buildEngine, createTestDb, newJobArgs, until, waitForJob } from '../support/engine-harness';
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
    const runs = new Map<string, number>();
    const release = new Map<string, () => void>();
    let active = 0;
    let maxActive = 0;
    transport = new RabbitMqTransport({ url: rabbitUrl(), prefix, logger: silentLogger });
    engine = buildEngine({
      db: ctx.db,
      transport,
      registrations: [
        {
          kind: KIND,
          defaults: { consumers: 1, prefetch: 2, claimAhead: 1 },
          processor: async ({ job }) => {
            runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
            active++;
            maxActive = Math.max(maxActive, active);
            await new Promise<void>((resolve) => release.set(job.id, resolve));
            active--;
            return { done: job.id };
          },
        },
      ],
    });
    // Queued before the engine starts, so the publisher's first pass sends all three.
    const args = Array.from({ length: 3 }, (_, i) => newJobArgs(KIND, { i }));
    await insertJobs(poolSql(ctx.db.pool), args);
    const ids = args.map((a) => a.jobId);
    await engine.start();

    // One runs; one more is claimed (RUNNING) and waits; the third stays QUEUED.
    let first = '';
    let ahead = '';
    await until('one job running and one claimed ahead', async () => {
      const now = await statuses(ids);
      const running = ids.filter((id) => now.get(id) === JobStatus.RUNNING);
      first = [...release.keys()][0] ?? '';
      ahead = running.find((id) => id !== first) ?? '';
      return first !== '' && ahead !== '';
    });
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

    await engine.cancel(ahead);
    const cancelled = await waitForJob(engine, ahead, (job) => job.status === JobStatus.CANCELLED, 20_000);
    expect(cancelled.status).toBe(JobStatus.CANCELLED);

    release.get(first)!();
    await until('the third job to start', () => release.has(third), 20_000);
    release.get(third)!();
    expect((await waitForJob(engine, first, undefined, 20_000)).status).toBe(JobStatus.SUCCEEDED);
    expect((await waitForJob(engine, third, undefined, 20_000)).status).toBe(JobStatus.SUCCEEDED);
    expect(runs.get(first)).toBe(1);
    expect(runs.get(third)).toBe(1);
    expect(runs.has(ahead)).toBe(false);
    expect(maxActive).toBe(1);
  });
});
