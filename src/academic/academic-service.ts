/**
 * Create, read, update and delete the academic data of a term: the term itself,
 * teachers, rooms, courses, curricula and unavailability. Every mutation validates
 * its whole input first (BAD_USER_INPUT naming the field), then writes in one
 * transaction; a duplicate code is a CONFLICT; an unknown id is NOT_FOUND.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { badInput, conflict, notFound, takenAsConflict } from '../errors';
import { AcademicTerm, Course, Curriculum, Room, Teacher, Unavailability } from './entities';
import { keysetPage, keysetRootPage, type KeysetList, type Page } from './keyset-page';
import {
  MAX_DAYS_PER_WEEK,
  MAX_PERIODS_PER_DAY,
  MAX_COURSES_PER_TERM,
  MAX_ROOM_CAPACITY,
  MAX_STUDENTS,
  requireCode,
  idList,
  requireId,
  requireInt,
  requireName,
  requirePeriodLabels,
} from './validation';

export interface TermInput {
  code: string;
  name: string;
  daysPerWeek: number;
  periodsPerDay: number;
  periodLabels?: string[];
}
export interface TeacherInput {
  termId: string;
  code: string;
  name?: string;
}
export interface RoomInput {
  termId: string;
  code: string;
  name?: string;
  capacity: number;
}
export interface CourseInput {
  termId: string;
  code: string;
  name?: string;
  teacherId: string;
  lecturesPerWeek: number;
  minWorkingDays: number;
  students: number;
}
export interface CurriculumInput {
  termId: string;
  code: string;
  name?: string;
  courseIds: string[];
}
/** Exactly one of courseId and teacherId. */
export interface UnavailabilityInput {
  courseId?: string | null;
  teacherId?: string | null;
  day: number;
  period: number;
}

type Patch<T> = { [K in keyof T]?: T[K] | null };

// ----- look-ups ---------------------------------------------------------------

export async function findTerm(em: EntityManager, id: string): Promise<AcademicTerm> {
  const term = await em.findOne(AcademicTerm, { id: requireId('termId', id) });
  if (!term) throw notFound(`No academic term with id ${id}`, { termId: id });
  return term;
}

export const listTerms = (em: EntityManager): Promise<AcademicTerm[]> => em.find(AcademicTerm, {}, { orderBy: { createdAt: 'asc', code: 'asc' } });

/** The where-clause for the rows of one term or of several (the GraphQL layer batches terms). */
export const ofTerms = (termIds: string | readonly string[]) => ({ term: { $in: idList('termId', termIds) } });

export const listTeachers = (em: EntityManager, termIds: string | readonly string[]) => em.find(Teacher, ofTerms(termIds), { orderBy: { code: 'asc' } });
export const listRooms = (em: EntityManager, termIds: string | readonly string[]) => em.find(Room, ofTerms(termIds), { orderBy: { code: 'asc' } });
export const listCourses = (em: EntityManager, termIds: string | readonly string[]) =>
  em.find(Course, ofTerms(termIds), { orderBy: { code: 'asc' }, populate: ['teacher'] });
export const listCurricula = (em: EntityManager, termIds: string | readonly string[]) =>
  em.find(Curriculum, ofTerms(termIds), { orderBy: { code: 'asc' }, populate: ['courses'] });
export const listUnavailability = (em: EntityManager, termIds: string | readonly string[]) =>
  em.find(Unavailability, ofTerms(termIds), { orderBy: { day: 'asc', period: 'asc' }, populate: ['course', 'teacher'] });

// ----- pages (the API's lists: bounded reads, see keyset-page.ts) ----------------

/** Terms oldest first; keyed by (created_at, id). */
export const pageTerms = (em: EntityManager, page: Page) =>
  keysetRootPage(em, AcademicTerm, { table: 'academic_terms', noun: 'term', order: ['created_at', 'id'] }, page);

