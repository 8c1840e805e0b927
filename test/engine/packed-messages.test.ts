/**
 * Several jobs in one RabbitMQ message (`JOBS_PER_MESSAGE_<KIND>`) keep every guarantee
 * of one job per message: each job runs to completion once, a failed attempt retries
 * alone through the outbox, and a graceful stop in the middle of a message hands its
 * unfinished jobs to the next process while the finished ones are not run again.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { insertJobs } from '../../src/engine/queries/insert-jobs';
import { poolSql } from '../../src/engine/db/sql';
import { RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import type { Processor } from '../../src/engine/registry';
import { JobStatus } from '../../src/engine/types';
import { buildEngine, createTestDb, newJobArgs, until } from '../support/engine-harness';
import { deleteEngineTopology, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';

const KIND = 'PACKED';
const JOBS_PER_MESSAGE = 8;

let ctx: Awaited<ReturnType<typeof createTestDb>>;
const prefix = uniquePrefix('packed');
const transports: RabbitMqTransport[] = [];
let engine: JobEngine | undefined;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An engine running KIND with `consumers`, on a transport packing JOBS_PER_MESSAGE jobs per message. */
function packedEngine(consumers: number, processor: Processor<unknown, unknown>): JobEngine {
  const transport = new RabbitMqTransport({ url: rabbitUrl(), prefix, logger: silentLogger, jobsPerMessage: { [KIND]: JOBS_PER_MESSAGE } });
  transports.push(transport);
  return buildEngine({ db: ctx.db, transport, registrations: [{ kind: KIND, defaults: { consumers }, processor }] });
}

/** Queues `n` jobs straight into the tables, so that the publisher's first pass sends them together. */
async function queueJobs(n: number): Promise<string[]> {
  const args = Array.from({ length: n }, (_, i) => newJobArgs(KIND, { i }));
  await insertJobs(poolSql(ctx.db.pool), args);
  return args.map((a) => a.jobId);
}

async function jobRows(ids: string[]) {
  const { rows } = await ctx.db.pool.query<{ id: string; status: string; attempts: number }>(
    'SELECT id, status, attempts FROM jobs WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return rows;
}

describe.runIf(requireRabbit())('several jobs in one RabbitMQ message', () => {
  beforeAll(async () => {
    ctx = await createTestDb('engine_packed');
  });
  afterEach(async () => {
    await engine?.stop(2_000);
    engine = undefined;
    await ctx.db.pool.query('DELETE FROM jobs');
  });
  afterAll(async () => {
    for (const transport of transports) await transport.close();
    await deleteEngineTopology(prefix, [KIND]);
    await ctx?.close();
  });

  it('each job runs to success once; a failed attempt retries alone', async () => {
    const ids = await queueJobs(40);
    const failOnce = new Set(ids.filter((_, i) => i % 7 === 0));
    const runs = new Map<string, number>();
    engine = packedEngine(4, async ({ job: { id: jobId } }) => {
      const run = (runs.get(jobId) ?? 0) + 1;
      runs.set(jobId, run);
      if (failOnce.has(jobId) && run === 1) throw new Error('first attempt fails');
      return run;
    });
    await engine.start();
    await until('40 jobs done', async () => (await jobRows(ids)).every((row) => row.status === JobStatus.SUCCEEDED));
    await sleep(500);
    for (const row of await jobRows(ids)) {
      const expected = failOnce.has(row.id) ? 2 : 1;
      expect({ id: row.id, attempts: row.attempts, runs: runs.get(row.id) }).toEqual({ id: row.id, attempts: expected, runs: expected });
    }
    expect(runs.size).toBe(40);
  });

  it('a graceful stop in the middle of a message hands its unfinished jobs to the next process; none runs to success twice', async () => {
    const ids = await queueJobs(24);
    const successes = new Map<string, number>();
    const succeed = (jobId: string) => {
      successes.set(jobId, (successes.get(jobId) ?? 0) + 1);
      return 'done';
    };
    // The first process finishes three jobs of the first message, then holds the next
    // ones until the stop aborts them: the message's other five are not done.
    let started = 0;
    engine = packedEngine(2, async ({ job, signal }) => {
      if (++started <= 3) return succeed(job.id);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      throw new Error('stopped');
    });
    await engine.start();
    await until('three jobs done and two held', () => successes.size === 3 && started === 5);
    await engine.stop(300);
    expect(successes.size).toBe(3);
    engine = packedEngine(2, async ({ job }) => succeed(job.id));
    await engine.start();
    await until('24 jobs done', async () => (await jobRows(ids)).every((row) => row.status === JobStatus.SUCCEEDED));
    await sleep(500);
    expect(successes.size).toBe(24);
    for (const id of ids) expect({ id, successes: successes.get(id) }).toEqual({ id, successes: 1 });
  });
});
