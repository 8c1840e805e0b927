/**
 * Nothing waits without bound on the way to a runner: a retry's back-off is kept in
 * PostgreSQL (a broker restart cannot drop it), an unroutable publish is a failed
 * publish, a claim lost in a database crash is sent again at once, and a PUBLISHED row
 * is sent again after a bound even while its queue holds a backlog.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'amqplib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { InMemoryTransport } from '../../src/engine/transport/in-memory-transport';
import { rabbitMqTopology, RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import { PublishRefusedError } from '../../src/engine/transport/transport';
import { asJobId, asOutboxId, JobStatus } from '../../src/engine/types';
import { buildEngine, createTestDb, outboxRows, waitForJob, until } from '../support/engine-harness';
import { privateRabbitSupported, startPrivateRabbit, type PrivateRabbit } from '../support/private-rabbit';
import { requireRabbit } from '../support/services';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine | undefined;

beforeAll(async () => {
  ctx = await createTestDb('engine_delivery');
});
afterEach(async () => {
  await engine?.stop(1_000);
  engine = undefined;
});
afterAll(async () => {
  await ctx?.close();
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * Starts an engine running only `kind` (one consumer), enqueues one job of it and returns
 * once its first run has begun. `run` is the processor, told which call this is.
 */
async function firstRunBegun(
  kind: string,
  run: (call: number, context: { signal: AbortSignal }) => Promise<unknown>,
  leaseSeconds?: number,
): Promise<{ jobId: string; calls: () => number }> {
  const begun = gate();
  let calls = 0;
  engine = buildEngine({
    db: ctx.db,
    registrations: [
      {
        kind,
        defaults: { consumers: 1, ...(leaseSeconds === undefined ? {} : { leaseSeconds }) },
        processor: async (context) => {
          calls++;
          begun.open();
          return run(calls, context);
        },
      },
    ],
  });
  await engine.start();
  const { job } = await engine.enqueue({ kind, input: {} });
  await begun.opened;
  return { jobId: job.id, calls: () => calls };
}

/**
 * What a database crash that loses the claim's commit (claims commit without fsync)
 * leaves behind: the outbox row and the job as they were before the claim. The runner
 * does not know; it goes on with the job.
 */
async function loseClaim(jobId: string): Promise<void> {
  const { rowCount } = await ctx.db.pool.query(
    `WITH lost AS (
       UPDATE job_outbox SET state = 'PUBLISHED', processing_token = NULL, lease_expires_at = NULL,
         processing_attempts = processing_attempts - 1
       WHERE job_id = $1 AND state = 'PROCESSING' RETURNING job_id
     )
     UPDATE jobs j SET status = 'QUEUED', attempts = j.attempts - 1, started_at = NULL, message = NULL, sequence = j.sequence - 1
     FROM lost WHERE j.id = lost.job_id`,
    [jobId],
  );
  expect(rowCount, 'a claimed job to undo').toBe(1);
}