/** Codes are unique within a term: (term_id, code) indexes serve these pages. */
const byCodeInTerm = (table: string, noun: string): KeysetList => ({ table, noun, parent: 'x.term_id', order: ['code'] });

export const pageTeachers = (em: EntityManager, termIds: string | readonly string[], page: Page) =>
  keysetPage(em, Teacher, byCodeInTerm('academic_teachers', 'teacher'), termIds, page);
export const pageRooms = (em: EntityManager, termIds: string | readonly string[], page: Page) =>
  keysetPage(em, Room, byCodeInTerm('academic_rooms', 'room'), termIds, page);
export const pageCourses = (em: EntityManager, termIds: string | readonly string[], page: Page) =>
  keysetPage(em, Course, byCodeInTerm('academic_courses', 'course'), termIds, page);
export const pageCurricula = (em: EntityManager, termIds: string | readonly string[], page: Page) =>
  keysetPage(em, Curriculum, byCodeInTerm('academic_curricula', 'curriculum'), termIds, page);

/** A curriculum's courses by code (a curriculum holds tens of courses: its pivot rows are read whole). */
export const pageCurriculumCourses = (em: EntityManager, curriculumIds: string | readonly string[], page: Page) =>
  keysetPage(
    em,
    Course,
    { table: 'academic_courses', noun: 'course', parent: 'member.curriculum_id', join: 'join "academic_curriculum_courses" member on member.course_id = x.id', order: ['code', 'id'] },
    curriculumIds,
    page,
  );

/** By (day, period, id): the (term_id, day, period, id) index serves these pages. */
export const pageUnavailability = (em: EntityManager, termIds: string | readonly string[], page: Page) =>
  keysetPage(em, Unavailability, { table: 'academic_unavailabilities', noun: 'unavailability', parent: 'x.term_id', order: ['day', 'period', 'id'] }, termIds, page);

async function findInTerm<T extends Teacher | Room | Course | Curriculum | Unavailability>(
  em: EntityManager,
  entity: new () => T,
  field: string,
  id: string,
  noun: string,
  termId?: string,
): Promise<T> {
  const row = (await em.findOne(entity as never, { id: requireId(field, id) } as never)) as T | null;
  if (!row) {
    // A missing reference inside an input is the caller's mistake in that field.
    if (termId) throw badInput(`${field}: no ${noun} with id ${id}`, { field, value: id });
    throw notFound(`No ${noun} with id ${id}`, { [field]: id });
  }
  if (termId && row.term.id !== termId) {
    throw badInput(`${field}: ${noun} ${id} belongs to another term`, { field, value: id });
  }
  return row;
}

async function ensureCodeFree(em: EntityManager, entity: typeof Teacher | typeof Room | typeof Course | typeof Curriculum, termId: string, code: string, noun: CodedRow, exceptId?: string) {
  const existing = await em.findOne(entity as typeof Teacher, { term: termId, code });
  if (existing && existing.id !== exceptId) throw codeTaken(noun, code);
}

type CodedRow = 'term' | 'teacher' | 'room' | 'course' | 'curriculum';

/** The unique constraint that keeps each kind of row's code its own. */
const CODE_UNIQUE: Record<CodedRow, string> = {
  term: 'academic_terms_code_unique',
  teacher: 'academic_teachers_term_code_unique',
  room: 'academic_rooms_term_code_unique',
  course: 'academic_courses_term_code_unique',
  curriculum: 'academic_curricula_term_code_unique',
};

const codeTaken = (noun: CodedRow, code: string) =>
  conflict(noun === 'term' ? `A term with code ${code} already exists` : `The term already has a ${noun} with code ${code}`, { field: 'code', value: code });

/** A write that gives a row its code (`code`, when it sets one): see takenAsConflict. */
const keepsCodeUnique = <T>(noun: CodedRow, code: string | undefined, write: Promise<T>): Promise<T> =>
  takenAsConflict(write, CODE_UNIQUE[noun], code === undefined ? null : () => codeTaken(noun, code));

