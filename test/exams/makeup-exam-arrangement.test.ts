import { describe, expect, it } from 'vitest';
import { JobStatus, type JobEvent } from '../../src/engine/types';
import { evaluateSession, findArrangement, solutionText } from '../../src/exams/arrangement-service';
import { MakeupExamSitting } from '../../src/exams/entities';
import { evaluateArrangement } from '../../src/exams/evaluation/evaluator';
import { ExamFormat, importExamSession } from '../../src/exams/exam-import';
import { parseItc2007Exam } from '../../src/exams/formats/itc2007-exam-format';
import { parseItc2007Solution } from '../../src/exams/formats/itc2007-solution-format';
import { parseToronto } from '../../src/exams/formats/toronto-format';
import { parseTorontoSolution } from '../../src/exams/formats/toronto-solution-format';
import { MAKEUP_EXAM_STEPS, MakeupExamSteps, type MakeupExamArrangementResult } from '../../src/exams/makeup-exam-arrangement';
import { loadSessionModel } from '../../src/exams/session-model';
import { waitForJob } from '../support/engine-harness';
import { createTermSession } from './exam-session-fixture';
import { makeupExamJobs } from './makeup-exam-jobs';
import { TINY_CRS, TINY_EXAM, TINY_STU } from './tiny-instances';

const jobs = makeupExamJobs('exam_auto');
const { em, examEngine, start, sittingsOf } = jobs;

