/**
 * An `ExamModel` compiled for the solver: integer indices and flat typed arrays, built once.
 *
 * Three levels:
 *  - exams, as in the model;
 *  - units: exams that must share a period (SAME_PERIOD constraints, closed transitively).
 *    The solver gives a period to a unit, so a coincidence can never be broken by a move;
 *  - sittings: what needs a room. One per exam, or, when the model allows room splitting
 *    and an exam has more students than the largest room, as few equal parts as fit.
 *
 * Costs are kept in integer "internal units": the reported cost times `costScale`. With
 * the Toronto proximity term on, `costScale` is the number of students, so the division
 * by it happens once, at the end, and every delta the search compares is exact.
 */
import { ExamCapacityMode, PeriodConstraintKind, type ExamModel } from './exam-model';
import { PROXIMITY_COST } from './weightings';
import { largestExams, periodDays, validateModel } from './validate-model';

export interface ExamInstance {
  model: ExamModel;
  capacitated: boolean;
  periodCount: number;
  roomCount: number;
  examCount: number;
  unitCount: number;
  sittingCount: number;
  /** Distinct students over all exams (the Toronto divisor). */
  studentCount: number;
  examIndex: Map<string, number>;
  roomIndex: Map<string, number>;

  /** Internal cost units per reported unit. */
  costScale: number;
  periodDay: Int32Array;
  /** `pairCost[p * P + q]`: internal cost per shared student of two exams placed in p and q. */
  pairCost: Float64Array;

  examUnit: Int32Array;
  /** Distinct students per exam. */
  examSize: Int32Array;
  examDuration: Int32Array;

  /** CSR: the exams of unit u are `unitExams[unitExamStart[u] .. unitExamStart[u+1])`. */
  unitExamStart: Int32Array;
  unitExams: Int32Array;
  /** CSR: the unit's sittings, largest first (the order rooms are chosen in). */
  unitSittingStart: Int32Array;
  unitSittings: Int32Array;
  /** Students over the unit's exams (a tie-break for construction). */
  unitSize: Int32Array;
  /**
   * CSR adjacency between units that may not share a period (shared students or a
   * DIFFERENT_PERIOD constraint). `unitAdjWeight` is the number of shared students, which
   * multiplies `pairCost`; 0 for an exclusion between exams without common students.
   */
  unitAdjStart: Int32Array;
  unitAdj: Int32Array;
  unitAdjWeight: Float64Array;
  /** CSR ordering constraints: unit u must be in a later period than `unitAfterOther` when `unitAfterSign` is +1, earlier when -1. */
  unitAfterStart: Int32Array;
  unitAfterOther: Int32Array;
  unitAfterSign: Int8Array;
  /** `unitAllowed[u * P + p]`: every exam of u fits the length of period p. */
  unitAllowed: Uint8Array;
  /** `unitPeriodCost[u * P + p]`: period penalties and front load of u's exams in p (internal units). */
  unitPeriodCost: Float64Array;
  /**
   * Per unit, hard violations no arrangement avoids once it is placed: students shared by
   * exams that must share a period, and DIFFERENT_PERIOD / AFTER between such exams.
   */
  unitInternalHard: Int32Array;

  sittingExam: Int32Array;
  sittingSize: Int32Array;
  sittingDurationClass: Int32Array;
  sittingExclusive: Uint8Array;
  /** The sitting is larger than every room (splitting off): it can only be seated with a capacity violation. */
  sittingOversize: Uint8Array;
  durationClassCount: number;

  roomCapacity: Int32Array;
  /** Internal units per exam seated in the room. */
  roomPenalty: Float64Array;
  /** Internal units per extra duration in a room and period. */
  mixedDurationWeight: number;
  /** Invigilators available per period; null when invigilation is not modelled. */
  invigilatorsPerPeriod: Int32Array | null;
}