// ----- terms ------------------------------------------------------------------

export function validateTermInput(input: TermInput): Required<TermInput> {
  const code = requireCode('code', input.code);
  const name = requireName('name', input.name);
  const daysPerWeek = requireInt('daysPerWeek', input.daysPerWeek, 1, MAX_DAYS_PER_WEEK);
  const periodsPerDay = requireInt('periodsPerDay', input.periodsPerDay, 1, MAX_PERIODS_PER_DAY);
  const periodLabels = requirePeriodLabels('periodLabels', input.periodLabels ?? [], periodsPerDay);
  return { code, name, daysPerWeek, periodsPerDay, periodLabels };
}

export async function createTerm(em: EntityManager, input: TermInput): Promise<AcademicTerm> {
  const valid = validateTermInput(input);
  return keepsCodeUnique('term', valid.code, em.transactional(async (tx) => {
    if (await tx.findOne(AcademicTerm, { code: valid.code })) throw codeTaken('term', valid.code);
    const term = tx.create(AcademicTerm, valid);
    await tx.flush();
    return term;
  }));
}

/** Changing the week grid is allowed only while every course, unavailability and assignment still fits. */
export async function updateTerm(em: EntityManager, id: string, patch: Patch<TermInput>): Promise<AcademicTerm> {
  return keepsCodeUnique('term', patch.code ?? undefined, em.transactional(async (tx) => {
    const term = await findTerm(tx, id);
    const merged = validateTermInput({
      code: patch.code ?? term.code,
      name: patch.name ?? term.name,
      daysPerWeek: patch.daysPerWeek ?? term.daysPerWeek,
      periodsPerDay: patch.periodsPerDay ?? term.periodsPerDay,
      periodLabels:
        patch.periodLabels ?? (patch.periodsPerDay != null && patch.periodsPerDay !== term.periodsPerDay ? [] : term.periodLabels),
    });
    if (merged.code !== term.code && (await tx.findOne(AcademicTerm, { code: merged.code }))) throw codeTaken('term', merged.code);
    if (merged.daysPerWeek < term.daysPerWeek || merged.periodsPerDay < term.periodsPerDay) {
      const slots = merged.daysPerWeek * merged.periodsPerDay;
      const tooMany = await tx.findOne(Course, { term, $or: [{ lecturesPerWeek: { $gt: slots } }, { minWorkingDays: { $gt: merged.daysPerWeek } }] });
      if (tooMany) {
        throw badInput(`daysPerWeek/periodsPerDay: course ${tooMany.code} (${tooMany.lecturesPerWeek} lectures, ${tooMany.minWorkingDays} minimum days) would not fit a ${merged.daysPerWeek}×${merged.periodsPerDay} week`, {
          field: 'daysPerWeek',
        });
      }
      const outside = await tx.findOne(Unavailability, { term, $or: [{ day: { $gte: merged.daysPerWeek } }, { period: { $gte: merged.periodsPerDay } }] });
      if (outside) throw badInput(`daysPerWeek/periodsPerDay: an unavailability at day ${outside.day} period ${outside.period} would fall outside the week`, { field: 'daysPerWeek' });
      const [{ count }] = await tx
        .getConnection()
        .execute<{ count: string }[]>(
          `SELECT count(*) FROM schedule_assignments a JOIN schedule_plans p ON p.id = a.plan_id WHERE p.term_id = ? AND (a.day >= ? OR a.period >= ?)`,
          [term.id, merged.daysPerWeek, merged.periodsPerDay],
          'all',
          tx.getTransactionContext(),
        );
      if (Number(count) > 0) throw badInput(`daysPerWeek/periodsPerDay: ${count} scheduled lectures of this term would fall outside the week`, { field: 'daysPerWeek' });
    }
    if (merged.daysPerWeek !== term.daysPerWeek || merged.periodsPerDay !== term.periodsPerDay) await changesTimetables(tx, term.id);
    tx.assign(term, merged);
    await tx.flush();
    return term;
  }));
}

