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

  it('writes the enqueues of one turn with one statement, each job with its own outbox row', async () => {
    const { result, count } = await countSql(() => Promise.all(Array.from({ length: 20 }, (_, n) => engine.enqueue({ kind: 'PLAIN', input: { batch: n }, exclusiveKey: `batch:${n}` }))));
    expect(count.statements).toBe(1);
    expect(new Set(result.map((r) => r.job.id)).size).toBe(20);
    result.forEach((r, n) => expect(r).toMatchObject({ created: true, job: { status: JobStatus.QUEUED, input: { batch: n }, exclusiveKey: `batch:${n}` } }));
    for (const r of result) expect(await outboxRows(ctx.db.pool, r.job.id)).toHaveLength(1);
  });

  it('in one batch, a taken key fails only its own enqueue: the same exclusive key twice is one job and one CONFLICT, a repeated idempotency key one job', async () => {
    const held = await engine.enqueue({ kind: 'PLAIN', input: { n: 10 }, exclusiveKey: 'held' });
    const settled = await Promise.allSettled([
      engine.enqueue({ kind: 'PLAIN', input: { n: 11 }, exclusiveKey: 'pair' }),
      engine.enqueue({ kind: 'PLAIN', input: { n: 12 }, exclusiveKey: 'pair' }),
      engine.enqueue({ kind: 'PLAIN', input: { n: 13 }, exclusiveKey: 'held' }),
      engine.enqueue({ kind: 'PLAIN', input: { n: 14 }, idempotencyKey: 'twice' }),
      engine.enqueue({ kind: 'PLAIN', input: { n: 14 }, idempotencyKey: 'twice' }),
      engine.enqueue({ kind: 'PLAIN', input: { n: 15 } }),
    ]);
    const [pairA, pairB, heldAgain, twiceA, twiceB, free] = settled;
    const pair = [pairA, pairB];
    expect(pair.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    const pairWinner = (pair.find((s) => s.status === 'fulfilled') as PromiseFulfilledResult<{ job: { id: string } }>).value.job.id;
    expect((pair.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining(`Job ${pairWinner} (QUEUED) is already active for pair`),
    });
    expect(heldAgain).toMatchObject({ status: 'rejected', reason: { code: 'CONFLICT', message: expect.stringContaining(`Job ${held.job.id} (QUEUED)`) } });
    expect(twiceA.status === 'fulfilled' && twiceB.status === 'fulfilled').toBe(true);
    const [a, b] = [twiceA, twiceB].map((s) => (s as PromiseFulfilledResult<{ job: { id: string }; created: boolean }>).value);
    expect(a!.job.id).toBe(b!.job.id);
    expect([a!.created, b!.created].sort()).toEqual([false, true]);
    expect(free).toMatchObject({ status: 'fulfilled', value: { created: true } });
    expect(await jobsWithKey('pair')).toBe(1);
    expect(await jobsWithKey('held')).toBe(1);
    const orphans = await ctx.db.pool.query('SELECT count(*)::int AS n FROM jobs j WHERE NOT EXISTS (SELECT 1 FROM job_outbox o WHERE o.job_id = j.id)');
    expect(orphans.rows[0].n).toBe(0);
  });

  it('a job the batch statement refuses fails alone; the others of its batch are written', async () => {
    // A NUL character is valid JSON text but no jsonb value: PostgreSQL refuses the whole statement.
    const settled = await Promise.allSettled([
      engine.enqueue({ kind: 'PLAIN', input: { n: 20 } }),
      engine.enqueue({ kind: 'PLAIN', input: { bad: 'a\u0000b' } }),
      engine.enqueue({ kind: 'PLAIN', input: { n: 21 } }),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const written = await ctx.db.pool.query("SELECT count(*)::int AS n FROM jobs WHERE input @> '{\"n\": 20}' OR input @> '{\"n\": 21}'");
    expect(written.rows[0].n).toBe(2);
  });

  it("in a caller's transaction, an active exclusive key is a CONFLICT naming the job, and the transaction stays usable", async () => {
    const held = await engine.enqueue({ kind: 'PLAIN', input: { n: 30 }, exclusiveKey: 'in-tx' });
    const after = await ctx.db.orm.em.fork().transactional(async (em) => {
      await expect(engine.enqueue({ kind: 'PLAIN', input: { n: 31 }, exclusiveKey: 'in-tx' }, em)).rejects.toMatchObject({
        code: 'CONFLICT',
        message: expect.stringContaining(`Job ${held.job.id} (QUEUED) is already active for in-tx`),
      });
      return engine.enqueue({ kind: 'PLAIN', input: { n: 32 }, exclusiveKey: 'in-tx-other' }, em);
    });
    expect(after.created).toBe(true);
    expect(await jobsWithKey('in-tx')).toBe(1);
    expect(await jobsWithKey('in-tx-other')).toBe(1);
  });
});
