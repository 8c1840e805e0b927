/**
 * Processes that start together each run startup recovery; every one's NOT EXISTS sees
 * the outbox before the others commit. A job must still end up with exactly one live
 * outbox row — two would let it run twice at once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../../src/database';
import { poolSql } from '../../src/engine/db/sql';
import { silentLogger } from '../../src/engine/logger';
import { recoverOnStartup } from '../../src/engine/queries/recover-on-startup';
import { createTestDb } from '../support/engine-harness';
import { createTestDatabase } from '../support/services';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
beforeAll(async () => {
  ctx = await createTestDb('engine_recovery_race');
});
afterAll(async () => {
  await ctx?.close();
});

const PROCESSES = 6;
const JOBS = 300;

it('recoveries run at once from several connections give each active job exactly one live outbox row', async () => {
  // Active jobs whose live rows are gone: QUEUED with none at all, RUNNING with only a completed one.
  const ids = Array.from({ length: JOBS }, () => randomUUID());
  await ctx.db.pool.query(
    `INSERT INTO jobs (id, kind, status, input) SELECT id, 'RACE', CASE WHEN n % 2 = 0 THEN 'QUEUED' ELSE 'RUNNING' END, '{}'::jsonb
     FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)`,
    [ids],
  );
  await ctx.db.pool.query(
    `INSERT INTO job_outbox (id, job_id, kind, state, completed_at)
     SELECT gen_random_uuid(), id, kind, 'COMPLETED', now() FROM jobs WHERE status = 'RUNNING'`,
  );

  // Each "process" on its own connection; all recover before any commits (the pause
  // keeps every transaction open until the others have run their statements).
  const clients = await Promise.all(Array.from({ length: PROCESSES }, () => ctx.db.pool.connect()));
  const results = await Promise.allSettled(
    clients.map(async (client) => {
      try {
        await client.query('BEGIN');
        const counts = await recoverOnStartup(poolSql(client), { durableTransport: true });
        await client.query('SELECT pg_sleep(0.3)');
        await client.query('COMMIT');
        return counts.requeued;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    }),
  );

  const failures = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
  expect(failures, 'no recovery may fail (a deadlock or a unique violation would show here)').toEqual([]);
  const requeued = results.map((r) => (r as PromiseFulfilledResult<number>).value);
  expect(requeued.reduce((a, b) => a + b, 0)).toBe(JOBS);

  const { rows } = await ctx.db.pool.query(
    `SELECT j.id, (SELECT count(*)::int FROM job_outbox o WHERE o.job_id = j.id AND o.state <> 'COMPLETED') AS live
     FROM jobs j WHERE j.id = ANY($1::uuid[])`,
    [ids],
  );
  expect(rows).toHaveLength(JOBS);
  expect(rows.filter((r) => r.live !== 1)).toEqual([]);
});

it('the database refuses a second live outbox row for a job, whoever writes it', async () => {
  const jobId = randomUUID();
  await ctx.db.pool.query(`INSERT INTO jobs (id, kind, status, input) VALUES ($1, 'RACE', 'QUEUED', '{}'::jsonb)`, [jobId]);
  await ctx.db.pool.query(`INSERT INTO job_outbox (id, job_id, kind, state) VALUES (gen_random_uuid(), $1, 'RACE', 'PUBLISHED')`, [jobId]);
  await expect(
    ctx.db.pool.query(`INSERT INTO job_outbox (id, job_id, kind, state) VALUES (gen_random_uuid(), $1, 'RACE', 'PENDING')`, [jobId]),
  ).rejects.toMatchObject({ code: '23505', constraint: 'job_outbox_live_job_id_unique' });
  // Completed rows are history: any number may sit beside the live one.
  await ctx.db.pool.query(
    `INSERT INTO job_outbox (id, job_id, kind, state, completed_at) SELECT gen_random_uuid(), $1, 'RACE', 'COMPLETED', now() FROM generate_series(1, 2)`,
    [jobId],
  );
});

it('the migration that makes a live row unique keeps, of existing duplicates, the one a runner holds', async () => {
  const fresh = await createTestDatabase('engine_recovery_dups');
  const db = await openDatabase({ url: fresh.url, poolSize: 2, logger: silentLogger, migrate: false });
  try {
    const migrator = db.orm.getMigrator();
    await migrator.up({ to: 'Migration20261129203640' });
    const [held, newest] = [randomUUID(), randomUUID()];
    await db.pool.query(`INSERT INTO jobs (id, kind, status, input) VALUES ($1, 'RACE', 'RUNNING', '{}'), ($2, 'RACE', 'QUEUED', '{}')`, [held, newest]);
    await db.pool.query(
      `INSERT INTO job_outbox (id, job_id, kind, state, processing_token, lease_expires_at, created_at) VALUES
         ('00000000-0000-4000-8000-000000000001', $1, 'RACE', 'PENDING', NULL, NULL, now()),
         ('00000000-0000-4000-8000-000000000002', $1, 'RACE', 'PROCESSING', gen_random_uuid(), now() + interval '1 minute', now() - interval '1 minute'),
         ('00000000-0000-4000-8000-000000000003', $2, 'RACE', 'PUBLISHED', NULL, NULL, now() - interval '1 minute'),
         ('00000000-0000-4000-8000-000000000004', $2, 'RACE', 'PENDING', NULL, NULL, now())`,
      [held, newest],
    );
    await migrator.up();
    const { rows } = await db.pool.query(`SELECT id FROM job_outbox WHERE state <> 'COMPLETED' ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual(['00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000004']);
  } finally {
    await db.close();
    await fresh.drop();
  }
});