export async function deleteTerm(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const term = await findTerm(tx, id);
    await tx.nativeDelete(AcademicTerm, { id: term.id });
    return true;
  });
}

// ----- teachers ----------------------------------------------------------------

export async function createTeacher(em: EntityManager, input: TeacherInput): Promise<Teacher> {
  const termId = requireId('termId', input.termId);
  const code = requireCode('code', input.code);
  const name = input.name == null ? code : requireName('name', input.name);
  return keepsCodeUnique('teacher', code, em.transactional(async (tx) => {
    const term = await termForInput(tx, termId);
    await ensureCodeFree(tx, Teacher, term.id, code, 'teacher');
    const teacher = tx.create(Teacher, { term, code, name });
    await tx.flush();
    return teacher;
  }));
}

export async function updateTeacher(em: EntityManager, id: string, patch: Patch<Omit<TeacherInput, 'termId'>>): Promise<Teacher> {
  const code = patch.code == null ? undefined : requireCode('code', patch.code);
  const name = patch.name == null ? undefined : requireName('name', patch.name);
  return keepsCodeUnique('teacher', code, em.transactional(async (tx) => {
    const teacher = await findInTerm(tx, Teacher, 'teacherId', id, 'teacher');
    if (code !== undefined) await ensureCodeFree(tx, Teacher, teacher.term.id, code, 'teacher', teacher.id);
    tx.assign(teacher, { ...(code !== undefined && { code }), ...(name !== undefined && { name }) });
    await tx.flush();
    return teacher;
  }));
}

export async function deleteTeacher(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const teacher = await findInTerm(tx, Teacher, 'teacherId', id, 'teacher');
    const courses = await tx.count(Course, { teacher });
    if (courses > 0) throw conflict(`Teacher ${teacher.code} still teaches ${courses} course(s); give them another teacher or delete them first`, { teacherId: id });
    await tx.nativeDelete(Teacher, { id: teacher.id });
    return true;
  });
}

// ----- rooms -------------------------------------------------------------------

export async function createRoom(em: EntityManager, input: RoomInput): Promise<Room> {
  const termId = requireId('termId', input.termId);
  const code = requireCode('code', input.code);
  const name = input.name == null ? code : requireName('name', input.name);
  const capacity = requireInt('capacity', input.capacity, 1, MAX_ROOM_CAPACITY);
  return keepsCodeUnique('room', code, em.transactional(async (tx) => {
    const term = await termForInput(tx, termId);
    await ensureCodeFree(tx, Room, term.id, code, 'room');
    await changesTimetables(tx, term.id);
    const room = tx.create(Room, { term, code, name, capacity });
    await tx.flush();
    return room;
  }));
}

export async function updateRoom(em: EntityManager, id: string, patch: Patch<Omit<RoomInput, 'termId'>>): Promise<Room> {
  const code = patch.code == null ? undefined : requireCode('code', patch.code);
  const name = patch.name == null ? undefined : requireName('name', patch.name);
  const capacity = patch.capacity == null ? undefined : requireInt('capacity', patch.capacity, 1, MAX_ROOM_CAPACITY);
  return keepsCodeUnique('room', code, em.transactional(async (tx) => {
    const room = await findInTerm(tx, Room, 'roomId', id, 'room');
    if (code !== undefined) await ensureCodeFree(tx, Room, room.term.id, code, 'room', room.id);
    if (capacity !== undefined && capacity !== room.capacity) await changesTimetables(tx, room.term.id);
    tx.assign(room, { ...(code !== undefined && { code }), ...(name !== undefined && { name }), ...(capacity !== undefined && { capacity }) });
    await tx.flush();
    return room;
  }));
}

