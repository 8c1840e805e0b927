/**
 * PostgreSQL restarts while jobs run, and stays away longer than their lease. A job
 * whose worker is alive and still holds its token resumes within seconds of the
 * database's return — its completion is repeated and its lease re-taken — rather than
 * being taken over (an attempt spent) or left to the lease rescuer. With one attempt
 * allowed, a takeover would end the job FAILED: a success must never become FAILED.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/database';
import { poolSql } from '../../src/engine/db/sql';
import { claimMessage } from '../../src/engine/queries/claim-message';
import { SERVER_UP_SINCE } from '../../src/engine/queries/lease-ran-out';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { JobStatus, type JobSnapshot } from '../../src/engine/types';
import { buildEngine } from '../support/engine-harness';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';

const LEASE_SECONDS = 5;
/** Longer than the lease: every lease runs out while the database is away. */
const OUTAGE_MS = (LEASE_SECONDS + 2) * 1_000;

let server: PrivatePostgres;
let db: Database;
let engine: JobEngine;
const gates: Array<() => void> = [];

beforeAll(async () => {
  server = await startPrivatePostgres();
  db = await openDatabase({ url: server.url, poolSize: 4, logger: silentLogger });
  await db.pool.query('CREATE TABLE test_effects (job_id uuid NOT NULL, at timestamptz NOT NULL DEFAULT now())');
});
afterAll(async () => {
  for (const open of gates) open();
  await engine?.stop(1_000);
  await db?.close();
  await server?.destroy();
});

async function jobs(ids: string[]): Promise<JobSnapshot[]> {
  return Promise.all(ids.map(async (id) => (await engine.getJob(id))!));
}

