import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { testKindRegistrations } from '../support/test-kinds';
import { JobKind } from '../../src/job-kinds';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';
import {
  CancelJobDocument,
  JobDocument,
  JobEventsDocument,
  JobProgressDocument,
  JobsDocument,
  MessagingHealthDocument,
  RetryJobDocument,
} from './generated/graphql';
import { collect, gql, startTestApiServer, waitUntil, wsClient, type TestApiServer } from './support/api-server';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;

beforeAll(async () => {
  ctx = await createTestDb('api_jobs');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
  server = await startTestApiServer({ engine });
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

const enqueue = async (kind: JobKind, input: object, requestedBy = 'scheduler-1') =>
  (await engine.enqueue({ kind, input, requestedBy })).job;

/** Two long jobs occupy both consumers of `kind`, so the next job of that kind stays QUEUED a while. */
async function occupy(kind: JobKind, ms = 1_500) {
  const blockers = [await enqueue(kind, { steps: 1, stepMs: ms }), await enqueue(kind, { steps: 1, stepMs: ms })];
  await Promise.all(blockers.map((b) => waitForJob(engine, b.id, (j) => j.status === 'RUNNING')));
  return blockers;
}

describe('jobProgress subscription', () => {
  it('delivers QUEUED → RUNNING → each step and progress → SUCCEEDED in sequence order, then completes', async () => {
    await occupy(JobKind.SCHEDULE_PUBLISH);
    const job = await enqueue(JobKind.SCHEDULE_PUBLISH, { steps: 3, stepMs: 150 });
    const client = wsClient(server, server.tokens.scheduler);
    try {
      const sub = collect(client, JobProgressDocument, { jobId: job.id });
      await sub.done;
      const events = sub.results.map((r) => {
        expect(r.errors).toBeUndefined();
        return r.data!.jobProgress;
      });
      expect(events[0]!.reason).toBe('SNAPSHOT');
      expect(events[0]!.status).toBe('QUEUED');
      const sequences = events.map((e) => e.sequence);
      for (let i = 1; i < sequences.length; i++) expect(sequences[i]).toBeGreaterThan(sequences[i - 1]!);
      const statuses = events.map((e) => e.status);
      expect(statuses).toContain('RUNNING');
      expect(statuses.indexOf('RUNNING')).toBeLessThan(statuses.indexOf('SUCCEEDED'));
      expect(events.map((e) => e.currentStep)).toEqual(expect.arrayContaining(['step 1', 'step 2', 'step 3']));
      expect(events.some((e) => e.progress > 0 && e.progress < 1)).toBe(true);
      const last = events.at(-1)!;
      expect(last.status).toBe('SUCCEEDED');
      expect(last.progress).toBe(1);
      expect(last.job.__typename).toBe('SchedulePublishJob');
      expect(events.filter((e) => e.status === 'SUCCEEDED')).toHaveLength(1);
    } finally {
      await client.dispose();
    }
  });

  it('gives a late subscriber the current snapshot first, then only newer events', async () => {
    const job = await enqueue(JobKind.AUTOMATIC_SCHEDULE, { steps: 4, stepMs: 300 });
    await waitForJob(engine, job.id, (j) => j.currentStep === 'step 2');
    const current = (await engine.getJob(job.id))!;
    const client = wsClient(server, server.tokens.admin);
    try {
      const sub = collect(client, JobProgressDocument, { jobId: job.id });
      await sub.done;
      const events = sub.results.map((r) => r.data!.jobProgress);
      expect(events[0]!.reason).toBe('SNAPSHOT');
      expect(events[0]!.status).toBe('RUNNING');
      expect(events[0]!.sequence).toBeGreaterThanOrEqual(current.sequence);
      expect(events.map((e) => e.reason).slice(1)).not.toContain('SNAPSHOT');
      expect(events.map((e) => e.currentStep)).not.toContain('step 1');
      expect(events.at(-1)!.status).toBe('SUCCEEDED');
      expect(events.at(-1)!.job.__typename === 'AutomaticScheduleJob' && events.at(-1)!.job.resultData).toMatchObject({ steps: 4 });
    } finally {
      await client.dispose();
    }
  });

  it('follows a job named in upper case (as some clients print uuids) to its end', async () => {
    const job = await enqueue(JobKind.AUTOMATIC_SCHEDULE, { steps: 2, stepMs: 300 });
    const client = wsClient(server, server.tokens.admin);
    try {
      const sub = collect(client, JobProgressDocument, { jobId: job.id.toUpperCase() });
      await sub.done;
      const events = sub.results.map((r) => r.data!.jobProgress);
      expect(events[0]!.reason).toBe('SNAPSHOT');
      expect(events.map((e) => e.currentStep)).toContain('step 2');
      expect(events.at(-1)!.status).toBe('SUCCEEDED');
    } finally {
      await client.dispose();
    }
  });

  it('gives the final snapshot of a finished job and completes', async () => {
    const job = await enqueue(JobKind.MAKEUP_EXAM_AUTO, { steps: 1, stepMs: 10 });
    const finished = await waitForJob(engine, job.id);
    const client = wsClient(server, server.tokens.admin);
    try {
      const sub = collect(client, JobProgressDocument, { jobId: job.id });
      await sub.done;
      expect(sub.results).toHaveLength(1);
      expect(sub.results[0]!.data!.jobProgress).toMatchObject({ reason: 'SNAPSHOT', status: 'SUCCEEDED', sequence: finished.sequence });
    } finally {
      await client.dispose();
    }
  });

  it('ends with the same final state for a client that reconnects mid-job', async () => {
    const job = await enqueue(JobKind.AUTOMATIC_SCHEDULE, { steps: 4, stepMs: 250 });
    const first = wsClient(server, server.tokens.admin);
    const sub1 = collect(first, JobProgressDocument, { jobId: job.id });
    await sub1.first(2);
    const seenBefore = sub1.results.at(-1)!.data!.jobProgress.sequence;
    first.terminate();
    await first.dispose();
    await new Promise((r) => setTimeout(r, 300));
    const second = wsClient(server, server.tokens.admin);
    try {
      const sub2 = collect(second, JobProgressDocument, { jobId: job.id });
      await sub2.done;
      const events = sub2.results.map((r) => r.data!.jobProgress);
      expect(events[0]!.sequence).toBeGreaterThanOrEqual(seenBefore);
      const final = await gql(server, JobDocument, { id: job.id }, server.tokens.admin);
      expect(events.at(-1)!.status).toBe('SUCCEEDED');
      expect(events.at(-1)!.sequence).toBe(final.body.data!.job!.sequence);
      expect(events.at(-1)!.job).toEqual(final.body.data!.job);
    } finally {
      await second.dispose();
    }
  });

  it('answers an unknown or malformed job id with NOT_FOUND', async () => {
    const client = wsClient(server, server.tokens.admin);
    try {
      for (const jobId of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        const sub = collect(client, JobProgressDocument, { jobId });
        await sub.done;
        expect(sub.results[0]!.errors![0]!.extensions!.code).toBe('NOT_FOUND');
      }
    } finally {
      await client.dispose();
    }
  });

  it('routes events through per-job listener sets and drops them when subscribers leave', async () => {
    const job = await enqueue(JobKind.AUTOMATIC_SCHEDULE, { steps: 2, stepMs: 500 });
    const client = wsClient(server, server.tokens.admin);
    try {
      const subs = Array.from({ length: 5 }, () => collect(client, JobProgressDocument, { jobId: job.id }));
      await Promise.all(subs.map((s) => s.done));
      const finals = subs.map((s) => s.results.at(-1)!.data!.jobProgress.sequence);
      expect(new Set(finals).size).toBe(1);
    } finally {
      await client.dispose();
    }
  });
});

describe('jobEvents subscription', () => {
  it('streams the events of the chosen kinds only', async () => {
    const client = wsClient(server, server.tokens.admin);
    try {
      const sub = collect(client, JobEventsDocument, { kinds: [JobKind.MAKEUP_EXAM_AUTO] });
      // The subscription is live once it carries an event: probe with quick jobs until one
      // arrives (a fixed pause was too short on a loaded machine).
      for (let probe = 0; sub.results.length === 0 && probe < 100; probe++) {
        await enqueue(JobKind.MAKEUP_EXAM_AUTO, { steps: 0 });
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(sub.results.length).toBeGreaterThan(0);
      const wanted = await enqueue(JobKind.MAKEUP_EXAM_AUTO, { steps: 1, stepMs: 10 });
      const other = await enqueue(JobKind.SCHEDULE_PUBLISH, { steps: 1, stepMs: 10 });
      await Promise.all([waitForJob(engine, wanted.id), waitForJob(engine, other.id)]);
      await waitUntil(() => sub.results.some((r) => r.data?.jobEvents.jobId === wanted.id && r.data.jobEvents.status === 'SUCCEEDED'));
      expect(sub.results.every((r) => r.data!.jobEvents.kind === 'MAKEUP_EXAM_AUTO')).toBe(true);
      sub.stop();
    } finally {
      await client.dispose();
    }
  });
});

describe('queries', () => {
  it('pages through jobs newest first with opaque cursors, and filters', async () => {
    const mine = [];
    for (let i = 0; i < 5; i++) mine.push(await enqueue(JobKind.SCHEDULE_PUBLISH, { steps: 0, n: i }, 'pager'));
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: Awaited<ReturnType<typeof gql<import('./generated/graphql').JobsQuery, unknown>>> = await gql(
        server,
        JobsDocument,
        { first: 2, after, requestedBy: 'pager' },
        server.tokens.admin,
      );
      expect(page.body.errors).toBeUndefined();
      const connection = page.body.data!.jobs;
      seen.push(...connection.edges.map((e) => e.node.id));
      expect(connection.pageInfo.hasPreviousPage).toBe(after !== null);
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(seen).toEqual(mine.map((j) => j.id).reverse());

    const filtered = await gql(server, JobsDocument, { first: 50, kinds: [JobKind.MAKEUP_EXAM_AUTO], statuses: ['SUCCEEDED'] }, server.tokens.admin);
    expect(filtered.body.data!.jobs.edges.length).toBeGreaterThan(0);
    for (const { node } of filtered.body.data!.jobs.edges) {
      expect(node.kind).toBe('MAKEUP_EXAM_AUTO');
      expect(node.status).toBe('SUCCEEDED');
    }
  });

  it('refuses a bad cursor and a bad page size with BAD_USER_INPUT', async () => {
    const badCursor = await gql(server, JobsDocument, { first: 2, after: 'bm90LWEtY3Vyc29y' }, server.tokens.admin);
    expect(badCursor.body.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    expect(badCursor.body.errors![0]!.message).toMatch(/cursor/);
    const badSize = await gql(server, JobsDocument, { first: 0 }, server.tokens.admin);
    expect(badSize.body.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    expect(badSize.body.errors![0]!.message).toMatch(/first/);
    const badId = await gql(server, JobDocument, { id: 'nope' }, server.tokens.admin);
    expect(badId.body.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    expect(badId.body.errors![0]!.message).toMatch(/UUID/);
  });

  it('reads one job by id with its kind-specific type; an unknown id is null', async () => {
    const job = await enqueue(JobKind.MAKEUP_EXAM_AUTO, { steps: 0 });
    const found = await gql(server, JobDocument, { id: job.id }, server.tokens.admin);
    expect(found.body.data!.job).toMatchObject({ __typename: 'MakeupExamAutoJob', id: job.id, kind: 'MAKEUP_EXAM_AUTO', inputData: { steps: 0 } });
    const missing = await gql(server, JobDocument, { id: '00000000-0000-4000-8000-000000000000' }, server.tokens.admin);
    expect(missing.body.data!.job).toBeNull();
  });

  it('messagingHealth under ten aliases runs one check (a viewer cannot multiply the backlog queries)', async () => {
    const aliases = Array.from({ length: 10 }, (_, i) => `h${i}: messagingHealth { checkedAt }`).join(' ');
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.tokens.viewer}` },
      body: JSON.stringify({ query: `{ ${aliases} }` }),
    });
    const body = (await response.json()) as { data?: Record<string, { checkedAt: string }>; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(new Set(Object.values(body.data!).map((h) => h.checkedAt)).size).toBe(1);
  });

  it('reports the same messaging figures as /health/messaging', async () => {
    const result = await gql(server, MessagingHealthDocument, {}, server.tokens.viewer);
    expect(result.body.errors).toBeUndefined();
    const rest = (await (await fetch(`${server.url}/health/messaging`)).json()) as Record<string, any>;
    const health = result.body.data!.messagingHealth;
    expect(health.status).toBe(rest.status);
    expect(health.transport).toEqual(rest.transport);
    expect(health.database).toEqual(rest.database);
    expect(Object.fromEntries(health.backlog.byState.map((s) => [s.state, s.count]))).toEqual(Object.keys(rest.backlog.byState).length ? expect.any(Object) : {});
    expect(health.backlog.byState.map((s) => s.state).sort()).toEqual(Object.keys(rest.backlog.byState).sort());
  });
});

describe('cancelJob and retryJob', () => {
  it('cancels a queued job, refuses to cancel it again, retries it to success, and refuses to retry a success', async () => {
    await occupy(JobKind.MAKEUP_EXAM_AUTO, 1_000);
    const job = await enqueue(JobKind.MAKEUP_EXAM_AUTO, { steps: 1, stepMs: 10 });
    // Named in upper case (as some clients print uuids): the same job.
    const cancelled = await gql(server, CancelJobDocument, { id: job.id.toUpperCase() }, server.tokens.scheduler);
    expect(cancelled.body.errors).toBeUndefined();
    expect(cancelled.body.data!.cancelJob.status).toBe('CANCELLED');
    expect((await gql(server, JobDocument, { id: job.id.toUpperCase() }, server.tokens.scheduler)).body.data!.job).toMatchObject({ id: job.id, status: 'CANCELLED' });
    const again = await gql(server, CancelJobDocument, { id: job.id }, server.tokens.scheduler);
    expect(again.body.errors![0]!.extensions!.code).toBe('CONFLICT');

    const retried = await gql(server, RetryJobDocument, { id: job.id.toUpperCase() }, server.tokens.admin);
    expect(retried.body.errors).toBeUndefined();
    expect(retried.body.data!.retryJob.status).toBe('QUEUED');
    const done = await waitForJob(engine, job.id);
    expect(done.status).toBe('SUCCEEDED');
    const retryDone = await gql(server, RetryJobDocument, { id: job.id }, server.tokens.admin);
    expect(retryDone.body.errors![0]!.extensions!.code).toBe('CONFLICT');
  });

  it('asks a running job to stop; the subscriber sees it end CANCELLED', async () => {
    const job = await enqueue(JobKind.AUTOMATIC_SCHEDULE, { steps: 20, stepMs: 200 });
    await waitForJob(engine, job.id, (j) => j.status === 'RUNNING');
    const client = wsClient(server, server.tokens.admin);
    try {
      const sub = collect(client, JobProgressDocument, { jobId: job.id });
      await sub.first(1);
      const cancelled = await gql(server, CancelJobDocument, { id: job.id }, server.tokens.admin);
      expect(cancelled.body.errors).toBeUndefined();
      expect(['RUNNING', 'CANCELLED']).toContain(cancelled.body.data!.cancelJob.status);
      await sub.done;
      expect(sub.results.at(-1)!.data!.jobProgress.status).toBe('CANCELLED');
    } finally {
      await client.dispose();
    }
  });

  it('answers unknown ids with NOT_FOUND', async () => {
    const id = '00000000-0000-4000-8000-000000000001';
    expect((await gql(server, CancelJobDocument, { id }, server.tokens.admin)).body.errors![0]!.extensions!.code).toBe('NOT_FOUND');
    expect((await gql(server, RetryJobDocument, { id }, server.tokens.admin)).body.errors![0]!.extensions!.code).toBe('NOT_FOUND');
  });
});
