/**
 * A plan's lecture joined with what the grid shows of it: the course, its teacher, the
 * room and the class groups (curricula) taking the course. The API sends assignments
 * with ids only (a cheap page); the term's pages supply the rest.
 */
export interface Named {
  id: string;
  code: string;
  name: string;
}

export interface PlanLecture {
  assignmentId: string;
  day: number;
  period: number;
  lectureIndex: number;
  locked: boolean;
  course: Named;
  teacher: Named;
  room: Named;
  /** Ids of the curricula whose courses include this lecture's course. */
  curriculumIds: readonly string[];
}

export interface AssignmentRow {
  id: string;
  day: number;
  period: number;
  lectureIndex: number;
  locked: boolean;
  course: { id: string };
  room: { id: string };
}

export interface TermResources {
  teachers: readonly Named[];
  rooms: readonly Named[];
  courses: readonly (Named & { teacher: { id: string } })[];
  curricula: readonly (Named & { courseIds: readonly string[] })[];
}

const unknown = (id: string): Named => ({ id, code: `#${id}`, name: '' });

/** Joins assignments with the term; a reference the pages did not hold shows as `#id` rather than vanish. */
export function joinPlanLectures(assignments: readonly AssignmentRow[], term: TermResources): PlanLecture[] {
  const teachers = new Map(term.teachers.map((t) => [t.id, t]));
  const rooms = new Map(term.rooms.map((r) => [r.id, r]));
  const courses = new Map(term.courses.map((c) => [c.id, c]));
  const curriculaOfCourse = new Map<string, string[]>();
  for (const curriculum of term.curricula) {
    for (const courseId of curriculum.courseIds) {
      const list = curriculaOfCourse.get(courseId) ?? [];
      list.push(curriculum.id);
      curriculaOfCourse.set(courseId, list);
    }
  }
  return assignments.map((a) => {
    const course = courses.get(a.course.id);
    return {
      assignmentId: a.id,
      day: a.day,
      period: a.period,
      lectureIndex: a.lectureIndex,
      locked: a.locked,
      course: course ? { id: course.id, code: course.code, name: course.name } : unknown(a.course.id),
      teacher: course ? (teachers.get(course.teacher.id) ?? unknown(course.teacher.id)) : unknown(`?${a.course.id}`),
      room: rooms.get(a.room.id) ?? unknown(a.room.id),
      curriculumIds: curriculaOfCourse.get(a.course.id) ?? [],
    };
  });
}
