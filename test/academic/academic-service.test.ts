import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as academic from '../../src/academic/academic-service';
import { AcademicTerm, Course, Curriculum, Room, Teacher, Unavailability } from '../../src/academic/entities';
import { createTestDb, untilWaitingOnTransaction } from '../support/engine-harness';
import { refused } from '../support/refused';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
beforeAll(async () => {
  ctx = await createTestDb('academic_crud');
});
afterAll(async () => {
  await ctx.close();
});

const em = () => ctx.db.orm.em.fork();


async function counts() {
  const e = em();
  return Promise.all([AcademicTerm, Teacher, Room, Course, Curriculum, Unavailability].map((entity) => e.count(entity as typeof Teacher, {})));
}

describe('academic services', () => {
  it('creates, updates and deletes a term and its data', async () => {
    const term = await academic.createTerm(em(), { code: 'T-2026', name: 'Autumn 2026', daysPerWeek: 5, periodsPerDay: 4, periodLabels: ['8:00', '10:00', '14:00', '16:00'] });
    const teacher = await academic.createTeacher(em(), { termId: term.id, code: 'T1', name: 'Wang Wei' });
    const room = await academic.createRoom(em(), { termId: term.id, code: 'R1', capacity: 60 });
    expect(room.name).toBe('R1');
    const course = await academic.createCourse(em(), { termId: term.id, code: 'C1', name: 'Algebra', teacherId: teacher.id, lecturesPerWeek: 3, minWorkingDays: 2, students: 50 });
    const curriculum = await academic.createCurriculum(em(), { termId: term.id, code: 'Q1', courseIds: [course.id, course.id] });
    expect((await academic.listCurricula(em(), term.id))[0].courses.getItems().map((c) => c.code)).toEqual(['C1']);
    const u1 = await academic.addUnavailability(em(), { courseId: course.id, day: 4, period: 3 });
    const u2 = await academic.addUnavailability(em(), { teacherId: teacher.id, day: 0, period: 0 });
    expect((await academic.addUnavailability(em(), { teacherId: teacher.id, day: 0, period: 0 })).id).toBe(u2.id);

    expect(await academic.updateRoom(em(), room.id, { capacity: 80 })).toMatchObject({ capacity: 80 });
    expect(await academic.updateCourse(em(), course.id, { lecturesPerWeek: 4, name: 'Linear Algebra' })).toMatchObject({ lecturesPerWeek: 4, name: 'Linear Algebra' });
    expect(await academic.updateTeacher(em(), teacher.id, { name: 'Li Min' })).toMatchObject({ name: 'Li Min' });
    expect(await academic.updateTerm(em(), term.id, { name: 'Autumn' })).toMatchObject({ name: 'Autumn', periodsPerDay: 4 });
    expect(await academic.updateCurriculum(em(), curriculum.id, { courseIds: [] })).toBeTruthy();
    expect(await academic.removeUnavailability(em(), u1.id)).toBe(true);

    await refused(academic.deleteTeacher(em(), teacher.id), 'CONFLICT', /still teaches 1 course/);
    expect(await academic.deleteCourse(em(), course.id)).toBe(true);
    expect(await academic.deleteTeacher(em(), teacher.id)).toBe(true);
    expect(await academic.deleteRoom(em(), room.id)).toBe(true);
    expect(await academic.deleteCurriculum(em(), curriculum.id)).toBe(true);
    expect(await academic.deleteTerm(em(), term.id)).toBe(true);
    expect(await counts()).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('refuses bad input for every mutation with a message naming the field, writing nothing', async () => {
    const term = await academic.createTerm(em(), { code: 'BAD', name: 'Bad inputs', daysPerWeek: 5, periodsPerDay: 6 });
    const other = await academic.createTerm(em(), { code: 'OTHER', name: 'Another term', daysPerWeek: 5, periodsPerDay: 6 });
    const teacher = await academic.createTeacher(em(), { termId: term.id, code: 'T1' });
    const foreignTeacher = await academic.createTeacher(em(), { termId: other.id, code: 'T9' });
    const room = await academic.createRoom(em(), { termId: term.id, code: 'R1', capacity: 30 });
    const course = await academic.createCourse(em(), { termId: term.id, code: 'C1', teacherId: teacher.id, lecturesPerWeek: 2, minWorkingDays: 2, students: 10 });
    const foreignCourse = await academic.createCourse(em(), { termId: other.id, code: 'C9', teacherId: foreignTeacher.id, lecturesPerWeek: 2, minWorkingDays: 2, students: 10 });
    const curriculum = await academic.createCurriculum(em(), { termId: term.id, code: 'Q1', courseIds: [course.id] });
    const before = await counts();
    const NONE = '00000000-0000-4000-8000-000000000000';

    // terms
    await refused(academic.createTerm(em(), { code: '', name: 'x', daysPerWeek: 5, periodsPerDay: 5 }), 'BAD_USER_INPUT', /code must be 1–64 characters/);
    await refused(academic.createTerm(em(), { code: 'A B', name: 'x', daysPerWeek: 5, periodsPerDay: 5 }), 'BAD_USER_INPUT', /code must not contain blanks/);
    await refused(academic.createTerm(em(), { code: 'X', name: 'x', daysPerWeek: 0, periodsPerDay: 5 }), 'BAD_USER_INPUT', /daysPerWeek must be an integer from 1 to 7, got 0/);
    await refused(academic.createTerm(em(), { code: 'X', name: 'x', daysPerWeek: 5, periodsPerDay: 25 }), 'BAD_USER_INPUT', /periodsPerDay must be an integer from 1 to 24/);
    await refused(academic.createTerm(em(), { code: 'X', name: 'x', daysPerWeek: 5, periodsPerDay: 2, periodLabels: ['a'] }), 'BAD_USER_INPUT', /periodLabels must have one label per period/);
    await refused(academic.createTerm(em(), { code: 'BAD', name: 'x', daysPerWeek: 5, periodsPerDay: 2 }), 'CONFLICT', /term with code BAD already exists/);
    await refused(academic.updateTerm(em(), term.id, { daysPerWeek: 1 }), 'BAD_USER_INPUT', /course C1 .* would not fit/);
    await refused(academic.updateTerm(em(), NONE, { name: 'x' }), 'NOT_FOUND', /No academic term/);
    // teachers
    await refused(academic.createTeacher(em(), { termId: term.id, code: 'T1' }), 'CONFLICT', /already has a teacher with code T1/);
    await refused(academic.createTeacher(em(), { termId: NONE, code: 'T2' }), 'BAD_USER_INPUT', /termId: no academic term/);
    await refused(academic.createTeacher(em(), { termId: term.id, code: 'T2', name: '' }), 'BAD_USER_INPUT', /name must be 1–200/);
    await refused(academic.updateTeacher(em(), teacher.id, { code: 'has space' }), 'BAD_USER_INPUT', /code must not contain blanks/);
    // rooms
    await refused(academic.createRoom(em(), { termId: term.id, code: 'R2', capacity: 0 }), 'BAD_USER_INPUT', /capacity must be an integer from 1 to 100000, got 0/);
    await refused(academic.createRoom(em(), { termId: term.id, code: 'R2', capacity: 1.5 }), 'BAD_USER_INPUT', /capacity/);
    await refused(academic.updateRoom(em(), room.id, { capacity: -3 }), 'BAD_USER_INPUT', /capacity must be an integer from 1 to 100000, got -3/);
    // courses
    const courseInput = { termId: term.id, code: 'C2', teacherId: teacher.id, lecturesPerWeek: 2, minWorkingDays: 1, students: 5 };
    await refused(academic.createCourse(em(), { ...courseInput, lecturesPerWeek: 31 }), 'BAD_USER_INPUT', /lecturesPerWeek must be an integer from 1 to 30 \(the week of term BAD has 30 periods\), got 31/);
    await refused(academic.createCourse(em(), { ...courseInput, lecturesPerWeek: 0 }), 'BAD_USER_INPUT', /lecturesPerWeek/);
    await refused(academic.createCourse(em(), { ...courseInput, minWorkingDays: 6 }), 'BAD_USER_INPUT', /minWorkingDays must be an integer from 0 to 5/);
    await refused(academic.createCourse(em(), { ...courseInput, students: -1 }), 'BAD_USER_INPUT', /students must be an integer from 0 to 100000, got -1/);
    await refused(academic.createCourse(em(), { ...courseInput, teacherId: foreignTeacher.id }), 'BAD_USER_INPUT', /teacherId: teacher .* belongs to another term/);
    await refused(academic.createCourse(em(), { ...courseInput, teacherId: NONE }), 'BAD_USER_INPUT', /teacherId: no teacher/);
    await refused(academic.createCourse(em(), { ...courseInput, code: 'C1' }), 'CONFLICT', /already has a course with code C1/);
    await refused(academic.updateCourse(em(), course.id, { lecturesPerWeek: 100 }), 'BAD_USER_INPUT', /lecturesPerWeek/);
    await refused(academic.updateCourse(em(), course.id, { teacherId: foreignTeacher.id }), 'BAD_USER_INPUT', /another term/);
    await refused(academic.updateCourse(em(), NONE, { students: 3 }), 'NOT_FOUND', /No course/);
    // curricula
    await refused(academic.createCurriculum(em(), { termId: term.id, code: 'Q2', courseIds: [foreignCourse.id] }), 'BAD_USER_INPUT', /courseIds: course C9 belongs to another term/);
    await refused(academic.createCurriculum(em(), { termId: term.id, code: 'Q2', courseIds: ['bad'] }), 'BAD_USER_INPUT', /courseIds\[0\] must be an id/);
    await refused(academic.createCurriculum(em(), { termId: term.id, code: 'Q1', courseIds: [] }), 'CONFLICT', /curriculum with code Q1/);
    await refused(academic.updateCurriculum(em(), curriculum.id, { courseIds: [NONE] }), 'BAD_USER_INPUT', /courseIds: no course/);
    // unavailability
    await refused(academic.addUnavailability(em(), { day: 0, period: 0 }), 'BAD_USER_INPUT', /exactly one of courseId and teacherId/);
    await refused(academic.addUnavailability(em(), { courseId: course.id, teacherId: teacher.id, day: 0, period: 0 }), 'BAD_USER_INPUT', /exactly one/);
    await refused(academic.addUnavailability(em(), { courseId: course.id, day: 5, period: 0 }), 'BAD_USER_INPUT', /day must be an integer from 0 to 4/);
    await refused(academic.addUnavailability(em(), { teacherId: teacher.id, day: 0, period: 6 }), 'BAD_USER_INPUT', /period must be an integer from 0 to 5/);
    await refused(academic.removeUnavailability(em(), NONE), 'NOT_FOUND', /No unavailability/);

    expect(await counts()).toEqual(before);
    expect((await em().findOneOrFail(Room, { id: room.id })).capacity).toBe(30);
    expect((await em().findOneOrFail(Course, { id: course.id })).lecturesPerWeek).toBe(2);
  });
});

describe('students and room capacity', () => {
  it("are at most 100,000, so that a term's penalties (students over capacity, summed over its lectures) stay 32-bit integers", async () => {
    const term = await academic.createTerm(em(), { code: 'HUGE', name: 'Huge numbers', daysPerWeek: 5, periodsPerDay: 2 });
    const teacher = await academic.createTeacher(em(), { termId: term.id, code: 'T1' });
    const room = await academic.createRoom(em(), { termId: term.id, code: 'R1', capacity: 100_000 });
    const course = await academic.createCourse(em(), { termId: term.id, code: 'C1', teacherId: teacher.id, lecturesPerWeek: 1, minWorkingDays: 1, students: 100_000 });
    const before = await counts();
    await refused(academic.createRoom(em(), { termId: term.id, code: 'R2', capacity: 100_001 }), 'BAD_USER_INPUT', /^capacity must be an integer from 1 to 100000, got 100001/);
    await refused(academic.updateRoom(em(), room.id, { capacity: 2_000_000_000 }), 'BAD_USER_INPUT', /^capacity must be an integer from 1 to 100000, got 2000000000/);
    const courseInput = { termId: term.id, code: 'C2', teacherId: teacher.id, lecturesPerWeek: 1, minWorkingDays: 1 };
    await refused(academic.createCourse(em(), { ...courseInput, students: 100_001 }), 'BAD_USER_INPUT', /^students must be an integer from 0 to 100000, got 100001/);
    await refused(academic.updateCourse(em(), course.id, { students: 2_000_000_000 }), 'BAD_USER_INPUT', /^students must be an integer from 0 to 100000, got 2000000000/);
    expect(await counts()).toEqual(before);
    expect((await em().findOneOrFail(Room, { id: room.id })).capacity).toBe(100_000);
    expect((await em().findOneOrFail(Course, { id: course.id })).students).toBe(100_000);
  });
});

describe('courses per term', () => {
  it('are at most 10,000: the next one is refused, counted under the term\'s lock', async () => {
    const term = await academic.createTerm(em(), { code: 'MANY', name: 'Many courses', daysPerWeek: 5, periodsPerDay: 2 });
    const teacher = await academic.createTeacher(em(), { termId: term.id, code: 'T1' });
    await ctx.db.pool.query(
      `INSERT INTO academic_courses (id, term_id, code, name, teacher_id, lectures_per_week, min_working_days, students)
       SELECT gen_random_uuid(), $1, 'C' || g, 'C' || g, $2, 1, 1, 0 FROM generate_series(1, 9999) g`,
      [term.id, teacher.id],
    );
    const input = { termId: term.id, teacherId: teacher.id, lecturesPerWeek: 1, minWorkingDays: 1, students: 0 };
    await academic.createCourse(em(), { ...input, code: 'LAST' });
    await refused(academic.createCourse(em(), { ...input, code: 'ONE-MORE' }), 'BAD_USER_INPUT', /^termId: term MANY has 10000 courses, the most a term may have/);
    expect(await em().count(Course, { term: term.id })).toBe(10_000);
    await academic.deleteTerm(em(), term.id);
  });
});

describe('control characters in codes and names', () => {
  it('are refused with BAD_USER_INPUT naming the field, before anything reaches the database (which refuses NUL in text)', async () => {
    const term = await academic.createTerm(em(), { code: 'CTRL', name: 'Control characters', daysPerWeek: 5, periodsPerDay: 2 });
    const teacher = await academic.createTeacher(em(), { termId: term.id, code: 'T1' });
    const room = await academic.createRoom(em(), { termId: term.id, code: 'R1', capacity: 30 });
    const course = await academic.createCourse(em(), { termId: term.id, code: 'C1', teacherId: teacher.id, lecturesPerWeek: 1, minWorkingDays: 1, students: 10 });
    const curriculum = await academic.createCurriculum(em(), { termId: term.id, code: 'Q1', courseIds: [course.id] });
    const before = await counts();
    const nul = /must not contain control characters \(found U\+0000\)/;
    await refused(academic.createTerm(em(), { code: 'X\u0000', name: 'x', daysPerWeek: 5, periodsPerDay: 2 }), 'BAD_USER_INPUT', /^code must not contain control characters \(found U\+0000\), got "X\\u0000"/);
    await refused(academic.createTerm(em(), { code: 'X', name: 'Autumn\u0000', daysPerWeek: 5, periodsPerDay: 2 }), 'BAD_USER_INPUT', /^name must not contain control characters/);
    await refused(academic.createTerm(em(), { code: 'X', name: 'x', daysPerWeek: 5, periodsPerDay: 2, periodLabels: ['8:00', '10:00\u0000'] }), 'BAD_USER_INPUT', /^periodLabels\[1\] must not contain/);
    await refused(academic.updateTerm(em(), term.id, { name: 'Bell\u0007' }), 'BAD_USER_INPUT', /^name must not contain control characters \(found U\+0007\)/);
    await refused(academic.createTeacher(em(), { termId: term.id, code: 'T\u001f2' }), 'BAD_USER_INPUT', /^code must not contain control characters \(found U\+001F\)/);
    await refused(academic.updateTeacher(em(), teacher.id, { name: 'Wang\u0000Wei' }), 'BAD_USER_INPUT', nul);
    await refused(academic.createRoom(em(), { termId: term.id, code: 'R2', name: 'Hall\u007f', capacity: 30 }), 'BAD_USER_INPUT', /^name must not contain control characters \(found U\+007F\)/);
    await refused(academic.updateRoom(em(), room.id, { code: 'R\u0000' }), 'BAD_USER_INPUT', nul);
    await refused(academic.createCourse(em(), { termId: term.id, code: 'C2', name: 'Line\nbreak', teacherId: teacher.id, lecturesPerWeek: 1, minWorkingDays: 1, students: 5 }), 'BAD_USER_INPUT', /^name must not contain control characters \(found U\+000A\)/);
    await refused(academic.updateCourse(em(), course.id, { name: '\u0000' }), 'BAD_USER_INPUT', nul);
    await refused(academic.createCurriculum(em(), { termId: term.id, code: 'Q\u0000', courseIds: [] }), 'BAD_USER_INPUT', nul);
    await refused(academic.updateCurriculum(em(), curriculum.id, { name: 'First\u0000year' }), 'BAD_USER_INPUT', nul);
    // Blanks at either end are trimmed as before; inside a name a space is fine.
    expect(await academic.updateTeacher(em(), teacher.id, { name: '  Wang Wei\n' })).toMatchObject({ name: 'Wang Wei' });
    expect(await counts()).toEqual(before);
  });
});

describe('two edits racing for one code', () => {
  it('the one that commits second gets CONFLICT, as when the code was taken before it looked', async () => {
    const term = await academic.createTerm(em(), { code: 'T-RACE', name: 'Race', daysPerWeek: 5, periodsPerDay: 4 });
    // The first edit's row, written and not yet committed: the second's check does not see it,
    // and its insert waits on the unique index until the first commits.
    const first = new pg.Client({ connectionString: ctx.db.url });
    await first.connect();
    try {
      await first.query('BEGIN');
      await first.query('INSERT INTO academic_teachers (id, term_id, code, name) VALUES ($1, $2, $3, $3)', [randomUUID(), term.id, 'T-SAME']);
      const second = academic.createTeacher(em(), { termId: term.id, code: 'T-SAME' });
      second.catch(() => undefined); // judged below; not an unhandled rejection should the wait fail first
      await untilWaitingOnTransaction(ctx.db.pool, 'the second insert waiting on the first');
      await first.query('COMMIT');
      await refused(second, 'CONFLICT', /^The term already has a teacher with code T-SAME$/);
    } finally {
      await first.end();
    }
    expect(await em().count(Teacher, { term: term.id, code: 'T-SAME' })).toBe(1);
  });

  it("raises the term's revision with each change a timetable is computed from, not with names or codes", async () => {
    const term = await academic.createTerm(em(), { code: 'T-REV', name: 'Revisions', daysPerWeek: 5, periodsPerDay: 4 });
    const revision = async () => (await em().findOneOrFail(AcademicTerm, { id: term.id })).revision;
    let last = await revision();
    /** Runs the write; says whether the revision grew (by one). */
    const raises = async (write: () => Promise<unknown>): Promise<boolean> => {
      await write();
      const now = await revision();
      const grew = now === last + 1;
      expect([last, last + 1]).toContain(now);
      last = now;
      return grew;
    };
    const teacher = await academic.createTeacher(em(), { termId: term.id, code: 'T1' });
    const other = await academic.createTeacher(em(), { termId: term.id, code: 'T2' });
    expect(await revision()).toBe(last); // a teacher with no course changes no timetable
    let room!: Room;
    expect(await raises(async () => (room = await academic.createRoom(em(), { termId: term.id, code: 'R1', capacity: 30 })))).toBe(true);
    let course!: Course;
    expect(await raises(async () => (course = await academic.createCourse(em(), { termId: term.id, code: 'C1', teacherId: teacher.id, lecturesPerWeek: 3, minWorkingDays: 2, students: 20 })))).toBe(true);
    let curriculum!: Curriculum;
    expect(await raises(async () => (curriculum = await academic.createCurriculum(em(), { termId: term.id, code: 'Q1', courseIds: [course.id] })))).toBe(true);
    let unavailable!: Unavailability;
    expect(await raises(async () => (unavailable = await academic.addUnavailability(em(), { courseId: course.id, day: 0, period: 0 })))).toBe(true);
    expect(await raises(() => academic.addUnavailability(em(), { courseId: course.id, day: 0, period: 0 }))).toBe(false); // already there

    expect(await raises(() => academic.updateTerm(em(), term.id, { name: 'Renamed', code: 'T-REV2' }))).toBe(false);
    expect(await raises(() => academic.updateTerm(em(), term.id, { periodsPerDay: 5 }))).toBe(true);
    expect(await raises(() => academic.updateRoom(em(), room.id, { code: 'R1b', name: 'Hall' }))).toBe(false);
    expect(await raises(() => academic.updateRoom(em(), room.id, { capacity: 30 }))).toBe(false); // the same capacity
    expect(await raises(() => academic.updateRoom(em(), room.id, { capacity: 40 }))).toBe(true);
    expect(await raises(() => academic.updateCourse(em(), course.id, { code: 'C1b', name: 'Algebra' }))).toBe(false);
    expect(await raises(() => academic.updateCourse(em(), course.id, { students: 25 }))).toBe(true);
    expect(await raises(() => academic.updateCourse(em(), course.id, { teacherId: other.id }))).toBe(true);
    expect(await raises(() => academic.updateCurriculum(em(), curriculum.id, { name: 'First year' }))).toBe(false);
    expect(await raises(() => academic.updateCurriculum(em(), curriculum.id, { courseIds: [] }))).toBe(true);
    expect(await raises(() => academic.updateTeacher(em(), teacher.id, { name: 'Wang Wei' }))).toBe(false);
    expect(await raises(() => academic.removeUnavailability(em(), unavailable.id))).toBe(true);
    expect(await raises(() => academic.deleteCurriculum(em(), curriculum.id))).toBe(true);
    expect(await raises(() => academic.deleteCourse(em(), course.id))).toBe(true);
    expect(await raises(() => academic.deleteRoom(em(), room.id))).toBe(true);
    // A refused change leaves the revision as it was.
    expect(await raises(() => academic.createRoom(em(), { termId: term.id, code: 'R2', capacity: 0 }).catch(() => null))).toBe(false);
  });
});
