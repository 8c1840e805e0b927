import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deleteCourse, deleteRoom, updateCourse } from '../../src/academic/academic-service';
import { Course, Room } from '../../src/academic/entities';
import type { JobEngine } from '../../src/engine/engine';
import { EngineError } from '../../src/engine/errors';
import { PermanentJobError } from '../../src/engine/registry';
import { JobStatus } from '../../src/engine/types';
import { startAutomaticSchedule } from '../../src/scheduling/automatic-schedule';
import { PublishedTimetableEntry, ScheduleAssignment, SchedulePlan, SchedulePlanStatus } from '../../src/scheduling/entities';
import { copySchedulePlan, createSchedulePlan, evaluateSchedulePlan, listAssignments, placeLecture } from '../../src/scheduling/plan-service';
import { publishedTimetable, publishedTimetableByCurriculum, publishedTimetableByRoom, publishedTimetableByTeacher } from '../../src/scheduling/published-timetable';
import { publishSchedulePlan, type PublishStage, type SchedulePublishResult } from '../../src/scheduling/schedule-publish';
import { loadTermData } from '../../src/scheduling/term-data';
import { createTestDb, until, waitForJob } from '../support/engine-harness';
import { refused } from '../support/refused';
import { em, schedulingEngine, smallTerm } from './scheduling-harness';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine | undefined;
/** Plans whose publication fails at the last stage (the failure-injection hook). */
const failAtLastStage = new Set<string>();
/** Work to run inside a plan's publishing transaction as a stage begins (the same hook). */
const atStage = new Map<string, (stage: PublishStage) => Promise<void>>();

beforeAll(async () => {
  ctx = await createTestDb('sched_publish');
});
afterEach(async () => {
  await engine?.stop(2_000);
  engine = undefined;
});
afterAll(async () => {
  await ctx.close();
});

function startEngine(): Promise<void> {
  engine = schedulingEngine(ctx.db, {
    publish: {
      beforeStage: async (stage, planId) => {
        if (stage === 'build-views' && failAtLastStage.has(planId)) throw new PermanentJobError('injected failure while building the published timetable');
        await atStage.get(planId)?.(stage);
      },
    },
  });
  return engine.start();
}

const publish = (planId: string) => publishSchedulePlan({ em: em(ctx.db), engine: engine! }, planId, 'tester');
const statusOf = async (id: string) => (await em(ctx.db).findOneOrFail(SchedulePlan, { id })).status;
const views = async (termId: string) =>
  (await em(ctx.db).find(PublishedTimetableEntry, { term: termId }, { orderBy: { id: 'asc' } })).map((e) => ({ id: e.id, plan: e.plan.id, day: e.day, period: e.period, room: e.roomCode }));

async function solvedPlan(code: string) {
  const { term, plan } = await smallTerm(ctx.db, code);
  const job = await startAutomaticSchedule({ em: em(ctx.db), engine: engine! }, { planId: plan.id, timeLimitSeconds: 1, seed: 2 });
  const done = await waitForJob(engine!, job.id);
  expect(done.status).toBe(JobStatus.SUCCEEDED);
  return { term, plan };
}

