/**
 * A finished last attempt is spared (spare-attempt.ts) so that a worker dying before the
 * completion commits does not fail a job that succeeded; but only MAX_SPARED_ATTEMPTS
 * times per delivery record, so a job whose worker dies every time at that moment still
 * ends at the attempt limit instead of running again for ever.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { poolSql, type Sql } from '../../src/engine/db/sql';
import { claimMessage } from '../../src/engine/queries/claim-message';
import { insertJob } from '../../src/engine/queries/insert-job';
import { rescueExpiredLeases } from '../../src/engine/queries/rescue-expired-leases';
import { MAX_SPARED_ATTEMPTS, spareAttempt } from '../../src/engine/queries/spare-attempt';
import { createTestDb } from '../support/engine-harness';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let sql: Sql;

beforeAll(async () => {
  ctx = await createTestDb('engine_spare_attempt');
  sql = poolSql(ctx.db.pool);
});
afterAll(async () => {
  await ctx?.close();
});

it('a last attempt is spared at most MAX_SPARED_ATTEMPTS times; after that a worker death counts and the job reaches the limit', async () => {
  const jobId = randomUUID();
  const outboxId = randomUUID();
  const kind = 'SPARED_KIND';
  await insertJob(sql, { jobId, outboxId, kind, input: {}, requestedBy: null, idempotencyKey: null, exclusiveKey: null });
  const attemptLimit = 1;
  const claim = (token: string) => claimMessage(sql, { outboxId, jobId, kind, token, leaseSeconds: 30, attemptLimit });
  /** The worker holding `token` dies: its lease runs out and the rescuer puts the row back. */
  const workerDies = async () => {
    await ctx.db.pool.query(`UPDATE job_outbox SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [outboxId]);
    expect((await rescueExpiredLeases(sql, 10)).map((r) => r.job_id)).toContain(jobId);
  };

  expect(MAX_SPARED_ATTEMPTS).toBeGreaterThanOrEqual(1);
  for (let i = 1; i <= MAX_SPARED_ATTEMPTS; i++) {
    const token = randomUUID();
    const claimed = await claim(token);
    expect(claimed?.id, `claim ${i}: the job runs again on the same attempt`).toBe(jobId);
    expect(claimed?.processing_attempts).toBe(1);
    expect(await spareAttempt(sql, { outboxId, token }), `spare ${i}`).toBe(true);
    await workerDies();
  }
  // Spares spent: the runner would hold the delivery until the commit, and this death counts.
  const token = randomUUID();
  expect((await claim(token))?.id).toBe(jobId);
  expect(await spareAttempt(sql, { outboxId, token })).toBe(false);
  await workerDies();
  const beyond = await claim(randomUUID());
  expect(beyond?.id ?? null).toBeNull();
  expect(beyond?.processing_attempts).toBe(attemptLimit + 1);
  const { rows } = await ctx.db.pool.query(`SELECT spared_attempts FROM job_outbox WHERE id = $1`, [outboxId]);
  expect(rows[0].spared_attempts).toBe(MAX_SPARED_ATTEMPTS);
});