describe('a claim lost in a database crash is sent again at once (not left to the republisher)', () => {
  it('found by the heartbeat: the aborted job goes back to PENDING and runs again', async () => {
    // The shortest lease: the heartbeat comes after 5 s.
    const { jobId, calls } = await firstRunBegun(
      'LOST_HEARTBEAT',
      async (call, { signal }) => {
        if (call > 1) return 'second run';
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        throw signal.reason;
      },
      5,
    );
    await loseClaim(jobId);
    // Heartbeat within 5 s, then the publisher at once; the maintenance passes do not run here.
    const done = await waitForJob(engine!, jobId, undefined, 15_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(done.result).toBe('second run');
    expect(calls()).toBe(2);
    const rows = await outboxRows(ctx.db.pool, jobId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ state: 'COMPLETED', processing_attempts: 1 });
  });

  it('found by the completion (after the delivery was settled): the job goes back to PENDING and runs again', async () => {
    const finish = gate();
    const { jobId, calls } = await firstRunBegun('LOST_COMPLETION', async (call) => {
      if (call > 1) return 'second run';
      await finish.opened;
      return 'first run';
    });
    await loseClaim(jobId);
    finish.open();
    const done = await waitForJob(engine!, jobId, undefined, 10_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(done.result).toBe('second run');
    expect(calls()).toBe(2);
  });

  it('a lease taken over by another runner is left alone (no extra copy)', async () => {
    const finish = gate();
    const { jobId, calls } = await firstRunBegun('TAKEN_OVER', async () => {
      await finish.opened;
      return 'done';
    });
    // The lease rescuer put the row back and the publisher sent it again: PUBLISHED with
    // the rescued claim's attempt count. The message on its way brings it back; the old
    // runner must not add another.
    await ctx.db.pool.query(
      `UPDATE job_outbox SET state = 'PUBLISHED', processing_token = NULL, lease_expires_at = NULL WHERE job_id = $1`,
      [jobId],
    );
    await ctx.db.pool.query(`UPDATE jobs SET status = 'QUEUED' WHERE id = $1`, [jobId]);
    finish.open();
    await until('the runner to be done with it', () => engine!.runner!.completionsPending() === 0 && engine!.runner!.activeByKind().TAKEN_OVER === 0);
    await sleep(500);
    expect(calls()).toBe(1);
    expect((await outboxRows(ctx.db.pool, jobId))[0]).toMatchObject({ state: 'PUBLISHED', processing_attempts: 1 });
  });
});

describe('a PUBLISHED row waits at most OUTBOX_PUBLISHED_MAX_WAIT_SECONDS, backlog or not', () => {
  it('is sent again past the bound even while its kind’s queue holds messages; younger rows of that kind wait', async () => {
    const transport = new InMemoryTransport();
    engine = buildEngine({
      db: ctx.db,
      transport,
      registrations: [{ kind: 'BACKLOG', defaults: { consumers: 1 }, processor: async () => null }],
      // No worker: the queue keeps what it holds, a backlog that never drains.
      roles: { worker: false, publisher: false },
      settings: { republishAfterSeconds: 60, publishedMaxWaitSeconds: 900 },
    });
    await transport.publish([{ outboxId: asOutboxId(randomUUID()), jobId: asJobId(randomUUID()), kind: 'BACKLOG' }]);
    expect(await transport.waiting('BACKLOG')).toBe(1);
    const seed = async (waitedSql: string) => {
      const jobId = randomUUID();
      const outboxId = randomUUID();
      await ctx.db.pool.query(`INSERT INTO jobs (id, kind, status, input) VALUES ($1, 'BACKLOG', 'QUEUED', '{}'::jsonb)`, [jobId]);
      await ctx.db.pool.query(
        `INSERT INTO job_outbox (id, job_id, kind, state, published_at, updated_at, available_at)
         VALUES ($1, $2, 'BACKLOG', 'PUBLISHED', ${waitedSql}, ${waitedSql}, ${waitedSql})`,
        [outboxId, jobId],
      );
      return jobId;
    };
    const waitedTooLong = await seed(`now() - interval '20 minutes'`);
    const backlogged = await seed(`now() - interval '10 minutes'`);
    expect(await engine.outboxRepublisher.runOnce()).toBeGreaterThanOrEqual(1);
    expect((await outboxRows(ctx.db.pool, waitedTooLong))[0].state).toBe('PENDING');
    expect((await outboxRows(ctx.db.pool, backlogged))[0].state).toBe('PUBLISHED');
  });
});

const privateBroker = requireRabbit() && privateRabbitSupported() && process.getuid?.() === 0;

describe.runIf(privateBroker)('RabbitMQ (a private node): retries and publishes that cannot be lost', () => {
  let rabbit: PrivateRabbit;
  const prefix = 'jiaowu_durability';
  const topology = rabbitMqTopology(prefix);
  const transports: RabbitMqTransport[] = [];
  const newTransport = () => {
    const transport = new RabbitMqTransport({ url: rabbit.url, prefix, logger: silentLogger, recovery: { initialDelay: 100, maxDelay: 1_000 } });
    transports.push(transport);
    return transport;
  };

  beforeAll(async () => {
    rabbit = await startPrivateRabbit();
  }, 90_000);
  afterAll(async () => {
    await engine?.stop(1_000);
    engine = undefined;
    for (const transport of transports) await transport.close().catch(() => undefined);
    await rabbit?.destroy();
  }, 60_000);

  async function queueDepth(queue: string): Promise<number> {
    const model = await connect(rabbit.url);
    try {
      const channel = await model.createChannel();
      return (await channel.checkQueue(queue)).messageCount;
    } finally {
      await model.close();
    }
  }

  async function deleteQueue(queue: string): Promise<void> {
    const model = await connect(rabbit.url);
    try {
      await (await model.createChannel()).deleteQueue(queue);
    } finally {
      await model.close();
    }
  }

  it('an unroutable publish is refused, not confirmed; the row stays PENDING until its queue is back, then is really in it', async () => {
    const transport = newTransport();
    await transport.start(['UNROUTED']);
    await deleteQueue(topology.workQueue('UNROUTED'));
    const lost = { outboxId: asOutboxId(randomUUID()), jobId: asJobId(randomUUID()), kind: 'UNROUTED' };
    const refusal = await transport.publish([lost]).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal, 'the broker returned it: the publish must fail').toBeInstanceOf(Error);
    expect(refusal).toBeInstanceOf(PublishRefusedError);
    expect((refusal as PublishRefusedError).refusedOutboxIds).toEqual([lost.outboxId]);
    expect((refusal as Error).message).toMatch(/unroutable/);
    // The next publish of that kind declares its queue again.
    await transport.publish([lost]);
    expect(await queueDepth(topology.workQueue('UNROUTED'))).toBe(1);

    // Through the outbox: a publisher-only engine (no consumer to declare the queue again).
    await deleteQueue(topology.workQueue('UNROUTED'));
    engine = buildEngine({
      db: ctx.db,
      transport,
      registrations: [{ kind: 'UNROUTED', defaults: { consumers: 1 }, processor: async () => null }],
      roles: { worker: false },
    });
    await engine.start();
    await deleteQueue(topology.workQueue('UNROUTED'));
    const { job } = await engine.enqueue({ kind: 'UNROUTED', input: {} });
    await until('the publish to fail and be tried again', async () => /unroutable/.test((await outboxRows(ctx.db.pool, job.id))[0]?.last_error ?? ''));
    await until('the row to be PUBLISHED', async () => (await outboxRows(ctx.db.pool, job.id))[0]?.state === 'PUBLISHED');
    expect(await queueDepth(topology.workQueue('UNROUTED'))).toBe(1);
  }, 60_000);

  it('a retry waits in PostgreSQL, not in a broker timer: a broker restart during the back-off loses nothing', async () => {
    let calls = 0;
    engine = buildEngine({
      db: ctx.db,
      transport: newTransport(),
      registrations: [
        {
          kind: 'RETRIED',
          defaults: { consumers: 1 },
          processor: async () => {
            calls++;
            if (calls === 1) throw new Error('first attempt fails');
            return 'second attempt';
          },
        },
      ],
      settings: { retryBaseMs: 6_000, retryMaxMs: 6_000 },
    });
    await engine.start();
    const { job } = await engine.enqueue({ kind: 'RETRIED', input: {} });
    await until('the first attempt to be released', async () => calls === 1 && (await outboxRows(ctx.db.pool, job.id))[0]?.last_error != null);
    const { rows } = await ctx.db.pool.query(
      `SELECT state, extract(epoch FROM available_at - now()) * 1000 AS due_in_ms FROM job_outbox WHERE job_id = $1`,
      [job.id],
    );
    expect(rows[0].state).toBe('PENDING');
    expect(Number(rows[0].due_in_ms)).toBeGreaterThan(1_000);
    for (const ms of topology.delayBucketsMs) expect(await queueDepth(topology.delay(ms))).toBe(0);
    await rabbit.stop();
    await rabbit.start();
    const done = await waitForJob(engine, job.id, undefined, 45_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(done.attempts).toBe(2);
    expect(calls).toBe(2);
  }, 90_000);
});