it('jobs that finish while the database is away complete once it is back: SUCCEEDED on their one attempt, each effect once', async () => {
  const gate = new Promise<void>((resolve) => gates.push(resolve));
  engine = buildEngine({
    db,
    // One attempt: a job taken over from its live worker would fail at the limit.
    // Maintenance every second: the lease rescuer has every chance to take a job early.
    settings: { leaseSeconds: LEASE_SECONDS, attemptLimit: 1, maintenanceIntervalSeconds: 1 },
    roles: { maintenance: true },
    registrations: [
      {
        // Its writes commit with the job's completion (completeWithin).
        kind: 'WRITES',
        defaults: { consumers: 2 },
        processor: async ({ job, completeWithin }) => {
          await gate;
          return completeWithin(async (em) => {
            await em.getConnection().execute('INSERT INTO test_effects (job_id) VALUES (?)', [job.id], 'run', em.getTransactionContext());
            return { wrote: job.id };
          });
        },
      },
      {
        // A plain return, committed by the runner after the processor.
        kind: 'RETURNS',
        defaults: { consumers: 2 },
        processor: async () => {
          await gate;
          return { returned: true };
        },
      },
    ],
  });
  await engine.start();
  const ids: string[] = [];
  for (const kind of ['WRITES', 'WRITES', 'RETURNS', 'RETURNS']) ids.push((await engine.enqueue({ kind, input: {} })).job.id);
  const deadline = Date.now() + 30_000;
  while ((await jobs(ids)).some((job) => job.status !== JobStatus.RUNNING)) {
    if (Date.now() > deadline) throw new Error(`jobs did not start: ${JSON.stringify((await jobs(ids)).map((j) => j.status))}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  await server.stop();
  // The processors finish while the database is away.
  for (const open of gates) open();
  await new Promise((r) => setTimeout(r, OUTAGE_MS));
  await server.start();
  const back = Date.now();

  // Within seconds: a completion repeats at least every 2 s; the bound leaves room for
  // a loaded machine, and is far below the lease rescuer's path (lease + grace + pass).
  const bound = 20_000;
  let now = await jobs(ids).catch(() => []);
  while (Date.now() - back < bound) {
    now = await jobs(ids).catch(() => []);
    if (now.length === ids.length && now.every((job) => job.status === JobStatus.SUCCEEDED)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(now.map((job) => [job.kind, job.status, job.attempts])).toEqual([
    ['WRITES', JobStatus.SUCCEEDED, 1],
    ['WRITES', JobStatus.SUCCEEDED, 1],
    ['RETURNS', JobStatus.SUCCEEDED, 1],
    ['RETURNS', JobStatus.SUCCEEDED, 1],
  ]);
  const { rows } = await db.pool.query('SELECT job_id::text, count(*)::int AS n FROM test_effects GROUP BY job_id ORDER BY job_id');
  expect(rows).toEqual([ids[0], ids[1]].sort().map((id) => ({ job_id: id, n: 1 })));
}, 90_000);

/** A backend killed: PostgreSQL ends every session and reinitialises, its postmaster still running. */
async function crashBackend(): Promise<void> {
  const upSince = async () => {
    const client = new pg.Client({ connectionString: server.url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query(`SELECT ${SERVER_UP_SINCE}::text AS t, pg_backend_pid() AS pid`)).rows[0] as { t: string; pid: number };
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const before = await upSince();
  const victim = new pg.Client({ connectionString: server.url });
  victim.on('error', () => undefined);
  await victim.connect();
  const { rows } = await victim.query('SELECT pg_backend_pid() AS pid');
  process.kill(rows[0].pid as number, 'SIGKILL');
  // Back once a new session sees the server up since later than before; then every
  // pooled session (each ended by the crash) has been replaced.
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await upSince()).t !== before.t) {
        await Promise.all(Array.from({ length: 4 }, () => db.pool.query('SELECT 1')));
        return;
      }
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline) throw new Error('the server did not come back from the crash');
    await new Promise((r) => setTimeout(r, 200));
  }
}

it.each([
  ['restarted', async () => {
    await server.stop();
    await server.start();
  }],
  ['reinitialised after a backend crash', crashBackend],
])('the lease rescuer and a broker copy\'s claim judge a lease that ran out while the server was down only after a heartbeat interval of uptime: %s', async (_how, outage) => {
  await engine?.stop(1_000);
  const rescuer = engine.leaseRescuer;
  await outage();
  // A job whose worker claimed it with a 6 s lease that ran out 1 s ago, i.e. while the server was away.
  const { rows: seeded } = await db.pool.query(
    `WITH j AS (INSERT INTO jobs (id, kind, status, input, started_at) VALUES (gen_random_uuid(), 'RETURNS', 'RUNNING', '{}', now()) RETURNING id)
     INSERT INTO job_outbox (id, job_id, kind, state, processing_token, lease_expires_at, updated_at, processing_attempts)
     SELECT gen_random_uuid(), j.id, 'RETURNS', 'PROCESSING', gen_random_uuid(), now() - interval '1 second', now() - interval '7 seconds', 1 FROM j
     RETURNING id, job_id`,
  );
  const jobId = seeded[0].job_id as string;
  // A copy of its message in the broker (fast start and several workers leave one going round) reaching a worker now.
  const copyClaim = () =>
    claimMessage(poolSql(db.pool), { outboxId: seeded[0].id as string, jobId, kind: 'RETURNS', token: randomUUID(), leaseSeconds: 6, attemptLimit: 3 });
  const uptime = async () => (await db.pool.query(`SELECT extract(epoch FROM now() - ${SERVER_UP_SINCE})::float8 AS s`)).rows[0].s as number;
  // Grace: one heartbeat interval of a 6 s lease (the 5 s minimum) plus 5 s.
  const graceSeconds = 10;
  expect(await rescuer.runOnce()).toBe(0);
  expect(await copyClaim()).toBeUndefined();
  expect(await uptime(), 'the checks above must run within the grace after the start').toBeLessThan(graceSeconds);
  expect((await engine.getJob(jobId))!.status).toBe(JobStatus.RUNNING);
  // No worker renews it: once the grace has passed, it is rescued like any other.
  while ((await uptime()) < graceSeconds + 0.5) await new Promise((r) => setTimeout(r, 250));
  expect(await rescuer.runOnce()).toBe(1);
  expect((await engine.getJob(jobId))!.status).toBe(JobStatus.QUEUED);
}, 60_000);

it('shutdown does not wait for ever on a finished job whose commit repeats while the database is away', async () => {
  await engine?.stop(1_000);
  await server.start();
  const gate = new Promise<void>((resolve) => gates.push(resolve));
  engine = buildEngine({
    db,
    settings: { leaseSeconds: LEASE_SECONDS, attemptLimit: 1 },
    registrations: [{ kind: 'RETURNS', defaults: { consumers: 1 }, processor: () => gate.then(() => ({ returned: true })) }],
  });
  await engine.start();
  const { job } = await engine.enqueue({ kind: 'RETURNS', input: {} });
  const deadline = Date.now() + 30_000;
  while ((await engine.getJob(job.id))!.status !== JobStatus.RUNNING) {
    if (Date.now() > deadline) throw new Error('the job did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  await server.stop();
  // Its last attempt cannot be spared now: it holds its delivery while the commit repeats.
  for (const open of gates) open();
  await new Promise((r) => setTimeout(r, 500));
  const graceMs = 1_000;
  const started = Date.now();
  await engine.stop(graceMs);
  // The grace, then the release attempt's own failure (connection refused at once); slack for a loaded machine.
  expect(Date.now() - started).toBeLessThan(graceMs + 10_000);
  await server.start();
}, 60_000);
