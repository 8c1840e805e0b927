/**
 * An independent evaluator for CB-CTT (UD2) timetables. It recomputes everything from
 * scratch from the assignments, with its own code, so it can check the solver's
 * incremental bookkeeping instead of trusting it.
 *
 * Counting follows the official ITC-2007 validator (Di Gaspero & Schaerf, validator.cc):
 * a timetable is a course x period matrix holding a room; a second entry for the same
 * course and period is skipped (the validator warns and skips, so it shows up as a
 * missing lecture); conflicts are counted per pair of conflicting courses per period;
 * isolated lectures count every lecture of the curriculum in that period.
 */
import { CttModelError, type CttAssignment, type CttInstance } from './model';

/** ITC-2007 weights of the soft components. */
export const CTT_WEIGHTS = {
  roomCapacity: 1,
  minWorkingDays: 5,
  curriculumCompactness: 2,
  roomStability: 1,
} as const;

export interface CttHardViolations {
  /** Lectures missing or in excess per course (distinct periods vs declared lectures). */
  lectures: number;
  /** Pairs of conflicting courses (same curriculum or teacher) sharing a period, per period. */
  conflicts: number;
  /** Lectures in a period unavailable to the course (or its teacher). */
  availability: number;
  /** Lectures beyond the first in a room and period ("RoomOccupation" in the validator). */
  roomOccupancy: number;
  /** Locked assignments of the model not found in the timetable (0 for ITC instances). */
  locked: number;
  total: number;
}

/** Soft penalties, already multiplied by `CTT_WEIGHTS` (as the validator prints them). */
export interface CttSoftPenalty {
  roomCapacity: number;
  minWorkingDays: number;
  curriculumCompactness: number;
  roomStability: number;
  total: number;
}

export interface CttEvaluation {
  hard: CttHardViolations;
  soft: CttSoftPenalty;
  feasible: boolean;
  /** Entries skipped because the course already had a lecture in that period. */
  repeatedEntries: number;
}

