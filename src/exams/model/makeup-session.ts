/**
 * A term's make-up session as the office describes it, compiled to an `ExamModel`: every
 * course with at least one failing student becomes one exam, sat by exactly the students
 * who failed it.
 *
 * "Failing" is a recorded score below the passing score; an enrolment without a score
 * (not graded yet, or withdrawn) is not a failure. Constraints that name a course with no
 * make-up exam are dropped: there is nothing to keep apart or together.
 */
import { ExamCapacityMode, type ExamInvigilator, type ExamModel, type ExamPeriod, type ExamRoom, type PeriodConstraint } from './exam-model';
import { ExamModelError } from './exam-model-error';
import type { ExamWeightings } from './weightings';

/** The score a student needs to pass a course when the session does not say. */
export const DEFAULT_PASSING_SCORE = 60;

export interface MakeupCourse {
  code: string;
  /** Minutes of the make-up exam; null or absent: the session's default. */
  examDuration?: number | null;
  /** The exam needs a room to itself. */
  roomExclusive?: boolean;
}

export interface MakeupEnrolment {
  student: string;
  course: string;
  /** Null: no score recorded. */
  score: number | null;
}

export interface MakeupSession {
  name: string;
  passingScore?: number;
  /** Minutes of an exam whose course names none. */
  defaultExamDuration: number;
  periods: ExamPeriod[];
  rooms: ExamRoom[];
  invigilators: ExamInvigilator[];
  courses: MakeupCourse[];
  enrolments: MakeupEnrolment[];
  /** Between courses (their make-up exams). */
  constraints: PeriodConstraint[];
  weightings: ExamWeightings;
}

/** The exams of a session (courses with failing students, in course order) and its model. */
export function compileMakeupSession(session: MakeupSession): ExamModel {
  const passing = session.passingScore ?? DEFAULT_PASSING_SCORE;
  if (typeof passing !== 'number' || !Number.isFinite(passing)) throw new ExamModelError(`passingScore must be a number, got ${String(passing)}`);
  const courses = new Map<string, MakeupCourse>();
  for (const c of session.courses) {
    if (courses.has(c.code)) throw new ExamModelError(`course ${c.code} is listed twice`);
    courses.set(c.code, c);
  }
  const failing = new Map<string, Set<string>>();
  for (const e of session.enrolments) {
    if (!courses.has(e.course)) throw new ExamModelError(`student ${e.student} is enrolled in unknown course ${e.course}`);
    if (e.score === null || e.score >= passing) continue;
    let students = failing.get(e.course);
    if (!students) failing.set(e.course, (students = new Set()));
    students.add(e.student);
  }
  const exams = session.courses
    .filter((c) => failing.has(c.code))
    .map((c) => ({
      code: c.code,
      duration: c.examDuration ?? session.defaultExamDuration,
      students: [...failing.get(c.code)!],
      roomExclusive: c.roomExclusive ?? false,
    }));
  for (const c of session.constraints) {
    for (const code of [c.first, c.second]) if (!courses.has(code)) throw new ExamModelError(`a ${c.kind} constraint names unknown course ${code}`);
  }
  return {
    name: session.name,
    capacity: ExamCapacityMode.Capacitated,
    roomSplitting: true,
    periods: session.periods,
    rooms: session.rooms,
    exams,
    constraints: session.constraints.filter((c) => failing.has(c.first) && failing.has(c.second)),
    weightings: session.weightings,
    invigilators: session.invigilators,
  };
}
