/**
 * The solver's working arrangement with incremental cost bookkeeping. It only ever holds
 * hard-feasible placements (the search moves in the feasible space, as the strongest
 * exam solvers do): callers check a placement with `conflictsIn`, `afterAllows` and
 * `seatUnit` before making it. A unit that could not be placed stays unplaced.
 *
 * Costs are in the instance's internal units (see `ExamInstance.costScale`).
 */
import type { ExamInstance } from '../model/exam-instance';

export class ExamState {
  readonly P: number;
  readonly R: number;
  readonly D: number;
  /** Period of each unit, -1 when unplaced. */
  readonly unitPeriod: Int32Array;
  /** Room of each sitting, -1 when not seated. */
  readonly sittingRoom: Int32Array;
  /** `conflictCount[u * P + p]`: placed units in p that u may not share a period with. */
  readonly conflictCount: Int32Array;
  /** Per unit: periods it is allowed in with `conflictCount` 0 (its saturation degree, inverted). */
  readonly freePeriods: Int32Array;
  /** Units of each period: `periodUnits[p * U + i]` for i < `periodUnitCount[p]`. */
  readonly periodUnits: Int32Array;
  readonly periodUnitCount: Int32Array;
  private readonly unitSlot: Int32Array;

  /** Per room and period (`p * R + r`): seated students, sittings, exclusive sittings, distinct durations. */
  readonly seats: Int32Array;
  readonly sittingsIn: Int32Array;
  readonly exclusiveIn: Int32Array;
  readonly distinctDurations: Int32Array;
  /** `durationCount[(p * R + r) * D + d]`. */
  private readonly durationCount: Int32Array;
  /** Rooms in use per period (each needs an invigilator). */
  readonly roomsUsed: Int32Array;

  placedUnits = 0;
  /** Sum of the cost components below (internal units). */
  cost = 0;
  pairCost = 0;
  periodCost = 0;
  roomCost = 0;
  mixedCost = 0;

  constructor(readonly instance: ExamInstance) {
    const { periodCount: P, roomCount: R, unitCount: U, sittingCount: M, durationClassCount: D } = instance;
    this.P = P;
    this.R = R;
    this.D = Math.max(1, D);
    this.unitPeriod = new Int32Array(U).fill(-1);
    this.sittingRoom = new Int32Array(M).fill(-1);
    this.conflictCount = new Int32Array(U * P);
    this.freePeriods = new Int32Array(U);
    for (let u = 0; u < U; u++) for (let p = 0; p < P; p++) this.freePeriods[u] += instance.unitAllowed[u * P + p];
    this.periodUnits = new Int32Array(P * U);
    this.periodUnitCount = new Int32Array(P);
    this.unitSlot = new Int32Array(U);
    this.seats = new Int32Array(P * R);
    this.sittingsIn = new Int32Array(P * R);
    this.exclusiveIn = new Int32Array(P * R);
    this.distinctDurations = new Int32Array(P * R);
    this.durationCount = new Int32Array(P * R * this.D);
    this.roomsUsed = new Int32Array(P);
  }

  /** Pair cost of unit u placed in p against the placed units around it (u itself not placed there). */
  pairCostAt(u: number, p: number): number {
    const { unitAdjStart, unitAdj, unitAdjWeight, pairCost } = this.instance;
    const period = this.unitPeriod;
    const row = p * this.P;
    let sum = 0;
    for (let k = unitAdjStart[u], end = unitAdjStart[u + 1]; k < end; k++) {
      const q = period[unitAdj[k]];
      if (q >= 0) sum += unitAdjWeight[k] * pairCost[row + q];
    }
    return sum;
  }

  /** True when placing u in p keeps every ordering constraint with the placed units. */
  afterAllows(u: number, p: number): boolean {
    const { unitAfterStart, unitAfterOther, unitAfterSign } = this.instance;
    for (let k = unitAfterStart[u], end = unitAfterStart[u + 1]; k < end; k++) {
      const q = this.unitPeriod[unitAfterOther[k]];
      if (q < 0) continue;
      if (unitAfterSign[k] > 0 ? p <= q : p >= q) return false;
    }
    return true;
  }

