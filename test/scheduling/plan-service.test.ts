import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcademicTerm } from '../../src/academic/entities';
import { DEMO_TERM_CODE, loadDemoData } from '../../src/scheduling/demo-data';
import { ScheduleAssignment, SchedulePlan, SchedulePlanStatus } from '../../src/scheduling/entities';
import {
  copySchedulePlan,
  createSchedulePlan,
  deleteSchedulePlan,
  evaluateSchedulePlan,
  listAssignments,
  lockAssignment,
  placeLecture,
  renameSchedulePlan,
  solutionText,
  unlockAssignment,
} from '../../src/scheduling/plan-service';
import { buildCttModel, loadTermData } from '../../src/scheduling/term-data';
import { createTestDb, until, untilWaitingOnTransaction } from '../support/engine-harness';
import * as academic from '../../src/academic/academic-service';
import { refused } from '../support/refused';
import { em, smallTerm } from './scheduling-harness';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
beforeAll(async () => {
  ctx = await createTestDb('sched_plans');
});
afterAll(async () => {
  await ctx.close();
});


describe('schedule plans', () => {
  it('creates, places, locks, copies and exports; refuses bad input and writes nothing', async () => {
    const { term, plan } = await smallTerm(ctx.db, 'PLAN-1');
    const other = await smallTerm(ctx.db, 'PLAN-OTHER');
    const data = await loadTermData(em(ctx.db), term.id);
    const [c0] = data.courses;
    const room = data.rooms[0];

    await refused(createSchedulePlan(em(ctx.db), { termId: term.id, name: '' }), 'BAD_USER_INPUT', /name must be 1–200 characters/);
    await refused(createSchedulePlan(em(ctx.db), { termId: 'x', name: 'n' }), 'BAD_USER_INPUT', /termId must be an id/);
    await refused(createSchedulePlan(em(ctx.db), { termId: '00000000-0000-4000-8000-000000000000', name: 'n' }), 'BAD_USER_INPUT', /termId: no academic term/);
    expect(await em(ctx.db).count(SchedulePlan, { term: term.id })).toBe(1);

    const base = { planId: plan.id, courseId: c0.id, lectureIndex: 0, day: 0, period: 0, roomId: room.id };
    await refused(placeLecture(em(ctx.db), { ...base, day: 5 }), 'BAD_USER_INPUT', /day must be an integer from 0 to 4/);
    await refused(placeLecture(em(ctx.db), { ...base, period: -1 }), 'BAD_USER_INPUT', /period must be an integer from 0 to 3/);
    await refused(placeLecture(em(ctx.db), { ...base, lectureIndex: c0.lecturesPerWeek }), 'BAD_USER_INPUT', /lectureIndex/);
    await refused(placeLecture(em(ctx.db), { ...base, roomId: (await loadTermData(em(ctx.db), other.term.id)).rooms[0].id }), 'BAD_USER_INPUT', /roomId: no room .* in the plan's term/);
    await refused(placeLecture(em(ctx.db), { ...base, courseId: (await loadTermData(em(ctx.db), other.term.id)).courses[0].id }), 'BAD_USER_INPUT', /courseId/);
    expect(await em(ctx.db).count(ScheduleAssignment, { plan: plan.id })).toBe(0);

    const a = await placeLecture(em(ctx.db), { ...base, day: 2, period: 1 });
    expect(a.locked).toBe(true);
    expect(await solutionText(em(ctx.db), plan.id)).toBe(`${c0.code} ${room.code} 2 1\n`);
    expect((await unlockAssignment(em(ctx.db), a.id)).locked).toBe(false);
    expect((await lockAssignment(em(ctx.db), a.id)).locked).toBe(true);
    await refused(lockAssignment(em(ctx.db), 'nope'), 'BAD_USER_INPUT', /assignmentId must be an id/);
    await refused(lockAssignment(em(ctx.db), '00000000-0000-4000-8000-000000000000'), 'NOT_FOUND', /No schedule assignment/);

    // The model built from the rows carries the lock and the teacher unavailability.
    const locked = await em(ctx.db).find(ScheduleAssignment, { plan: plan.id, locked: true });
    const model = buildCttModel(data, locked);
    expect(model.locked).toEqual([{ course: c0.code, lecture: 0, day: 2, period: 1, room: room.code }]);
    expect(model.teacherUnavailable!.length).toBeGreaterThan(0);
    expect(model.courses).toHaveLength(data.courses.length);

    const copy = await copySchedulePlan(em(ctx.db), plan.id);
    expect(copy).toMatchObject({ name: `${plan.name} (copy)`, status: SchedulePlanStatus.DRAFT, copiedFromId: plan.id });
    expect((await listAssignments(em(ctx.db), copy.id)).map((r) => [r.course.id, r.day, r.period, r.locked])).toEqual([[c0.id, 2, 1, true]]);
    await refused(copySchedulePlan(em(ctx.db), plan.id, '  '), 'BAD_USER_INPUT', /name/);
    await refused(copySchedulePlan(em(ctx.db), '00000000-0000-4000-8000-000000000000'), 'NOT_FOUND', /No schedule plan/);

    await em(ctx.db).nativeUpdate(SchedulePlan, { id: plan.id }, { status: SchedulePlanStatus.PUBLISHED });
    await refused(unlockAssignment(em(ctx.db), a.id), 'BAD_USER_INPUT', /PUBLISHED; only a DRAFT can be unlocked/);
    await refused(placeLecture(em(ctx.db), base), 'BAD_USER_INPUT', /only a DRAFT can be edited/);
    await refused(deleteSchedulePlan(em(ctx.db), plan.id), 'BAD_USER_INPUT', /only a DRAFT can be deleted/);
    expect(await deleteSchedulePlan(em(ctx.db), copy.id)).toBe(true);
  });

  it('refuses to lock two lectures in one room and period, or two of one course in one period; unlocked they may meet', async () => {
    const { term, plan } = await smallTerm(ctx.db, 'PLAN-CLASH');
    const data = await loadTermData(em(ctx.db), term.id);
    const [c0, c1] = data.courses;
    const [r0, r1] = data.rooms;
    const first = await placeLecture(em(ctx.db), { planId: plan.id, courseId: c0.id, lectureIndex: 0, day: 1, period: 1, roomId: r0.id });
    await refused(
      placeLecture(em(ctx.db), { planId: plan.id, courseId: c1.id, lectureIndex: 0, day: 1, period: 1, roomId: r0.id }),
      'BAD_USER_INPUT',
      new RegExp(`^roomId: room ${r0.code} at day 1 period 1 already holds locked lecture 0 of ${c0.code}`),
    );
    await refused(
      placeLecture(em(ctx.db), { planId: plan.id, courseId: c0.id, lectureIndex: 1, day: 1, period: 1, roomId: r1.id }),
      'BAD_USER_INPUT',
      new RegExp(`^period: lecture 0 of ${c0.code} is locked at day 1 period 1 already`),
    );
    // Moving the same lecture within its own slot is no clash with itself.
    expect((await placeLecture(em(ctx.db), { planId: plan.id, courseId: c0.id, lectureIndex: 0, day: 1, period: 1, roomId: r0.id })).id).toBe(first.id);
    // Unlocked it may share the room; locking it then is refused the same way.
    const loose = await placeLecture(em(ctx.db), { planId: plan.id, courseId: c1.id, lectureIndex: 0, day: 1, period: 1, roomId: r0.id, locked: false });
    await refused(lockAssignment(em(ctx.db), loose.id), 'BAD_USER_INPUT', /^roomId: room .* already holds locked lecture 0/);
    expect((await em(ctx.db).find(ScheduleAssignment, { plan: plan.id, locked: true })).map((a) => a.id)).toEqual([first.id]);
  });

  it('a lecture outside the week as the term is now (it shrank after the lecture was placed) makes evaluation a BAD_USER_INPUT naming it', async () => {
    const { term, plan } = await smallTerm(ctx.db, 'PLAN-SHRUNK');
    const data = await loadTermData(em(ctx.db), term.id);
    const [c0] = data.courses;
    const placed = await placeLecture(em(ctx.db), { planId: plan.id, courseId: c0.id, lectureIndex: 0, day: 1, period: 1, roomId: data.rooms[0].id });
    // As a schedule job that solved for the old week and committed after the week shrank leaves it.
    await ctx.db.pool.query('UPDATE schedule_assignments SET day = $2 WHERE id = $1', [placed.id, term.daysPerWeek]);
    await refused(
      evaluateSchedulePlan(em(ctx.db), plan.id),
      'BAD_USER_INPUT',
      new RegExp(`^The plan does not fit its term PLAN-SHRUNK as the term is now: assignment of ${c0.code} has day ${term.daysPerWeek} period 1 out of range`),
    );
  });

  it('loads the demo term once, with an empty draft plan', async () => {
    const db = await createTestDb('sched_demo');
    try {
      const [first, second] = await Promise.all([loadDemoData(em(db.db)), loadDemoData(em(db.db))]);
      const created = first ?? second;
      expect(created).not.toBeNull();
      expect(first && second).toBeNull(); // only one of the two created it
      expect(created!.code).toBe(DEMO_TERM_CODE);
      expect(await loadDemoData(em(db.db))).toBeNull();
      expect(await em(db.db).count(AcademicTerm, {})).toBe(1);
      const data = await loadTermData(em(db.db), created!.id);
      expect(data.courses).toHaveLength(80);
      expect(data.rooms).toHaveLength(16);
      expect(data.curricula).toHaveLength(60);
      expect(data.courseUnavailable.length + data.teacherUnavailable.length).toBeGreaterThan(0);
      const plans = await em(db.db).find(SchedulePlan, { term: created!.id });
      expect(plans.map((p) => p.status)).toEqual([SchedulePlanStatus.DRAFT]);
      expect(await em(db.db).count(ScheduleAssignment, { plan: plans[0].id })).toBe(0);
    } finally {
      await db.close();
    }
  });
});

/**
 * Runs `statements` in another session's transaction, starts `edit` while that
 * transaction is open, and commits it once the edit waits for it. The edit, settled.
 */
async function editWhileAnotherCommits<T>(statements: [string, unknown[]][], edit: () => Promise<T>): Promise<{ outcome: Promise<T> }> {
  const other = new pg.Client({ connectionString: ctx.db.url });
  await other.connect();
  try {
    await other.query('BEGIN');
    for (const [sql, params] of statements) await other.query(sql, params);
    const outcome = edit();
    outcome.catch(() => undefined); // judged by the caller
    await untilWaitingOnTransaction(ctx.db.pool, 'the edit waiting for the other transaction');
    await other.query('COMMIT');
    await outcome.catch(() => undefined);
    return { outcome };
  } finally {
    await other.end();
  }
}

const LOCK_PLAN = 'SELECT 1 FROM schedule_plans WHERE id = $1 FOR UPDATE';

describe('plan edits that wait while another transaction changes what they edit', () => {
  /** A plan with a locked lecture of one course and an unlocked one of another, in other slots. */
  async function twoLectures(code: string) {
    const { term, plan } = await smallTerm(ctx.db, code);
    const data = await loadTermData(em(ctx.db), term.id);
    const [c0, c1] = data.courses;
    const [r0, r1] = data.rooms;
    const held = await placeLecture(em(ctx.db), { planId: plan.id, courseId: c0.id, lectureIndex: 0, day: 2, period: 2, roomId: r0.id });
    const loose = await placeLecture(em(ctx.db), { planId: plan.id, courseId: c1.id, lectureIndex: 0, day: 0, period: 0, roomId: r1.id, locked: false });
    return { term, plan, data, c0, r0, r1, held, loose };
  }

  it("locking a lecture moved meanwhile onto a locked lecture's room and period is refused as a clash", async () => {
    const { plan, c0, r0, held, loose } = await twoLectures('PLAN-RACE-MOVED');
    // Moved by hand (unlocked) into the locked lecture's room and period while the lock waited.
    const moved = await editWhileAnotherCommits(
      [
        [LOCK_PLAN, [plan.id]],
        ['UPDATE schedule_assignments SET day = 2, period = 2, room_id = $2 WHERE id = $1', [loose.id, r0.id]],
      ],
      () => lockAssignment(em(ctx.db), loose.id),
    );
    await refused(moved.outcome, 'BAD_USER_INPUT', new RegExp(`^roomId: room ${r0.code} at day 2 period 2 already holds locked lecture 0 of ${c0.code}`));
    expect((await em(ctx.db).find(ScheduleAssignment, { plan: plan.id, locked: true })).map((a) => a.id)).toEqual([held.id]);
  });

  it('locking a lecture a schedule replaced meanwhile is NOT_FOUND', async () => {
    const { plan, loose } = await twoLectures('PLAN-RACE-REPLACED');
    // A schedule's save deletes the unlocked lectures (and writes its own) under the plan's lock.
    const replaced = await editWhileAnotherCommits(
      [
        [LOCK_PLAN, [plan.id]],
        ['DELETE FROM schedule_assignments WHERE id = $1', [loose.id]],
      ],
      () => lockAssignment(em(ctx.db), loose.id),
    );
    await refused(replaced.outcome, 'NOT_FOUND', /^No schedule assignment with id/);
  });

  it('placing a lecture in a room deleted meanwhile is a BAD_USER_INPUT naming the room, not an internal error', async () => {
    const { term, plan, data, r1 } = await twoLectures('PLAN-RACE-ROOM');
    const [, , c2] = data.courses;
    // The room's deletion as deleteRoom writes it: the term's revision, then the row.
    const placed = await editWhileAnotherCommits(
      [
        ['UPDATE academic_terms SET revision = revision + 1 WHERE id = $1', [term.id]],
        ['DELETE FROM academic_rooms WHERE id = $1', [r1.id]],
      ],
      () => placeLecture(em(ctx.db), { planId: plan.id, courseId: c2.id, lectureIndex: 0, day: 1, period: 1, roomId: r1.id }),
    );
    await refused(placed.outcome, 'BAD_USER_INPUT', /^roomId: no room .* in the plan's term/);
    expect(await em(ctx.db).count(ScheduleAssignment, { plan: plan.id, course: c2.id })).toBe(0);
  });

  it('renaming a plan deleted meanwhile is NOT_FOUND', async () => {
    const { plan } = await smallTerm(ctx.db, 'PLAN-RACE-RENAME');
    const renamed = await editWhileAnotherCommits([['DELETE FROM schedule_plans WHERE id = $1', [plan.id]]], () => renameSchedulePlan(em(ctx.db), plan.id, 'Renamed'));
    await refused(renamed.outcome, 'NOT_FOUND', /^No schedule plan with id/);
  });

  it('copying a plan deleted meanwhile is NOT_FOUND, and writes no empty copy', async () => {
    const { term, plan } = await twoLectures('PLAN-RACE-COPY');
    // The other session also holds the term, so that an insert of the copy waits for it to commit.
    const copied = await editWhileAnotherCommits(
      [
        ['DELETE FROM schedule_plans WHERE id = $1', [plan.id]],
        ['SELECT 1 FROM academic_terms WHERE id = $1 FOR UPDATE', [term.id]],
      ],
      () => copySchedulePlan(em(ctx.db), plan.id, 'Copy of a deleted plan'),
    );
    await refused(copied.outcome, 'NOT_FOUND', /^No schedule plan with id/);
    expect(await em(ctx.db).count(SchedulePlan, { term: term.id })).toBe(0);
  });

  it('creating a plan in a term deleted meanwhile is a BAD_USER_INPUT naming the term, not an internal error', async () => {
    const { term } = await smallTerm(ctx.db, 'PLAN-RACE-CREATE');
    const created = await editWhileAnotherCommits([['DELETE FROM academic_terms WHERE id = $1', [term.id]]], () => createSchedulePlan(em(ctx.db), { termId: term.id, name: 'Orphan' }));
    await refused(created.outcome, 'BAD_USER_INPUT', /^termId: no academic term with id/);
  });
});

describe('reads of a term and a plan while edits commit between their statements', () => {
  it('evaluation and solutionText read the term and the plan on one snapshot: a room created with a lecture in it midway is not half seen', async () => {
    const { term, plan } = await smallTerm(ctx.db, 'PLAN-SNAPSHOT');
    const data = await loadTermData(em(ctx.db), term.id);
    const [c0, c1] = data.courses;
    await placeLecture(em(ctx.db), { planId: plan.id, courseId: c0.id, lectureIndex: 0, day: 0, period: 0, roomId: data.rooms[0].id });
    const before = await evaluateSchedulePlan(em(ctx.db), plan.id);
    const beforeText = await solutionText(em(ctx.db), plan.id);

    for (const read of [() => evaluateSchedulePlan(em(ctx.db), plan.id), () => solutionText(em(ctx.db), plan.id)]) {
      // The term's curricula members are read last: held here, the read stops there, with
      // the term's rooms read already.
      const blocker = new pg.Client({ connectionString: ctx.db.url });
      await blocker.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query('LOCK TABLE academic_curriculum_courses IN ACCESS EXCLUSIVE MODE');
        const outcome = read();
        outcome.catch(() => undefined);
        await until('the read waiting for the curricula members', async () => {
          const { rows } = await ctx.db.pool.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'relation'`,
          );
          return rows.length > 0;
        });
        // Meanwhile a new room, and a lecture placed in it, commit.
        const room = await academic.createRoom(em(ctx.db), { termId: term.id, code: `LATE-${Math.random().toString(36).slice(2, 8)}`, capacity: 30 });
        const late = await placeLecture(em(ctx.db), { planId: plan.id, courseId: c1.id, lectureIndex: 0, day: 1, period: 1, roomId: room.id, locked: false });
        await blocker.query('COMMIT');
        // The read saw neither: what it answers is the plan as it stood when it began.
        const answer = await outcome;
        if (typeof answer === 'string') expect(answer).toBe(beforeText);
        else expect(answer).toEqual(before);
        await em(ctx.db).nativeDelete(ScheduleAssignment, { id: late.id });
        await academic.deleteRoom(em(ctx.db), room.id);
      } finally {
        await blocker.end();
      }
    }
  });
});
