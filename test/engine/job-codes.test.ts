import type { Logger } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { ENGINE_MESSAGES } from '../../src/engine/job-messages';
import { PermanentJobError } from '../../src/engine/registry';
import { JobStatus, type JobEvent } from '../../src/engine/types';
import { Locale } from '../../src/i18n/locale';
import { renderMessage } from '../../src/i18n/message-catalog';
import { jobMessageCatalog } from '../../src/job-kind-descriptors';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';
import { capturingLogger } from '../api/support/api-server';

/**
 * The engine stores and forwards codes without knowing any: what a processor hands it
 * (coded steps, messages, failures) and its own `job.*` codes for a job's life. A failure
 * that does not describe itself gets the generic `job.failed`, whose parameters and
 * translations say nothing of the cause.
 */

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine | undefined;

beforeAll(async () => {
  ctx = await createTestDb('engine_codes');
});
afterEach(async () => {
  await engine?.stop(1_000);
  engine = undefined;
});
afterAll(async () => {
  await ctx?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const catalog = jobMessageCatalog();
const chinese = (code: string | null, params: unknown, text: string | null) => renderMessage(catalog, Locale.ZH_CN, { code, params, text });

/** The engine's messages in SQL say what its catalog says in English (a retry's keeps the cause's text too). */
function expectCatalogEnglish(events: JobEvent[]): void {
  const engineCoded = events.filter((event) => event.messageCode?.startsWith('job.') && event.messageCode !== 'job.retry-scheduled');
  expect(engineCoded.length).toBeGreaterThan(0);
  for (const event of engineCoded) {
    const definition = ENGINE_MESSAGES[event.messageCode as keyof typeof ENGINE_MESSAGES];
    expect(event.message, event.messageCode!).toBe(definition.sentences[Locale.EN]((event.messageParams ?? {}) as never));
  }
}

function run(processor: Parameters<typeof buildEngine>[0]['registrations'][number]['processor'], settings: { attemptLimit?: number } = {}, logger?: Logger) {
  engine = buildEngine({ db: ctx.db, registrations: [{ kind: 'CODED', defaults: { consumers: 1 }, processor }], settings, logger });
  const events: JobEvent[] = [];
  engine.subscribe((event) => events.push(event));
  return { engine, events };
}

describe('codes through the engine', () => {
  it('coded steps and messages are stored and published with their parameters; plain strings have no code', async () => {
    // Each write is awaited before the next, so none merges into the next (they would, written close together).
    const seen: JobEvent[] = [];
    const until = async (what: (event: JobEvent) => boolean) => {
      const deadline = Date.now() + 20_000;
      while (!seen.some(what)) {
        if (Date.now() > deadline) throw new Error('the write was never published');
        await sleep(10);
      }
    };
    const { engine: e, events } = run(async ({ progress }) => {
      progress.step({ code: 'test.first', params: null, text: 'First step' }, { code: 'test.size', params: { n: 3 }, text: '3 things' });
      await until((event) => event.currentStepCode === 'test.first');
      progress.step('A plain step');
      await until((event) => event.currentStep === 'A plain step');
      progress.report(0.5, { code: 'solver.progress', params: { bestPenalty: 7, hardViolations: 0, moves: 99 }, text: 'best penalty 7, 99 moves' });
      await until((event) => event.messageCode === 'solver.progress');
      return { ok: true };
    });
    e.subscribe((event) => seen.push(event));
    await e.start();
    const queued = (await e.enqueue({ kind: 'CODED', input: {} })).job;
    expect(queued).toMatchObject({ message: 'Waiting for a worker', messageCode: 'job.queued', messageParams: null, currentStepCode: null });
    const done = await waitForJob(e, queued.id);
    expect(done).toMatchObject({ status: JobStatus.SUCCEEDED, currentStep: 'A plain step', currentStepCode: null, message: 'Completed', messageCode: 'job.completed' });

    const mine = events.filter((event) => event.jobId === queued.id);
    expect(mine.find((event) => event.messageCode === 'job.started')).toMatchObject({ message: 'Started', messageParams: null });
    expect(mine.find((event) => event.currentStepCode === 'test.first')).toMatchObject({
      currentStep: 'First step',
      message: '3 things',
      messageCode: 'test.size',
      messageParams: { n: 3 },
    });
    const plain = mine.find((event) => event.currentStep === 'A plain step')!;
    expect(plain.currentStepCode).toBeNull();
    // A step without a message keeps the message before it, code and all.
    expect(plain).toMatchObject({ message: '3 things', messageCode: 'test.size', messageParams: { n: 3 } });
    expect(mine.find((event) => event.messageCode === 'solver.progress')).toMatchObject({
      progress: 0.5,
      messageParams: { bestPenalty: 7, hardViolations: 0, moves: 99 },
      job: { messageCode: 'solver.progress', messageParams: { bestPenalty: 7, hardViolations: 0, moves: 99 } },
    });
    expectCatalogEnglish(mine);
    // The stored row says the same as the events.
    expect(await e.getJob(queued.id)).toMatchObject({ currentStepCode: null, messageCode: 'job.completed', errorCode: null, errorParams: null });
  });

  it('a failure that describes itself keeps its code and parameters', async () => {
    const { engine: e } = run(async () => {
      throw new PermanentJobError({ code: 'schedule.plan-not-draft', params: { planName: 'P', status: 'PUBLISHED' }, text: 'Plan "P" is PUBLISHED now' });
    });
    await e.start();
    const done = await waitForJob(e, (await e.enqueue({ kind: 'CODED', input: {} })).job.id);
    expect(done).toMatchObject({
      status: JobStatus.FAILED,
      errorMessage: 'Plan "P" is PUBLISHED now',
      errorCode: 'schedule.plan-not-draft',
      errorParams: { planName: 'P', status: 'PUBLISHED' },
      message: 'Failed',
      messageCode: 'job.failed',
    });
    expect(chinese(done.errorCode, done.errorParams, done.errorMessage)).toBe('方案“P”当前状态为 PUBLISHED，只有草稿（DRAFT）可以排课（可复制为新草稿）');
  });

  it('any other failure is job.failed, with no parameters, and neither its sentence nor its translation tells the cause: the log does, under the ref the sentence names', async () => {
    const secret = 'connect ECONNREFUSED 10.1.2.3:5432 (password=hunter2)';
    const log = capturingLogger();
    const { engine: e } = run(
      async () => {
        throw Object.assign(new Error(secret), { retryable: false, code: 'ECONNREFUSED', jobText: { code: 'Not A Code', params: null, text: 'x' } });
      },
      {},
      log.logger,
    );
    await e.start();
    const done = await waitForJob(e, (await e.enqueue({ kind: 'CODED', input: {} })).job.id);
    expect(done).toMatchObject({ status: JobStatus.FAILED, errorCode: 'job.failed', errorParams: null });
    const ref = /^Internal error \(ref ([0-9a-f]{12})\): the service's log has its cause$/.exec(done.errorMessage ?? '')?.[1];
    expect(ref, done.errorMessage ?? '').toBeDefined();
    expect(chinese(done.errorCode, done.errorParams, done.errorMessage)).toBe('任务失败');
    const logged = log.lines.find((line) => line.msg === 'job failed');
    expect(logged).toMatchObject({ ref, err: { message: secret } });
    const { rows } = await ctx.db.pool.query('SELECT last_error FROM job_outbox WHERE job_id = $1', [done.id]);
    expect(rows).toEqual([{ last_error: secret }]);
  });

  it('retries are coded with their attempt and delay, and running out of attempts is job.attempts-exhausted', async () => {
    const { engine: e, events } = run(
      async () => {
        throw new Error('flaky');
      },
      { attemptLimit: 2 },
    );
    await e.start();
    const jobId = (await e.enqueue({ kind: 'CODED', input: {} })).job.id;
    const done = await waitForJob(e, jobId);
    expect(done).toMatchObject({ status: JobStatus.FAILED, errorCode: 'job.attempts-exhausted', errorParams: { attemptLimit: 2 } });
    expect(done.errorMessage).toMatch(/^Internal error \(ref [0-9a-f]{12}\): the service's log has its cause \(attempt 2 of 2;/);
    const retry = events.find((event) => event.jobId === jobId && event.messageCode === 'job.retry-scheduled')!;
    expect(retry.messageParams).toEqual({ attempt: 1, retryInSeconds: expect.any(Number) });
    expect(retry.message).toMatch(/^Attempt 1 failed: Internal error \(ref [0-9a-f]{12}\): the service's log has its cause; retrying in \d+ s$/);
    expect(chinese(retry.messageCode, retry.messageParams, retry.message)).toMatch(/^第 1 次尝试失败，\d+ 秒后重试$/);
    expect(events.find((event) => event.jobId === jobId && event.messageCode === 'job.attempt-started')).toMatchObject({
      message: 'Attempt 2 started',
      messageParams: { attempt: 2 },
    });
    expect(chinese(done.errorCode, done.errorParams, done.errorMessage)).toBe('已尝试 2 次仍未成功，自动重试已停止：请排除原因后重试该任务');
    expectCatalogEnglish(events.filter((event) => event.jobId === jobId));
  });

  it('cancel and retry are coded', async () => {
    const { engine: e, events } = run(async ({ signal }) => {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      signal.throwIfAborted();
    });
    await e.start();
    const jobId = (await e.enqueue({ kind: 'CODED', input: {} })).job.id;
    await waitForJob(e, jobId, (j) => j.status === JobStatus.RUNNING, 10_000);
    expect(await e.cancel(jobId)).toMatchObject({ message: 'Cancellation requested', messageCode: 'job.cancel-requested' });
    expect(await waitForJob(e, jobId)).toMatchObject({ status: JobStatus.CANCELLED, message: 'Cancelled', messageCode: 'job.cancelled', errorCode: null });
    expect(await e.retry(jobId)).toMatchObject({
      status: JobStatus.QUEUED,
      message: 'Retry requested; waiting for a worker',
      messageCode: 'job.retry-requested',
      currentStepCode: null,
      errorCode: null,
    });
    expectCatalogEnglish(events.filter((event) => event.jobId === jobId));
  });

  it('a job whose worker died on its last attempt, then cancelled, ends CANCELLED when its lease is rescued', async () => {
    engine = buildEngine({
      db: ctx.db,
      registrations: [{ kind: 'CODED', defaults: { consumers: 1 }, processor: async () => ({ ran: true }) }],
      settings: { attemptLimit: 1 },
      roles: { maintenance: true },
    });
    const e = engine;
    const jobId = (await e.enqueue({ kind: 'CODED', input: {} })).job.id;
    // Its one attempt started on a worker that died: the lease ran out with nobody to renew it.
    await ctx.db.pool.query(
      `WITH o AS (UPDATE job_outbox SET state = 'PROCESSING', processing_token = gen_random_uuid(), processing_attempts = 1,
                    lease_expires_at = now() - interval '1 minute' WHERE job_id = $1)
       UPDATE jobs SET status = 'RUNNING', attempts = 1, started_at = now(), sequence = sequence + 1 WHERE id = $1`,
      [jobId],
    );
    expect(await e.cancel(jobId)).toMatchObject({ status: JobStatus.RUNNING, messageCode: 'job.cancel-requested' });
    await e.start();
    await e.maintenance.runOnce(); // the lease rescuer puts it back; the next claim would be attempt 2 of 1
    expect(await waitForJob(e, jobId)).toMatchObject({ status: JobStatus.CANCELLED, messageCode: 'job.cancelled-before-start', errorCode: null });
  });

  it('a job cancelled while it waits is coded so', async () => {
    // Not started: nothing takes the job before the cancel.
    const { engine: e } = run(async () => ({ ran: true }));
    const jobId = (await e.enqueue({ kind: 'CODED', input: {} })).job.id;
    expect(await e.cancel(jobId)).toMatchObject({ status: JobStatus.CANCELLED, message: 'Cancelled before it started', messageCode: 'job.cancelled-before-start' });
    expect(chinese('job.cancelled-before-start', null, 'Cancelled before it started')).toBe('已在开始前取消');
  });
});