  /** Places unit u in period p (no rooms). The caller has checked it is allowed. */
  placeUnit(u: number, p: number): void {
    const { unitAdjStart, unitAdj, unitAdjWeight, pairCost, unitPeriodCost, unitCount, unitAllowed } = this.instance;
    const P = this.P;
    const period = this.unitPeriod;
    const row = p * P;
    let sum = 0;
    for (let k = unitAdjStart[u], end = unitAdjStart[u + 1]; k < end; k++) {
      const v = unitAdj[k];
      const i = v * P + p;
      if (this.conflictCount[i]++ === 0) this.freePeriods[v] -= unitAllowed[i];
      const q = period[v];
      if (q >= 0) sum += unitAdjWeight[k] * pairCost[row + q];
    }
    period[u] = p;
    const slot = this.periodUnitCount[p]++;
    this.periodUnits[p * unitCount + slot] = u;
    this.unitSlot[u] = slot;
    const pc = unitPeriodCost[u * P + p];
    this.pairCost += sum;
    this.periodCost += pc;
    this.cost += sum + pc;
    this.placedUnits++;
  }

  /** Takes unit u out of its period (its sittings must be unseated first). */
  removeUnit(u: number): void {
    const { unitAdjStart, unitAdj, unitAdjWeight, pairCost, unitPeriodCost, unitCount, unitAllowed } = this.instance;
    const P = this.P;
    const period = this.unitPeriod;
    const p = period[u];
    if (p < 0) throw new Error(`unit ${u} is not placed`);
    period[u] = -1;
    const row = p * P;
    let sum = 0;
    for (let k = unitAdjStart[u], end = unitAdjStart[u + 1]; k < end; k++) {
      const v = unitAdj[k];
      const i = v * P + p;
      if (--this.conflictCount[i] === 0) this.freePeriods[v] += unitAllowed[i];
      const q = period[v];
      if (q >= 0) sum += unitAdjWeight[k] * pairCost[row + q];
    }
    const base = p * unitCount;
    const slot = this.unitSlot[u];
    const last = --this.periodUnitCount[p];
    const moved = this.periodUnits[base + last];
    this.periodUnits[base + slot] = moved;
    this.unitSlot[moved] = slot;
    const pc = unitPeriodCost[u * P + p];
    this.pairCost -= sum;
    this.periodCost -= pc;
    this.cost -= sum + pc;
    this.placedUnits--;
  }

  /** Cost of seating sitting s in room r of period p, or -1 if it may not go there. */
  roomCostAt(s: number, p: number, r: number): number {
    const inst = this.instance;
    const i = p * this.R + r;
    const n = this.sittingsIn[i];
    if (inst.sittingOversize[s] !== 0) {
      if (n !== 0) return -1;
    } else {
      if (this.seats[i] + inst.sittingSize[s] > inst.roomCapacity[r]) return -1;
      if (n > 0 && (this.exclusiveIn[i] > 0 || inst.sittingExclusive[s] !== 0)) return -1;
    }
    if (n === 0 && inst.invigilatorsPerPeriod !== null && this.roomsUsed[p] >= inst.invigilatorsPerPeriod[p]) return -1;
    let cost = inst.roomPenalty[r];
    if (n > 0 && this.durationCount[i * this.D + inst.sittingDurationClass[s]] === 0) cost += inst.mixedDurationWeight;
    return cost;
  }

  /**
   * The room for sitting s in period p: the cheapest, then the tightest fit (keeping large
   * rooms free for large exams); for an oversize sitting, the largest empty room. -1: none.
   */
  chooseRoom(s: number, p: number): number {
    const inst = this.instance;
    const R = this.R;
    let best = -1;
    let bestCost = Infinity;
    let bestSpare = Infinity;
    for (let r = 0; r < R; r++) {
      const cost = this.roomCostAt(s, p, r);
      if (cost < 0) continue;
      const spare = inst.sittingOversize[s] !== 0 ? -inst.roomCapacity[r] : inst.roomCapacity[r] - this.seats[p * R + r] - inst.sittingSize[s];
      if (cost < bestCost || (cost === bestCost && spare < bestSpare)) {
        best = r;
        bestCost = cost;
        bestSpare = spare;
      }
    }
    return best;
  }

