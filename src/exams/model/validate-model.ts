/**
 * Structural checks of an `ExamModel` and the definitions every reader of a model shares:
 * which periods form a day and which exams count as the largest.
 */
import { ExamCapacityMode, PeriodConstraintKind, type ExamModel, type ExamPeriod } from './exam-model';
import { ExamModelError } from './exam-model-error';

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([01]\d|2[0-3]):([0-5]\d)(:([0-5]\d))?$/;

function checkInt(value: unknown, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ExamModelError(`${what} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

function checkDate(date: string, what: string): void {
  const m = ISO_DATE.exec(date);
  if (!m) throw new ExamModelError(`${what}: date must be YYYY-MM-DD, got "${date}"`);
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (d.getUTCFullYear() !== Number(m[1]) || d.getUTCMonth() !== Number(m[2]) - 1 || d.getUTCDate() !== Number(m[3])) {
    throw new ExamModelError(`${what}: ${date} is not a calendar date`);
  }
}

/** Seconds since midnight of an `HH:MM[:SS]` time. */
function seconds(time: string): number {
  const m = TIME.exec(time)!;
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[4] ?? 0);
}

export interface ModelIndex {
  examIndex: Map<string, number>;
  roomIndex: Map<string, number>;
}

/**
 * Throws `ExamModelError` naming the first inconsistency. Periods must be in time order:
 * the soft constraints reason about "the next period" and "the same day".
 */
export function validateModel(model: ExamModel): ModelIndex {
  if (typeof model.name !== 'string') throw new ExamModelError('name must be a string');
  if (model.capacity !== ExamCapacityMode.Capacitated && model.capacity !== ExamCapacityMode.Uncapacitated) {
    throw new ExamModelError(`capacity must be CAPACITATED or UNCAPACITATED, got ${String(model.capacity)}`);
  }
  if (model.periods.length === 0) throw new ExamModelError('there must be at least one period');
  const seenDates = new Set<string>();
  let lastDate: string | null = null;
  model.periods.forEach((p, i) => {
    const what = `period ${i}`;
    checkInt(p.duration, `${what} duration`, 0);
    checkInt(p.penalty, `${what} penalty`, 0);
    if (p.start !== null && !TIME.test(p.start)) throw new ExamModelError(`${what}: start must be HH:MM or HH:MM:SS, got "${p.start}"`);
    if (p.date === null) return;
    checkDate(p.date, what);
    const prev: ExamPeriod | undefined = model.periods[i - 1];
    if (prev?.date === p.date) {
      if (prev.start !== null && p.start !== null && seconds(p.start) <= seconds(prev.start)) {
        throw new ExamModelError(`${what} starts at ${p.start}, not after period ${i - 1} (${prev.start}) on ${p.date}`);
      }
    } else {
      if (seenDates.has(p.date)) throw new ExamModelError(`${what}: the periods of ${p.date} must be consecutive`);
      if (lastDate !== null && p.date < lastDate) throw new ExamModelError(`${what}: ${p.date} comes after ${lastDate}; periods must be in time order`);
      seenDates.add(p.date);
      lastDate = p.date;
    }
  });

  const roomIndex = new Map<string, number>();
  model.rooms.forEach((r, i) => {
    if (typeof r.code !== 'string' || r.code.length === 0) throw new ExamModelError(`room ${i} has no code`);
    if (roomIndex.has(r.code)) throw new ExamModelError(`room ${r.code} is declared twice`);
    roomIndex.set(r.code, i);
    checkInt(r.capacity, `room ${r.code} capacity`, 0);
    checkInt(r.penalty, `room ${r.code} penalty`, 0);
  });

  const examIndex = new Map<string, number>();
  model.exams.forEach((e, i) => {
    if (typeof e.code !== 'string' || e.code.length === 0) throw new ExamModelError(`exam ${i} has no code`);
    if (examIndex.has(e.code)) throw new ExamModelError(`exam ${e.code} is declared twice`);
    examIndex.set(e.code, i);
    checkInt(e.duration, `exam ${e.code} duration`, 0);
    if (!Array.isArray(e.students)) throw new ExamModelError(`exam ${e.code}: students must be a list`);
    for (const s of e.students) {
      if (typeof s !== 'string' || s.length === 0) throw new ExamModelError(`exam ${e.code}: a student id must be a non-empty string`);
    }
  });

  const kinds = new Set<string>(Object.values(PeriodConstraintKind));
  model.constraints.forEach((c, i) => {
    if (!kinds.has(c.kind)) throw new ExamModelError(`constraint ${i}: unknown kind ${String(c.kind)}`);
    for (const code of [c.first, c.second]) {
      if (!examIndex.has(code)) throw new ExamModelError(`constraint ${i} (${c.kind}) names unknown exam ${code}`);
    }
  });

  const w = model.weightings;
  checkInt(w.twoInARow, 'weight twoInARow', 0);
  checkInt(w.twoInADay, 'weight twoInADay', 0);
  checkInt(w.periodSpread, 'weight periodSpread', 0);
  checkInt(w.nonMixedDurations, 'weight nonMixedDurations', 0);
  checkInt(w.frontLoad.largestExams, 'front load largestExams', 0);
  checkInt(w.frontLoad.lastPeriods, 'front load lastPeriods', 0);
  checkInt(w.frontLoad.weight, 'front load weight', 0);
  if (typeof w.proximity !== 'number' || !Number.isFinite(w.proximity) || w.proximity < 0) {
    throw new ExamModelError(`weight proximity must be a number >= 0, got ${String(w.proximity)}`);
  }

  if (model.invigilators !== undefined) {
    const seen = new Set<string>();
    for (const inv of model.invigilators) {
      if (typeof inv.code !== 'string' || inv.code.length === 0) throw new ExamModelError('an invigilator has no code');
      if (seen.has(inv.code)) throw new ExamModelError(`invigilator ${inv.code} is declared twice`);
      seen.add(inv.code);
      for (const p of inv.availablePeriods) checkInt(p, `invigilator ${inv.code} available period`, 0, model.periods.length - 1);
    }
  }
  return { examIndex, roomIndex };
}

/** Day number of each period: a new day starts whenever the date changes (or is absent). */
export function periodDays(periods: readonly ExamPeriod[]): Int32Array {
  const day = new Int32Array(periods.length);
  for (let i = 1; i < periods.length; i++) {
    const same = periods[i].date !== null && periods[i].date === periods[i - 1].date;
    day[i] = day[i - 1] + (same ? 0 : 1);
  }
  return day;
}

/**
 * Indices of the exams the front-load term watches: the `count` with the most (distinct)
 * students, the earlier exam first among equals, as the published ITC-2007 costs count.
 */
export function largestExams(model: ExamModel, count: number): number[] {
  const sizes = model.exams.map((e) => new Set(e.students).size);
  return sizes
    .map((_, i) => i)
    .sort((a, b) => sizes[b] - sizes[a] || a - b)
    .slice(0, count);
}
