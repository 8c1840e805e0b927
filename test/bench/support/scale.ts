/**
 * `bench:engine --scale`: how throughput grows with worker processes. For 1, 2 and 4
 * worker processes (16 consumers each, one kind) beside 2 API processes, against one
 * PostgreSQL and one RabbitMQ:
 *  - backlog: N queued jobs drained (the API processes publish them; the workers run them);
 *  - steady: the API processes enqueue from 8 clients each for some seconds while the
 *    workers run what arrives; jobs/s from the first enqueue to the last completion.
 * Each process is a real `node` process (support/engine-process.ts).
 */
import path from 'node:path';
import * as amqp from 'amqplib';
import { openDatabase } from '../../../src/database';
import { poolSql } from '../../../src/engine/db/sql';
import { silentLogger } from '../../../src/engine/logger';
import { OUTBOX_CHANNEL } from '../../../src/engine/publisher';
import { insertJob } from '../../../src/engine/queries/insert-job';
import { rabbitMqTopology } from '../../../src/engine/transport/rabbitmq-transport';
import { newJobArgs } from '../../support/engine-harness';
import { createTestDatabase, rabbitUrl, uniquePrefix } from '../../support/services';
import { Child } from './bench-child';
import { SERVICE_NODE_FLAGS } from './bench-service-env';
import type { FromEngineProcess, ToEngineProcess } from './engine-process';

const KIND = 'SCALE_A';
const API_PROCESSES = 2;
const CLIENTS_PER_API = 8;

export interface ScaleOptions {
  jobs: number;
  consumers: number;
  prefetch: number;
  claimAhead: number;
  jobsPerMessage: number;
  steadySeconds: number;
  workerCounts: number[];
}

export interface ScaleRow {
  workers: number;
  backlogRate: number;
  enqueueRate: number;
  steadyRate: number;
}

type EngineChild = Child<ToEngineProcess, FromEngineProcess>;

export async function measureScale(options: ScaleOptions): Promise<ScaleRow[]> {
  const testDb = await createTestDatabase('bench_scale');
  const db = await openDatabase({ url: testDb.url, poolSize: 4, logger: silentLogger });
  const prefix = uniquePrefix('bench_scale');
  const url = rabbitUrl();
  const script = path.join(__dirname, 'engine-process.js');
  let nextId = 1;
  const start = async (role: 'worker' | 'api', index: number): Promise<EngineChild> => {
    const child: EngineChild = new Child(`${role} ${index}`, script, [...SERVICE_NODE_FLAGS], {
      BENCH_ROLE: role,
      BENCH_KINDS: KIND,
      BENCH_CONSUMERS: String(options.consumers),
      BENCH_PREFETCH: String(options.prefetch),
      BENCH_CLAIM_AHEAD: String(options.claimAhead),
      BENCH_JOBS_PER_MESSAGE: String(options.jobsPerMessage),
      BENCH_DATABASE_URL: testDb.url,
      BENCH_RABBITMQ_URL: url,
      BENCH_RABBITMQ_PREFIX: prefix,
    });
    await child.wait('ready', 60_000);
    return child;
  };
  const stop = async (children: EngineChild[]) => {
    await Promise.all(children.map((c) => c.request({ type: 'stop', id: nextId++ }, 'stopped', 30_000).catch(() => undefined)));
    await Promise.all(children.map((c) => c.finish(10_000)));
  };
  const succeeded = async () => (await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE status = 'SUCCEEDED'")).rows[0]!.n;
  const untilSucceeded = async (n: number) => {
    while ((await succeeded()) < n) await new Promise((r) => setTimeout(r, 10));
  };
  const rows: ScaleRow[] = [];
  try {
    for (const workers of options.workerCounts) {
      await db.pool.query('TRUNCATE jobs, job_outbox');
      // Backlog: queued with no process running, then drained.
      const sql = poolSql(db.pool);
      let next = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < options.jobs) {
            next++;
            await insertJob(sql, newJobArgs(KIND, {}));
          }
        }),
      );
      // Not due until every process runs: the clock starts when the backlog falls due.
      await db.pool.query("UPDATE job_outbox SET available_at = now() + interval '1 hour'");
      await db.pool.query('VACUUM ANALYZE job_outbox');
      const workerChildren = await Promise.all(Array.from({ length: workers }, (_, i) => start('worker', i + 1)));
      const apiChildren = await Promise.all(Array.from({ length: API_PROCESSES }, (_, i) => start('api', i + 1)));
      const backlogStarted = performance.now();
      await db.pool.query('UPDATE job_outbox SET available_at = now()');
      await db.pool.query(`SELECT pg_notify('${OUTBOX_CHANNEL}', '')`);
      await untilSucceeded(options.jobs);
      const backlogRate = options.jobs / ((performance.now() - backlogStarted) / 1000);
      // Steady: enqueue and run at once (the backlog's jobs stay: emptying the tables
      // under running processes would leave PostgreSQL planning on an empty table's
      // statistics, a state no running service is in).
      const steadyStarted = performance.now();
      const enqueued = await Promise.all(
        apiChildren.map((c) => c.request({ type: 'enqueue', id: nextId++, seconds: options.steadySeconds, clients: CLIENTS_PER_API }, 'enqueued', options.steadySeconds * 1000 + 60_000)),
      );
      const total = enqueued.reduce((sum, e) => sum + e.count, 0);
      const enqueueRate = total / options.steadySeconds;
      await untilSucceeded(options.jobs + total);
      const steadyRate = total / ((performance.now() - steadyStarted) / 1000);
      await stop([...apiChildren, ...workerChildren]);
      rows.push({ workers, backlogRate, enqueueRate, steadyRate });
    }
  } finally {
    await db.close();
    await testDb.drop();
    await deleteTopology(url, prefix);
  }
  return rows;
}

async function deleteTopology(url: string, prefix: string): Promise<void> {
  const topology = rabbitMqTopology(prefix);
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    await channel.deleteQueue(topology.workQueue(KIND));
    await channel.deleteQueue(topology.parked);
    for (const ms of topology.delayBucketsMs) {
      await channel.deleteQueue(topology.delay(ms));
      await channel.deleteExchange(topology.delay(ms));
    }
    await channel.deleteExchange(topology.workExchange);
    await channel.deleteExchange(`${prefix}.job-events`);
  } finally {
    await connection.close().catch(() => undefined);
  }
}

export function printScale(rows: ScaleRow[], options: ScaleOptions): void {
  const base = rows[0];
  console.log(
    `scale: one kind, ${options.consumers} consumers, prefetch ${options.prefetch} and claim-ahead ${options.claimAhead} per worker process, ${options.jobsPerMessage} jobs per message, ${API_PROCESSES} API processes (${CLIENTS_PER_API} enqueue clients each, publishers on)`,
  );
  console.log(`| worker processes | drain ${options.jobs} queued | × 1 worker | enqueue + run (${options.steadySeconds} s) | × 1 worker | enqueued |`);
  console.log('| --: | --: | --: | --: | --: | --: |');
  for (const r of rows) {
    console.log(
      `| ${r.workers} | ${r.backlogRate.toFixed(0)} jobs/s | ${base ? (r.backlogRate / base.backlogRate).toFixed(2) : '–'}× | ${r.steadyRate.toFixed(0)} jobs/s | ${base ? (r.steadyRate / base.steadyRate).toFixed(2) : '–'}× | ${r.enqueueRate.toFixed(0)} jobs/s |`,
    );
  }
}