export async function deleteRoom(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const room = await findInTerm(tx, Room, 'roomId', id, 'room');
    await changesTimetables(tx, room.term.id);
    await refuseIfPublished(tx, 'room_id', room.id, `Room ${room.code}`);
    await tx.nativeDelete(Room, { id: room.id });
    return true;
  });
}

// ----- courses -----------------------------------------------------------------

function checkCourseNumbers(term: AcademicTerm, lecturesPerWeek: unknown, minWorkingDays: unknown, students: unknown) {
  const slots = term.daysPerWeek * term.periodsPerDay;
  return {
    lecturesPerWeek: requireInt('lecturesPerWeek', lecturesPerWeek, 1, slots, ` (the week of term ${term.code} has ${slots} periods)`),
    minWorkingDays: requireInt('minWorkingDays', minWorkingDays, 0, term.daysPerWeek, ` (the week of term ${term.code} has ${term.daysPerWeek} days)`),
    students: requireInt('students', students, 0, MAX_STUDENTS),
  };
}

export async function createCourse(em: EntityManager, input: CourseInput): Promise<Course> {
  const termId = requireId('termId', input.termId);
  const code = requireCode('code', input.code);
  const name = input.name == null ? code : requireName('name', input.name);
  const teacherId = requireId('teacherId', input.teacherId);
  return keepsCodeUnique('course', code, em.transactional(async (tx) => {
    const term = await termForInput(tx, termId);
    const numbers = checkCourseNumbers(term, input.lecturesPerWeek, input.minWorkingDays, input.students);
    const teacher = await findInTerm(tx, Teacher, 'teacherId', teacherId, 'teacher', term.id);
    await ensureCodeFree(tx, Course, term.id, code, 'course');
    // Counted once the term's row is locked: two creations at the limit cannot both pass.
    await changesTimetables(tx, term.id);
    const courses = await tx.count(Course, { term: term.id });
    if (courses >= MAX_COURSES_PER_TERM) {
      throw badInput(`termId: term ${term.code} has ${courses} courses, the most a term may have`, { field: 'termId', value: termId });
    }
    const course = tx.create(Course, { term, code, name, teacher, ...numbers });
    await tx.flush();
    return course;
  }));
}

export async function updateCourse(em: EntityManager, id: string, patch: Patch<Omit<CourseInput, 'termId'>>): Promise<Course> {
  const code = patch.code == null ? undefined : requireCode('code', patch.code);
  const name = patch.name == null ? undefined : requireName('name', patch.name);
  return keepsCodeUnique('course', code, em.transactional(async (tx) => {
    const course = await findInTerm(tx, Course, 'courseId', id, 'course');
    const term = await findTerm(tx, course.term.id);
    const numbers = checkCourseNumbers(
      term,
      patch.lecturesPerWeek ?? course.lecturesPerWeek,
      patch.minWorkingDays ?? course.minWorkingDays,
      patch.students ?? course.students,
    );
    const teacher = patch.teacherId == null ? undefined : await findInTerm(tx, Teacher, 'teacherId', patch.teacherId, 'teacher', term.id);
    if (code !== undefined) await ensureCodeFree(tx, Course, term.id, code, 'course', course.id);
    const renumbered =
      numbers.lecturesPerWeek !== course.lecturesPerWeek || numbers.minWorkingDays !== course.minWorkingDays || numbers.students !== course.students;
    if (renumbered || (teacher !== undefined && teacher.id !== course.teacher.id)) await changesTimetables(tx, term.id);
    if (numbers.lecturesPerWeek < course.lecturesPerWeek) {
      // Lectures that no longer exist leave the drafts; a published plan keeps its shape.
      await refuseIfPublished(tx, 'course_id', course.id, `Course ${course.code}`, numbers.lecturesPerWeek);
      await tx
        .getConnection()
        .execute(
          `DELETE FROM schedule_assignments WHERE course_id = ? AND lecture_index >= ?`,
          [course.id, numbers.lecturesPerWeek],
          'run',
          tx.getTransactionContext(),
        );
    }
    tx.assign(course, { ...numbers, ...(code !== undefined && { code }), ...(name !== undefined && { name }), ...(teacher && { teacher }) });
    await tx.flush();
    return course;
  }));
}

