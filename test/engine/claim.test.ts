import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { claimBatch } from '../../src/engine/claim-batch';
import { poolSql, type Sql } from '../../src/engine/db/sql';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { claimMessage } from '../../src/engine/queries/claim-message';
import { getOutboxState } from '../../src/engine/queries/get-outbox-state';
import { completeJob } from '../../src/engine/queries/complete-job';
import { finishJob } from '../../src/engine/queries/finish-job';
import { insertJob } from '../../src/engine/queries/insert-job';
import { LAST_ERROR_MAX_LENGTH, releaseMessage } from '../../src/engine/queries/release-message';
import { touchJob } from '../../src/engine/queries/touch-job';
import { InMemoryTransport } from '../../src/engine/transport/in-memory-transport';
import { RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import type { JobTransport } from '../../src/engine/transport/transport';
import { JobStatus, OutboxState } from '../../src/engine/types';
import { buildEngine, createTestDb, outboxRows, waitForJob } from '../support/engine-harness';
import { deleteEngineTopology, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let sql: Sql;
let engine: JobEngine | undefined;

beforeAll(async () => {
  ctx = await createTestDb('engine_claim');
  sql = poolSql(ctx.db.pool);
});
afterEach(async () => {
  await engine?.stop(1_000);
  engine = undefined;
});
afterAll(async () => {
  await ctx?.close();
});

/** What each seeded message names (its job and kind), for the claim. */
const seeded = new Map<string, { jobId: string; kind: string }>();

/** A QUEUED job and its PENDING outbox row, written with the engine's own insert. */
async function seedJob(kind = 'CLAIM_KIND'): Promise<{ jobId: string; outboxId: string }> {
  const jobId = randomUUID();
  const outboxId = randomUUID();
  const row = await insertJob(sql, { jobId, outboxId, kind, input: { n: 1 }, requestedBy: null, idempotencyKey: null, exclusiveKey: null });
  expect(row?.status).toBe('QUEUED');
  seeded.set(outboxId, { jobId, kind });
  return { jobId, outboxId };
}

async function outboxRow(outboxId: string) {
  const { rows } = await ctx.db.pool.query('SELECT * FROM job_outbox WHERE id = $1', [outboxId]);
  return rows[0];
}

async function jobRow(jobId: string) {
  const { rows } = await ctx.db.pool.query('SELECT * FROM jobs WHERE id = $1', [jobId]);
  return rows[0];
}

const claim = (outboxId: string, token: string, using: Sql = sql, attemptLimit = 5, leaseSeconds = 30) =>
  claimMessage(using, { outboxId, ...seeded.get(outboxId)!, token, leaseSeconds, attemptLimit });

describe('claim', () => {
  it('two claims of one row in one batch (a copy and a fast start in one turn): exactly one wins', async () => {
    const claims = claimBatch(sql);
    const { outboxId } = await seedJob();
    const [first, second] = [randomUUID(), randomUUID()].map((token) => ({ outboxId, ...seeded.get(outboxId)!, token, leaseSeconds: 30, attemptLimit: 5 }));
    const results = await claims([first!, second!]);
    const won = results.filter((r) => r !== undefined);
    expect(won).toHaveLength(1);
    const winner = results[0] ? first! : second!;
    expect((await outboxRow(outboxId)).processing_token).toBe(winner.token);
  });

  it('an offered claim (no delivery in hand) takes only a row whose message is sent or on its way', async () => {
    for (const state of ['PENDING', 'PUBLISHING', 'PUBLISHED', 'EXPIRED'] as const) {
      const { outboxId } = await seedJob();
      if (state === 'EXPIRED') {
        await ctx.db.pool.query(
          `UPDATE job_outbox SET state = 'PROCESSING', processing_token = $2, lease_expires_at = now() - interval '1 second' WHERE id = $1`,
          [outboxId, randomUUID()],
        );
      } else await ctx.db.pool.query(`UPDATE job_outbox SET state = $2 WHERE id = $1`, [outboxId, state]);
      const won = await claimMessage(sql, { outboxId, ...seeded.get(outboxId)!, token: randomUUID(), leaseSeconds: 30, attemptLimit: 5, offered: true });
      expect([state, won !== undefined]).toEqual([state, state === 'PUBLISHING' || state === 'PUBLISHED']);
    }
  });

  it('50 concurrent claims on one row over separate connections: exactly one wins, in every claimable state', async () => {
    const racers = new pg.Pool({ connectionString: ctx.db.url, max: 50 });
    try {
      const clients = await Promise.all(Array.from({ length: 50 }, () => racers.connect()));
      try {
        // PENDING, PUBLISHED, and PROCESSING with an expired lease are all claimable.
        for (const setup of ['PENDING', 'PUBLISHED', 'EXPIRED'] as const) {
          const { jobId, outboxId } = await seedJob();
          if (setup === 'PUBLISHED') await ctx.db.pool.query(`UPDATE job_outbox SET state = 'PUBLISHED' WHERE id = $1`, [outboxId]);
          if (setup === 'EXPIRED') {
            await ctx.db.pool.query(
              `UPDATE job_outbox SET state = 'PROCESSING', processing_token = $2, lease_expires_at = now() - interval '1 second' WHERE id = $1`,
              [outboxId, randomUUID()],
            );
          }
          const before = (await outboxRow(outboxId)).processing_attempts as number;
          const tokens = clients.map(() => randomUUID());
          const results = await Promise.all(clients.map((client, i) => claim(outboxId, tokens[i]!, poolSql(client))));
          const winners = results.map((r, i) => (r ? i : -1)).filter((i) => i >= 0);
          expect(winners, `state ${setup}`).toHaveLength(1);
          const row = await outboxRow(outboxId);
          expect(row.state).toBe('PROCESSING');
          expect(row.processing_token).toBe(tokens[winners[0]!]);
          expect(row.processing_attempts).toBe(before + 1);
          expect(results[winners[0]!]!.id).toBe(jobId);
          const job = await jobRow(jobId);
          expect(job.status).toBe('RUNNING');
          expect(job.attempts).toBe(before + 1);
        }
      } finally {
        for (const client of clients) client.release();
      }
    } finally {
      await racers.end();
    }
  });

  it('counts the attempt, clears last_error, sets a lease of leaseSeconds', async () => {
    const { jobId, outboxId } = await seedJob();
    await ctx.db.pool.query(`UPDATE job_outbox SET processing_attempts = 2, last_error = 'earlier failure' WHERE id = $1`, [outboxId]);
    const result = await claim(outboxId, randomUUID(), sql, 5, 40);
    expect(result?.processing_attempts).toBe(3);
    expect(result?.id).toBe(jobId);
    expect(result?.message).toBe('Attempt 3 started');
    const row = await outboxRow(outboxId);
    expect(row.last_error).toBeNull();
    expect(row.processing_attempts).toBe(3);
    const state = await getOutboxState(sql, outboxId);
    expect(state!.lease_ms_left!).toBeGreaterThan(38_000);
    expect(state!.lease_ms_left!).toBeLessThanOrEqual(40_000);
  });

  it('a live lease cannot be claimed; an expired one can', async () => {
    const { outboxId } = await seedJob();
    const first = randomUUID();
    expect(await claim(outboxId, first)).toBeDefined();
    expect(await claim(outboxId, randomUUID())).toBeUndefined();
    const held = await outboxRow(outboxId);
    expect(held.processing_token).toBe(first);
    expect(held.processing_attempts).toBe(1);

    await ctx.db.pool.query(`UPDATE job_outbox SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [outboxId]);
    const second = randomUUID();
    const taken = await claim(outboxId, second);
    expect(taken?.processing_attempts).toBe(2);
    expect((await outboxRow(outboxId)).processing_token).toBe(second);
  });

  it('a COMPLETED row cannot be claimed', async () => {
    const { outboxId } = await seedJob();
    await ctx.db.pool.query(`UPDATE job_outbox SET state = 'COMPLETED', completed_at = now() WHERE id = $1`, [outboxId]);
    expect(await claim(outboxId, randomUUID())).toBeUndefined();
    expect((await outboxRow(outboxId)).processing_attempts).toBe(0);
  });
});

describe('claims that must not start the job', () => {
  it('a cancel requested before the claim: the claim comes back with id null and the runner ends the job CANCELLED', async () => {
    const { jobId, outboxId } = await seedJob();
    await ctx.db.pool.query(`UPDATE jobs SET cancel_requested_at = now() WHERE id = $1`, [jobId]);
    const result = await claim(outboxId, randomUUID());
    expect(result!.id ?? null).toBeNull();
    expect(result!.job_status).toBe('QUEUED');

    let calls = 0;
    const transport = new InMemoryTransport();
    engine = buildEngine({
      db: ctx.db,
      transport,
      registrations: [{ kind: 'CANCEL_FIRST', defaults: { consumers: 1 }, processor: async () => ++calls }],
    });
    const { job } = await engine.enqueue({ kind: 'CANCEL_FIRST', input: {} });
    await ctx.db.pool.query(`UPDATE jobs SET cancel_requested_at = now() WHERE id = $1`, [job.id]);
    await engine.start();
    const done = await waitForJob(engine, job.id, undefined, 10_000);
    expect(done.status).toBe(JobStatus.CANCELLED);
    expect(calls).toBe(0);
    expect((await outboxRows(ctx.db.pool, job.id))[0].state).toBe('COMPLETED');
  });

  it('a duplicate delivery of a completed job is acknowledged without running it again', async () => {
    let calls = 0;
    const transport = new InMemoryTransport();
    engine = buildEngine({
      db: ctx.db,
      transport,
      registrations: [{ kind: 'ONCE', defaults: { consumers: 2 }, processor: async () => ++calls }],
    });
    await engine.start();
    const { job } = await engine.enqueue({ kind: 'ONCE', input: {} });
    const done = await waitForJob(engine, job.id, undefined, 10_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    const [row] = await outboxRows(ctx.db.pool, job.id);
    // What a broker redelivery, a republish or a second publisher would cause.
    await transport.publish([0, 1, 2].map(() => ({ outboxId: row.id, jobId: job.id, kind: 'ONCE' })));
    await new Promise((r) => setTimeout(r, 300));
    expect(await transport.waiting('ONCE')).toBe(0);
    expect(calls).toBe(1);
    const after = await engine.getJob(job.id);
    expect(after!.sequence).toBe(done.sequence);
    expect(after!.status).toBe(JobStatus.SUCCEEDED);
    expect((await outboxRows(ctx.db.pool, job.id))[0].processing_attempts).toBe(1);
  });
});

describe('stolen lease', () => {
  it("the old owner's complete, release, finish and heartbeat change nothing; the new owner's work stands", async () => {
    const { jobId, outboxId } = await seedJob();
    const a = randomUUID();
    const b = randomUUID();
    expect(await claim(outboxId, a)).toBeDefined();
    await ctx.db.pool.query(`UPDATE job_outbox SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [outboxId]);
    expect(await claim(outboxId, b)).toBeDefined();

    const outboxBefore = await outboxRow(outboxId);
    const jobBefore = await jobRow(jobId);
    expect(outboxBefore.processing_token).toBe(b);

    expect(await completeJob(sql, { outboxId, token: a, result: { by: 'A' }, message: 'A done' })).toBeUndefined();
    expect(
      await releaseMessage(sql, {
        outboxId,
        token: a,
        releaseTo: OutboxState.PENDING,
        error: 'A failed',
        retryInMs: 0,
        message: 'A released',
        refundAttempt: true,
      }),
    ).toBeUndefined();
    expect(
      await finishJob(sql, { outboxId, token: a, status: JobStatus.FAILED, error: 'A gave up', message: 'A failed' }),
    ).toBeUndefined();
    expect(
      await touchJob(sql, { outboxId, token: a, leaseSeconds: 3_600, currentStep: 'A step', progress: 0.9, message: 'A progress' }),
    ).toBeUndefined();

    expect(await outboxRow(outboxId)).toEqual(outboxBefore);
    expect(await jobRow(jobId)).toEqual(jobBefore);

    const done = await completeJob(sql, { outboxId, token: b, result: { by: 'B' }, message: null });
    expect(done?.status).toBe('SUCCEEDED');
    expect(done?.result).toEqual({ by: 'B' });
    const after = await outboxRow(outboxId);
    expect(after.state).toBe('COMPLETED');
    expect(after.processing_token).toBeNull();
  });

  it('a heartbeat extends only its own lease', async () => {
    const one = await seedJob();
    const two = await seedJob();
    const tokenOne = randomUUID();
    const tokenTwo = randomUUID();
    await claim(one.outboxId, tokenOne, sql, 5, 10);
    await claim(two.outboxId, tokenTwo, sql, 5, 10);
    const twoBefore = await outboxRow(two.outboxId);

    // token one on row two: nothing
    expect(
      await touchJob(sql, { outboxId: two.outboxId, token: tokenOne, leaseSeconds: 600, currentStep: null, progress: null, message: null }),
    ).toBeUndefined();
    expect(await outboxRow(two.outboxId)).toEqual(twoBefore);

    const touched = await touchJob(sql, {
      outboxId: one.outboxId,
      token: tokenOne,
      leaseSeconds: 600,
      currentStep: 'step 1',
      progress: 0.25,
      message: 'working',
    });
    expect(touched?.current_step).toBe('step 1');
    expect(Number(touched?.progress)).toBe(0.25);
    const leftOne = (await getOutboxState(sql, one.outboxId))!.lease_ms_left!;
    const leftTwo = (await getOutboxState(sql, two.outboxId))!.lease_ms_left!;
    expect(leftOne).toBeGreaterThan(590_000);
    expect(leftTwo).toBeLessThanOrEqual(10_000);
    expect(await outboxRow(two.outboxId)).toEqual(twoBefore);
  });
});

describe('attempt limit', () => {
  it('a claim beyond the limit comes back with id null and attempts > limit; the job is not started', async () => {
    const { jobId, outboxId } = await seedJob();
    await ctx.db.pool.query(`UPDATE job_outbox SET processing_attempts = 3 WHERE id = $1`, [outboxId]);
    const result = await claim(outboxId, randomUUID(), sql, 3);
    expect(result).toBeDefined();
    expect(result!.id ?? null).toBeNull();
    expect(result!.processing_attempts).toBe(4);
    expect(result!.job_status).toBe('QUEUED');
    expect((await jobRow(jobId)).status).toBe('QUEUED');
  });

  it('end to end: the runner fails a job over the limit with a message a person can act on, without running it', async () => {
    let calls = 0;
    engine = buildEngine({
      db: ctx.db,
      registrations: [
        {
          kind: 'LIMITED',
          defaults: { consumers: 1 },
          processor: async () => {
            calls++;
            return 'ran';
          },
        },
      ],
      settings: { attemptLimit: 3 },
    });
    const { job } = await engine.enqueue({ kind: 'LIMITED', input: {}, exclusiveKey: 'limited:1' });
    // Three earlier claims used up the series (e.g. a job that kept killing its worker).
    await ctx.db.pool.query(`UPDATE job_outbox SET processing_attempts = 3 WHERE job_id = $1`, [job.id]);
    await engine.start();
    const done = await waitForJob(engine, job.id, undefined, 10_000);
    expect(done.status).toBe(JobStatus.FAILED);
    expect(done.errorMessage).toMatch(/Automatic retries stopped after 3 attempts/);
    expect(done.errorMessage).toContain(job.id);
    expect(done.exclusiveKey).toBeNull();
    expect(calls).toBe(0);
    const [outbox] = await outboxRows(ctx.db.pool, job.id);
    expect(outbox.state).toBe('COMPLETED');
    expect(outbox.processing_attempts).toBe(4);
  });

  it('end to end: a processor that keeps losing its lease ends FAILED at the limit', async () => {
    // Lease 1 s and the heartbeat every 5 s: every attempt's lease expires mid-run and
    // the message, released by nobody, is claimed again by the next delivery.
    let calls = 0;
    const transport = new InMemoryTransport();
    engine = buildEngine({
      db: ctx.db,
      transport,
      registrations: [
        {
          kind: 'HANGS',
          defaults: { consumers: 4, leaseSeconds: 1, attemptLimit: 2 },
          processor: async ({ signal }) => {
            calls++;
            await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
            throw signal.reason;
          },
        },
      ],
    });
    await engine.start();
    const { job } = await engine.enqueue({ kind: 'HANGS', input: {} });
    await waitForJob(engine, job.id, (j) => j.status === JobStatus.RUNNING, 5_000);
    // A second delivery of the same message (what a broker redelivery or the republisher does).
    const [row] = await outboxRows(ctx.db.pool, job.id);
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 1_300));
      await transport.publish([{ outboxId: row.id, jobId: job.id, kind: 'HANGS' }]);
    }
    const done = await waitForJob(engine, job.id, undefined, 10_000);
    expect(done.status).toBe(JobStatus.FAILED);
    expect(done.errorMessage).toMatch(/Automatic retries stopped after 2 attempts/);
    expect(calls).toBe(2);
    const [after] = await outboxRows(ctx.db.pool, job.id);
    expect(after.state).toBe('COMPLETED');
    expect(after.processing_attempts).toBe(3);
  });
});

