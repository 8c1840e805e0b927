/**
 * Timetable plans of a term: create, copy, place and lock lectures, export in the
 * ITC-2007 solution format, and evaluate with the independent evaluator.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AcademicTerm, Course, Room } from '../academic/entities';
import { lockTermRevision, ofTerms } from '../academic/academic-service';
import { keysetPage, type Page } from '../academic/keyset-page';
import { idList, requireId, requireInt, requireName } from '../academic/validation';
import { badInput, notFound } from '../errors';
import { formatSolution } from './ctt/ctt-format';
import { evaluateTimetable } from './ctt/evaluator';
import { compileModel, CttModelError, type CttAssignment } from './ctt/model';
import { describeConflicts } from './conflicts';
import { ScheduleAssignment, SchedulePlan, SchedulePlanStatus } from './entities';
import { buildCttModel, loadTermData, onOneSnapshot, type TermData } from './term-data';

export interface CreateSchedulePlanInput {
  termId: string;
  name: string;
}

export interface PlaceLectureInput {
  planId: string;
  courseId: string;
  lectureIndex: number;
  day: number;
  period: number;
  roomId: string;
  locked?: boolean;
}

/** Hard violations and weighted soft penalty per ITC-2007 constraint, as the evaluator counts them. */
export interface PenaltyBreakdown {
  lectures: number;
  conflicts: number;
  availability: number;
  roomOccupancy: number;
  roomCapacity: number;
  minWorkingDays: number;
  curriculumCompactness: number;
  roomStability: number;
}

export interface PlanEvaluation {
  hardViolations: number;
  penalty: number;
  feasible: boolean;
  breakdown: PenaltyBreakdown;
  /** The hard violations in words ("Tuesday period 3: teacher T12 teaches both C01 and C07"). */
  conflicts: string[];
}

/**
 * With a lock (inside a transaction), the row is read afresh and stays locked until
 * commit: FOR UPDATE for an edit of the plan (a publication waits for it), FOR SHARE to
 * read it as it stays. A plan deleted while the lock was awaited is NOT_FOUND.
 */
export async function findSchedulePlan(em: EntityManager, id: string, lock: boolean | 'share' = false): Promise<SchedulePlan> {
  const lockMode = lock === 'share' ? LockMode.PESSIMISTIC_READ : lock ? LockMode.PESSIMISTIC_WRITE : undefined;
  const plan = await em.findOne(SchedulePlan, { id: requireId('planId', id) }, lockMode ? { lockMode, refresh: true } : {});
  if (!plan) throw notFound(`No schedule plan with id ${id}`, { planId: id });
  return plan;
}

export const listSchedulePlans = (em: EntityManager, termIds: string | readonly string[]) =>
  em.find(SchedulePlan, ofTerms(termIds), { orderBy: { createdAt: 'asc', id: 'asc' } });

/** The PUBLISHED plan of each term that has one. */
export const listPublishedPlans = (em: EntityManager, termIds: string | readonly string[]) =>
  em.find(SchedulePlan, { ...ofTerms(termIds), status: SchedulePlanStatus.PUBLISHED });

export const listAssignments = (em: EntityManager, planIds: string | readonly string[]) =>
  em.find(
    ScheduleAssignment,
    { plan: { $in: idList('planId', planIds) } },
    { orderBy: { day: 'asc', period: 'asc', course: { code: 'asc' } }, populate: ['course', 'room'] },
  );

/** A term's plans, oldest first: the (term_id, created_at) index serves these pages. */
export const pageSchedulePlans = (em: EntityManager, termIds: string | readonly string[], page: Page) =>
  keysetPage(em, SchedulePlan, { table: 'schedule_plans', noun: 'schedule plan', parent: 'x.term_id', order: ['created_at', 'id'] }, termIds, page);

/** A plan's lectures by (day, period, id): the (plan_id, day, period, id) index serves these pages. */
export const pageAssignments = (em: EntityManager, planIds: string | readonly string[], page: Page) =>
  keysetPage(em, ScheduleAssignment, { table: 'schedule_assignments', noun: 'lecture of a plan', parent: 'x.plan_id', order: ['day', 'period', 'id'] }, planIds, page);

/**
 * The rows that evaluating or exporting the plan reads: its lectures and its term's
 * teachers, rooms, courses, curricula (with their members) and unavailability. What the
 * API charges for `evaluation` and `solutionText` before computing them.
 */
