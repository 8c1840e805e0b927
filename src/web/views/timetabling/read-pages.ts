/**
 * Reads a keyset-paged list to its end: the API's lists take `first` (1–500) and
 * `after` (the id of the previous page's last row), and a page shorter than `first` is
 * the last. Bounded: a list longer than `maxRows` is an error, not a tab that eats the
 * browser's memory, and a page that does not move past its cursor stops the loop.
 */
export async function readAllPages<T extends { id: string }>(
  fetchPage: (first: number, after: string | null) => Promise<readonly T[]>,
  pageSize: number,
  maxRows = 50_000,
): Promise<T[]> {
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 500) throw new RangeError(`page size must be 1–500, got ${pageSize}`);
  const rows: T[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await fetchPage(pageSize, after);
    rows.push(...page);
    if (rows.length > maxRows) throw new RangeError(`the list has more than ${maxRows} rows`);
    if (page.length < pageSize) return rows;
    const last = page[page.length - 1]!.id;
    if (last === after) throw new Error(`the page after ${after} did not move past it`);
    after = last;
  }
}

/**
 * Page sizes that keep each query within the API's default cost limit (1,000: a page
 * costs `first` × a row's objects, see the README's "Cost and limits").
 */
export const PAGE_SIZE = {
  /** 2 a row (the term, its published plan). */
  terms: 400,
  plans: 500,
  teachers: 500,
  rooms: 500,
  /** 2 a row (the course, its teacher). */
  courses: 450,
  /** 1 + CURRICULUM_COURSES a row. */
  curricula: 30,
  curriculumCourses: 30,
  /** Curricula with one course id each, for their names (2 a row). */
  curriculumNames: 400,
  /** 3 a row (the lecture, its course, its room). */
  assignments: 300,
  published: 500,
  conflicts: 100,
} as const;

export interface CurriculumRow {
  id: string;
  code: string;
  name: string;
  courses: readonly { id: string }[];
}

/**
 * A term's curricula with all their course ids: pages of curricula, each with its first
 * `coursesPerCurriculum` courses; a curriculum that filled them is read on alone
 * (`fetchMoreCourses(curriculum before it, last course id)`) until its list ends.
 */
export async function readCurricula(
  fetchPage: (first: number, after: string | null, coursesPerCurriculum: number) => Promise<readonly CurriculumRow[]>,
  fetchMoreCourses: (before: string | null, afterCourse: string, first: number) => Promise<readonly { id: string }[]>,
  pageSize: number = PAGE_SIZE.curricula,
  coursesPerCurriculum: number = PAGE_SIZE.curriculumCourses,
  moreCoursesPage = 500,
): Promise<{ id: string; code: string; name: string; courseIds: string[] }[]> {
  const curricula = await readAllPages((first, after) => fetchPage(first, after, coursesPerCurriculum), pageSize);
  const result = [];
  for (let i = 0; i < curricula.length; i++) {
    const curriculum = curricula[i]!;
    const courseIds = curriculum.courses.map((c) => c.id);
    if (courseIds.length >= coursesPerCurriculum) {
      const before = i === 0 ? null : curricula[i - 1]!.id;
      const rest = await readAllPages(async (first, after) => fetchMoreCourses(before, after ?? courseIds[courseIds.length - 1]!, first), moreCoursesPage);
      courseIds.push(...rest.map((c) => c.id));
    }
    result.push({ id: curriculum.id, code: curriculum.code, name: curriculum.name, courseIds });
  }
  return result;
}
