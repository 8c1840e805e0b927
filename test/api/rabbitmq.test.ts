/**
 * The API over RabbitMQ: jobs travel through the RabbitMQ transport and their events
 * through the RabbitMQ event bus — run by this process's worker, and by a second
 * worker *process* while this process only serves the API.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { RabbitMqEventBus } from '../../src/engine/events/rabbitmq-event-bus';
import { silentLogger } from '../../src/engine/logger';
import { RabbitMqTransport } from '../../src/engine/transport/rabbitmq-transport';
import { JobKind } from '../../src/job-kinds';
import { TEST_KINDS_ENV, testKindRegistrations } from '../support/test-kinds';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';
import { deleteRabbitObjects, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';
import { spawnService, type ServiceProcess } from '../support/spawn-service';
import { JobDocument, JobProgressDocument } from './generated/graphql';
import { collect, gql, startTestApiServer, wsClient, type TestApiServer } from './support/api-server';

const rabbit = requireRabbit();
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function setUp(name: string, roles: { worker: boolean }) {
  const ctx = await createTestDb(name);
  cleanups.push(() => ctx.close());
  const prefix = uniquePrefix(name);
  cleanups.push(() => deleteRabbitObjects(prefix, { listWithRabbitmqctl: 'rabbit@localhost' }));
  const engine: JobEngine = buildEngine({
    db: ctx.db,
    registrations: testKindRegistrations(),
    transport: new RabbitMqTransport({ url: rabbitUrl(), prefix, logger: silentLogger }),
    bus: new RabbitMqEventBus({ url: rabbitUrl(), prefix, logger: silentLogger, receive: 'all' }),
    roles: { worker: roles.worker },
  });
  await engine.start();
  cleanups.push(async () => {
    await engine.stop(2_000);
    await engine.bus.close();
    await engine.transport.close();
  });
  const server: TestApiServer = await startTestApiServer({ engine });
  cleanups.push(() => server.close());
  return { ctx, prefix, engine, server };
}

describe.runIf(rabbit)('GraphQL subscriptions with the RabbitMQ transport and event bus', () => {
  it('a subscriber sees QUEUED → RUNNING → steps → SUCCEEDED, then completion; a late one gets the snapshot first', async () => {
    const { engine, server } = await setUp('api_rabbit', { worker: true });
    // Both consumers busy: the watched job stays QUEUED until one frees up.
    const blockers = await Promise.all([0, 1].map(() => engine.enqueue({ kind: JobKind.MAKEUP_EXAM_AUTO, input: { steps: 1, stepMs: 1_200 } })));
    await Promise.all(blockers.map((b) => waitForJob(engine, b.job.id, (j) => j.status === 'RUNNING')));
    const { job } = await engine.enqueue({ kind: JobKind.MAKEUP_EXAM_AUTO, input: { steps: 3, stepMs: 300 }, requestedBy: 'scheduler-1' });
    const client = wsClient(server, server.tokens.scheduler);
    const late = wsClient(server, server.tokens.admin);
    try {
      const sub = collect(client, JobProgressDocument, { jobId: job.id });
      await waitForJob(engine, job.id, (j) => j.currentStep === 'step 2');
      const lateSub = collect(late, JobProgressDocument, { jobId: job.id });
      await Promise.all([sub.done, lateSub.done]);
      const events = sub.results.map((r) => r.data!.jobProgress);
      expect(events[0]).toMatchObject({ reason: 'SNAPSHOT', status: 'QUEUED' });
      const statuses = events.map((e) => e.status);
      expect(statuses).toContain('RUNNING');
      expect(events.map((e) => e.currentStep)).toEqual(expect.arrayContaining(['step 1', 'step 2', 'step 3']));
      for (let i = 1; i < events.length; i++) expect(events[i]!.sequence).toBeGreaterThan(events[i - 1]!.sequence);
      expect(events.at(-1)!.status).toBe('SUCCEEDED');

      const lateEvents = lateSub.results.map((r) => r.data!.jobProgress);
      expect(lateEvents[0]!.reason).toBe('SNAPSHOT');
      expect(lateEvents[0]!.status).toBe('RUNNING');
      expect(lateEvents.at(-1)).toEqual(events.at(-1));
    } finally {
      await client.dispose();
      await late.dispose();
    }
  });

  it('a job run by a second worker process is seen live by a subscriber on this API process', async () => {
    const { ctx, prefix, engine, server } = await setUp('api_rabbit_worker', { worker: false });
    let worker: ServiceProcess | undefined;
    worker = await spawnService({
      ROLE: 'worker',
      DATABASE_URL: ctx.testDb.url,
      RABBITMQ_URL: rabbitUrl(),
      RABBITMQ_PREFIX: prefix,
      LOAD_DEMO_DATA: 'false',
      [TEST_KINDS_ENV]: 'MAKEUP_EXAM_AUTO',
    });
    cleanups.push(() => worker!.terminate(10_000));
    const { job } = await engine.enqueue({ kind: JobKind.MAKEUP_EXAM_AUTO, input: { steps: 3, stepMs: 250 }, requestedBy: 'viewer-1' });
    const client = wsClient(server, server.tokens.viewer);
    try {
      const sub = collect(client, JobProgressDocument, { jobId: job.id });
      await sub.done;
      const events = sub.results.map((r) => {
        expect(r.errors).toBeUndefined();
        return r.data!.jobProgress;
      });
      expect(events[0]!.reason).toBe('SNAPSHOT');
      expect(events.map((e) => e.status)).toContain('RUNNING');
      expect(events.map((e) => e.currentStep)).toEqual(expect.arrayContaining(['step 1', 'step 2', 'step 3']));
      const last = events.at(-1)!;
      expect(last.status).toBe('SUCCEEDED');
      expect(last.job.__typename === 'MakeupExamAutoJob' && last.job.resultData).toMatchObject({ pid: worker.pid });
      const read = await gql(server, JobDocument, { id: job.id }, server.tokens.viewer);
      expect(read.body.data!.job!.sequence).toBe(last.sequence);
    } finally {
      await client.dispose();
    }
  });
});