export function evaluateTimetable(instance: CttInstance, assignments: readonly CttAssignment[]): CttEvaluation {
  const { model, days, periodsPerDay: ppd, periods, courseCount: nc } = instance;
  // tt[c * periods + p] = room index + 1, 0 when course c has no lecture in p.
  const tt = new Int32Array(nc * periods);
  let repeatedEntries = 0;
  for (const a of assignments) {
    const c = instance.courseIndex.get(a.course);
    const r = instance.roomIndex.get(a.room);
    if (c === undefined) throw new CttModelError(`assignment names unknown course ${a.course}`);
    if (r === undefined) throw new CttModelError(`assignment names unknown room ${a.room}`);
    if (!Number.isInteger(a.day) || a.day < 0 || a.day >= days || !Number.isInteger(a.period) || a.period < 0 || a.period >= ppd) {
      throw new CttModelError(`assignment of ${a.course} has day ${a.day} period ${a.period} out of range`);
    }
    const p = a.day * ppd + a.period;
    if (tt[c * periods + p] !== 0) {
      repeatedEntries++;
      continue;
    }
    tt[c * periods + p] = r + 1;
  }

  // Hard: Lectures.
  let lectures = 0;
  for (let c = 0; c < nc; c++) {
    let n = 0;
    for (let p = 0; p < periods; p++) if (tt[c * periods + p] !== 0) n++;
    lectures += Math.abs(n - model.courses[c].lectures);
  }

  // Hard: Conflicts, from the model's curricula and teachers (not the compiled matrix).
  const conflictPairs = new Set<number>();
  for (const q of model.curricula) {
    const members = [...new Set(q.courses.map((code) => instance.courseIndex.get(code)!))];
    for (const a of members) for (const b of members) if (a < b) conflictPairs.add(a * nc + b);
  }
  for (let a = 0; a < nc; a++) {
    for (let b = a + 1; b < nc; b++) if (model.courses[a].teacher === model.courses[b].teacher) conflictPairs.add(a * nc + b);
  }
  let conflicts = 0;
  for (const key of conflictPairs) {
    const a = Math.floor(key / nc);
    const b = key % nc;
    for (let p = 0; p < periods; p++) if (tt[a * periods + p] !== 0 && tt[b * periods + p] !== 0) conflicts++;
  }

  // Hard: Availability.
  let availability = 0;
  for (let c = 0; c < nc; c++) {
    for (let p = 0; p < periods; p++) if (tt[c * periods + p] !== 0 && instance.unavailable[c * periods + p]) availability++;
  }

  // Hard: RoomOccupation.
  const roomLectures = new Int32Array(instance.roomCount * periods);
  for (let c = 0; c < nc; c++) {
    for (let p = 0; p < periods; p++) {
      const r = tt[c * periods + p];
      if (r !== 0) roomLectures[(r - 1) * periods + p]++;
    }
  }
  let roomOccupancy = 0;
  for (const n of roomLectures) if (n > 1) roomOccupancy += n - 1;

  // Locks: each locked (course, day, period, room) must be present.
  let locked = 0;
  for (const lock of model.locked ?? []) {
    const c = instance.courseIndex.get(lock.course)!;
    const r = instance.roomIndex.get(lock.room)!;
    if (tt[c * periods + lock.day * ppd + lock.period] !== r + 1) locked++;
  }

  // Soft: RoomCapacity.
  let roomCapacity = 0;
  for (let c = 0; c < nc; c++) {
    const students = model.courses[c].students;
    for (let p = 0; p < periods; p++) {
      const r = tt[c * periods + p];
      if (r !== 0 && model.rooms[r - 1].capacity < students) roomCapacity += students - model.rooms[r - 1].capacity;
    }
  }

  // Soft: MinWorkingDays and RoomStability.
  let missingDays = 0;
  let extraRooms = 0;
  for (let c = 0; c < nc; c++) {
    let workingDays = 0;
    for (let d = 0; d < days; d++) {
      let any = false;
      for (let s = 0; s < ppd; s++) if (tt[c * periods + d * ppd + s] !== 0) any = true;
      if (any) workingDays++;
    }
    if (workingDays < model.courses[c].minWorkingDays) missingDays += model.courses[c].minWorkingDays - workingDays;
    const used = new Set<number>();
    for (let p = 0; p < periods; p++) if (tt[c * periods + p] !== 0) used.add(tt[c * periods + p]);
    if (used.size > 1) extraRooms += used.size - 1;
  }

  // Soft: CurriculumCompactness (isolated lectures: no lecture of the curriculum next to it the same day).
  let isolated = 0;
  for (const q of model.curricula) {
    const members = [...new Set(q.courses.map((code) => instance.courseIndex.get(code)!))];
    const count = new Int32Array(periods);
    for (const c of members) for (let p = 0; p < periods; p++) if (tt[c * periods + p] !== 0) count[p]++;
    for (let p = 0; p < periods; p++) {
      if (count[p] === 0) continue;
      const s = p % ppd;
      const before = s > 0 ? count[p - 1] : 0;
      const after = s < ppd - 1 ? count[p + 1] : 0;
      if (before === 0 && after === 0) isolated += count[p];
    }
  }

  const hard: CttHardViolations = {
    lectures,
    conflicts,
    availability,
    roomOccupancy,
    locked,
    total: lectures + conflicts + availability + roomOccupancy + locked,
  };
  const soft: CttSoftPenalty = {
    roomCapacity: roomCapacity * CTT_WEIGHTS.roomCapacity,
    minWorkingDays: missingDays * CTT_WEIGHTS.minWorkingDays,
    curriculumCompactness: isolated * CTT_WEIGHTS.curriculumCompactness,
    roomStability: extraRooms * CTT_WEIGHTS.roomStability,
    total: 0,
  };
  soft.total = soft.roomCapacity + soft.minWorkingDays + soft.curriculumCompactness + soft.roomStability;
  return { hard, soft, feasible: hard.total === 0, repeatedEntries };
}
