/**
 * Cancel and claim race for the same jobs on real PostgreSQL. Both lock a job's outbox
 * row and the job row; taken in opposite orders, a close race deadlocks (40P01) and
 * fails a whole claim batch or the API's cancel. Every race here must end without one,
 * and each job must end in a state that one of the two orders explains.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { poolSql } from '../../src/engine/db/sql';
import type { JobEngine } from '../../src/engine/engine';
import { claimMessages } from '../../src/engine/queries/claim-message';
import { buildEngine, createTestDb } from '../support/engine-harness';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
/** Not started: only its cancel (what the API calls) is used; the claims are the runner's statement. */
let engine: JobEngine;
beforeAll(async () => {
  ctx = await createTestDb('engine_cancel_claim');
  engine = buildEngine({ db: ctx.db, registrations: [], roles: { publisher: false, worker: false } });
});
afterAll(async () => {
  await ctx?.close();
});

const ROUNDS = 12;
const JOBS_PER_ROUND = 40;
/** Claims per statement, as the runner batches them. */
const CLAIM_BATCH = 4;

async function seedPublished(count: number): Promise<Array<{ jobId: string; outboxId: string }>> {
  const seeded = Array.from({ length: count }, () => ({ jobId: randomUUID(), outboxId: randomUUID() }));
  await ctx.db.pool.query(
    `INSERT INTO jobs (id, kind, status, input) SELECT id, 'RACE', 'QUEUED', '{}'::jsonb FROM unnest($1::uuid[]) AS t(id)`,
    [seeded.map((s) => s.jobId)],
  );
  await ctx.db.pool.query(
    `INSERT INTO job_outbox (id, job_id, kind, state, published_at)
     SELECT o, j, 'RACE', 'PUBLISHED', now() FROM unnest($1::uuid[], $2::uuid[]) AS t(o, j)`,
    [seeded.map((s) => s.outboxId), seeded.map((s) => s.jobId)],
  );
  return seeded;
}

it('many concurrent cancel/claim races: no deadlock, and each job ends as one of the two orders leaves it', async () => {
  const claimSql = poolSql(ctx.db.relaxedPool);
  const errors: unknown[] = [];
  const all: Array<{ jobId: string; outboxId: string }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const jobs = await seedPublished(JOBS_PER_ROUND);
    all.push(...jobs);
    // Claim batches in one order, cancels in the reverse one, all at once.
    const batches: Array<typeof jobs> = [];
    for (let i = 0; i < jobs.length; i += CLAIM_BATCH) batches.push(jobs.slice(i, i + CLAIM_BATCH));
    const claims = batches.map((batch) =>
      claimMessages(
        claimSql,
        batch.map((j) => ({ outboxId: j.outboxId, jobId: j.jobId, kind: 'RACE', token: randomUUID(), leaseSeconds: 60, attemptLimit: 5 })),
      ).catch((error: unknown) => errors.push(error)),
    );
    const cancels = [...jobs].reverse().map((j) => engine.cancel(j.jobId).catch((error: unknown) => errors.push(error)));
    await Promise.all([...claims, ...cancels]);
  }

  const codes = errors.map((e) => (e as { code?: string }).code ?? String(e));
  expect(codes, 'a cancel or a claim failed (40P01 is a deadlock)').toEqual([]);

  // Cancel first: CANCELLED, the row completed (the claim then finds nothing).
  // Claim first: RUNNING with the cancel requested, the row PROCESSING (its runner
  // sees the request and ends it CANCELLED).
  const { rows } = await ctx.db.pool.query(
    `SELECT j.status, j.cancel_requested_at IS NOT NULL AS requested, o.state
     FROM jobs j JOIN job_outbox o ON o.job_id = j.id WHERE j.id = ANY($1::uuid[])`,
    [all.map((j) => j.jobId)],
  );
  expect(rows).toHaveLength(all.length);
  const explained = rows.filter(
    (r) => (r.status === 'CANCELLED' && r.state === 'COMPLETED') || (r.status === 'RUNNING' && r.requested && r.state === 'PROCESSING'),
  );
  expect(explained).toHaveLength(all.length);
}, 60_000);
