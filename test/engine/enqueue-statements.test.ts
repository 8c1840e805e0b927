import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { EngineError } from '../../src/engine/errors';
import { JobStatus } from '../../src/engine/types';
import { buildEngine, createTestDb, outboxRows } from '../support/engine-harness';
import { countSql } from '../support/sql-counter';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;

beforeAll(async () => {
  ctx = await createTestDb('enqueue_statements');
  // Never started: enqueue works without the engine running, and nothing else talks to the database.
  engine = buildEngine({ db: ctx.db, registrations: [{ kind: 'PLAIN', defaults: { consumers: 1 }, processor: async () => undefined }] });
});
afterAll(async () => {
  await engine.stop(1_000);
  await ctx.close();
});

const jobsWithKey = async (key: string) => (await ctx.db.pool.query('SELECT count(*)::int AS n FROM jobs WHERE exclusive_key = $1', [key])).rows[0].n as number;

describe('enqueue outside a caller transaction', () => {
  it('writes the job and its outbox row with one statement', async () => {
    const { result, count } = await countSql(() => engine.enqueue({ kind: 'PLAIN', input: { n: 1 }, exclusiveKey: 'plain:1' }));
    expect({ statements: count.statements, rows: count.rows }).toEqual({ statements: 1, rows: 1 });
    expect(result.job.status).toBe(JobStatus.QUEUED);
    expect(await outboxRows(ctx.db.pool, result.job.id)).toHaveLength(1);
  });

  it('answers an active exclusive key with a CONFLICT naming the active job, and writes nothing', async () => {
    const first = await engine.enqueue({ kind: 'PLAIN', input: { n: 2 }, exclusiveKey: 'plain:2' });
    const { result: error } = await countSql(() =>
      engine.enqueue({ kind: 'PLAIN', input: { n: 3 }, exclusiveKey: 'plain:2' }).then(
        () => null,
        (e: unknown) => e,
      ),
    );
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining(`Job ${first.job.id} (QUEUED) is already active for plain:2`) });
    expect(await jobsWithKey('plain:2')).toBe(1);
    const outbox = await ctx.db.pool.query('SELECT count(*)::int AS n FROM job_outbox o JOIN jobs j ON j.id = o.job_id WHERE j.input @> \'{"n": 3}\'');
    expect(outbox.rows[0].n).toBe(0);
  });

  it('returns the same job for a repeated idempotency key, and a CONFLICT for other input', async () => {
    const a = await engine.enqueue({ kind: 'PLAIN', input: { n: 4 }, idempotencyKey: 'same' });
    const b = await engine.enqueue({ kind: 'PLAIN', input: { n: 4 }, idempotencyKey: 'same' });
    expect(b).toEqual({ job: a.job, created: false });
    await expect(engine.enqueue({ kind: 'PLAIN', input: { n: 5 }, idempotencyKey: 'same' })).rejects.toMatchObject({ code: 'CONFLICT' });
  });
});
