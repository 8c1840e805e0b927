import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/database';
import type { JobEngine } from '../../src/engine/engine';
import { EngineError } from '../../src/engine/errors';
import { JobStatus } from '../../src/engine/types';
import { startAutomaticSchedule } from '../../src/scheduling/automatic-schedule';
import { compileModel, CttModelError } from '../../src/scheduling/ctt/model';
import { ScheduleAssignment } from '../../src/scheduling/entities';
import { publishSchedulePlan } from '../../src/scheduling/schedule-publish';
import { buildCttModel, loadTermData } from '../../src/scheduling/term-data';
import { createTestDb, waitForJob } from '../support/engine-harness';
import { ormAsyncContextEntries } from '../support/orm-async-context';
import { countSql } from '../support/sql-counter';
import { em, schedulingEngine, smallTerm, SMALL_TERM } from './scheduling-harness';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;

beforeAll(async () => {
  ctx = await createTestDb('sched_start_check');
  engine = schedulingEngine(ctx.db);
});
afterEach(async () => {
  await engine.stop(2_000);
  engine = schedulingEngine(ctx.db);
});
afterAll(async () => {
  await ctx.close();
});

const start = (planId: string) => startAutomaticSchedule({ em: em(ctx.db), engine }, { planId, timeLimitSeconds: 1, seed: 1 }, 'tester');

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EngineError);
  return { code: (error as EngineError).code, message: (error as EngineError).message };
}

/** What the full model says of a plan's term and locks (the job's check). */
async function compileError(db: Database, planId: string, termId: string): Promise<string> {
  const data = await loadTermData(em(db), termId);
  const locked = await em(db).find(ScheduleAssignment, { plan: planId, locked: true });
  try {
    compileModel(buildCttModel(data, locked));
  } catch (error) {
    if (error instanceof CttModelError) return error.message;
    throw error;
  }
  throw new Error('the full model compiles');
}

const sql = (query: string, params: unknown[] = []) => ctx.db.pool.query(query, params);

