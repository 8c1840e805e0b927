/**
 * Term make-up sessions for the job and API tests, built through the services as the
 * office would: a generated term, periods, rooms, every teacher as an invigilator, and
 * scores from a seed (the same seed gives the same session).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { listCourses, listTeachers } from '../../src/academic/academic-service';
import type { MakeupExamSession } from '../../src/exams/entities';
import * as sessions from '../../src/exams/session-service';
import { SeededRandom } from '../../src/exams/solver/random';
import { createGeneratedTerm, generateTerm } from '../../src/scheduling/demo-data';

export interface TermSessionSize {
  courses: number;
  students: number;
  coursesPerStudent: number;
  days: number;
  periodsPerDay: number;
  rooms: number;
  /** Share of scores below 60. */
  failRate: number;
}

export const SMALL_SESSION: TermSessionSize = { courses: 12, students: 120, coursesPerStudent: 4, days: 3, periodsPerDay: 3, rooms: 4, failRate: 0.3 };

export async function createTermSession(fork: () => EntityManager, code: string, seed = 1, size: TermSessionSize = SMALL_SESSION): Promise<MakeupExamSession> {
  const rng = new SeededRandom(seed);
  const { term } = await createGeneratedTerm(fork(), generateTerm({ courses: size.courses, rooms: 2, curricula: 2, teachers: Math.max(4, size.rooms + 1), days: 5, periodsPerDay: 4 }, seed, `${code}-TERM`));
  const session = await sessions.createMakeupSession(fork(), { termId: term.id, code });
  const periods = [];
  for (let d = 0; d < size.days; d++) {
    for (let t = 0; t < size.periodsPerDay; t++) {
      periods.push(await sessions.addPeriod(fork(), { sessionId: session.id, date: `2027-01-${String(11 + d).padStart(2, '0')}`, startTime: `${String(8 + 3 * t).padStart(2, '0')}:30`, duration: 120 }));
    }
  }
  for (let r = 0; r < size.rooms; r++) await sessions.addRoom(fork(), { sessionId: session.id, code: `R${r}`, capacity: 20 + 10 * r });
  for (const teacher of await listTeachers(fork(), term.id)) {
    await sessions.setInvigilator(fork(), { sessionId: session.id, teacherId: teacher.id, availablePeriodIds: periods.map((p) => p.id) });
  }
  const courses = await listCourses(fork(), term.id);
  const scores = [];
  for (let s = 0; s < size.students; s++) {
    const taken = new Set<number>();
    while (taken.size < Math.min(size.coursesPerStudent, courses.length)) taken.add(rng.nextInt(courses.length));
    for (const c of taken) {
      const fails = rng.nextFloat() < size.failRate;
      scores.push({ courseId: courses[c].id, studentCode: `S${String(s).padStart(4, '0')}`, score: fails ? 20 + rng.nextInt(40) : 60 + rng.nextInt(41) });
    }
  }
  await sessions.recordScores(fork(), session.id, scores);
  return sessions.findMakeupSession(fork(), session.id);
}