describe('SCHEDULE_PUBLISH', () => {
  it('fails a plan with hard violations, listing the conflicts in words, and publishes nothing', async () => {
    await startEngine();
    const { term, plan } = await smallTerm(ctx.db, 'PUB-CLASH');
    const data = await loadTermData(em(ctx.db), term.id);
    const [c0, c1] = data.courses;
    await updateCourse(em(ctx.db), c1.id, { teacherId: c0.teacher.id });
    await placeLecture(em(ctx.db), { planId: plan.id, courseId: c0.id, lectureIndex: 0, day: 1, period: 2, roomId: data.rooms[0].id });
    // Unlocked: two lectures may not be locked in one room and period, but a draft may hold them there.
    await placeLecture(em(ctx.db), { planId: plan.id, courseId: c1.id, lectureIndex: 0, day: 1, period: 2, roomId: data.rooms[0].id, locked: false });
    const job = await publish(plan.id);
    expect(job.exclusiveKey).toBe(`term-publish:${term.id}`);
    const done = await waitForJob(engine!, job.id);
    expect(done.status).toBe(JobStatus.FAILED);
    const teacherCode = data.teachers.find((t) => t.id === c0.teacher.id)!.code;
    expect(done.errorMessage).toContain(`Tuesday period 3 (13:30–15:05): teacher ${teacherCode} teaches both ${c0.code} and ${c1.code}`);
    expect(done.errorMessage).toContain(`Tuesday period 3 (13:30–15:05): room ${data.rooms[0].code} is booked for ${c0.code} and ${c1.code}`);
    expect(done.errorMessage).toMatch(/weekly lectures are not scheduled/);
    expect(done.attempts).toBe(1);
    expect(await statusOf(plan.id)).toBe(SchedulePlanStatus.DRAFT);
    expect(await views(term.id)).toEqual([]);
    const evaluation = await evaluateSchedulePlan(em(ctx.db), plan.id);
    expect(evaluation.hardViolations).toBeGreaterThan(0);
    expect(evaluation.breakdown.conflicts).toBeGreaterThan(0);
  });

  it('publishes a feasible plan, builds the views, then archives it when the next plan is published', async () => {
    await startEngine();
    const { term, plan: first } = await solvedPlan('PUB-OK');
    const done1 = await waitForJob(engine!, (await publish(first.id)).id);
    expect(done1.status).toBe(JobStatus.SUCCEEDED);
    expect(await statusOf(first.id)).toBe(SchedulePlanStatus.PUBLISHED);
    const data = await loadTermData(em(ctx.db), term.id);
    const lectures = data.courses.reduce((n, c) => n + c.lecturesPerWeek, 0);
    expect((done1.result as SchedulePublishResult).entries).toBe(lectures);
    const all = await publishedTimetable(em(ctx.db), term.id);
    expect(all).toHaveLength(lectures);

    const teacher = data.courses[0].teacher.id;
    const byTeacher = await publishedTimetableByTeacher(em(ctx.db), term.id, teacher);
    expect(byTeacher.length).toBe(data.courses.filter((c) => c.teacher.id === teacher).reduce((n, c) => n + c.lecturesPerWeek, 0));
    expect(new Set(byTeacher.map((e) => e.teacherId))).toEqual(new Set([teacher]));
    const curriculum = data.curricula[0];
    const byCurriculum = await publishedTimetableByCurriculum(em(ctx.db), term.id, curriculum.id);
    expect(byCurriculum.length).toBe(data.courses.filter((c) => curriculum.courseIds.includes(c.id)).reduce((n, c) => n + c.lecturesPerWeek, 0));
    expect(byCurriculum.every((e) => e.curriculumCodes.includes(curriculum.code))).toBe(true);
    // A class group never has two lectures at once in a published timetable.
    expect(new Set(byCurriculum.map((e) => `${e.day}.${e.period}`)).size).toBe(byCurriculum.length);
    const room = data.rooms[0].id;
    const byRoom = await publishedTimetableByRoom(em(ctx.db), term.id, room);
    expect(byRoom.every((e) => e.roomId === room)).toBe(true);
    expect(new Set(byRoom.map((e) => `${e.day}.${e.period}`)).size).toBe(byRoom.length);
    expect(byRoom[0]?.dayName).toMatch(/day$/);

    const second = await copySchedulePlan(em(ctx.db), first.id, 'Second');
    const done2 = await waitForJob(engine!, (await publish(second.id)).id);
    expect(done2.status).toBe(JobStatus.SUCCEEDED);
    expect((done2.result as SchedulePublishResult).previousPlanId).toBe(first.id);
    expect(await statusOf(first.id)).toBe(SchedulePlanStatus.ARCHIVED);
    expect(await statusOf(second.id)).toBe(SchedulePlanStatus.PUBLISHED);
    const after = await views(term.id);
    expect(after).toHaveLength(lectures);
    expect(new Set(after.map((e) => e.plan))).toEqual(new Set([second.id]));

    // A published plan cannot be published again; an unknown one is NOT_FOUND.
    const again = await publish(second.id).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(EngineError);
    expect((again as EngineError).code).toBe('BAD_USER_INPUT');
    const missing = await publish('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect((missing as EngineError).code).toBe('NOT_FOUND');
    const malformed = await publish('nope').catch((e: unknown) => e);
    expect((malformed as EngineError).code).toBe('BAD_USER_INPUT');
    // Publishing an ARCHIVED plan brings it back (a rollback): the current one is archived.
    const rollback = await waitForJob(engine!, (await publish(first.id)).id);
    expect(rollback.status).toBe(JobStatus.SUCCEEDED);
    expect((rollback.result as SchedulePublishResult).previousPlanId).toBe(second.id);
    expect(await statusOf(first.id)).toBe(SchedulePlanStatus.PUBLISHED);
    expect(await statusOf(second.id)).toBe(SchedulePlanStatus.ARCHIVED);
    expect(new Set((await views(term.id)).map((e) => e.plan))).toEqual(new Set([first.id]));
  });

  it('is atomic: a failure injected at the last step leaves the old plan PUBLISHED and the views unchanged', async () => {
    await startEngine();
    const { term, plan: old } = await solvedPlan('PUB-ATOMIC');
    expect((await waitForJob(engine!, (await publish(old.id)).id)).status).toBe(JobStatus.SUCCEEDED);
    const before = await views(term.id);
    expect(before.length).toBeGreaterThan(0);

    const next = await copySchedulePlan(em(ctx.db), old.id, 'Doomed');
    failAtLastStage.add(next.id);
    const done = await waitForJob(engine!, (await publish(next.id)).id);
    expect(done.status).toBe(JobStatus.FAILED);
    expect(done.errorMessage).toMatch(/injected failure/);
    expect(await statusOf(old.id)).toBe(SchedulePlanStatus.PUBLISHED);
    expect(await statusOf(next.id)).toBe(SchedulePlanStatus.DRAFT);
    expect(await views(term.id)).toEqual(before);
  });

  it('allows one publication per term at a time: a second is a CONFLICT naming the first', async () => {
    engine = schedulingEngine(ctx.db); // not started: the first job stays QUEUED
    const { plan } = await smallTerm(ctx.db, 'PUB-EXCL');
    const other = await createSchedulePlan(em(ctx.db), { termId: plan.term.id, name: 'Other' });
    const first = await publish(plan.id);
    const error = (await publish(other.id).catch((e: unknown) => e)) as EngineError;
    expect(error).toBeInstanceOf(EngineError);
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain(first.id);
  });
});

/** Statements of the test's database waiting for a lock another transaction holds. */
async function lockWaiters(): Promise<number> {
  const { rows } = await ctx.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
  return Number(rows[0].n);
}

/** Until `count` statements wait for a lock, or `work` ends first (it did not wait). */
async function untilWaitingOrSettled(count: number, work: Promise<unknown>, what: string): Promise<void> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  await until(what, async () => settled || (await lockWaiters()) >= count, 15_000, 20);
}

