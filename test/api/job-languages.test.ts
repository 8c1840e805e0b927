import { parse } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { InMemoryEventBus } from '../../src/engine/events/in-memory-event-bus';
import { InMemoryTransport } from '../../src/engine/transport/in-memory-transport';
import { automaticScheduleRegistration } from '../../src/scheduling/automatic-schedule';
import { schedulePublishRegistration } from '../../src/scheduling/schedule-publish';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';
import { smallTerm } from '../scheduling/scheduling-harness';
import WebSocket from 'ws';
import { collect, gql, startTestApiServer, wsClient, type TestApiServer } from './support/api-server';

/**
 * Job steps, messages and errors over the real API (HTTP and graphql-ws, real PostgreSQL,
 * the real AUTOMATIC_SCHEDULE and SCHEDULE_PUBLISH processors): each carries a stable code
 * with parameters, and the sentences follow the request's language — Accept-Language over
 * HTTP, the `locale` connection parameter over the socket — English by default.
 */

let ctx: Awaited<ReturnType<typeof createTestDb>>;
/** The API's engine: takes jobs, runs none, so a test can watch a job before its first step. */
let engine: JobEngine;
/** The worker beside it (same database, transport and bus), started by `workerRuns`. */
let worker: JobEngine | undefined;
let server: TestApiServer;
const transport = new InMemoryTransport();
const bus = new InMemoryEventBus();

const engineOf = (db: typeof ctx.db, roles: { publisher: boolean; worker: boolean }) =>
  buildEngine({
    db,
    transport,
    bus,
    registrations: [automaticScheduleRegistration({ consumers: 2 }), schedulePublishRegistration({ consumers: 1 })],
    settings: { attemptLimit: 1 },
    roles,
  });

async function workerRuns(): Promise<void> {
  if (worker) return;
  worker = engineOf(ctx.db, { publisher: true, worker: true });
  await worker.start();
}

beforeAll(async () => {
  ctx = await createTestDb('job_languages');
  engine = engineOf(ctx.db, { publisher: false, worker: false });
  await engine.start();
  server = await startTestApiServer({ engine, services: { orm: ctx.db.orm } });
});
afterAll(async () => {
  await server?.close();
  await worker?.stop(2_000);
  await engine?.stop(2_000);
  await ctx?.close();
});

const doc = (source: string) => parse(source) as TypedDocumentNode<Record<string, any>, Record<string, unknown>>;

async function run(source: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const { body } = await gql(server, doc(source), variables, server.tokens.scheduler, headers);
  expect(body.errors).toBeUndefined();
  return body.data as Record<string, any>;
}

const START = `mutation($planId: ID!) { startAutomaticSchedule(input: { planId: $planId, timeLimitSeconds: 2, seed: 5 }) { id status message messageCode } }`;
const EVENT_FIELDS = 'sequence status currentStep currentStepCode message messageCode messageParams';
const JOB = `query($id: ID!) { job(id: $id) { status currentStep currentStepCode message messageCode messageParams errorMessage errorCode errorParams } }`;

type Event = { sequence: number; status: string; currentStep: string | null; currentStepCode: string | null; message: string | null; messageCode: string | null; messageParams: any };

/** Every event of a job, watched over graphql-ws with the given connection parameters. */
function watch(jobId: string, connection: Record<string, unknown>) {
  const client = wsClient(server, server.tokens.scheduler, { connectionParams: { authorization: `Bearer ${server.tokens.scheduler}`, ...connection } });
  const sub = collect(client, doc(`subscription($jobId: ID!) { jobProgress(jobId: $jobId) { ${EVENT_FIELDS} } }`), { jobId });
  return {
    /** Resolves once the subscription holds the job's snapshot: every later change reaches it. */
    watching: () => sub.first(1),
    events: async () => {
      await sub.done;
      await client.dispose();
      return sub.results.map((r) => {
        expect(r.errors).toBeUndefined();
        return r.data!.jobProgress as Event;
      });
    },
  };
}