  /** Seats sitting s in room r of its unit's period. */
  seat(s: number, r: number): void {
    const inst = this.instance;
    const p = this.unitPeriod[inst.examUnit[inst.sittingExam[s]]];
    const i = p * this.R + r;
    const d = i * this.D + inst.sittingDurationClass[s];
    let delta = inst.roomPenalty[r];
    if (this.sittingsIn[i]++ === 0) this.roomsUsed[p]++;
    this.seats[i] += inst.sittingSize[s];
    if (inst.sittingExclusive[s] !== 0) this.exclusiveIn[i]++;
    if (this.durationCount[d]++ === 0) {
      if (this.distinctDurations[i]++ > 0) {
        this.mixedCost += inst.mixedDurationWeight;
        delta += inst.mixedDurationWeight;
      }
    }
    this.sittingRoom[s] = r;
    this.roomCost += inst.roomPenalty[r];
    this.cost += delta;
  }

  unseat(s: number): void {
    const inst = this.instance;
    const r = this.sittingRoom[s];
    const p = this.unitPeriod[inst.examUnit[inst.sittingExam[s]]];
    const i = p * this.R + r;
    const d = i * this.D + inst.sittingDurationClass[s];
    let delta = inst.roomPenalty[r];
    if (--this.sittingsIn[i] === 0) this.roomsUsed[p]--;
    this.seats[i] -= inst.sittingSize[s];
    if (inst.sittingExclusive[s] !== 0) this.exclusiveIn[i]--;
    if (--this.durationCount[d] === 0) {
      if (--this.distinctDurations[i] > 0) {
        this.mixedCost -= inst.mixedDurationWeight;
        delta += inst.mixedDurationWeight;
      }
    }
    this.sittingRoom[s] = -1;
    this.roomCost -= inst.roomPenalty[r];
    this.cost -= delta;
  }

  /** Seats every sitting of placed unit u; on failure seats none and returns false. */
  seatUnit(u: number): boolean {
    const { unitSittingStart, unitSittings } = this.instance;
    const p = this.unitPeriod[u];
    const start = unitSittingStart[u];
    const end = unitSittingStart[u + 1];
    for (let k = start; k < end; k++) {
      const s = unitSittings[k];
      const r = this.chooseRoom(s, p);
      if (r < 0) {
        for (let j = start; j < k; j++) this.unseat(unitSittings[j]);
        return false;
      }
      this.seat(s, r);
    }
    return true;
  }

  unseatUnit(u: number): void {
    const { unitSittingStart, unitSittings } = this.instance;
    for (let k = unitSittingStart[u], end = unitSittingStart[u + 1]; k < end; k++) {
      if (this.sittingRoom[unitSittings[k]] >= 0) this.unseat(unitSittings[k]);
    }
  }

  /** Places u in p and seats it; false (and nothing changed) when the rooms do not take it. */
  tryPlace(u: number, p: number): boolean {
    this.placeUnit(u, p);
    if (this.seatUnit(u)) return true;
    this.removeUnit(u);
    return false;
  }

  /** Unseats and removes u. */
  unplace(u: number): void {
    this.unseatUnit(u);
    this.removeUnit(u);
  }

  /** Recomputes the cost from scratch (a check of the incremental bookkeeping). */
  recomputeCost(): number {
    const inst = this.instance;
    let pair = 0;
    let period = 0;
    for (let u = 0; u < inst.unitCount; u++) {
      const p = this.unitPeriod[u];
      if (p < 0) continue;
      period += inst.unitPeriodCost[u * this.P + p];
      for (let k = inst.unitAdjStart[u]; k < inst.unitAdjStart[u + 1]; k++) {
        const v = inst.unitAdj[k];
        const q = this.unitPeriod[v];
        if (v > u && q >= 0) pair += inst.unitAdjWeight[k] * inst.pairCost[p * this.P + q];
      }
    }
    let room = 0;
    for (let s = 0; s < inst.sittingCount; s++) if (this.sittingRoom[s] >= 0) room += inst.roomPenalty[this.sittingRoom[s]];
    let mixed = 0;
    for (let i = 0; i < this.P * this.R; i++) if (this.distinctDurations[i] > 1) mixed += (this.distinctDurations[i] - 1) * inst.mixedDurationWeight;
    return pair + period + room + mixed;
  }
}