export async function planReadRows(em: EntityManager, planId: string): Promise<number> {
  const id = requireId('planId', planId);
  const [row] = await em.getConnection().execute<{ rows: string | null }[]>(
    `select (select count(*) from schedule_assignments where plan_id = p.id)
          + (select count(*) from academic_teachers where term_id = p.term_id)
          + (select count(*) from academic_rooms where term_id = p.term_id)
          + (select count(*) from academic_courses where term_id = p.term_id)
          + (select count(*) from academic_curricula where term_id = p.term_id)
          + (select count(*) from academic_curriculum_courses m join academic_curricula q on q.id = m.curriculum_id where q.term_id = p.term_id)
          + (select count(*) from academic_unavailabilities where term_id = p.term_id) as rows
       from schedule_plans p where p.id = ?`,
    [id],
    'all',
    em.getTransactionContext(),
  );
  if (!row) throw notFound(`No schedule plan with id ${planId}`, { planId });
  return Number(row.rows);
}

export async function createSchedulePlan(em: EntityManager, input: CreateSchedulePlanInput): Promise<SchedulePlan> {
  const termId = requireId('termId', input.termId);
  const name = requireName('name', input.name);
  return em.transactional(async (tx) => {
    // Held FOR SHARE until commit: a term deleted meanwhile is the caller's mistake, not a
    // foreign-key failure of the insert.
    const term = (await lockTermRevision(tx, termId)) === null ? null : await tx.findOne(AcademicTerm, { id: termId });
    if (!term) throw badInput(`termId: no academic term with id ${termId}`, { field: 'termId', value: termId });
    const plan = tx.create(SchedulePlan, { term, name, status: SchedulePlanStatus.DRAFT });
    await tx.flush();
    return plan;
  });
}

/** A new DRAFT with the same assignments (and locks) as any plan. */
export async function copySchedulePlan(em: EntityManager, planId: string, name?: string | null): Promise<SchedulePlan> {
  const newName = name == null ? undefined : requireName('name', name);
  return em.transactional(async (tx) => {
    // FOR SHARE until commit: the lectures copied are those of the plan read, which no
    // edit, schedule or deletion changes meanwhile.
    const source = await findSchedulePlan(tx, planId, 'share');
    const plan = tx.create(SchedulePlan, {
      term: source.term,
      name: newName ?? `${source.name} (copy)`,
      status: SchedulePlanStatus.DRAFT,
      copiedFromId: source.id,
    });
    await tx.flush();
    await tx
      .getConnection()
      .execute(
        `INSERT INTO schedule_assignments (id, plan_id, course_id, lecture_index, day, period, room_id, locked)
         SELECT gen_random_uuid(), ?, course_id, lecture_index, day, period, room_id, locked FROM schedule_assignments WHERE plan_id = ?`,
        [plan.id, source.id],
        'run',
        tx.getTransactionContext(),
      );
    return plan;
  });
}

export async function renameSchedulePlan(em: EntityManager, planId: string, name: string): Promise<SchedulePlan> {
  const valid = requireName('name', name);
  return em.transactional(async (tx) => {
    const plan = await findSchedulePlan(tx, planId, true);
    plan.name = valid;
    await tx.flush();
    return plan;
  });
}

/** Only a DRAFT may be deleted: a published or archived plan is the office's record. */
export async function deleteSchedulePlan(em: EntityManager, planId: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const plan = await findSchedulePlan(tx, planId, true);
    if (plan.status !== SchedulePlanStatus.DRAFT) throw badInput(`planId: plan "${plan.name}" is ${plan.status}; only a DRAFT can be deleted`, { field: 'planId' });
    await tx.nativeDelete(SchedulePlan, { id: plan.id });
    return true;
  });
}

function requireDraft(plan: SchedulePlan, what: string): void {
  if (plan.status !== SchedulePlanStatus.DRAFT) {
    throw badInput(`planId: plan "${plan.name}" is ${plan.status}; only a DRAFT can be ${what} (copy it to make a new draft)`, { field: 'planId', status: plan.status });
  }
}

/**
 * Places one lecture of a course (replacing where that lecture was), as a person does
 * by hand; `locked` (default true) keeps it there when the plan is scheduled again.
 */