describe('job steps and messages in the request language', () => {
  it('a schedule job carries step and message codes with parameters; sockets get English by default and Chinese with locale zh-CN', async () => {
    const { plan } = await smallTerm(ctx.db, 'LANG-1');
    const started = (await run(START, { planId: plan.id })).startAutomaticSchedule;
    expect(started).toMatchObject({ status: 'QUEUED', message: 'Waiting for a worker', messageCode: 'job.queued' });
    const english = watch(started.id, {});
    const chinese = watch(started.id, { locale: 'zh-CN' });
    await Promise.all([english.watching(), chinese.watching()]);
    await workerRuns();
    const [en, zh] = await Promise.all([english.events(), chinese.events()]);
    expect((await waitForJob(engine, started.id)).status).toBe('SUCCEEDED');

    // The steps, in order, by code; each language's sentence for each.
    const stepsOf = (events: Event[]) => [...new Map(events.filter((e) => e.currentStepCode).map((e) => [e.currentStepCode, e.currentStep])).entries()];
    expect(stepsOf(en).map(([code]) => code)).toEqual(['schedule.loading-term', 'schedule.building-model', 'schedule.constructing', 'schedule.optimising', 'schedule.saving']);
    expect(Object.fromEntries(stepsOf(en))).toEqual({
      'schedule.loading-term': 'Loading the term',
      'schedule.building-model': 'Building the model',
      'schedule.constructing': 'Constructing',
      'schedule.optimising': 'Optimising',
      'schedule.saving': 'Saving the plan',
    });
    expect(Object.fromEntries(stepsOf(zh))).toEqual({
      'schedule.loading-term': '加载学期数据',
      'schedule.building-model': '构建排课模型',
      'schedule.constructing': '构造初始课表',
      'schedule.optimising': '优化课表',
      'schedule.saving': '保存排课方案',
    });

    // The model size and the solver's progress: codes with named parameters.
    const size = en.find((e) => e.messageCode === 'schedule.model-size')!;
    expect(size.messageParams).toEqual({ courses: 16, rooms: 4, lockedLectures: 0 });
    expect(size.message).toBe('16 courses, 4 rooms, 0 locked lectures');
    expect(zh.find((e) => e.messageCode === 'schedule.model-size')!.message).toBe('16 门课程，4 间教室，0 节锁定课');
    const progress = en.filter((e) => e.messageCode === 'solver.progress');
    expect(progress.length).toBeGreaterThan(0);
    for (const e of progress) {
      expect(Object.keys(e.messageParams).sort()).toEqual(['bestPenalty', 'hardViolations', 'moves']);
      expect(e.messageParams.bestPenalty === null || Number.isInteger(e.messageParams.bestPenalty)).toBe(true);
      expect(Number.isInteger(e.messageParams.hardViolations) && Number.isInteger(e.messageParams.moves)).toBe(true);
    }
    const best = progress.find((e) => e.messageParams.bestPenalty !== null)!;
    expect(best.message).toMatch(new RegExp(`^best penalty ${best.messageParams.bestPenalty}.*, ${best.messageParams.moves} moves$`));
    const bestZh = zh.find((e) => e.messageCode === 'solver.progress' && e.messageParams.bestPenalty !== null)!;
    expect(bestZh.message).toMatch(new RegExp(`^当前最优罚分 ${bestZh.messageParams.bestPenalty}.*已搜索 ${bestZh.messageParams.moves} 步$`));

    // The engine's own messages are coded too.
    expect(en.at(-1)).toMatchObject({ status: 'SUCCEEDED', messageCode: 'job.completed', message: 'Completed', currentStepCode: 'schedule.saving' });
    expect(zh.at(-1)).toMatchObject({ status: 'SUCCEEDED', messageCode: 'job.completed', message: '已完成', currentStep: '保存排课方案' });
    expect(en.some((e) => e.messageCode === 'job.started' && e.message === 'Started')).toBe(true);
    expect(zh.some((e) => e.messageCode === 'job.started' && e.message === '已开始')).toBe(true);
    // Nothing a Chinese subscriber reads of a coded sentence is left in English.
    for (const e of zh) {
      if (e.currentStepCode) expect(e.currentStep).toMatch(/[\u4e00-\u9fff]/);
      if (e.messageCode) expect(e.message).toMatch(/[\u4e00-\u9fff]/);
    }
  });

  it('over HTTP the sentences follow Accept-Language (zh, zh-CN, zh-Hans → Chinese), English by default; the codes never change', async () => {
    await workerRuns();
    const { plan } = await smallTerm(ctx.db, 'LANG-2');
    const started = (await run(START, { planId: plan.id })).startAutomaticSchedule;
    await waitForJob(engine, started.id);
    const read = async (headers: Record<string, string>) => (await run(JOB, { id: started.id }, headers)).job;

    const english = await read({});
    expect(english).toEqual({
      status: 'SUCCEEDED',
      currentStep: 'Saving the plan',
      currentStepCode: 'schedule.saving',
      message: 'Completed',
      messageCode: 'job.completed',
      messageParams: null,
      errorMessage: null,
      errorCode: null,
      errorParams: null,
    });
    for (const header of ['zh-CN', 'zh', 'zh-Hans', 'fr-FR, zh-CN;q=0.8, en;q=0.5', 'zh-CN,zh;q=0.9,en;q=0.8']) {
      expect(await read({ 'accept-language': header }), header).toEqual({ ...english, currentStep: '保存排课方案', message: '已完成' });
    }
    for (const header of ['en-US', 'fr', 'zh-TW', 'en;q=0.9, zh;q=0.1', 'zh;q=0, en', '*', 'x'.repeat(5000)]) {
      expect(await read({ 'accept-language': header }), header.slice(0, 40)).toEqual(english);
    }
    // The list of jobs speaks the same language.
    const listed = await run(`{ jobs(first: 5) { edges { node { id currentStep message } } } }`, {}, { 'accept-language': 'zh-CN' });
    const node = listed.jobs.edges.map((e: { node: any }) => e.node).find((n: { id: string }) => n.id === started.id);
    expect(node).toMatchObject({ currentStep: '保存排课方案', message: '已完成' });
  });

  it('a failed publish carries its error code and parameters; errorMessage follows the language and keeps the English details', async () => {
    // A plan with no lecture placed has every lecture missing: hard violations, so it cannot be published.
    await workerRuns();
    const { plan } = await smallTerm(ctx.db, 'LANG-3');
    const started = (await run(`mutation($planId: ID!) { publishSchedulePlan(planId: $planId) { id } }`, { planId: plan.id })).publishSchedulePlan;
    expect((await waitForJob(engine, started.id)).status).toBe('FAILED');
    const english = (await run(JOB, { id: started.id })).job;
    expect(english).toMatchObject({ status: 'FAILED', errorCode: 'publish.plan-infeasible', messageCode: 'job.failed', message: 'Failed', currentStepCode: 'publish.validating' });
    expect(english.errorParams).toEqual({ planName: 'Draft timetable', hardViolations: expect.any(Number) });
    expect(english.errorParams.hardViolations).toBeGreaterThan(0);
    expect(english.errorMessage).toMatch(new RegExp(`^Plan "Draft timetable" cannot be published: it has ${english.errorParams.hardViolations} hard violation\\(s\\)\\. Fix these first:\\n`));
    const chinese = (await run(JOB, { id: started.id }, { 'accept-language': 'zh-CN' })).job;
    expect(chinese).toEqual({
      ...english,
      currentStep: '校验方案',
      message: '任务失败',
      errorMessage: `方案“Draft timetable”有 ${english.errorParams.hardViolations} 处硬约束冲突，不能发布，请先修正`,
    });
  });

  it("a socket's language: the locale connection parameter, else the upgrade request's Accept-Language, else English", async () => {
    await workerRuns();
    const { plan } = await smallTerm(ctx.db, 'LANG-4');
    const started = (await run(START, { planId: plan.id })).startAutomaticSchedule;
    await waitForJob(engine, started.id);
    /** The snapshot of the ended job a socket with these parameters and upgrade headers gets. */
    const snapshot = async (connection: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const webSocketImpl = class extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { headers });
        }
      };
      const client = wsClient(server, null, { webSocketImpl, connectionParams: { authorization: `Bearer ${server.tokens.scheduler}`, ...connection } });
      const sub = collect(client, doc(`subscription($jobId: ID!) { jobProgress(jobId: $jobId) { currentStep message job { currentStep message } } }`), { jobId: started.id });
      await sub.done;
      await client.dispose();
      expect(sub.results).toHaveLength(1);
      return sub.results[0]!.data!.jobProgress;
    };
    const english = { currentStep: 'Saving the plan', message: 'Completed', job: { currentStep: 'Saving the plan', message: 'Completed' } };
    const chinese = { currentStep: '保存排课方案', message: '已完成', job: { currentStep: '保存排课方案', message: '已完成' } };
    expect(await snapshot({})).toEqual(english);
    expect(await snapshot({ locale: 'zh-CN' })).toEqual(chinese);
    expect(await snapshot({ locale: 'zh' })).toEqual(chinese);
    expect(await snapshot({ locale: 'fr' })).toEqual(english);
    expect(await snapshot({ locale: 42 })).toEqual(english);
    expect(await snapshot({}, { 'accept-language': 'zh-CN,zh;q=0.9' })).toEqual(chinese);
    expect(await snapshot({ locale: 'en' }, { 'accept-language': 'zh-CN' })).toEqual(english);
  });

  it('a refusal carries a stable code and names the input it is about, and changes nothing', async () => {
    const { plan } = await smallTerm(ctx.db, 'LANG-5');
    const refused = async (variables: Record<string, unknown>) => {
      const { body } = await gql(
        server,
        doc(`mutation($planId: ID!, $limit: Int) { startAutomaticSchedule(input: { planId: $planId, timeLimitSeconds: $limit }) { id } }`),
        variables,
        server.tokens.scheduler,
        { 'accept-language': 'zh-CN' },
      );
      expect(body.data).toBeNull();
      return body.errors![0]!.extensions;
    };
    // Refused by the argument checks, and by the domain's own.
    expect(await refused({ planId: plan.id, limit: 0 })).toMatchObject({ code: 'BAD_USER_INPUT', field: 'timeLimitSeconds' });
    expect(await refused({ planId: 'not-an-id', limit: 5 })).toMatchObject({ code: 'BAD_USER_INPUT', field: expect.stringMatching(/planId$/) });
    // A plan no longer DRAFT is refused by the domain, naming the field.
    const published = await ctx.db.pool.query(`update schedule_plans set status = 'PUBLISHED' where id = $1 returning id`, [plan.id]);
    expect(published.rowCount).toBe(1);
    expect(await refused({ planId: plan.id, limit: 5 })).toMatchObject({ code: 'BAD_USER_INPUT', field: 'planId' });
    const { rows } = await ctx.db.pool.query(`select count(*)::int as n from jobs where kind = 'AUTOMATIC_SCHEDULE' and input->>'planId' = $1`, [plan.id]);
    expect(rows[0].n).toBe(0);
  });
});
