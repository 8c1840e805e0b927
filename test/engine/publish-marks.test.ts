import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { poolSql } from '../../src/engine/db/sql';
import { insertJob } from '../../src/engine/queries/insert-job';
import { JobStatus } from '../../src/engine/types';
import { buildEngine, createTestDb, newJobArgs, waitForJob } from '../support/engine-harness';

/**
 * A publisher pass claims a batch of PENDING rows (PUBLISHING), then marks the batch
 * before it PUBLISHED. That mark is bookkeeping: when it fails, the batch just claimed
 * is sent all the same, or it would wait without a message for the outbox republisher.
 */
let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine | undefined;

beforeAll(async () => {
  ctx = await createTestDb('publish_marks');
  // Every statement that marks rows PUBLISHED fails, whatever rows it finds.
  await ctx.db.pool.query(`
    CREATE FUNCTION test_refuse_published_marks() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF current_query() LIKE '%SET state = ''PUBLISHED''%' THEN
        RAISE EXCEPTION 'marks refused for the test';
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER test_refuse_published_marks BEFORE UPDATE ON job_outbox
      FOR EACH STATEMENT EXECUTE FUNCTION test_refuse_published_marks();`);
});
afterAll(async () => {
  await engine?.stop(2_000);
  await ctx?.close();
});

describe('a publisher pass whose PUBLISHED mark fails', () => {
  it('still sends the batch it claimed before the mark: every job runs', async () => {
    const sql = poolSql(ctx.db.pool);
    const jobs = [newJobArgs('PLAIN', { n: 1 }), newJobArgs('PLAIN', { n: 2 }), newJobArgs('PLAIN', { n: 3 })];
    for (const args of jobs) await insertJob(sql, args);
    engine = buildEngine({
      db: ctx.db,
      // One row per batch: the second batch is claimed before the first is marked.
      settings: { publisherBatchSize: 1, publisherPollMs: 600_000 },
      registrations: [{ kind: 'PLAIN', defaults: { consumers: 2 }, processor: async () => ({ ok: true }) }],
    });
    await engine.start();
    for (const args of jobs) expect((await waitForJob(engine, args.jobId)).status).toBe(JobStatus.SUCCEEDED);
    // No mark landed: the rows went from PUBLISHING to their claims.
    const { rows } = await ctx.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM job_outbox WHERE published_at IS NOT NULL`);
    expect(rows[0]!.n).toBe(0);
  });
});
