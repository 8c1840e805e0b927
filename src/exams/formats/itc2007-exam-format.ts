/**
 * The ITC-2007 examination track's instance file (`.exam`):
 *
 *   [Exams:N]                 N lines `duration, student, student, ...` (exam i = line i)
 *   [Periods:P]               P lines `dd:mm:yyyy, hh:mm:ss, duration, penalty`
 *   [Rooms:R]                 R lines `capacity, penalty`
 *   [PeriodHardConstraints]   `e1, EXAM_COINCIDENCE|EXCLUSION|AFTER, e2` (AFTER: e1 after e2)
 *   [RoomHardConstraints]     `e, ROOM_EXCLUSIVE`
 *   [InstitutionalWeightings] TWOINAROW, TWOINADAY, PERIODSPREAD, NONMIXEDDURATIONS, FRONTLOAD
 *
 * Exams and rooms have no names in the format: their codes are their 0-based positions,
 * which is what the solution file (`.sln`) refers to. An exam sits in one room (the
 * competition forbids splitting). Blank lines and trailing commas are tolerated, as are the
 * duplicate and self-referencing constraints of the published files (the model keeps them;
 * the evaluator and solver count each constraint once).
 */
import { ExamCapacityMode, PeriodConstraintKind, type Exam, type ExamModel, type ExamPeriod, type ExamRoom, type PeriodConstraint } from '../model/exam-model';
import { ExamModelError } from '../model/exam-model-error';
import { validateModel } from '../model/validate-model';
import { NO_WEIGHTS, type ExamWeightings } from '../model/weightings';
import { ExamFormatError, textLines } from './exam-format-error';

const SECTIONS = ['Exams', 'Periods', 'Rooms', 'PeriodHardConstraints', 'RoomHardConstraints', 'InstitutionalWeightings'] as const;
type Section = (typeof SECTIONS)[number];
const COUNTED: ReadonlySet<Section> = new Set(['Exams', 'Periods', 'Rooms']);

const KIND_BY_NAME: Record<string, PeriodConstraintKind> = {
  EXAM_COINCIDENCE: PeriodConstraintKind.SamePeriod,
  EXCLUSION: PeriodConstraintKind.DifferentPeriod,
  AFTER: PeriodConstraintKind.After,
};
const NAME_BY_KIND: Record<PeriodConstraintKind, string> = {
  [PeriodConstraintKind.SamePeriod]: 'EXAM_COINCIDENCE',
  [PeriodConstraintKind.DifferentPeriod]: 'EXCLUSION',
  [PeriodConstraintKind.After]: 'AFTER',
};

export interface Itc2007ParseOptions {
  /** Names the file in errors. Default `.exam`. */
  file?: string;
  /** The model's name. Default: the file name without its extension. */
  name?: string;
}