export async function deleteCourse(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const course = await findInTerm(tx, Course, 'courseId', id, 'course');
    await changesTimetables(tx, course.term.id);
    await refuseIfPublished(tx, 'course_id', course.id, `Course ${course.code}`);
    await tx.nativeDelete(Course, { id: course.id });
    return true;
  });
}

// ----- curricula ---------------------------------------------------------------

async function coursesOfTerm(tx: EntityManager, termId: string, ids: unknown): Promise<Course[]> {
  if (!Array.isArray(ids)) throw badInput('courseIds must be a list of course ids', { field: 'courseIds', value: ids });
  const unique = [...new Set(ids.map((id, i) => requireId(`courseIds[${i}]`, id)))];
  const found = await tx.find(Course, { id: { $in: unique } });
  for (const id of unique) {
    const course = found.find((c) => c.id === id);
    if (!course) throw badInput(`courseIds: no course with id ${id}`, { field: 'courseIds', value: id });
    if (course.term.id !== termId) throw badInput(`courseIds: course ${course.code} belongs to another term`, { field: 'courseIds', value: id });
  }
  return unique.map((id) => found.find((c) => c.id === id)!);
}

export async function createCurriculum(em: EntityManager, input: CurriculumInput): Promise<Curriculum> {
  const termId = requireId('termId', input.termId);
  const code = requireCode('code', input.code);
  const name = input.name == null ? code : requireName('name', input.name);
  return keepsCodeUnique('curriculum', code, em.transactional(async (tx) => {
    const term = await termForInput(tx, termId);
    const courses = await coursesOfTerm(tx, term.id, input.courseIds);
    await ensureCodeFree(tx, Curriculum, term.id, code, 'curriculum');
    await changesTimetables(tx, term.id);
    const curriculum = tx.create(Curriculum, { term, code, name });
    curriculum.courses.set(courses);
    await tx.flush();
    return curriculum;
  }));
}

export async function updateCurriculum(em: EntityManager, id: string, patch: Patch<Omit<CurriculumInput, 'termId'>>): Promise<Curriculum> {
  const code = patch.code == null ? undefined : requireCode('code', patch.code);
  const name = patch.name == null ? undefined : requireName('name', patch.name);
  return keepsCodeUnique('curriculum', code, em.transactional(async (tx) => {
    const curriculum = await findInTerm(tx, Curriculum, 'curriculumId', id, 'curriculum');
    const courses = patch.courseIds == null ? undefined : await coursesOfTerm(tx, curriculum.term.id, patch.courseIds);
    if (code !== undefined) await ensureCodeFree(tx, Curriculum, curriculum.term.id, code, 'curriculum', curriculum.id);
    if (courses) await changesTimetables(tx, curriculum.term.id);
    tx.assign(curriculum, { ...(code !== undefined && { code }), ...(name !== undefined && { name }) });
    if (courses) {
      await curriculum.courses.init();
      curriculum.courses.set(courses);
    }
    await tx.flush();
    return curriculum;
  }));
}

export async function deleteCurriculum(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const curriculum = await findInTerm(tx, Curriculum, 'curriculumId', id, 'curriculum');
    await changesTimetables(tx, curriculum.term.id);
    await tx.nativeDelete(Curriculum, { id: curriculum.id });
    return true;
  });
}

// ----- unavailability -------------------------------------------------------------

