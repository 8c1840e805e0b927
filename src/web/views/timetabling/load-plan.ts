/**
 * Reads what a plan's grid needs over the public API: the plan and its term's week,
 * the term's teachers, rooms, courses and curricula, and the plan's lectures, each a
 * keyset page at a time (see read-pages.ts), then joins them (plan-lecture.ts).
 */
import { ApiError, request } from '../../api/client';
import {
  TimetablingCurriculumCoursesDocument,
  TimetablingPlanAssignmentsDocument,
  TimetablingPlanDocument,
  TimetablingTermCoursesDocument,
  TimetablingTermCurriculaDocument,
  TimetablingTermRoomsDocument,
  TimetablingTermTeachersDocument,
  type TimetablingPlanQuery,
} from '../../api/generated/graphql';
import { joinPlanLectures, type AssignmentRow, type Named, type PlanLecture, type TermResources } from './plan-lecture';
import { PAGE_SIZE, readAllPages, readCurricula } from './read-pages';

export type PlanHeader = NonNullable<TimetablingPlanQuery['schedulePlan']>;

const missing = (what: string, id: string) => new ApiError('NOT_FOUND', `No ${what} with id ${id}`);

export async function loadPlanHeader(planId: string): Promise<PlanHeader> {
  const { schedulePlan } = await request(TimetablingPlanDocument, { planId });
  if (!schedulePlan) throw missing('plan', planId);
  return schedulePlan;
}

export async function loadTeachers(termId: string): Promise<Named[]> {
  return readAllPages(async (first, after) => {
    const { term } = await request(TimetablingTermTeachersDocument, { termId, first, after });
    if (!term) throw missing('term', termId);
    return term.teachers;
  }, PAGE_SIZE.teachers);
}

export async function loadRooms(termId: string): Promise<Named[]> {
  return readAllPages(async (first, after) => {
    const { term } = await request(TimetablingTermRoomsDocument, { termId, first, after });
    if (!term) throw missing('term', termId);
    return term.rooms;
  }, PAGE_SIZE.rooms);
}

/** The curricula with their course ids (`withCourses` false: names only, one course id each). */
export async function loadCurricula(termId: string, withCourses = true): Promise<(Named & { courseIds: readonly string[] })[]> {
  const page = async (first: number, after: string | null, courses: number) => {
    const { term } = await request(TimetablingTermCurriculaDocument, { termId, first, after, courses });
    if (!term) throw missing('term', termId);
    return term.curricula;
  };
  if (!withCourses) {
    const rows = await readAllPages((first, after) => page(first, after, 1), PAGE_SIZE.curriculumNames);
    return rows.map(({ id, code, name }) => ({ id, code, name, courseIds: [] }));
  }
  return readCurricula(page, async (before, afterCourse, first) => {
    const { term } = await request(TimetablingCurriculumCoursesDocument, { termId, before, afterCourse, first });
    if (!term) throw missing('term', termId);
    return term.curricula[0]?.courses ?? [];
  });
}

export async function loadTermResources(termId: string): Promise<TermResources> {
  const [teachers, rooms, courses, curricula] = await Promise.all([
    loadTeachers(termId),
    loadRooms(termId),
    readAllPages(async (first, after) => {
      const { term } = await request(TimetablingTermCoursesDocument, { termId, first, after });
      if (!term) throw missing('term', termId);
      return term.courses;
    }, PAGE_SIZE.courses),
    loadCurricula(termId),
  ]);
  return { teachers, rooms, courses, curricula };
}

export async function loadAssignments(planId: string): Promise<AssignmentRow[]> {
  return readAllPages(async (first, after) => {
    const { schedulePlan } = await request(TimetablingPlanAssignmentsDocument, { planId, first, after });
    if (!schedulePlan) throw missing('plan', planId);
    return schedulePlan.assignments;
  }, PAGE_SIZE.assignments);
}

export interface LoadedPlan {
  plan: PlanHeader;
  resources: TermResources;
  lectures: PlanLecture[];
}

export async function loadPlan(planId: string): Promise<LoadedPlan> {
  const plan = await loadPlanHeader(planId);
  const [resources, assignments] = await Promise.all([loadTermResources(plan.term.id), loadAssignments(planId)]);
  return { plan, resources, lectures: joinPlanLectures(assignments, resources) };
}