export async function placeLecture(em: EntityManager, input: PlaceLectureInput): Promise<ScheduleAssignment> {
  const planId = requireId('planId', input.planId);
  const courseId = requireId('courseId', input.courseId);
  const roomId = requireId('roomId', input.roomId);
  return em.transactional(async (tx) => {
    // The term's revision FOR SHARE before the plan (the order a publication and a term's
    // deletion take them): a change of the week, a course or a room commits before the
    // checks below read them, or waits until this edit has committed. The plan row, locked
    // next, serialises this edit with the plan's other edits, its schedule and its
    // publication. What is read after the locks is read afresh, not from the identity map.
    await lockTermRevision(tx, (await findSchedulePlan(tx, planId)).term.id);
    const plan = await findSchedulePlan(tx, planId, true);
    requireDraft(plan, 'edited');
    const term = await tx.findOneOrFail(AcademicTerm, { id: plan.term.id }, { refresh: true });
    const course = await tx.findOne(Course, { id: courseId }, { refresh: true });
    if (!course || course.term.id !== term.id) throw badInput(`courseId: no course ${courseId} in the plan's term`, { field: 'courseId', value: courseId });
    const room = await tx.findOne(Room, { id: roomId }, { refresh: true });
    if (!room || room.term.id !== term.id) throw badInput(`roomId: no room ${roomId} in the plan's term`, { field: 'roomId', value: roomId });
    const lectureIndex = requireInt('lectureIndex', input.lectureIndex, 0, course.lecturesPerWeek - 1, ` (course ${course.code} has ${course.lecturesPerWeek} lectures)`);
    const day = requireInt('day', input.day, 0, term.daysPerWeek - 1, ` (0-based; ${term.daysPerWeek} days)`);
    const period = requireInt('period', input.period, 0, term.periodsPerDay - 1, ` (0-based; ${term.periodsPerDay} periods a day)`);
    if (input.locked != null && typeof input.locked !== 'boolean') throw badInput('locked must be true or false', { field: 'locked' });
    const locked = input.locked ?? true;
    if (locked) await refuseLockClash(tx, plan.id, { course, room, lectureIndex, day, period });
    let row = await tx.findOne(ScheduleAssignment, { plan, course, lectureIndex }, { refresh: true });
    if (row) tx.assign(row, { day, period, room, locked });
    else row = tx.create(ScheduleAssignment, { plan, course, lectureIndex, day, period, room, locked });
    await tx.flush();
    return row;
  });
}

export async function setAssignmentLocked(em: EntityManager, assignmentId: string, locked: boolean): Promise<ScheduleAssignment> {
  const id = requireId('assignmentId', assignmentId);
  if (typeof locked !== 'boolean') throw badInput('locked must be true or false', { field: 'locked', value: locked });
  const missing = () => notFound(`No schedule assignment with id ${assignmentId}`, { assignmentId });
  return em.transactional(async (tx) => {
    const first = await tx.findOne(ScheduleAssignment, { id });
    if (!first) throw missing();
    requireDraft(await findSchedulePlan(tx, first.plan.id, true), locked ? 'locked' : 'unlocked');
    // Read again under the plan's lock, and hold the row: an edit that committed while this
    // one waited (the lecture moved by hand, or replaced by a schedule's save) is what the
    // clash check must see, and a row deleted meanwhile (by that save, or with its course
    // or room) is NOT_FOUND — an update of it would change nothing and report success.
    const row = await tx.findOne(ScheduleAssignment, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!row) throw missing();
    if (locked && !row.locked) await refuseLockClash(tx, row.plan.id, await tx.populate(row, ['course', 'room'], { refresh: true }));
    row.locked = locked;
    await tx.flush();
    return row;
  });
}

/**
 * Two locked lectures in one room and period, or of one course in one period, make the
 * plan one no schedule can keep (the start check refuses it): a lecture is not locked
 * there by hand either. Unlocked, it may sit anywhere; the schedule moves it. The plan
 * row is locked by the caller, so two edits cannot both pass this.
 */
