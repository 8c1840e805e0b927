/**
 * The Toronto (Carter, Laporte & Lee 1996) benchmark: two whitespace-separated files.
 *
 *   `.crs`  one line per exam: `<examId> <students>` (ids are often zero-padded, `0001`)
 *   `.stu`  one line per student: the ids of the exams that student sits
 *
 * The number of periods is not in the files; the literature fixes it per instance. The
 * benchmark is uncapacitated: no rooms, no durations, and the only cost is the proximity
 * cost. Empty `.stu` lines (a few published files have them) are not students. The
 * student count in the `.crs` is informational: the older "version II" files disagree with
 * their own `.stu`, so the `.stu` is what counts.
 */
import { ExamCapacityMode, type ExamModel, type ExamPeriod } from '../model/exam-model';
import { ExamModelError } from '../model/exam-model-error';
import { validateModel } from '../model/validate-model';
import { TORONTO_WEIGHTS } from '../model/weightings';
import { ExamFormatError, textLines } from './exam-format-error';

export interface TorontoParseOptions {
  /** Name the files in errors. Defaults `.crs` and `.stu`. */
  coursesFile?: string;
  studentsFile?: string;
  /** The model's name. Default: the `.crs` file name without its extension. */
  name?: string;
}

/** The largest period count accepted: far above any instance (the largest uses 42). */
export const MAX_TORONTO_PERIODS = 1000;

/**
 * Parses a Toronto instance into an uncapacitated model with `periods` periods. Throws
 * `ExamFormatError` (file and line) for malformed text and `ExamModelError` for a bad
 * period count.
 */
export function parseToronto(coursesText: string, studentsText: string, periods: number, options: TorontoParseOptions = {}): ExamModel {
  const crs = options.coursesFile ?? '.crs';
  const stu = options.studentsFile ?? '.stu';
  if (!Number.isInteger(periods) || periods < 1 || periods > MAX_TORONTO_PERIODS) {
    throw new ExamModelError(`periods must be a whole number in 1..${MAX_TORONTO_PERIODS}, got ${String(periods)}`);
  }
  const codes: string[] = [];
  const index = new Map<string, number>();
  const declaredLine = new Map<string, number>();
  textLines(coursesText).forEach((raw, i) => {
    const line = i + 1;
    const t = raw.trim().split(/\s+/).filter((x) => x.length > 0);
    if (t.length === 0) return;
    if (t.length !== 2) throw new ExamFormatError(crs, line, `expected "<examId> <students>", found ${t.length} fields`);
    const [id, count] = t;
    if (!/^\d+$/.test(count)) throw new ExamFormatError(crs, line, `the student count of exam ${id} must be a whole number, found "${count}"`);
    if (index.has(id)) throw new ExamFormatError(crs, line, `exam ${id} is listed twice (first on line ${declaredLine.get(id)})`);
    index.set(id, codes.length);
    declaredLine.set(id, line);
    codes.push(id);
  });
  if (codes.length === 0) throw new ExamFormatError(crs, 1, 'no exams: expected one "<examId> <students>" line per exam');

  const students: string[][] = codes.map(() => []);
  let studentCount = 0;
  textLines(studentsText).forEach((raw, i) => {
    const line = i + 1;
    const t = raw.trim().split(/\s+/).filter((x) => x.length > 0);
    if (t.length === 0) return;
    studentCount++;
    const student = String(studentCount);
    for (const id of new Set(t)) {
      const e = index.get(id);
      if (e === undefined) throw new ExamFormatError(stu, line, `exam ${id} is not in ${crs}`);
      students[e].push(student);
    }
  });

  const periodList: ExamPeriod[] = Array.from({ length: periods }, () => ({ date: null, start: null, duration: 0, penalty: 0 }));
  const model: ExamModel = {
    name: options.name ?? crs.replace(/\.[^.]*$/, ''),
    capacity: ExamCapacityMode.Uncapacitated,
    roomSplitting: false,
    periods: periodList,
    rooms: [],
    exams: codes.map((code, e) => ({ code, duration: 0, students: students[e] })),
    constraints: [],
    weightings: { ...TORONTO_WEIGHTS, frontLoad: { ...TORONTO_WEIGHTS.frontLoad } },
  };
  validateModel(model);
  return model;
}

/** Students in a stable order: numerically when every id is a number, else by first appearance. */
function studentsOf(model: ExamModel): { ids: string[]; exams: Map<string, number[]> } {
  const exams = new Map<string, number[]>();
  model.exams.forEach((e, i) => {
    for (const s of new Set(e.students)) {
      let list = exams.get(s);
      if (!list) exams.set(s, (list = []));
      list.push(i);
    }
  });
  const ids = [...exams.keys()];
  if (ids.every((s) => /^\d+$/.test(s))) ids.sort((a, b) => Number(a) - Number(b));
  return { ids, exams };
}

/** Writes the `.crs` of a model: `<examId> <students>` per exam. */
export function formatTorontoCourses(model: ExamModel): string {
  return model.exams.map((e) => `${e.code} ${new Set(e.students).size}\n`).join('');
}

/** Writes the `.stu` of a model: one line per student, its exam ids in exam order. */
export function formatTorontoStudents(model: ExamModel): string {
  const { ids, exams } = studentsOf(model);
  return ids.map((s) => exams.get(s)!.map((i) => model.exams[i].code).join(' ') + '\n').join('');
}