describe('SCHEDULE_PUBLISH racing the deletion of a room or course its plan uses', () => {
  it('a deletion that starts while the publication reads the lectures waits for it and is refused: the published plan keeps every lecture', async () => {
    await startEngine();
    const cases = [
      { what: 'room', remove: (a: ScheduleAssignment) => deleteRoom(em(ctx.db), a.room.id), left: (a: ScheduleAssignment) => em(ctx.db).count(Room, { id: a.room.id }) },
      { what: 'course', remove: (a: ScheduleAssignment) => deleteCourse(em(ctx.db), a.course.id), left: (a: ScheduleAssignment) => em(ctx.db).count(Course, { id: a.course.id }) },
    ];
    for (const { what, remove, left } of cases) {
      // A term of its own: no plan of it is published before.
      const { term, plan: target } = await solvedPlan(`PUB-RACE-${what}`);
      const lectures = await em(ctx.db).count(ScheduleAssignment, { plan: target.id });
      const used = (await listAssignments(em(ctx.db), target.id))[0];
      let deletion: Promise<boolean> | undefined;
      // Once the publication has read the plan's lectures, the deletion begins and runs as far as it can.
      atStage.set(target.id, async (stage) => {
        if (stage !== 'archive-previous') return;
        deletion = remove(used);
        await untilWaitingOrSettled(1, deletion, `the ${what}'s deletion waiting for the publication`);
      });
      const done = await waitForJob(engine!, (await publish(target.id)).id);
      atStage.delete(target.id);
      expect(done.status, what).toBe(JobStatus.SUCCEEDED);
      await refused(deletion!, 'CONFLICT', new RegExp(`^${what === 'room' ? 'Room' : 'Course'} \\S+ is used by the published plan "${target.name}"`));
      expect(await left(used), what).toBe(1);
      expect(await statusOf(target.id), what).toBe(SchedulePlanStatus.PUBLISHED);
      expect(await em(ctx.db).count(ScheduleAssignment, { plan: target.id }), what).toBe(lectures);
      const entries = await views(term.id);
      expect(entries, what).toHaveLength(lectures);
      expect(new Set(entries.map((e) => e.plan)), what).toEqual(new Set([target.id]));
    }
  });

  it('a publication that starts while a deletion is under way waits for it, then finds the lectures gone and publishes nothing', async () => {
    await startEngine();
    const { term, plan } = await solvedPlan('PUB-RACE-DELETE');
    const room = (await listAssignments(em(ctx.db), plan.id))[0].room;
    // Another session holds the room, so the deletion stops at its DELETE, with its
    // checks done (the plan is a DRAFT then) and the term's row locked.
    const holder = new pg.Client({ connectionString: ctx.db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM academic_rooms WHERE id = $1 FOR SHARE', [room.id]);
      const deletion = deleteRoom(em(ctx.db), room.id);
      deletion.catch(() => undefined);
      await untilWaitingOrSettled(1, deletion, 'the deletion waiting for the room');
      const job = await publish(plan.id);
      const finished = waitForJob(engine!, job.id);
      await untilWaitingOrSettled(2, finished, 'the publication waiting for the deletion');
      await holder.query('COMMIT');
      expect(await deletion).toBe(true);
      const done = await finished;
      expect(done.status).toBe(JobStatus.FAILED);
      expect(done.errorMessage).toMatch(/weekly lectures are not scheduled/);
    } finally {
      await holder.end();
    }
    expect(await statusOf(plan.id)).toBe(SchedulePlanStatus.DRAFT);
    expect(await views(term.id)).toEqual([]);
  });
});
