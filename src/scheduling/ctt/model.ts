/**
 * The curriculum-based course-timetabling (CB-CTT, ITC-2007 track 3 "UD2") problem,
 * independent of any file format or database.
 *
 * Two shapes live here:
 *  - `CttModel`: plain data keyed by codes. It is what callers build (from the `.ctt`
 *    parser or from the academic database) and what crosses a worker boundary.
 *  - `CttInstance`: the same problem compiled to integer indices and flat typed arrays,
 *    validated once, so that the evaluator and the solver never look up strings.
 */

export interface CttCourse {
  /** Course code, unique (the `.ctt` CourseID). */
  code: string;
  /** Teacher code: two courses with the same teacher may not share a period. */
  teacher: string;
  /** Number of weekly lectures; each must go in a distinct period. */
  lectures: number;
  /** Soft: lectures should spread over at least this many distinct days. */
  minWorkingDays: number;
  /** Enrolled students, compared with room capacity (soft). */
  students: number;
}

export interface CttRoom {
  code: string;
  capacity: number;
}

export interface CttCurriculum {
  code: string;
  /** Course codes; lectures of these courses may not share a period. */
  courses: string[];
}

/** The course may not be taught at (day, period); both 0-based. */
export interface CttCourseUnavailability {
  course: string;
  day: number;
  period: number;
}

/**
 * The teacher is away at (day, period). The ITC format has no such line, but the
 * office's data does; it is expanded to every course of that teacher.
 */
export interface CttTeacherUnavailability {
  teacher: string;
  day: number;
  period: number;
}

/**
 * A lecture fixed by a person (e.g. a published slot). The solver keeps it exactly here.
 * `lecture` (0-based, < course.lectures) names which lecture; lectures of one course are
 * interchangeable, so it only matters for duplicate detection and may be omitted.
 */
export interface CttLockedAssignment {
  course: string;
  lecture?: number;
  day: number;
  period: number;
  room: string;
}

export interface CttModel {
  name: string;
  days: number;
  periodsPerDay: number;
  courses: CttCourse[];
  rooms: CttRoom[];
  curricula: CttCurriculum[];
  unavailable: CttCourseUnavailability[];
  teacherUnavailable?: CttTeacherUnavailability[];
  locked?: CttLockedAssignment[];
}

/** One placed lecture, by codes; day and period are 0-based. */
export interface CttAssignment {
  course: string;
  day: number;
  period: number;
  room: string;
}

/** The model is inconsistent (unknown code, duplicate, out-of-range value, clashing locks). */
export class CttModelError extends Error {
  override readonly name = 'CttModelError';
}

/**
 * The compiled problem. Periods are numbered `day * periodsPerDay + period`.
 * Lectures are numbered course by course: the lectures of course c are
 * `courseFirstLecture[c] .. courseFirstLecture[c] + courseLectures[c] - 1`.
 */
export interface CttInstance {
  model: CttModel;
  days: number;
  periodsPerDay: number;
  periods: number;
  courseCount: number;
  roomCount: number;
  curriculumCount: number;
  teacherCount: number;
  lectureCount: number;
  courseIndex: Map<string, number>;
  roomIndex: Map<string, number>;
  courseCodes: string[];
  roomCodes: string[];
  courseTeacher: Int32Array;
  courseLectures: Int32Array;
  courseMinDays: Int32Array;
  courseStudents: Int32Array;
  courseFirstLecture: Int32Array;
  roomCapacity: Int32Array;
  /** Curricula of each course (CSR: `courseCurricula.slice(start[c], start[c+1])`). */
  courseCurriculaStart: Int32Array;
  courseCurricula: Int32Array;
  /** Member courses of each curriculum (CSR). */
  curriculumCoursesStart: Int32Array;
  curriculumCourses: Int32Array;
  /** `unavailable[c * periods + p] === 1` when course c may not be taught in period p. */
  unavailable: Uint8Array;
  /** `conflict[c1 * courseCount + c2] === 1` when the courses share a curriculum or a teacher. */
  conflict: Uint8Array;
  lectureCourse: Int32Array;
  /** Per lecture: locked period or -1. */
  lockedPeriod: Int32Array;
  /** Per lecture: locked room or -1. */
  lockedRoom: Int32Array;
}

