/**
 * An independent evaluator of exam arrangements. It recounts everything from the model
 * and the arrangement with its own code (it shares nothing with the solver's compiled
 * instance or incremental bookkeeping), so it can check them.
 *
 * Hard violations ("distance to feasibility"), each occurrence counting 1:
 *  - unplaced: an exam without a placement;
 *  - conflicts: per student and period, the exams beyond the first (ITC-2007 "Conflicts");
 *  - roomCapacity: a room and period whose seated students exceed the capacity ("RoomOccupancy");
 *  - periodDuration: an exam longer than its period ("PeriodUtilisation");
 *  - periodConstraints: a violated SAME_PERIOD / DIFFERENT_PERIOD / AFTER, each distinct
 *    constraint once, self-references ignored ("PeriodRelated");
 *  - roomExclusive: a room-exclusive exam sharing a room and period with another exam ("RoomRelated");
 *  - seating: an exam of a capacitated model with no room, with seats that do not add up
 *    to its students, with a room listed twice, or in several rooms when splitting is off;
 *  - invigilation (only when the model has invigilators): a room in use with no
 *    invigilator, an invigilator on duty in a period they are not available, or on duty in
 *    more than one room at once (each extra room).
 *
 * Soft cost, each term already weighted (ITC-2007 track 1, McCollum et al. 2007, and the
 * conventions of the published results): per student and pair of that student's exams,
 * two in a row (same day, adjacent periods), two in a day (same day, not adjacent) and
 * period spread (the later exam 1..PERIODSPREAD periods after); per room and period,
 * mixed durations ((distinct durations - 1) x weight); front load (each of the largest
 * exams, ties to the earlier exam, in the last periods); room and period penalties per
 * exam; and Carter's proximity cost, sum over students and pairs of 16/8/4/2/1 for 1..5
 * periods apart, divided by the number of students.
 */
import { ExamCapacityMode, PeriodConstraintKind, type ExamArrangement, type ExamModel, type ExamPlacement } from '../model/exam-model';
import { ExamModelError } from '../model/exam-model-error';
import { largestExams, periodDays, validateModel } from '../model/validate-model';
import { PROXIMITY_COST } from '../model/weightings';

export interface ExamHardViolations {
  unplaced: number;
  conflicts: number;
  roomCapacity: number;
  periodDuration: number;
  periodConstraints: number;
  roomExclusive: number;
  seating: number;
  invigilation: number;
  total: number;
}

export interface ExamSoftCost {
  twoInARow: number;
  twoInADay: number;
  periodSpread: number;
  mixedDurations: number;
  frontLoad: number;
  roomPenalty: number;
  periodPenalty: number;
  /** Carter's proximity cost (weighted, divided by the number of students). */
  proximity: number;
  total: number;
}

export interface ExamEvaluation {
  hard: ExamHardViolations;
  soft: ExamSoftCost;
  feasible: boolean;
  /** The proximity sum before the division: an exact integer to compare with published totals. */
  proximityRaw: number;
  /** Distinct students over all exams (the proximity divisor). */
  students: number;
}

/**
 * Evaluates `arrangement` against `model`. Throws `ExamModelError` when the arrangement
 * names an unknown exam, room or invigilator, places an exam twice or uses a period
 * outside the model: those are mistakes of the caller, not violations to count.
 */