/** Parses a `.exam` instance. Throws `ExamFormatError` (file and line) on malformed input. */
export function parseItc2007Exam(text: string, options: Itc2007ParseOptions = {}): ExamModel {
  const file = options.file ?? '.exam';
  const fail: (line: number, detail: string) => never = (line, detail) => {
    throw new ExamFormatError(file, line, detail);
  };
  const lines = textLines(text);
  const lastLine = Math.max(1, lines.length);

  const int = (token: string, what: string, line: number, min = 0): number => {
    if (!/^[+-]?\d+$/.test(token)) fail(line, `${what} must be a whole number, found "${token}"`);
    const value = Number(token);
    if (!Number.isSafeInteger(value) || value < min) fail(line, `${what} must be at least ${min}, found ${token}`);
    return value;
  };
  const fields = (raw: string, line: number): string[] => {
    const parts = raw.split(',').map((t) => t.trim());
    while (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
    if (parts.some((t) => t === '')) fail(line, 'empty field (two commas in a row?)');
    return parts;
  };

  const exams: Exam[] = [];
  const periods: ExamPeriod[] = [];
  const rooms: ExamRoom[] = [];
  const constraints: PeriodConstraint[] = [];
  const weightings: ExamWeightings = { ...NO_WEIGHTS, frontLoad: { ...NO_WEIGHTS.frontLoad } };
  const exclusive: { exam: number; line: number }[] = [];
  const pendingConstraints: { a: number; b: number; kind: PeriodConstraintKind; line: number }[] = [];
  const seenWeights = new Set<string>();
  const seen = new Map<Section, { line: number; count: number }>();
  let section: Section | null = null;
  let sectionIndex = -1;
  let sectionLine = 0;
  let declared = 0;
  let entries = 0;

  const closeSection = (atLine: number): void => {
    if (section && COUNTED.has(section) && entries !== declared) {
      fail(sectionLine, `[${section}:${declared}] declares ${declared} entries but ${entries} follow (up to line ${atLine})`);
    }
  };

  lines.forEach((raw, i) => {
    const line = i + 1;
    const trimmed = raw.trim();
    if (trimmed === '') return;
    const header = /^\[([A-Za-z]+)(?::\s*([^\]]*))?\]$/.exec(trimmed);
    if (header) {
      const name = header[1] as Section;
      const index = SECTIONS.indexOf(name);
      if (index < 0) fail(line, `unknown section [${header[1]}]`);
      if (seen.has(name)) fail(line, `section [${name}] appears twice (first on line ${seen.get(name)!.line})`);
      if (index < sectionIndex) fail(line, `section [${name}] must come before [${section}]`);
      closeSection(line);
      if (COUNTED.has(name)) {
        if (header[2] === undefined) fail(line, `section [${name}] needs its count, e.g. [${name}:10]`);
        declared = int(header[2].trim(), `the count of [${name}]`, line);
      } else {
        if (header[2] !== undefined) fail(line, `section [${name}] takes no count`);
        declared = 0;
      }
      section = name;
      sectionIndex = index;
      sectionLine = line;
      entries = 0;
      seen.set(name, { line, count: declared });
      return;
    }
    if (section === null) fail(line, 'expected the section header [Exams:N] first');
    entries++;
    if (COUNTED.has(section!) && entries > declared) fail(line, `more entries than [${section}:${declared}] declares`);
    const f = fields(trimmed, line);
    switch (section) {
      case 'Exams': {
        const duration = int(f[0], `the duration of exam ${exams.length}`, line);
        const students: string[] = [];
        const distinct = new Set<string>();
        for (const s of f.slice(1)) {
          int(s, `a student id of exam ${exams.length}`, line);
          if (!distinct.has(s)) students.push(s);
          distinct.add(s);
        }
        exams.push({ code: String(exams.length), duration, students });
        break;
      }
      case 'Periods': {
        if (f.length !== 4) fail(line, `expected "dd:mm:yyyy, hh:mm:ss, duration, penalty", found ${f.length} fields`);
        const date = /^(\d{2}):(\d{2}):(\d{4})$/.exec(f[0]);
        if (!date) fail(line, `the date must be dd:mm:yyyy, found "${f[0]}"`);
        const [, dd, mm, yyyy] = date!;
        const check = new Date(Date.UTC(Number(yyyy), Number(mm) - 1, Number(dd)));
        if (check.getUTCFullYear() !== Number(yyyy) || check.getUTCMonth() !== Number(mm) - 1 || check.getUTCDate() !== Number(dd)) {
          fail(line, `${f[0]} is not a calendar date`);
        }
        if (!/^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/.test(f[1])) fail(line, `the time must be hh:mm:ss, found "${f[1]}"`);
        const period: ExamPeriod = {
          date: `${yyyy}-${mm}-${dd}`,
          start: f[1],
          duration: int(f[2], 'the period duration', line),
          penalty: int(f[3], 'the period penalty', line),
        };
        const prev = periods[periods.length - 1];
        if (prev && (period.date! < prev.date! || (period.date === prev.date && period.start! <= prev.start!))) {
          fail(line, `period ${periods.length} (${f[0]} ${f[1]}) is not after the period before it; periods must be in time order`);
        }
        periods.push(period);
        break;
      }
      case 'Rooms': {
        if (f.length !== 2) fail(line, `expected "capacity, penalty", found ${f.length} fields`);
        rooms.push({ code: String(rooms.length), capacity: int(f[0], 'the room capacity', line), penalty: int(f[1], 'the room penalty', line) });
        break;
      }
      case 'PeriodHardConstraints': {
        if (f.length !== 3) fail(line, `expected "exam, EXAM_COINCIDENCE|EXCLUSION|AFTER, exam", found ${f.length} fields`);
        const kind = KIND_BY_NAME[f[1]];
        if (!kind) fail(line, `unknown period constraint "${f[1]}" (EXAM_COINCIDENCE, EXCLUSION or AFTER)`);
        pendingConstraints.push({ a: int(f[0], 'an exam number', line), b: int(f[2], 'an exam number', line), kind, line });
        break;
      }
      case 'RoomHardConstraints': {
        if (f.length !== 2) fail(line, `expected "exam, ROOM_EXCLUSIVE", found ${f.length} fields`);
        if (f[1] !== 'ROOM_EXCLUSIVE') fail(line, `unknown room constraint "${f[1]}" (ROOM_EXCLUSIVE)`);
        exclusive.push({ exam: int(f[0], 'an exam number', line), line });
        break;
      }
      case 'InstitutionalWeightings': {
        const key = f[0];
        if (seenWeights.has(key)) fail(line, `${key} is given twice`);
        seenWeights.add(key);
        const arity = key === 'FRONTLOAD' ? 3 : 1;
        if (!['TWOINAROW', 'TWOINADAY', 'PERIODSPREAD', 'NONMIXEDDURATIONS', 'FRONTLOAD'].includes(key)) {
          fail(line, `unknown weighting "${key}" (TWOINAROW, TWOINADAY, PERIODSPREAD, NONMIXEDDURATIONS or FRONTLOAD)`);
        }
        if (f.length !== arity + 1) fail(line, `${key} takes ${arity} value${arity > 1 ? 's' : ''}, found ${f.length - 1}`);
        const v = f.slice(1).map((t) => int(t, `the value of ${key}`, line));
        if (key === 'TWOINAROW') weightings.twoInARow = v[0];
        else if (key === 'TWOINADAY') weightings.twoInADay = v[0];
        else if (key === 'PERIODSPREAD') weightings.periodSpread = v[0];
        else if (key === 'NONMIXEDDURATIONS') weightings.nonMixedDurations = v[0];
        else weightings.frontLoad = { largestExams: v[0], lastPeriods: v[1], weight: v[2] };
        break;
      }
    }
  });
  closeSection(lastLine);
  for (const name of ['Exams', 'Periods', 'Rooms'] as const) {
    if (!seen.has(name)) fail(lastLine, `missing section [${name}:N]`);
  }
  if (periods.length === 0) fail(seen.get('Periods')!.line, 'there must be at least one period');

  for (const c of pendingConstraints) {
    for (const e of [c.a, c.b]) if (e >= exams.length) fail(c.line, `exam ${e} does not exist (there are ${exams.length} exams, 0..${exams.length - 1})`);
    constraints.push({ kind: c.kind, first: String(c.a), second: String(c.b) });
  }
  for (const x of exclusive) {
    if (x.exam >= exams.length) fail(x.line, `exam ${x.exam} does not exist (there are ${exams.length} exams, 0..${exams.length - 1})`);
    exams[x.exam].roomExclusive = true;
  }

  const model: ExamModel = {
    name: options.name ?? file.replace(/\.[^.]*$/, ''),
    capacity: ExamCapacityMode.Capacitated,
    roomSplitting: false,
    periods,
    rooms,
    exams,
    constraints,
    weightings,
  };
  try {
    validateModel(model);
  } catch (e) {
    // Everything validateModel checks was checked above with a line; this is a safety net.
    if (e instanceof ExamModelError) fail(1, e.message);
    throw e;
  }
  return model;
}

