/**
 * Reads everything about a term that scheduling needs, in a few set-based queries,
 * and turns it into the solver's `CttModel` (by codes).
 */
import { IsolationLevel } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AcademicTerm, Course, Curriculum, Room, Teacher, Unavailability } from '../academic/entities';
import { notFound } from '../errors';
import type { CttLockedAssignment, CttModel } from './ctt/model';
import { ScheduleAssignment } from './entities';

export interface TermData {
  term: AcademicTerm;
  teachers: Teacher[];
  rooms: Room[];
  courses: Course[];
  curricula: { id: string; code: string; name: string; courseIds: string[] }[];
  courseUnavailable: { courseId: string; day: number; period: number }[];
  teacherUnavailable: { teacherId: string; day: number; period: number }[];
}

/**
 * Runs `read` on one snapshot of the database. A term's data and a plan's lectures are
 * read statement by statement: a room created, and a lecture placed in it, between two
 * of them would leave a lecture in a room the term's list lacks (a failed look-up, an
 * internal error). Inside a transaction the caller's own locks keep what it reads still
 * (every write a timetable is computed from locks the term's row), so `read` runs there.
 */
export async function onOneSnapshot<T>(em: EntityManager, read: (em: EntityManager) => Promise<T>): Promise<T> {
  if (em.isInTransaction()) return read(em);
  return em.transactional(read, { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true });
}

export async function loadTermData(em: EntityManager, termId: string): Promise<TermData> {
  const term = await em.findOne(AcademicTerm, { id: termId });
  if (!term) throw notFound(`No academic term with id ${termId}`, { termId });
  // One query after another: inside a transaction they share one connection.
  const teachers = await em.find(Teacher, { term }, { orderBy: { code: 'asc' } });
  const rooms = await em.find(Room, { term }, { orderBy: { code: 'asc' } });
  const courses = await em.find(Course, { term }, { orderBy: { code: 'asc' } });
  const curricula = await em.find(Curriculum, { term }, { orderBy: { code: 'asc' } });
  const unavailable = await em.find(Unavailability, { term });
  const members = await em
    .getConnection()
    .execute<{ curriculum_id: string; course_id: string }[]>(
      `SELECT cc.curriculum_id, cc.course_id FROM academic_curriculum_courses cc
       JOIN academic_curricula q ON q.id = cc.curriculum_id WHERE q.term_id = ?`,
      [term.id],
      'all',
      em.getTransactionContext(),
    );
  const byCurriculum = new Map<string, string[]>();
  for (const m of members) {
    const list = byCurriculum.get(m.curriculum_id) ?? [];
    list.push(m.course_id);
    byCurriculum.set(m.curriculum_id, list);
  }
  return {
    term,
    teachers,
    rooms,
    courses,
    curricula: curricula.map((q) => ({ id: q.id, code: q.code, name: q.name, courseIds: byCurriculum.get(q.id) ?? [] })),
    courseUnavailable: unavailable.filter((u) => u.course).map((u) => ({ courseId: u.course!.id, day: u.day, period: u.period })),
    teacherUnavailable: unavailable.filter((u) => u.teacher).map((u) => ({ teacherId: u.teacher!.id, day: u.day, period: u.period })),
  };
}

/** Id → code look-ups of a term's data. */
export function codesOf(data: TermData) {
  return {
    course: new Map(data.courses.map((c) => [c.id, c])),
    room: new Map(data.rooms.map((r) => [r.id, r])),
    teacher: new Map(data.teachers.map((t) => [t.id, t])),
    courseByCode: new Map(data.courses.map((c) => [c.code, c])),
    roomByCode: new Map(data.rooms.map((r) => [r.code, r])),
  };
}

/** The solver's model of a term, by the term's codes, with its locked assignments. */
export function buildCttModel(data: TermData, locked: readonly Pick<ScheduleAssignment, 'course' | 'lectureIndex' | 'day' | 'period' | 'room'>[] = []): CttModel {
  const { course, room, teacher } = codesOf(data);
  return {
    name: data.term.code,
    days: data.term.daysPerWeek,
    periodsPerDay: data.term.periodsPerDay,
    courses: data.courses.map((c) => ({
      code: c.code,
      teacher: teacher.get(c.teacher.id)!.code,
      lectures: c.lecturesPerWeek,
      minWorkingDays: c.minWorkingDays,
      students: c.students,
    })),
    rooms: data.rooms.map((r) => ({ code: r.code, capacity: r.capacity })),
    curricula: data.curricula.map((q) => ({ code: q.code, courses: q.courseIds.map((id) => course.get(id)!.code) })),
    unavailable: data.courseUnavailable.map((u) => ({ course: course.get(u.courseId)!.code, day: u.day, period: u.period })),
    teacherUnavailable: data.teacherUnavailable.map((u) => ({ teacher: teacher.get(u.teacherId)!.code, day: u.day, period: u.period })),
    locked: locked.map(
      (a): CttLockedAssignment => ({
        course: course.get(a.course.id)!.code,
        lecture: a.lectureIndex,
        day: a.day,
        period: a.period,
        room: room.get(a.room.id)!.code,
      }),
    ),
  };
}
