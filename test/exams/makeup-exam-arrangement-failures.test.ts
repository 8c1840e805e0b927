import { describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engine/errors';
import { JobStatus } from '../../src/engine/types';
import { evaluateSession, findArrangement } from '../../src/exams/arrangement-service';
import { refused } from '../support/refused';
import { MakeupExamSteps } from '../../src/exams/makeup-exam-arrangement';
import * as sessions from '../../src/exams/session-service';
import { untilWaitingOnTransaction, waitForJob } from '../support/engine-harness';
import * as academic from '../../src/academic/academic-service';
import { createTermSession } from './exam-session-fixture';
import { makeupExamJobs } from './makeup-exam-jobs';

/** What MAKEUP_EXAM_AUTO refuses at start (a second run of a session, bad input), and how a run that cannot finish ends: at once, without retries, nothing half-saved. */

const jobs = makeupExamJobs('exam_auto_fail');
const { em, examEngine, start, sittingsOf } = jobs;

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EngineError);
  return { code: (error as EngineError).code, message: (error as EngineError).message };
}

describe('MAKEUP_EXAM_AUTO refusals and failures', () => {
  it('a second start while one runs is a CONFLICT naming the running job', async () => {
    await examEngine();
    const session = await createTermSession(em, 'AUTO-EXCL', 4);
    const first = await start({ sessionId: session.id, timeLimitSeconds: 30 });
    const error = await refusal(start({ sessionId: session.id, timeLimitSeconds: 5 }));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain(first.id);
    await jobs.engine.cancel(first.id);
    expect((await waitForJob(jobs.engine, first.id)).status).toBe(JobStatus.CANCELLED);
    const again = await start({ sessionId: session.id, timeLimitSeconds: 1 });
    expect((await waitForJob(jobs.engine, again.id, undefined, 20_000)).status).toBe(JobStatus.SUCCEEDED);
  });
  it('refuses bad input at start with BAD_USER_INPUT naming the field; nothing is enqueued', async () => {
    await examEngine();
    const session = await createTermSession(em, 'AUTO-BAD', 5);
    expect(await refusal(start({ sessionId: 'nope' }))).toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringMatching(/sessionId must be an id/) });
    expect(await refusal(start({ sessionId: session.id, timeLimitSeconds: 0 }))).toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringMatching(/timeLimitSeconds .*from 1 to 600/) });
    expect(await refusal(start({ sessionId: session.id, seed: -1 }))).toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringMatching(/seed/) });
    expect(await refusal(start({ sessionId: session.id, maxIterations: 0 }))).toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringMatching(/maxIterations/) });
    expect(await refusal(start({ sessionId: '00000000-0000-4000-8000-000000000000' }))).toMatchObject({ code: 'NOT_FOUND' });
    const { term } = (await sessions.findMakeupSession(em(), session.id)) as { term: { id: string } };
    const empty = await sessions.createMakeupSession(em(), { termId: term.id, code: 'AUTO-EMPTY' });
    expect(await refusal(start({ sessionId: empty.id }))).toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringMatching(/sessionId: session AUTO-EMPTY has no periods/) });
    await sessions.addPeriod(em(), { sessionId: empty.id, date: '2027-03-01', startTime: '09:00', duration: 120 });
    expect(await refusal(start({ sessionId: empty.id }))).toMatchObject({ message: expect.stringMatching(/has no rooms/) });
    await sessions.addRoom(em(), { sessionId: empty.id, code: 'R', capacity: 10 });
    expect(await refusal(start({ sessionId: empty.id }))).toMatchObject({ message: expect.stringMatching(/no student of session AUTO-EMPTY scored below the passing score \(60\)/) });
    const { rows } = await jobs.db.pool.query(`select count(*)::int as n from jobs where kind = 'MAKEUP_EXAM_AUTO' and input->>'sessionId' in ($1, $2)`, [session.id, empty.id]);
    expect(rows[0].n).toBe(0);
    // The engine's own check refuses the same input when enqueued directly.
    expect(await refusal(jobs.engine.enqueue({ kind: 'MAKEUP_EXAM_AUTO', input: { sessionId: session.id, timeLimitSeconds: 9999 } }))).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('a session changed during the solve fails at once without a retry, and nothing is saved', async () => {
    await examEngine({}, { attemptLimit: 3 });
    const session = await createTermSession(em, 'AUTO-CHANGED', 6);
    const job = await start({ sessionId: session.id, timeLimitSeconds: 3 });
    await waitForJob(jobs.engine, job.id, (j) => j.currentStep === MakeupExamSteps.OPTIMISING, 20_000);
    await sessions.updateMakeupSession(em(), session.id, { passingScore: 55 });
    const done = await waitForJob(jobs.engine, job.id, undefined, 20_000);
    expect(done.status).toBe(JobStatus.FAILED);
    expect(done.errorMessage).toMatch(/session AUTO-CHANGED changed during the arrangement; the result was not saved/);
    expect(done.attempts).toBe(1); // a user-input failure is not retried
    expect(await findArrangement(em(), session.id)).toBeNull();
  });

  it('a course or teacher deleted from the term raises the revision of the sessions it leaves: the stored arrangement is no longer current, and a save under way and the deletion wait for each other', async () => {
    let duringSave: (() => Promise<void>) | null = null;
    await examEngine({ beforeSave: async () => duringSave?.() }, { attemptLimit: 1 });
    const session = await createTermSession(em, 'AUTO-ACADEMIC', 10);
    const pool = jobs.db.pool;
    const { rows: [{ term_id: termId }] } = await pool.query('SELECT term_id FROM makeup_exam_sessions WHERE id = $1', [session.id]);
    const { rows: periods } = await pool.query('SELECT id FROM makeup_exam_periods WHERE session_id = $1', [session.id]);
    const spare = await academic.createTeacher(em(), { termId, code: 'SPARE' });
    await sessions.setInvigilator(em(), { sessionId: session.id, teacherId: spare.id, availablePeriodIds: periods.map((p) => p.id as string) });
    const examCourses = async () =>
      (await pool.query('SELECT course_id FROM makeup_exams WHERE session_id = $1 AND course_id IS NOT NULL ORDER BY code', [session.id])).rows.map((r) => r.course_id as string);
    const arrange = async (seed: number) => waitForJob(jobs.engine, (await start({ sessionId: session.id, timeLimitSeconds: 1, seed })).id, undefined, 20_000);
    const current = async () => (await evaluateSession(em(), session.id))!.current;

    expect((await arrange(1)).status).toBe(JobStatus.SUCCEEDED);
    expect(await current()).toBe(true);
    await academic.deleteTeacher(em(), spare.id);
    expect(await current()).toBe(false);

    expect((await arrange(2)).status).toBe(JobStatus.SUCCEEDED);
    expect(await current()).toBe(true);
    const [first, second] = await examCourses();
    await academic.deleteCourse(em(), first!);
    expect(await current()).toBe(false);
    expect(await examCourses()).not.toContain(first);

    // A course deleted while an arrangement is saved: the deletion waits for the save (it
    // raises the session's revision before its exam goes), then takes the exam and its sittings.
    let deletion: Promise<boolean> | null = null;
    duringSave = async () => {
      duringSave = null;
      deletion = academic.deleteCourse(em(), second!);
      await untilWaitingOnTransaction(pool, 'the course deletion waits for the arrangement being saved');
    };
    expect((await arrange(3)).status).toBe(JobStatus.SUCCEEDED);
    expect(await deletion).toBe(true);
    expect(await current()).toBe(false);
    const { rows: left } = await pool.query('SELECT count(*)::int AS n FROM makeup_exam_sittings s JOIN makeup_exams e ON e.id = s.exam_id WHERE e.course_id = $1', [second]);
    expect(left).toEqual([{ n: 0 }]);
  });

  it('a session deleted before its job runs fails at once without a retry', async () => {
    const session = await createTermSession(em, 'AUTO-GONE', 7);
    const engine = await examEngine({}, { attemptLimit: 3, consumers: 1, started: false });
    const job = await start({ sessionId: session.id, timeLimitSeconds: 1 });
    await sessions.deleteMakeupSession(em(), session.id);
    await engine.start();
    const done = await waitForJob(engine, job.id, undefined, 20_000);
    expect(done).toMatchObject({ status: JobStatus.FAILED, attempts: 1 });
    expect(done.errorMessage).toMatch(/no longer exists/);
  });

  it('a failure while saving leaves the previous arrangement whole: no half-saved arrangement', async () => {
    let failSave = false;
    await examEngine({ beforeSave: () => {
      if (failSave) throw new Error('disk full (injected)');
    } }, { attemptLimit: 1 });
    const session = await createTermSession(em, 'AUTO-SAVE', 8);
    const first = await waitForJob(jobs.engine, (await start({ sessionId: session.id, timeLimitSeconds: 1, seed: 1 })).id, undefined, 20_000);
    expect(first.status).toBe(JobStatus.SUCCEEDED);
    const before = await sittingsOf(session.id);
    const arrangementBefore = await findArrangement(em(), session.id);
    expect(before.length).toBeGreaterThan(0);
    failSave = true;
    const failed = await waitForJob(jobs.engine, (await start({ sessionId: session.id, timeLimitSeconds: 1, seed: 2 })).id, undefined, 20_000);
    expect(failed.status).toBe(JobStatus.FAILED);
    expect(failed.errorMessage).toMatch(/^Internal error \(ref [0-9a-f]{12}\)/);
    expect((await findArrangement(em(), session.id))!.id).toBe(arrangementBefore!.id);
    expect(await sittingsOf(session.id)).toEqual(before);
  });

  it('an arrangement keeps a move count past 2^31; a session edited into one no arrangement can describe (no period left) is refused evaluation as BAD_USER_INPUT', async () => {
    await examEngine();
    const session = await createTermSession(em, 'AUTO-NO-PERIODS', 9);
    const done = await waitForJob(jobs.engine, (await start({ sessionId: session.id, timeLimitSeconds: 1 })).id, undefined, 20_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(await evaluateSession(em(), session.id)).toMatchObject({ current: true });
    // A long run on a small session passes 2^31 moves: the arrangement keeps the count whole.
    await jobs.db.pool.query(`update makeup_exam_arrangements set iterations = 3000000000 where session_id = $1`, [session.id]);
    expect((await findArrangement(em(), session.id))!.iterations).toBe(3_000_000_000);
    for (const { row } of await sessions.pagePeriods(em(), session.id, { first: 100, after: null })) await sessions.deletePeriod(em(), row.id);
    await refused(evaluateSession(em(), session.id), 'BAD_USER_INPUT', /^sessionId: session AUTO-NO-PERIODS cannot be evaluated as it is now: .*period/);
  });
});
