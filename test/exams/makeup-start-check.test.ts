import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { EngineError } from '../../src/engine/errors';
import { JobStatus } from '../../src/engine/types';
import { makeupExamArrangementRegistration, startMakeupExamArrangement } from '../../src/exams/makeup-exam-arrangement';
import * as sessions from '../../src/exams/session-service';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';
import { ormAsyncContextEntries } from '../support/orm-async-context';
import { countSql } from '../support/sql-counter';
import { createTermSession, SMALL_SESSION } from './exam-session-fixture';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
const em = () => ctx.db.orm.em.fork();
const newEngine = () => buildEngine({ db: ctx.db, registrations: [makeupExamArrangementRegistration({ consumers: 1 })], settings: { attemptLimit: 3 } });

beforeAll(async () => {
  ctx = await createTestDb('exam_start_check');
  engine = newEngine();
});
afterEach(async () => {
  await engine.stop(2_000);
  engine = newEngine();
});
afterAll(async () => {
  await ctx.close();
});

const start = (sessionId: string) => startMakeupExamArrangement({ em: em(), engine }, { sessionId, timeLimitSeconds: 1, maxIterations: 1_000 }, 'tester');

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EngineError);
  return { code: (error as EngineError).code, message: (error as EngineError).message };
}

describe('the start of MAKEUP_EXAM_AUTO', () => {
  it('refuses a term session without invigilators, and an imported session without exams', async () => {
    const session = await createTermSession(em, 'START-NO-INV', 3);
    await ctx.db.pool.query('DELETE FROM makeup_exam_invigilators WHERE session_id = $1', [session.id]);
    expect(await refusal(start(session.id))).toEqual({ code: 'BAD_USER_INPUT', message: 'sessionId: session START-NO-INV has no invigilators' });
    // An imported session lists its exams itself: with none, there is nothing to arrange.
    await ctx.db.pool.query(`UPDATE makeup_exam_sessions SET format = 'TORONTO', capacitated = false WHERE id = $1`, [session.id]);
    await ctx.db.pool.query('DELETE FROM makeup_exams WHERE session_id = $1', [session.id]);
    expect(await refusal(start(session.id))).toEqual({ code: 'BAD_USER_INPUT', message: 'sessionId: session START-NO-INV has no exams' });
    const { rows } = await ctx.db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE input->>'sessionId' = $1`, [session.id]);
    expect(rows[0].n).toBe(0);
  });

  it('costs the same statements and rows on a small and a 10× larger session, and loads no entity', async () => {
    const small = await createTermSession(em, 'START-SMALL', 4);
    const large = await createTermSession(em, 'START-LARGE', 5, { ...SMALL_SESSION, courses: 24, students: 1_200 });
    const enrolments = async (sessionId: string) =>
      (await ctx.db.pool.query('SELECT count(*)::int AS n FROM makeup_exam_enrolments e JOIN makeup_exams x ON x.id = e.exam_id WHERE x.session_id = $1', [sessionId])).rows[0].n as number;
    expect(await enrolments(large.id)).toBeGreaterThanOrEqual(8 * (await enrolments(small.id)));
    const measure = async (sessionId: string) => {
      const manager = em();
      const { result, count } = await countSql(() => startMakeupExamArrangement({ em: manager, engine }, { sessionId, timeLimitSeconds: 1 }, 'tester'));
      expect(result.status).toBe(JobStatus.QUEUED);
      expect(manager.getUnitOfWork().getIdentityMap().values()).toHaveLength(0);
      return { statements: count.statements, rows: count.rows };
    };
    const onSmall = await measure(small.id);
    expect(await measure(large.id)).toEqual(onSmall);
    // The check (1 row), then the job and its outbox row in one statement (1 row).
    expect(onSmall).toEqual({ statements: 2, rows: 2 });
  });

  it("enters no AsyncLocalStorage of the ORM, so an API process's starts leave Node's promise hooks off", async () => {
    const session = await createTermSession(em, 'START-NO-ALS', 6);
    const { result, entries } = await ormAsyncContextEntries(() =>
      startMakeupExamArrangement({ em: ctx.db.orm.em, engine }, { sessionId: session.id, timeLimitSeconds: 1 }, 'tester'),
    );
    expect(result.status).toBe(JobStatus.QUEUED);
    expect(entries).toEqual([]);
  });

  it('leaves to the job what changes after the start: it fails permanently with the reason', async () => {
    const session = await createTermSession(em, 'START-LATER', 6);
    const job = await start(session.id);
    await ctx.db.pool.query('DELETE FROM makeup_exam_invigilators WHERE session_id = $1', [session.id]);
    await engine.start();
    const done = await waitForJob(engine, job.id, undefined, 20_000);
    expect(done.status).toBe(JobStatus.FAILED);
    expect(done.attempts).toBe(1);
    expect(done.errorMessage).toBe('Session START-LATER has no invigilators');
    // The session is untouched: it can be fixed and started again.
    expect(await sessions.findMakeupSession(em(), session.id)).toMatchObject({ code: 'START-LATER' });
  });
});