describe('MAKEUP_EXAM_AUTO', () => {
  it('arranges a term session: SUCCEEDED, 0 hard violations, every step seen, saved with its evaluation', async () => {
    await examEngine();
    const events: JobEvent[] = [];
    jobs.engine.subscribe((e) => events.push(e));
    const session = await createTermSession(em, 'AUTO-TERM', 1);
    const job = await start({ sessionId: session.id, timeLimitSeconds: 1, seed: 3 });
    expect(job.exclusiveKey).toBe(`makeup-exam-session:${session.id}`);
    const done = await waitForJob(jobs.engine, job.id, undefined, 30_000);
    expect(done.errorMessage).toBeNull();
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    const result = done.result as MakeupExamArrangementResult;
    expect(result).toMatchObject({ sessionId: session.id, hardViolations: 0, seed: 3, unplacedExams: [] });
    expect(result.exams).toBeGreaterThan(5);
    expect(result.students).toBeGreaterThan(50);
    expect(result.iterations).toBeGreaterThan(0);
    const steps = events.filter((e) => e.jobId === job.id).map((e) => e.currentStep);
    for (const step of Object.values(MakeupExamSteps)) expect(steps, step).toContain(step);
    const best = events.find((e) => e.jobId === job.id && e.messageCode === 'solver.progress' && e.messageParams?.bestPenalty !== null)!;
    expect(best.message).toMatch(/^best penalty \d/);
    expect(best.messageParams).toEqual({ bestPenalty: expect.any(Number), hardViolations: expect.any(Number), moves: expect.any(Number), unplacedExams: expect.any(Number) });
    expect(new Set(events.filter((e) => e.jobId === job.id).map((e) => e.currentStepCode))).toEqual(
      new Set([null, ...Object.values(MAKEUP_EXAM_STEPS).map((step) => step.code)]),
    );

    // Saved: one sitting per room used, each with an invigilator; the evaluator agrees.
    const data = await loadSessionModel(em(), session.id);
    const stored = await findArrangement(em(), session.id);
    expect(stored).toMatchObject({ jobId: job.id, hardViolations: 0, cost: result.cost, sessionRevision: session.revision });
    const evaluation = await evaluateSession(em(), session.id);
    expect(evaluation).toMatchObject({ current: true, exams: result.exams });
    expect(evaluation!.hard.total).toBe(0);
    expect(evaluation!.soft.total).toBeCloseTo(result.cost, 9);
    const sittings = await em().find(MakeupExamSitting, { arrangement: stored!.id }, { populate: ['exam'] });
    expect(new Set(sittings.map((s) => s.exam.code))).toEqual(new Set(data.model.exams.map((e) => e.code)));
    expect(sittings.every((s) => s.room && s.invigilator)).toBe(true);
    expect(await solutionText(em(), session.id)).toBeNull(); // a term session has no benchmark format
  });

  it('exports an imported ITC-2007 session as .sln and a Toronto one as .sol, which re-evaluate to the saved cost', async () => {
    await examEngine();
    const itc = await importExamSession(em(), { format: ExamFormat.ITC2007_EXAM, text: TINY_EXAM, code: 'auto-itc' });
    const toronto = await importExamSession(em(), { format: ExamFormat.TORONTO, text: TINY_CRS, studentsText: TINY_STU, periods: 4, code: 'auto-toronto' });
    for (const [session, check] of [
      [itc, (text: string) => {
        const model = parseItc2007Exam(TINY_EXAM);
        return evaluateArrangement(model, parseItc2007Solution(text, model));
      }],
      [toronto, (text: string) => {
        const model = parseToronto(TINY_CRS, TINY_STU, 4);
        return evaluateArrangement(model, parseTorontoSolution(text, model));
      }],
    ] as const) {
      const done = await waitForJob(jobs.engine, (await start({ sessionId: session.id, timeLimitSeconds: 1, seed: 1 })).id, undefined, 20_000);
      expect(done.status, done.errorMessage ?? '').toBe(JobStatus.SUCCEEDED);
      const result = done.result as MakeupExamArrangementResult;
      expect(result.hardViolations).toBe(0);
      const text = (await solutionText(em(), session.id))!;
      expect(text.trim().split('\n')).toHaveLength(session.format === 'TORONTO' ? 3 : 4);
      // The benchmark's own file and the exported solution, read back by the core's readers.
      const again = check(text);
      expect(again.hard.total).toBe(0);
      expect(again.soft.total).toBeCloseTo(result.cost, 9);
    }
  });

  it('is deterministic for a seed and an iteration budget', async () => {
    await examEngine();
    const session = await createTermSession(em, 'AUTO-SEED', 2);
    const run = async (seed: number) => {
      const done = await waitForJob(jobs.engine, (await start({ sessionId: session.id, timeLimitSeconds: 60, seed, maxIterations: 8_000 })).id, undefined, 60_000);
      expect(done.status, done.errorMessage ?? '').toBe(JobStatus.SUCCEEDED);
      expect((done.result as MakeupExamArrangementResult).stopReason).not.toBe('time');
      return { cost: (done.result as MakeupExamArrangementResult).cost, sittings: await sittingsOf(session.id) };
    };
    const first = await run(5);
    const second = await run(5);
    expect(second).toEqual(first);
  });

  it('reports the best cost every second while optimising; a cancel ends CANCELLED promptly and keeps the arrangement saved before', async () => {
    await examEngine();
    const session = await createTermSession(em, 'AUTO-CANCEL', 3);
    expect((await waitForJob(jobs.engine, (await start({ sessionId: session.id, timeLimitSeconds: 1 })).id, undefined, 20_000)).status).toBe(JobStatus.SUCCEEDED);
    const before = await sittingsOf(session.id);
    const events: JobEvent[] = [];
    jobs.engine.subscribe((e) => events.push(e));
    const job = await start({ sessionId: session.id, timeLimitSeconds: 60, seed: 9 });
    await waitForJob(jobs.engine, job.id, (j) => j.currentStep === MakeupExamSteps.OPTIMISING, 20_000);
    // While it optimises, progress (the best cost so far) arrives at least once a second.
    const optimisingFrom = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const progress = events.filter((e) => e.jobId === job.id && e.reason === 'PROGRESS' && e.occurredAt.getTime() >= optimisingFrom);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.every((e) => e.messageCode === 'solver.progress' && /^best penalty \d/.test(e.message ?? ''))).toBe(true);
    // Once a second, with slack for a loaded machine; a stalled reporter shows the whole solve.
    for (let i = 1; i < progress.length; i++) expect(progress[i].occurredAt.getTime() - progress[i - 1].occurredAt.getTime()).toBeLessThan(2_000);
    const asked = Date.now();
    await jobs.engine.cancel(job.id);
    const done = await waitForJob(jobs.engine, job.id, undefined, 10_000);
    expect(done.status).toBe(JobStatus.CANCELLED);
    // The worker is asked to stop and answers within milliseconds (terminated after 1 s at worst).
    expect(Date.now() - asked).toBeLessThan(3_000);
    expect(await sittingsOf(session.id)).toEqual(before);
  });

});
