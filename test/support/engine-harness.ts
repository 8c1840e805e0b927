import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { openDatabase, type Database } from '../../src/database';
import { JobEngine, type EngineRoles, type EngineSettings } from '../../src/engine/engine';
import type { EventBus } from '../../src/engine/events/event-bus';
import { InMemoryEventBus } from '../../src/engine/events/in-memory-event-bus';
import type { Logger } from 'pino';
import { silentLogger } from '../../src/engine/logger';
import type { InsertJobArgs } from '../../src/engine/queries/insert-job';
import type { EngineMetrics } from '../../src/engine/metrics';
import { KindRegistry, type KindRegistration } from '../../src/engine/registry';
import { InMemoryTransport } from '../../src/engine/transport/in-memory-transport';
import type { JobTransport } from '../../src/engine/transport/transport';
import type { JobEvent, JobSnapshot } from '../../src/engine/types';
import { createTestDatabase, type TestDatabase } from './services';

export const FAST_SETTINGS: EngineSettings = {
  leaseSeconds: 30,
  attemptLimit: 3,
  retryBaseMs: 100,
  retryMaxMs: 400,
  publisherPollMs: 500,
  publisherBatchSize: 200,
  maintenanceIntervalSeconds: 3600,
  republishAfterSeconds: 300,
  retentionDays: 14,
  cleanupBatchSize: 500,
  consumers: {},
};

/** A plain job of `kind` to insert straight into the tables (insertJob / insertJobs), with new ids. */
export function newJobArgs(kind: string, input: unknown): InsertJobArgs {
  return { jobId: randomUUID(), outboxId: randomUUID(), kind, input, requestedBy: null, idempotencyKey: null, exclusiveKey: null };
}

/** One test database with migrations applied; engines come and go on it. */
export async function createTestDb(prefix: string): Promise<{ testDb: TestDatabase; db: Database; close(): Promise<void> }> {
  const testDb = await createTestDatabase(prefix);
  const db = await openDatabase({ url: testDb.url, poolSize: 20, logger: silentLogger });
  return {
    testDb,
    db,
    close: async () => {
      await db.close();
      await testDb.drop();
    },
  };
}

export interface EngineHarnessOptions {
  db: Database;
  registrations: KindRegistration<any, any>[];
  transport?: JobTransport;
  bus?: EventBus;
  settings?: Partial<EngineSettings>;
  roles?: Partial<EngineRoles>;
  metrics?: EngineMetrics;
  /** Where the engine logs (default: nowhere). */
  logger?: Logger;
}

export function buildEngine(options: EngineHarnessOptions): JobEngine {
  const registry = new KindRegistry();
  for (const registration of options.registrations) registry.register(registration);
  const url = new URL(options.db.url);
  return new JobEngine({
    orm: options.db.orm,
    pool: options.db.pool,
    relaxedPool: options.db.relaxedPool,
    listenConnection: { connectionString: url.toString() },
    transport: options.transport ?? new InMemoryTransport(),
    bus: options.bus ?? new InMemoryEventBus(),
    registry,
    logger: options.logger ?? silentLogger,
    settings: { ...FAST_SETTINGS, ...options.settings },
    roles: { publisher: true, worker: true, maintenance: false, ...options.roles },
    metrics: options.metrics,
  });
}

/** Waits until `check` holds, polling every `pollMs`; throws naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000, pollMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Until a statement on the test's database waits for another transaction to end (a row or unique-index entry it holds). */
export const untilWaitingOnTransaction = (pool: Pool, what: string): Promise<void> =>
  until(what, async () => {
    const { rows } = await pool.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'transactionid'`);
    return rows.length > 0;
  });

/** Resolves with the job once an event shows it in a terminal status (or rejects after `timeoutMs`). */
export function waitForJob(
  engine: { subscribe(l: (e: JobEvent) => void): () => void; getJob(id: string): Promise<JobSnapshot | null> },
  jobId: string,
  predicate: (job: JobSnapshot) => boolean = (job) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status),
  timeoutMs = 20_000,
): Promise<JobSnapshot> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (job: JobSnapshot) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearInterval(poll);
      unsubscribe();
      resolve(job);
    };
    const unsubscribe = engine.subscribe((event) => {
      if (event.jobId === jobId && predicate(event.job)) finish(event.job);
    });
    // Events are best effort; the database is the truth.
    const poll = setInterval(async () => {
      const job = await engine.getJob(jobId).catch(() => null);
      if (job && predicate(job)) finish(job);
    }, 250);
    const timer = setTimeout(async () => {
      if (done) return;
      done = true;
      clearInterval(poll);
      unsubscribe();
      const job = await engine.getJob(jobId).catch(() => null);
      reject(new Error(`job ${jobId} did not reach the expected state within ${timeoutMs} ms; last seen ${JSON.stringify(job?.status)}`));
    }, timeoutMs);
  });
}

export async function outboxRows(pool: Pool, jobId: string) {
  const { rows } = await pool.query(
    'SELECT id, state, processing_attempts, last_error, processing_token, lease_expires_at FROM job_outbox WHERE job_id = $1 ORDER BY created_at',
    [jobId],
  );
  return rows;
}