function csr(lists: number[][]): { start: Int32Array; items: Int32Array } {
  const start = new Int32Array(lists.length + 1);
  lists.forEach((l, i) => (start[i + 1] = start[i] + l.length));
  const items = new Int32Array(start[lists.length]);
  lists.forEach((l, i) => items.set(l, start[i]));
  return { start, items };
}

/** Validates the model (throws `ExamModelError`) and compiles it. */
export function compileExamModel(model: ExamModel): ExamInstance {
  const { examIndex, roomIndex } = validateModel(model);
  const P = model.periods.length;
  const R = model.rooms.length;
  const N = model.exams.length;
  const capacitated = model.capacity === ExamCapacityMode.Capacitated;
  const w = model.weightings;

  // Students: dense ids, and each exam's distinct students.
  const studentId = new Map<string, number>();
  const examStudents: number[][] = model.exams.map((e) => {
    const set = new Set<number>();
    for (const s of e.students) {
      let id = studentId.get(s);
      if (id === undefined) {
        id = studentId.size;
        studentId.set(s, id);
      }
      set.add(id);
    }
    return [...set];
  });
  const S = studentId.size;
  const studentExamLists: number[][] = Array.from({ length: S }, () => []);
  examStudents.forEach((list, e) => list.forEach((s) => studentExamLists[s].push(e)));

  const costScale = w.proximity > 0 && S > 0 ? S : 1;

  // Units: union-find over SAME_PERIOD constraints.
  const parent = Int32Array.from({ length: N }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  const pairs = normalisedConstraints(model, examIndex);
  for (const c of pairs) {
    if (c.kind !== PeriodConstraintKind.SamePeriod) continue;
    const a = find(c.a);
    const b = find(c.b);
    if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
  }
  const examUnit = new Int32Array(N);
  const rootUnit = new Map<number, number>();
  for (let e = 0; e < N; e++) {
    const r = find(e);
    let u = rootUnit.get(r);
    if (u === undefined) {
      u = rootUnit.size;
      rootUnit.set(r, u);
    }
    examUnit[e] = u;
  }
  const U = rootUnit.size;
  const unitExamLists: number[][] = Array.from({ length: U }, () => []);
  for (let e = 0; e < N; e++) unitExamLists[examUnit[e]].push(e);

  // Unit adjacency: shared students, then exclusions.
  const unitInternalHard = new Int32Array(U);
  const adjacency: Map<number, number>[] = Array.from({ length: U }, () => new Map());
  for (let s = 0; s < S; s++) {
    const exams = studentExamLists[s];
    const perUnit = new Map<number, number>();
    for (const e of exams) perUnit.set(examUnit[e], (perUnit.get(examUnit[e]) ?? 0) + 1);
    for (const [u, n] of perUnit) if (n > 1) unitInternalHard[u] += n - 1;
    for (let i = 0; i < exams.length; i++) {
      for (let j = i + 1; j < exams.length; j++) {
        const a = examUnit[exams[i]];
        const b = examUnit[exams[j]];
        if (a === b) continue;
        adjacency[a].set(b, (adjacency[a].get(b) ?? 0) + 1);
        adjacency[b].set(a, (adjacency[b].get(a) ?? 0) + 1);
      }
    }
  }
  const afterLists: { other: number; sign: number }[][] = Array.from({ length: U }, () => []);
  for (const c of pairs) {
    const a = examUnit[c.a];
    const b = examUnit[c.b];
    if (c.kind === PeriodConstraintKind.SamePeriod) continue;
    if (a === b) {
      unitInternalHard[a]++;
      continue;
    }
    if (c.kind === PeriodConstraintKind.DifferentPeriod) {
      if (!adjacency[a].has(b)) {
        adjacency[a].set(b, 0);
        adjacency[b].set(a, 0);
      }
    } else {
      afterLists[a].push({ other: b, sign: 1 });
      afterLists[b].push({ other: a, sign: -1 });
    }
  }
  const unitAdjStart = new Int32Array(U + 1);
  adjacency.forEach((m, u) => (unitAdjStart[u + 1] = unitAdjStart[u] + m.size));
  const unitAdj = new Int32Array(unitAdjStart[U]);
  const unitAdjWeight = new Float64Array(unitAdjStart[U]);
  adjacency.forEach((m, u) => {
    let k = unitAdjStart[u];
    for (const [v, count] of [...m.entries()].sort((x, y) => x[0] - y[0])) {
      unitAdj[k] = v;
      unitAdjWeight[k++] = count;
    }
  });
  const unitAfterStart = new Int32Array(U + 1);
  afterLists.forEach((l, u) => (unitAfterStart[u + 1] = unitAfterStart[u] + l.length));
  const unitAfterOther = new Int32Array(unitAfterStart[U]);
  const unitAfterSign = new Int8Array(unitAfterStart[U]);
  afterLists.forEach((l, u) =>
    l.forEach((x, i) => {
      unitAfterOther[unitAfterStart[u] + i] = x.other;
      unitAfterSign[unitAfterStart[u] + i] = x.sign;
    }),
  );

  // Periods and the pair cost table.
  const periodDay = periodDays(model.periods);
  const pairCost = new Float64Array(P * P);
  for (let p = 0; p < P; p++) {
    for (let q = 0; q < P; q++) {
      const d = Math.abs(p - q);
      if (d === 0) continue;
      let itc = 0;
      if (periodDay[p] === periodDay[q]) itc += d === 1 ? w.twoInARow : w.twoInADay;
      if (d <= w.periodSpread) itc += 1;
      pairCost[p * P + q] = costScale * itc + (d < PROXIMITY_COST.length ? w.proximity * PROXIMITY_COST[d] : 0);
    }
  }

  const examSize = Int32Array.from(examStudents, (l) => l.length);
  const examDuration = Int32Array.from(model.exams, (e) => e.duration);
  const largest = new Set(largestExams(model, w.frontLoad.largestExams));
  const frontLoadFrom = Math.max(0, P - w.frontLoad.lastPeriods);
  const unitAllowed = new Uint8Array(U * P);
  const unitPeriodCost = new Float64Array(U * P);
  const unitSize = new Int32Array(U);
  for (let u = 0; u < U; u++) {
    for (const e of unitExamLists[u]) unitSize[u] += examSize[e];
    for (let p = 0; p < P; p++) {
      const period = model.periods[p];
      let ok = 1;
      let cost = 0;
      for (const e of unitExamLists[u]) {
        if (examDuration[e] > period.duration) ok = 0;
        cost += period.penalty;
        if (p >= frontLoadFrom && largest.has(e)) cost += w.frontLoad.weight;
      }
      unitAllowed[u * P + p] = ok;
      unitPeriodCost[u * P + p] = costScale * cost;
    }
  }

  // Sittings.
  const roomCapacity = Int32Array.from(model.rooms, (r) => r.capacity);
  const roomPenalty = Float64Array.from(model.rooms, (r) => costScale * r.penalty);
  const maxCapacity = R > 0 ? Math.max(...roomCapacity) : 0;
  const durationClass = new Map<number, number>();
  const sittingExam: number[] = [];
  const sittingSize: number[] = [];
  if (capacitated) {
    const capacitiesDown = [...roomCapacity].sort((a, b) => b - a);
    for (let e = 0; e < N; e++) {
      const parts = model.roomSplitting && examSize[e] > maxCapacity && maxCapacity > 0 ? splitSizes(examSize[e], capacitiesDown) : [examSize[e]];
      for (const size of parts) {
        sittingExam.push(e);
        sittingSize.push(size);
      }
      if (!durationClass.has(examDuration[e])) durationClass.set(examDuration[e], durationClass.size);
    }
  }
  const M = sittingExam.length;
  const sittingDurationClass = Int32Array.from(sittingExam, (e) => durationClass.get(examDuration[e])!);
  const sittingExclusive = Uint8Array.from(sittingExam, (e) => (model.exams[e].roomExclusive ? 1 : 0));
  const sittingOversize = Uint8Array.from(sittingSize, (size) => (size > maxCapacity ? 1 : 0));
  const unitSittingLists: number[][] = Array.from({ length: U }, () => []);
  sittingExam.forEach((e, s) => unitSittingLists[examUnit[e]].push(s));
  for (const l of unitSittingLists) l.sort((a, b) => sittingSize[b] - sittingSize[a] || a - b);

  let invigilatorsPerPeriod: Int32Array | null = null;
  if (model.invigilators !== undefined) {
    invigilatorsPerPeriod = new Int32Array(P);
    for (const inv of model.invigilators) for (const p of new Set(inv.availablePeriods)) invigilatorsPerPeriod[p]++;
  }

  const unitExamCsr = csr(unitExamLists);
  const unitSittingCsr = csr(unitSittingLists);
  return {
    model,
    capacitated,
    periodCount: P,
    roomCount: R,
    examCount: N,
    unitCount: U,
    sittingCount: M,
    studentCount: S,
    examIndex,
    roomIndex,
    costScale,
    periodDay,
    pairCost,
    examUnit,
    examSize,
    examDuration,
    unitExamStart: unitExamCsr.start,
    unitExams: unitExamCsr.items,
    unitSittingStart: unitSittingCsr.start,
    unitSittings: unitSittingCsr.items,
    unitSize,
    unitAdjStart,
    unitAdj,
    unitAdjWeight,
    unitAfterStart,
    unitAfterOther,
    unitAfterSign,
    unitAllowed,
    unitPeriodCost,
    unitInternalHard,
    sittingExam: Int32Array.from(sittingExam),
    sittingSize: Int32Array.from(sittingSize),
    sittingDurationClass,
    sittingExclusive,
    sittingOversize,
    durationClassCount: durationClass.size,
    roomCapacity,
    roomPenalty,
    mixedDurationWeight: costScale * w.nonMixedDurations,
    invigilatorsPerPeriod,
  };
}

/**
 * Parts of an exam too large for any room: as few as the largest rooms can hold, sized in
 * proportion to those rooms, so each part fits the room it was cut for and any as large.
 * When even all rooms together are too small, one part per room (the excess is a
 * capacity violation the evaluator will count).
 */
export function splitSizes(size: number, capacitiesDown: readonly number[]): number[] {
  let k = 0;
  let total = 0;
  while (k < capacitiesDown.length && total < size) total += capacitiesDown[k++];
  const caps = capacitiesDown.slice(0, k);
  const parts = caps.map((c) => Math.floor((size * c) / total));
  let rest = size - parts.reduce((a, b) => a + b, 0);
  for (let i = 0; rest > 0; i = (i + 1) % k) {
    if (parts[i] < caps[i] || total < size) {
      parts[i]++;
      rest--;
    }
  }
  return parts;
}

export interface NormalisedConstraint {
  kind: PeriodConstraintKind;
  a: number;
  b: number;
}

/**
 * The model's period constraints by exam index, each counted once: self-references are
 * dropped (the published ITC files contain some), and a SAME/DIFFERENT constraint listed
 * in both directions, or an AFTER listed twice, is one constraint. For AFTER, `a` is after `b`.
 */
export function normalisedConstraints(model: ExamModel, examIndex: Map<string, number>): NormalisedConstraint[] {
  const seen = new Set<string>();
  const out: NormalisedConstraint[] = [];
  for (const c of model.constraints) {
    let a = examIndex.get(c.first)!;
    let b = examIndex.get(c.second)!;
    if (a === b) continue;
    if (c.kind !== PeriodConstraintKind.After && a > b) [a, b] = [b, a];
    const key = `${c.kind}:${a}:${b}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ kind: c.kind, a, b });
  }
  return out;
}