/**
 * Writes a model as a `.exam` file (exams and rooms in model order). Every period needs a
 * date and a start time; student ids that are not whole numbers are numbered 1, 2, ... in
 * order of first appearance. Room splitting, invigilators and the proximity weight have no
 * equivalent in the format and are not written.
 */
export function formatItc2007Exam(model: ExamModel): string {
  const { examIndex } = validateModel(model);
  const numeric = model.exams.every((e) => e.students.every((s) => /^\d+$/.test(s)));
  const ids = new Map<string, string>();
  const studentId = (s: string): string => {
    if (numeric) return s;
    let id = ids.get(s);
    if (id === undefined) {
      id = String(ids.size + 1);
      ids.set(s, id);
    }
    return id;
  };
  const out: string[] = [`[Exams:${model.exams.length}]`];
  for (const e of model.exams) out.push([String(e.duration), ...e.students.map(studentId)].join(', '));
  out.push(`[Periods:${model.periods.length}]`);
  model.periods.forEach((p, i) => {
    if (p.date === null || p.start === null) throw new ExamModelError(`period ${i}: the .exam format needs a date and a start time`);
    const [yyyy, mm, dd] = p.date.split('-');
    const start = p.start.length === 5 ? `${p.start}:00` : p.start;
    out.push(`${dd}:${mm}:${yyyy}, ${start}, ${p.duration}, ${p.penalty}`);
  });
  out.push(`[Rooms:${model.rooms.length}]`);
  for (const r of model.rooms) out.push(`${r.capacity}, ${r.penalty}`);
  out.push('[PeriodHardConstraints]');
  for (const c of model.constraints) out.push(`${examIndex.get(c.first)}, ${NAME_BY_KIND[c.kind]}, ${examIndex.get(c.second)}`);
  out.push('[RoomHardConstraints]');
  model.exams.forEach((e, i) => {
    if (e.roomExclusive) out.push(`${i}, ROOM_EXCLUSIVE`);
  });
  const w = model.weightings;
  out.push(
    '[InstitutionalWeightings]',
    `TWOINAROW, ${w.twoInARow}`,
    `TWOINADAY, ${w.twoInADay}`,
    `PERIODSPREAD, ${w.periodSpread}`,
    `NONMIXEDDURATIONS, ${w.nonMixedDurations}`,
    `FRONTLOAD, ${w.frontLoad.largestExams}, ${w.frontLoad.lastPeriods}, ${w.frontLoad.weight}`,
  );
  return out.join('\n') + '\n';
}