export function evaluateArrangement(model: ExamModel, arrangement: ExamArrangement): ExamEvaluation {
  const { examIndex, roomIndex } = validateModel(model);
  const P = model.periods.length;
  const capacitated = model.capacity === ExamCapacityMode.Capacitated;
  const w = model.weightings;

  const placementOf: (ExamPlacement | undefined)[] = new Array(model.exams.length);
  for (const p of arrangement.placements) {
    const e = examIndex.get(p.exam);
    if (e === undefined) throw new ExamModelError(`placement of unknown exam ${p.exam}`);
    if (placementOf[e]) throw new ExamModelError(`exam ${p.exam} is placed twice`);
    if (!Number.isInteger(p.period) || p.period < 0 || p.period >= P) throw new ExamModelError(`exam ${p.exam}: period ${p.period} is not in 0..${P - 1}`);
    for (const s of p.rooms) {
      if (!roomIndex.has(s.room)) throw new ExamModelError(`exam ${p.exam} is seated in unknown room ${s.room}`);
      if (!Number.isInteger(s.seats) || s.seats < 0) throw new ExamModelError(`exam ${p.exam}: seats in room ${s.room} must be a whole number >= 0`);
    }
    placementOf[e] = p;
  }
  const period = (e: number): number => placementOf[e]?.period ?? -1;

  const hard: ExamHardViolations = {
    unplaced: 0,
    conflicts: 0,
    roomCapacity: 0,
    periodDuration: 0,
    periodConstraints: 0,
    roomExclusive: 0,
    seating: 0,
    invigilation: 0,
    total: 0,
  };
  const soft: ExamSoftCost = {
    twoInARow: 0,
    twoInADay: 0,
    periodSpread: 0,
    mixedDurations: 0,
    frontLoad: 0,
    roomPenalty: 0,
    periodPenalty: 0,
    proximity: 0,
    total: 0,
  };

  // Per exam: placement, length, seating, period and room penalties.
  model.exams.forEach((exam, e) => {
    const p = placementOf[e];
    if (!p) {
      hard.unplaced++;
      return;
    }
    if (exam.duration > model.periods[p.period].duration) hard.periodDuration++;
    soft.periodPenalty += model.periods[p.period].penalty;
    if (!capacitated) return;
    const size = new Set(exam.students).size;
    const rooms = new Set(p.rooms.map((s) => s.room));
    const seats = p.rooms.reduce((sum, s) => sum + s.seats, 0);
    if (p.rooms.length === 0 || rooms.size !== p.rooms.length || seats !== size || (!model.roomSplitting && p.rooms.length > 1)) hard.seating++;
    for (const s of p.rooms) soft.roomPenalty += model.rooms[roomIndex.get(s.room)!].penalty;
  });

  // Students: conflicts and the pairwise soft terms.
  const day = periodDays(model.periods);
  const studentPeriods = new Map<string, number[]>();
  model.exams.forEach((exam, e) => {
    const p = period(e);
    for (const s of new Set(exam.students)) {
      let list = studentPeriods.get(s);
      if (!list) studentPeriods.set(s, (list = []));
      if (p >= 0) list.push(p);
    }
  });
  let twoInARow = 0;
  let twoInADay = 0;
  let spread = 0;
  let proximityRaw = 0;
  for (const periods of studentPeriods.values()) {
    periods.sort((a, b) => a - b);
    for (let i = 0; i < periods.length; i++) {
      if (i > 0 && periods[i] === periods[i - 1]) hard.conflicts++;
      for (let j = i + 1; j < periods.length; j++) {
        const d = periods[j] - periods[i];
        if (d === 0) continue;
        if (day[periods[i]] === day[periods[j]]) {
          if (d === 1) twoInARow++;
          else twoInADay++;
        }
        if (d <= w.periodSpread) spread++;
        if (d < PROXIMITY_COST.length) proximityRaw += PROXIMITY_COST[d];
      }
    }
  }
  soft.twoInARow = w.twoInARow * twoInARow;
  soft.twoInADay = w.twoInADay * twoInADay;
  soft.periodSpread = spread;
  const students = studentPeriods.size;
  const weightedRaw = w.proximity * proximityRaw;
  soft.proximity = students > 0 ? weightedRaw / students : 0;

  // Period constraints, each distinct one once.
  const seen = new Set<string>();
  for (const c of model.constraints) {
    const a = examIndex.get(c.first)!;
    const b = examIndex.get(c.second)!;
    if (a === b) continue;
    const key = c.kind === PeriodConstraintKind.After ? `A:${a}:${b}` : `${c.kind}:${Math.min(a, b)}:${Math.max(a, b)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const pa = period(a);
    const pb = period(b);
    if (pa < 0 || pb < 0) continue; // an unplaced exam is counted once, as unplaced
    const ok = c.kind === PeriodConstraintKind.SamePeriod ? pa === pb : c.kind === PeriodConstraintKind.DifferentPeriod ? pa !== pb : pa > pb;
    if (!ok) hard.periodConstraints++;
  }

  // Rooms per period: capacity, exclusivity, mixed durations.
  if (capacitated) {
    const slots = new Map<string, { seats: number; exams: number[]; room: number; period: number }>();
    model.exams.forEach((_, e) => {
      const p = placementOf[e];
      if (!p) return;
      for (const s of p.rooms) {
        const key = `${p.period}:${s.room}`;
        let slot = slots.get(key);
        if (!slot) slots.set(key, (slot = { seats: 0, exams: [], room: roomIndex.get(s.room)!, period: p.period }));
        slot.seats += s.seats;
        if (!slot.exams.includes(e)) slot.exams.push(e);
      }
    });
    for (const slot of slots.values()) {
      if (slot.seats > model.rooms[slot.room].capacity) hard.roomCapacity++;
      if (slot.exams.length > 1) {
        for (const e of slot.exams) if (model.exams[e].roomExclusive) hard.roomExclusive++;
      }
      const durations = new Set(slot.exams.map((e) => model.exams[e].duration));
      soft.mixedDurations += w.nonMixedDurations * (durations.size - 1);
    }

    if (model.invigilators !== undefined) {
      const available = new Map(model.invigilators.map((i) => [i.code, new Set(i.availablePeriods)]));
      const covered = new Set<string>();
      const onDuty = new Map<string, Set<string>>();
      for (const duty of arrangement.invigilation) {
        const periods = available.get(duty.invigilator);
        if (!periods) throw new ExamModelError(`duty of unknown invigilator ${duty.invigilator}`);
        if (!roomIndex.has(duty.room)) throw new ExamModelError(`duty in unknown room ${duty.room}`);
        if (!Number.isInteger(duty.period) || duty.period < 0 || duty.period >= P) throw new ExamModelError(`duty in period ${duty.period}, not in 0..${P - 1}`);
        if (!periods.has(duty.period)) hard.invigilation++;
        covered.add(`${duty.period}:${duty.room}`);
        const key = `${duty.period}:${duty.invigilator}`;
        let rooms = onDuty.get(key);
        if (!rooms) onDuty.set(key, (rooms = new Set()));
        rooms.add(duty.room);
      }
      for (const rooms of onDuty.values()) hard.invigilation += rooms.size - 1;
      for (const key of slots.keys()) if (!covered.has(key)) hard.invigilation++;
    }
  }

  // Front load.
  const frontLoadFrom = Math.max(0, P - w.frontLoad.lastPeriods);
  for (const e of largestExams(model, w.frontLoad.largestExams)) {
    if (period(e) >= frontLoadFrom) soft.frontLoad += w.frontLoad.weight;
  }

  hard.total =
    hard.unplaced + hard.conflicts + hard.roomCapacity + hard.periodDuration + hard.periodConstraints + hard.roomExclusive + hard.seating + hard.invigilation;
  soft.total =
    soft.twoInARow + soft.twoInADay + soft.periodSpread + soft.mixedDurations + soft.frontLoad + soft.roomPenalty + soft.periodPenalty + soft.proximity;
  return { hard, soft, feasible: hard.total === 0, proximityRaw, students };
}