export async function addUnavailability(em: EntityManager, input: UnavailabilityInput): Promise<Unavailability> {
  const hasCourse = input.courseId != null;
  const hasTeacher = input.teacherId != null;
  if (hasCourse === hasTeacher) {
    throw badInput('Give exactly one of courseId and teacherId: the course or the teacher that is unavailable', { field: 'courseId' });
  }
  return em.transactional(async (tx) => {
    const course = hasCourse ? await findInTerm(tx, Course, 'courseId', requireId('courseId', input.courseId), 'course') : null;
    const teacher = hasTeacher ? await findInTerm(tx, Teacher, 'teacherId', requireId('teacherId', input.teacherId), 'teacher') : null;
    const term = await findTerm(tx, (course ?? teacher)!.term.id);
    const day = requireInt('day', input.day, 0, term.daysPerWeek - 1, ` (0-based; term ${term.code} has ${term.daysPerWeek} days)`);
    const period = requireInt('period', input.period, 0, term.periodsPerDay - 1, ` (0-based; term ${term.code} has ${term.periodsPerDay} periods a day)`);
    const existing = await tx.findOne(Unavailability, { term, course, teacher, day, period });
    if (existing) return existing;
    await changesTimetables(tx, term.id);
    const row = tx.create(Unavailability, { term, course, teacher, day, period });
    await tx.flush();
    return row;
  });
}

export async function removeUnavailability(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const row = await findInTerm(tx, Unavailability, 'unavailabilityId', id, 'unavailability');
    await changesTimetables(tx, row.term.id);
    await tx.nativeDelete(Unavailability, { id: row.id });
    return true;
  });
}

// ----- helpers -------------------------------------------------------------------

/**
 * The write changes what a timetable of the term is computed from (the week, which
 * courses and rooms exist, a course's numbers or teacher, a room's capacity, curricula's
 * courses, unavailability; not names or codes): the term's revision grows. The term's
 * row stays locked until the write commits, so a solve's save, which holds the revision
 * FOR SHARE (`lockTermRevision`), saves only what it computed from the present state.
 */
async function changesTimetables(tx: EntityManager, termId: string): Promise<void> {
  await tx.getConnection().execute(`UPDATE academic_terms SET revision = revision + 1 WHERE id = ?`, [termId], 'run', tx.getTransactionContext());
}

/**
 * The term's revision, locked FOR SHARE until `tx` ends: no change a timetable is
 * computed from commits meanwhile (each locks the row: `changesTimetables`). Null when
 * the term is gone.
 */
export async function lockTermRevision(tx: EntityManager, termId: string): Promise<number | null> {
  const rows = await tx
    .getConnection()
    .execute<{ revision: number }[]>(`SELECT revision FROM academic_terms WHERE id = ? FOR SHARE`, [termId], 'all', tx.getTransactionContext());
  return rows[0]?.revision ?? null;
}

/** The term an input names: a missing one is a mistake in that input field. */
async function termForInput(tx: EntityManager, termId: string): Promise<AcademicTerm> {
  const term = await tx.findOne(AcademicTerm, { id: termId });
  if (!term) throw badInput(`termId: no academic term with id ${termId}`, { field: 'termId', value: termId });
  return term;
}

/**
 * A published timetable must not lose lectures behind the office's back. Called after
 * `changesTimetables` has locked the term's row: a publication holds that row FOR SHARE
 * while it reads the plan's lectures, so the check runs once any publication under way
 * has committed and sees its plan published (READ COMMITTED: each statement sees what
 * committed before it began).
 */
async function refuseIfPublished(tx: EntityManager, column: 'course_id' | 'room_id', id: string, what: string, fromLecture?: number): Promise<void> {
  const rows = await tx
    .getConnection()
    .execute<{ name: string }[]>(
      `SELECT p.name FROM schedule_assignments a JOIN schedule_plans p ON p.id = a.plan_id
       WHERE a.${column} = ? AND p.status = 'PUBLISHED' ${fromLecture !== undefined ? 'AND a.lecture_index >= ?' : ''} LIMIT 1`,
      fromLecture !== undefined ? [id, fromLecture] : [id],
      'all',
      tx.getTransactionContext(),
    );
  if (rows.length > 0) throw conflict(`${what} is used by the published plan "${rows[0].name}"; publish another plan first`, { id });
}
