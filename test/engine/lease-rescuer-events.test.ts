/**
 * The lease rescuer changes jobs RUNNING → QUEUED; watchers must see it: one event per
 * rescued job, carrying the job's new snapshot and sequence, a batch's events together.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventBus } from '../../src/engine/events/event-bus';
import { silentLogger } from '../../src/engine/logger';
import { LeaseRescuer } from '../../src/engine/maintenance/lease-rescuer';
import { EngineMetrics } from '../../src/engine/metrics';
import { JobEventReason, JobStatus, type JobEvent } from '../../src/engine/types';
import { createTestDb } from '../support/engine-harness';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
beforeAll(async () => {
  ctx = await createTestDb('engine_rescue_events');
});
afterAll(async () => {
  await ctx?.close();
});

/** A job RUNNING under a lease that expired two minutes ago (its worker died), or a live one. */
async function seedRunning(lease: 'expired' | 'live'): Promise<string> {
  const jobId = randomUUID();
  await ctx.db.pool.query(
    `INSERT INTO jobs (id, kind, status, input, started_at, sequence, attempts) VALUES ($1, 'RESCUE', 'RUNNING', '{}'::jsonb, now(), 7, 1)`,
    [jobId],
  );
  await ctx.db.pool.query(
    `INSERT INTO job_outbox (id, job_id, kind, state, processing_token, lease_expires_at, processing_attempts)
     VALUES (gen_random_uuid(), $1, 'RESCUE', 'PROCESSING', gen_random_uuid(), now() + $2::interval, 1)`,
    [jobId, lease === 'expired' ? '-2 minutes' : '5 minutes'],
  );
  return jobId;
}

it('announces every job it puts back to QUEUED, with the new sequence, one batch in one turn', async () => {
  const dead = await Promise.all([1, 2, 3, 4, 5].map(() => seedRunning('expired')));
  const alive = await seedRunning('live');

  // Which event-loop turn each event was published in.
  let turn = 0;
  let ticking = true;
  const tick = () => {
    turn++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const published: Array<{ event: JobEvent; turn: number }> = [];
  const bus: Pick<EventBus, 'publish'> = { publish: (event) => published.push({ event, turn }) };

  const rescuer = new LeaseRescuer({ pool: ctx.db.pool, bus, metrics: new EngineMetrics(), logger: silentLogger }, { batchSize: 3 });
  const rescued = await rescuer.runOnce();
  ticking = false;

  expect(rescued).toBe(5);
  expect(published.map((p) => p.event.jobId).sort()).toEqual([...dead].sort());
  const { rows } = await ctx.db.pool.query('SELECT id, status, sequence::int AS sequence FROM jobs WHERE id = ANY($1::uuid[])', [dead]);
  const inDb = new Map(rows.map((r) => [r.id, r]));
  for (const { event } of published) {
    expect(event.reason).toBe(JobEventReason.RETRY_SCHEDULED);
    expect(event.status).toBe(JobStatus.QUEUED);
    expect(event.job.status).toBe(JobStatus.QUEUED);
    expect(event).toMatchObject({ messageCode: 'job.worker-lost', messageParams: null, message: 'The worker running this job stopped responding; it will be retried' });
    // A new sequence, the one now in the database: watchers order by it.
    expect(event.sequence).toBe(8);
    expect(event.sequence).toBe(inDb.get(event.jobId)!.sequence);
    expect(inDb.get(event.jobId)!.status).toBe(JobStatus.QUEUED);
  }
  // Two batches (3 + 2): their events left in at most two turns, not one each.
  expect(new Set(published.map((p) => p.turn)).size).toBeLessThanOrEqual(2);
  expect(published.some((p) => p.event.jobId === alive)).toBe(false);

  // Nothing more to rescue, nothing more announced.
  expect(await rescuer.runOnce()).toBe(0);
  expect(published).toHaveLength(5);
});