function checkInt(value: unknown, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new CttModelError(`${what} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

/** Validates the model and compiles it to indices. Throws `CttModelError` with a readable message. */
export function compileModel(model: CttModel): CttInstance {
  const days = checkInt(model.days, 'days', 1);
  const periodsPerDay = checkInt(model.periodsPerDay, 'periodsPerDay', 1);
  const periods = days * periodsPerDay;
  const courseCount = model.courses.length;
  const roomCount = model.rooms.length;
  const curriculumCount = model.curricula.length;
  if (roomCount === 0 && model.courses.some((c) => c.lectures > 0)) {
    throw new CttModelError('there are lectures to place but no rooms');
  }

  const courseIndex = new Map<string, number>();
  const teacherIndex = new Map<string, number>();
  const courseTeacher = new Int32Array(courseCount);
  const courseLectures = new Int32Array(courseCount);
  const courseMinDays = new Int32Array(courseCount);
  const courseStudents = new Int32Array(courseCount);
  const courseFirstLecture = new Int32Array(courseCount + 1);
  model.courses.forEach((c, i) => {
    if (courseIndex.has(c.code)) throw new CttModelError(`course ${c.code} is declared twice`);
    courseIndex.set(c.code, i);
    if (!teacherIndex.has(c.teacher)) teacherIndex.set(c.teacher, teacherIndex.size);
    courseTeacher[i] = teacherIndex.get(c.teacher)!;
    courseLectures[i] = checkInt(c.lectures, `course ${c.code} lectures`, 1, periods);
    courseMinDays[i] = checkInt(c.minWorkingDays, `course ${c.code} minWorkingDays`, 0);
    courseStudents[i] = checkInt(c.students, `course ${c.code} students`, 0);
    courseFirstLecture[i + 1] = courseFirstLecture[i] + courseLectures[i];
  });
  const lectureCount = courseFirstLecture[courseCount];
  if (lectureCount > periods * roomCount) {
    throw new CttModelError(`${lectureCount} lectures cannot fit in ${periods} periods x ${roomCount} rooms`);
  }
  const lectureCourse = new Int32Array(lectureCount);
  for (let c = 0; c < courseCount; c++) {
    for (let l = courseFirstLecture[c]; l < courseFirstLecture[c + 1]; l++) lectureCourse[l] = c;
  }

  const roomIndex = new Map<string, number>();
  const roomCapacity = new Int32Array(roomCount);
  model.rooms.forEach((r, i) => {
    if (roomIndex.has(r.code)) throw new CttModelError(`room ${r.code} is declared twice`);
    roomIndex.set(r.code, i);
    roomCapacity[i] = checkInt(r.capacity, `room ${r.code} capacity`, 0);
  });

  const lookupCourse = (code: string, where: string): number => {
    const c = courseIndex.get(code);
    if (c === undefined) throw new CttModelError(`${where}: unknown course ${code}`);
    return c;
  };

  // Curricula, both directions, as CSR arrays. A course listed twice in a curriculum counts once.
  const curriculumMembers: number[][] = model.curricula.map((q) => {
    const set = new Set<number>();
    for (const code of q.courses) set.add(lookupCourse(code, `curriculum ${q.code}`));
    return [...set];
  });
  const seenCurricula = new Set<string>();
  for (const q of model.curricula) {
    if (seenCurricula.has(q.code)) throw new CttModelError(`curriculum ${q.code} is declared twice`);
    seenCurricula.add(q.code);
  }
  const curriculumCoursesStart = new Int32Array(curriculumCount + 1);
  curriculumMembers.forEach((m, q) => (curriculumCoursesStart[q + 1] = curriculumCoursesStart[q] + m.length));
  const curriculumCourses = Int32Array.from(curriculumMembers.flat());
  const perCourse: number[][] = Array.from({ length: courseCount }, () => []);
  curriculumMembers.forEach((m, q) => m.forEach((c) => perCourse[c].push(q)));
  const courseCurriculaStart = new Int32Array(courseCount + 1);
  perCourse.forEach((qs, c) => (courseCurriculaStart[c + 1] = courseCurriculaStart[c] + qs.length));
  const courseCurricula = Int32Array.from(perCourse.flat());

  const conflict = new Uint8Array(courseCount * courseCount);
  for (const m of curriculumMembers) {
    for (const a of m) for (const b of m) if (a !== b) conflict[a * courseCount + b] = 1;
  }
  for (let a = 0; a < courseCount; a++) {
    for (let b = 0; b < courseCount; b++) {
      if (a !== b && courseTeacher[a] === courseTeacher[b]) conflict[a * courseCount + b] = 1;
    }
  }

  const checkSlot = (day: number, period: number, where: string): number => {
    checkInt(day, `${where}: day`, 0, days - 1);
    checkInt(period, `${where}: period`, 0, periodsPerDay - 1);
    return day * periodsPerDay + period;
  };
  const unavailable = new Uint8Array(courseCount * periods);
  for (const u of model.unavailable) {
    const c = lookupCourse(u.course, 'unavailability');
    unavailable[c * periods + checkSlot(u.day, u.period, `unavailability of ${u.course}`)] = 1;
  }
  for (const u of model.teacherUnavailable ?? []) {
    const t = teacherIndex.get(u.teacher);
    const p = checkSlot(u.day, u.period, `unavailability of teacher ${u.teacher}`);
    // A teacher with no course in this term constrains nothing; that is not an error.
    if (t === undefined) continue;
    for (let c = 0; c < courseCount; c++) if (courseTeacher[c] === t) unavailable[c * periods + p] = 1;
  }

  // Locks: give each one a concrete lecture of its course (the named one, else the next free).
  const lockedPeriod = new Int32Array(lectureCount).fill(-1);
  const lockedRoom = new Int32Array(lectureCount).fill(-1);
  const slotOwner = new Map<number, string>();
  const locks = model.locked ?? [];
  const ordered = [...locks.filter((l) => l.lecture !== undefined), ...locks.filter((l) => l.lecture === undefined)];
  for (const lock of ordered) {
    const where = `locked assignment of ${lock.course}`;
    const c = lookupCourse(lock.course, 'locked assignment');
    const p = checkSlot(lock.day, lock.period, where);
    const r = roomIndex.get(lock.room);
    if (r === undefined) throw new CttModelError(`${where}: unknown room ${lock.room}`);
    let l: number;
    if (lock.lecture !== undefined) {
      checkInt(lock.lecture, `${where}: lecture`, 0, courseLectures[c] - 1);
      l = courseFirstLecture[c] + lock.lecture;
      if (lockedPeriod[l] >= 0) throw new CttModelError(`${where}: lecture ${lock.lecture} is locked twice`);
    } else {
      l = -1;
      for (let k = courseFirstLecture[c]; k < courseFirstLecture[c + 1]; k++) {
        if (lockedPeriod[k] < 0) {
          l = k;
          break;
        }
      }
      if (l < 0) throw new CttModelError(`${where}: more locks than the course's ${courseLectures[c]} lectures`);
    }
    for (let k = courseFirstLecture[c]; k < courseFirstLecture[c + 1]; k++) {
      if (lockedPeriod[k] === p) throw new CttModelError(`${where}: two lectures locked at day ${lock.day} period ${lock.period}`);
    }
    const slot = p * roomCount + r;
    const other = slotOwner.get(slot);
    if (other !== undefined) {
      throw new CttModelError(`${where}: room ${lock.room} at day ${lock.day} period ${lock.period} is already locked for ${other}`);
    }
    slotOwner.set(slot, lock.course);
    lockedPeriod[l] = p;
    lockedRoom[l] = r;
  }

  return {
    model,
    days,
    periodsPerDay,
    periods,
    courseCount,
    roomCount,
    curriculumCount,
    teacherCount: teacherIndex.size,
    lectureCount,
    courseIndex,
    roomIndex,
    courseCodes: model.courses.map((c) => c.code),
    roomCodes: model.rooms.map((r) => r.code),
    courseTeacher,
    courseLectures,
    courseMinDays,
    courseStudents,
    courseFirstLecture,
    roomCapacity,
    courseCurriculaStart,
    courseCurricula,
    curriculumCoursesStart,
    curriculumCourses,
    unavailable,
    conflict,
    lectureCourse,
    lockedPeriod,
    lockedRoom,
  };
}