describe('the start of AUTOMATIC_SCHEDULE', () => {
  it('refuses what aggregates show the model cannot compile, in the words of compileModel', async () => {
    // Each case breaks one thing of a term of its own; the start must name exactly what the full model names.
    const cases: [string, (termId: string, planId: string) => Promise<unknown>][] = [
      ['no rooms', (termId) => sql('DELETE FROM academic_rooms WHERE term_id = $1', [termId])],
      ['more lectures than slots', (termId) => sql(`UPDATE academic_courses SET lectures_per_week = 21 WHERE term_id = $1 AND code = (SELECT min(code) FROM academic_courses WHERE term_id = $1)`, [termId])],
      ['no lecture at all', (termId) => sql(`UPDATE academic_courses SET lectures_per_week = 0 WHERE term_id = $1 AND code = (SELECT min(code) FROM academic_courses WHERE term_id = $1)`, [termId])],
      ['more lectures than periods x rooms', (termId) => sql(`DELETE FROM academic_rooms WHERE term_id = $1 AND code <> (SELECT min(code) FROM academic_rooms WHERE term_id = $1)`, [termId])],
      [
        'an unavailability outside the week',
        (termId) => sql(`UPDATE academic_unavailabilities SET day = 5 WHERE id = (SELECT id FROM academic_unavailabilities WHERE term_id = $1 AND course_id IS NOT NULL LIMIT 1)`, [termId]),
      ],
      [
        "a teacher's unavailability outside the week",
        (termId) => sql(`UPDATE academic_unavailabilities SET period = 4 WHERE id = (SELECT id FROM academic_unavailabilities WHERE term_id = $1 AND teacher_id IS NOT NULL LIMIT 1)`, [termId]),
      ],
      [
        'a lock beyond its course lectures',
        (termId, planId) =>
          sql(
            `INSERT INTO schedule_assignments (id, plan_id, course_id, lecture_index, day, period, room_id, locked)
             SELECT gen_random_uuid(), $2, c.id, c.lectures_per_week, 0, 0, (SELECT id FROM academic_rooms WHERE term_id = $1 ORDER BY code LIMIT 1), true
               FROM academic_courses c WHERE c.term_id = $1 ORDER BY c.code LIMIT 1`,
            [termId, planId],
          ),
      ],
      [
        'a lock outside the week',
        (termId, planId) =>
          sql(
            `INSERT INTO schedule_assignments (id, plan_id, course_id, lecture_index, day, period, room_id, locked)
             SELECT gen_random_uuid(), $2, c.id, 0, 6, 0, (SELECT id FROM academic_rooms WHERE term_id = $1 ORDER BY code LIMIT 1), true
               FROM academic_courses c WHERE c.term_id = $1 ORDER BY c.code LIMIT 1`,
            [termId, planId],
          ),
      ],
      [
        'two lectures of a course locked in one period',
        (termId, planId) =>
          sql(
            `INSERT INTO schedule_assignments (id, plan_id, course_id, lecture_index, day, period, room_id, locked)
             SELECT gen_random_uuid(), $2, c.id, i, 1, 2, (SELECT id FROM academic_rooms WHERE term_id = $1 ORDER BY code OFFSET i LIMIT 1), true
               FROM (SELECT id FROM academic_courses WHERE term_id = $1 AND lectures_per_week >= 2 ORDER BY code LIMIT 1) c, generate_series(0, 1) AS i`,
            [termId, planId],
          ),
      ],
    ];
    for (const [index, [what, breakIt]] of cases.entries()) {
      const { term, plan } = await smallTerm(ctx.db, `START-${index}`, 11 + index);
      await breakIt(term.id, plan.id);
      const expected = await compileError(ctx.db, plan.id, term.id);
      const error = await refusal(start(plan.id));
      expect({ what, ...error }).toEqual({ what, code: 'BAD_USER_INPUT', message: `planId: term START-${index} cannot be timetabled as it is: ${expected}` });
    }
    // Nothing was enqueued (and the counter used below sees the pool's statements and rows).
    const { result, count } = await countSql(() => sql(`SELECT count(*)::int AS n FROM jobs`));
    expect(result.rows[0].n).toBe(0);
    expect({ statements: count.statements, rows: count.rows }).toEqual({ statements: 1, rows: 1 });
  });

  it('refuses two lectures locked in one room and period, naming the room', async () => {
    const { term, plan } = await smallTerm(ctx.db, 'START-ROOM');
    await sql(
      `INSERT INTO schedule_assignments (id, plan_id, course_id, lecture_index, day, period, room_id, locked)
       SELECT gen_random_uuid(), $2, c.id, 0, 3, 1, (SELECT id FROM academic_rooms WHERE term_id = $1 ORDER BY code LIMIT 1), true
         FROM (SELECT id FROM academic_courses WHERE term_id = $1 ORDER BY code LIMIT 2) c`,
      [term.id, plan.id],
    );
    const room = (await sql(`SELECT code FROM academic_rooms WHERE term_id = $1 ORDER BY code LIMIT 1`, [term.id])).rows[0].code;
    expect(await compileError(ctx.db, plan.id, term.id)).toMatch(new RegExp(`room ${room} at day 3 period 1 is already locked`));
    expect(await refusal(start(plan.id))).toEqual({
      code: 'BAD_USER_INPUT',
      message: `planId: term START-ROOM cannot be timetabled as it is: locked assignment: room ${room} at day 3 period 1 is locked for two lectures`,
    });
  });

  it('costs the same statements and rows on a small and a 25× larger term, and loads no entity', async () => {
    const small = await smallTerm(ctx.db, 'START-SMALL');
    const large = await smallTerm(ctx.db, 'START-LARGE', 5, { courses: 400, rooms: 60, curricula: 160, teachers: 300, days: 5, periodsPerDay: 8 });
    const coursesOf = async (termId: string) => (await sql('SELECT count(*)::int AS n FROM academic_courses WHERE term_id = $1', [termId])).rows[0].n;
    expect(await coursesOf(small.term.id)).toBe(SMALL_TERM.courses);
    expect(await coursesOf(large.term.id)).toBe(400);
    // Locks too: the large plan has a locked lecture per course of its first 100.
    await sql(
      `INSERT INTO schedule_assignments (id, plan_id, course_id, lecture_index, day, period, room_id, locked)
       SELECT gen_random_uuid(), $2, c.id, 0, (n / 8) % 5, n % 8, (SELECT id FROM academic_rooms WHERE term_id = $1 ORDER BY code LIMIT 1 OFFSET (n / 40)), true
         FROM (SELECT id, row_number() OVER (ORDER BY code) - 1 AS n FROM academic_courses WHERE term_id = $1) c WHERE n < 100`,
      [large.term.id, large.plan.id],
    );
    const measure = async (planId: string) => {
      const manager = em(ctx.db);
      const { result, count } = await countSql(() => startAutomaticSchedule({ em: manager, engine }, { planId, timeLimitSeconds: 1, seed: 1 }, 'tester'));
      expect(result.status).toBe(JobStatus.QUEUED);
      expect(manager.getUnitOfWork().getIdentityMap().values()).toHaveLength(0);
      return count;
    };
    const onSmall = await measure(small.plan.id);
    const onLarge = await measure(large.plan.id);
    expect({ statements: onLarge.statements, rows: onLarge.rows }).toEqual({ statements: onSmall.statements, rows: onSmall.rows });
    // The check (1 row), then the engine's enqueue: the job and its outbox row in one statement (1 row).
    expect({ statements: onSmall.statements, rows: onSmall.rows }).toEqual({ statements: 2, rows: 2 });
    expect(onSmall.texts[0]).toMatch(/^SELECT p\.id AS key, p\.name, p\.status/);
    // Both prepared: PostgreSQL plans them once per connection, not on every start.
    expect(onLarge.names.every((name) => name !== null)).toBe(true);
    // Publishing starts are as cheap: one row read, then the enqueue.
    const publish = await countSql(() => publishSchedulePlan({ em: em(ctx.db), engine }, large.plan.id, 'tester'));
    expect({ statements: publish.count.statements, rows: publish.count.rows }).toEqual({ statements: 2, rows: 2 });
  });

  it('runs on the ORM’s root EntityManager, as the resolvers call it; entity work there fails loudly', async () => {
    const small = await smallTerm(ctx.db, 'START-ROOT');
    const root = ctx.db.orm.em;
    const started = await startAutomaticSchedule({ em: root, engine }, { planId: small.plan.id, timeLimitSeconds: 1, seed: 1 }, 'tester');
    expect(started.status).toBe(JobStatus.QUEUED);
    // What would need an identity map is refused on the root, not silently shared.
    expect(() => root.getUnitOfWork()).toThrow(/global EntityManager/);
    await expect(root.find(ScheduleAssignment, { plan: small.plan.id })).rejects.toThrow(/global EntityManager/);
  });

  it("enters no AsyncLocalStorage of the ORM, so an API process's starts leave Node's promise hooks off", async () => {
    const small = await smallTerm(ctx.db, 'START-NO-ALS');
    const publishable = await smallTerm(ctx.db, 'START-NO-ALS-2');
    // As the resolvers call them, on the root EntityManager.
    const { result, entries } = await ormAsyncContextEntries(async () => [
      await startAutomaticSchedule({ em: ctx.db.orm.em, engine }, { planId: small.plan.id, timeLimitSeconds: 1, seed: 1 }, 'tester'),
      await publishSchedulePlan({ em: ctx.db.orm.em, engine }, publishable.plan.id, 'tester'),
    ]);
    expect(result.map((job) => job.status)).toEqual([JobStatus.QUEUED, JobStatus.QUEUED]);
    expect(entries).toEqual([]);
  });

  it('reads the checks of starts made at once with one statement, and enqueues them with one more', async () => {
    const { term } = await smallTerm(ctx.db, 'START-MANY');
    const plans = (
      await sql(
        `INSERT INTO schedule_plans (id, term_id, name, status)
         SELECT gen_random_uuid(), $1, 'many ' || i, 'DRAFT' FROM generate_series(1, 12) AS i RETURNING id`,
        [term.id],
      )
    ).rows.map((r: { id: string }) => r.id);
    const missing = '00000000-0000-4000-8000-000000000000';
    const { result, count } = await countSql(() => Promise.allSettled([...plans, missing, plans[0]!].map((planId) => start(planId))));
    // Twelve starts, one on a plan that does not exist, one repeating the first plan.
    const started = result.slice(0, 12).map((r) => (r as PromiseFulfilledResult<{ id: string; status: JobStatus; input: unknown }>).value);
    expect(started.map((job) => job.status)).toEqual(Array(12).fill(JobStatus.QUEUED));
    expect(started.map((job) => (job.input as { planId: string }).planId)).toEqual(plans);
    expect(result[12]).toMatchObject({ status: 'rejected', reason: { code: 'NOT_FOUND' } });
    expect(result[13]).toMatchObject({ status: 'rejected', reason: { code: 'CONFLICT' } });
    // One check statement for all 14, one insert for the 13 that passed it, and the
    // repeated plan's look-up of the job that holds it.
    expect(count.statements).toBe(3);
    expect(count.texts.filter((text) => text.startsWith('SELECT p.id AS key'))).toHaveLength(1);
    // Twelve solves queued here would run ahead of the next test's job (one consumer): end them.
    for (const job of started) await engine.cancel(job.id);
  });

  it('leaves to the job what changes after the start: it fails permanently with the reason', async () => {
    const { term, plan } = await smallTerm(ctx.db, 'START-LATER');
    const job = await start(plan.id);
    await sql(`DELETE FROM academic_rooms WHERE term_id = $1 AND code <> (SELECT min(code) FROM academic_rooms WHERE term_id = $1)`, [term.id]);
    const expected = await compileError(ctx.db, plan.id, term.id);
    await engine.start();
    const done = await waitForJob(engine, job.id);
    expect(done.status).toBe(JobStatus.FAILED);
    expect(done.attempts).toBe(1);
    expect(done.errorMessage).toBe(`Term START-LATER cannot be timetabled as it is: ${expected}`);
  });
});