async function refuseLockClash(
  tx: EntityManager,
  planId: string,
  lecture: { course: Course; room: Room; lectureIndex: number; day: number; period: number },
): Promise<void> {
  const there = await tx.find(ScheduleAssignment, { plan: planId, locked: true, day: lecture.day, period: lecture.period }, { populate: ['course'] });
  const others = there.filter((a) => !(a.course.id === lecture.course.id && a.lectureIndex === lecture.lectureIndex));
  const where = `day ${lecture.day} period ${lecture.period}`;
  const sameRoom = others.find((a) => a.room.id === lecture.room.id);
  if (sameRoom) {
    throw badInput(`roomId: room ${lecture.room.code} at ${where} already holds locked lecture ${sameRoom.lectureIndex} of ${sameRoom.course.code}; unlock it or choose another room or period`, { field: 'roomId' });
  }
  const sameCourse = others.find((a) => a.course.id === lecture.course.id);
  if (sameCourse) {
    throw badInput(`period: lecture ${sameCourse.lectureIndex} of ${lecture.course.code} is locked at ${where} already; a course's lectures take different periods`, { field: 'period' });
  }
}

export const lockAssignment = (em: EntityManager, id: string) => setAssignmentLocked(em, id, true);
export const unlockAssignment = (em: EntityManager, id: string) => setAssignmentLocked(em, id, false);

/** A plan's lectures by codes, ordered by course and lecture. */
async function planLectures(em: EntityManager, planId: string, data: TermData) {
  const rows = await em.find(ScheduleAssignment, { plan: planId });
  const courses = new Map(data.courses.map((c) => [c.id, c]));
  const rooms = new Map(data.rooms.map((r) => [r.id, r]));
  const placed = rows
    .map((a) => ({ courseId: a.course.id, lectureIndex: a.lectureIndex, day: a.day, period: a.period, roomId: a.room.id }))
    .sort((a, b) => courses.get(a.courseId)!.code.localeCompare(courses.get(b.courseId)!.code) || a.lectureIndex - b.lectureIndex);
  const assignments: CttAssignment[] = placed.map((a) => ({
    course: courses.get(a.courseId)!.code,
    room: rooms.get(a.roomId)!.code,
    day: a.day,
    period: a.period,
  }));
  return { placed, assignments };
}

/** The plan in the competition's solution format, with the term's (imported) codes. */
export async function solutionText(em: EntityManager, planId: string): Promise<string> {
  return onOneSnapshot(em, async (em) => {
    const plan = await findSchedulePlan(em, planId);
    const data = await loadTermData(em, plan.term.id);
    return formatSolution((await planLectures(em, plan.id, data)).assignments);
  });
}

/** Hard violations and ITC-2007 penalty of a plan, from the independent evaluator. */
export async function evaluateSchedulePlan(em: EntityManager, planId: string): Promise<PlanEvaluation> {
  const { data, placed, assignments } = await onOneSnapshot(em, async (em) => {
    const plan = await findSchedulePlan(em, planId);
    const data = await loadTermData(em, plan.term.id);
    return { data, ...(await planLectures(em, plan.id, data)) };
  });
  return evaluateLectures(data, placed, assignments);
}

export function evaluateLectures(data: TermData, placed: Parameters<typeof describeConflicts>[1], assignments: CttAssignment[]): PlanEvaluation {
  let instance;
  try {
    instance = compileModel(buildCttModel(data));
  } catch (error) {
    if (error instanceof CttModelError) throw badInput(`The term ${data.term.code} cannot be timetabled as it is: ${error.message}`, { termId: data.term.id });
    throw error;
  }
  let result;
  try {
    result = evaluateTimetable(instance, assignments);
  } catch (error) {
    // A lecture outside the term's week as it is now (the week shrank after it was placed).
    if (error instanceof CttModelError) {
      throw badInput(`The plan does not fit its term ${data.term.code} as the term is now: ${error.message}; place those lectures again, or schedule the plan again`, { termId: data.term.id });
    }
    throw error;
  }
  return {
    hardViolations: result.hard.total,
    penalty: result.soft.total,
    feasible: result.feasible,
    breakdown: {
      lectures: result.hard.lectures,
      conflicts: result.hard.conflicts,
      availability: result.hard.availability,
      roomOccupancy: result.hard.roomOccupancy,
      roomCapacity: result.soft.roomCapacity,
      minWorkingDays: result.soft.minWorkingDays,
      curriculumCompactness: result.soft.curriculumCompactness,
      roomStability: result.soft.roomStability,
    },
    conflicts: result.hard.total > 0 ? describeConflicts(data, placed) : [],
  };
}