describe('release for retry', () => {
  it('releaseMessage: PENDING or PUBLISHED as asked, token and lease cleared, back-off in available_at, error cut to 2,000 characters', async () => {
    for (const releaseTo of [OutboxState.PENDING, OutboxState.PUBLISHED] as const) {
      const { jobId, outboxId } = await seedJob();
      const token = randomUUID();
      await claim(outboxId, token);
      const long = `${'x'.repeat(2_500)}END`;
      const row = await releaseMessage(sql, {
        outboxId,
        token,
        releaseTo,
        error: long,
        retryInMs: 5_000,
        message: 'Attempt 1 failed',
        refundAttempt: false,
      });
      expect(row?.status).toBe('QUEUED');
      const { rows } = await ctx.db.pool.query(
        `SELECT state, processing_token, lease_expires_at, last_error, processing_attempts,
           extract(epoch FROM available_at - now()) * 1000 AS due_in_ms
         FROM job_outbox WHERE id = $1`,
        [outboxId],
      );
      const outbox = rows[0];
      expect(outbox.state).toBe(releaseTo);
      expect(outbox.processing_token).toBeNull();
      expect(outbox.lease_expires_at).toBeNull();
      expect(outbox.last_error).toHaveLength(LAST_ERROR_MAX_LENGTH);
      expect(LAST_ERROR_MAX_LENGTH).toBe(2_000);
      expect(outbox.processing_attempts).toBe(1);
      expect(Number(outbox.due_in_ms)).toBeGreaterThan(4_000);
      expect(Number(outbox.due_in_ms)).toBeLessThanOrEqual(5_000);
      expect((await jobRow(jobId)).message).toBe('Attempt 1 failed');
    }
  });

  it('refundAttempt gives the attempt back (shutdown)', async () => {
    const { outboxId } = await seedJob();
    const token = randomUUID();
    await claim(outboxId, token);
    await releaseMessage(sql, {
      outboxId,
      token,
      releaseTo: OutboxState.PENDING,
      error: null,
      retryInMs: 0,
      message: 'interrupted',
      refundAttempt: true,
    });
    expect((await outboxRow(outboxId)).processing_attempts).toBe(0);
  });

  /**
   * The runner-level check: the first attempt fails with a 2,500-character error, and
   * while the retry waits out its back-off we look at the row.
   */
  async function runnerRelease(transport: JobTransport, kind: string) {
    let calls = 0;
    engine = buildEngine({
      db: ctx.db,
      transport,
      registrations: [
        {
          kind,
          defaults: { consumers: 1 },
          processor: async () => {
            calls++;
            if (calls === 1) throw new Error(`${'e'.repeat(2_500)}TAIL`);
            return 'second time lucky';
          },
        },
      ],
      settings: { retryBaseMs: 4_000, retryMaxMs: 4_000 },
    });
    await engine.start();
    const { job } = await engine.enqueue({ kind, input: {} });
    const deadline = Date.now() + 10_000;
    let released;
    while (Date.now() < deadline) {
      const { rows } = await ctx.db.pool.query(
        `SELECT o.state, o.last_error, o.processing_token, extract(epoch FROM o.available_at - now()) * 1000 AS due_in_ms, j.status
         FROM job_outbox o JOIN jobs j ON j.id = o.job_id WHERE o.job_id = $1`,
        [job.id],
      );
      if (calls === 1 && rows[0].last_error) {
        released = rows[0];
        break;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(released, 'the failed attempt was released').toBeDefined();
    expect(released.status).toBe('QUEUED');
    expect(released.processing_token).toBeNull();
    expect(released.last_error).toHaveLength(2_000);
    // equal jitter on 4 s: at least 2 s in the future (minus the polling slack)
    expect(Number(released.due_in_ms)).toBeGreaterThan(1_500);
    const done = await waitForJob(engine, job.id, undefined, 15_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(done.attempts).toBe(2);
    expect(calls).toBe(2);
    return released.state as string;
  }

  it('the runner releases to PENDING on the in-memory (non-durable) transport', async () => {
    expect(await runnerRelease(new InMemoryTransport(), 'RELEASE_MEM')).toBe('PENDING');
  });

  describe.runIf(requireRabbit())('on RabbitMQ (durable)', () => {
    const prefix = uniquePrefix('claim');
    let transport: RabbitMqTransport | undefined;
    afterAll(async () => {
      await engine?.stop(1_000);
      engine = undefined;
      await transport?.close();
      // CLAIM_KIND too: the engine's publisher sends the outbox rows other tests here seeded (seedJob) to its queue.
      await deleteEngineTopology(prefix, ['RELEASE_MQ', 'CLAIM_KIND']);
    });

    it('the runner releases to PENDING here too: the retry waits in PostgreSQL, not in a broker timer', async () => {
      transport = new RabbitMqTransport({ url: rabbitUrl(), prefix, logger: silentLogger });
      expect(transport.durable).toBe(true);
      expect(await runnerRelease(transport, 'RELEASE_MQ')).toBe('PENDING');
    });
  });
});
