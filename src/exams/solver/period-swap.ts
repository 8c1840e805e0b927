/**
 * Exchanges the contents of two periods: every unit of a goes to b and back, rooms kept.
 * No conflict and no room can break (the same groups sit in the same rooms); period
 * lengths, orderings and the number of invigilators are checked. It moves a whole slice
 * of the timetable at once, which reshapes the spread terms in ways chains cannot (the
 * "slot swap" of the best Toronto solvers, e.g. Bellio et al. 2021).
 */
import type { ExamState } from './exam-state';

export class PeriodSwapMove {
  private readonly units: Int32Array;
  private readonly from: Int32Array;
  private readonly mark: Uint8Array;
  private readonly sittings: Int32Array;
  private readonly rooms: Int32Array;
  private count = 0;
  private sittingCount = 0;

  constructor(private readonly state: ExamState) {
    const inst = state.instance;
    this.units = new Int32Array(inst.unitCount);
    this.from = new Int32Array(inst.unitCount);
    this.mark = new Uint8Array(inst.unitCount);
    this.sittings = new Int32Array(inst.sittingCount);
    this.rooms = new Int32Array(inst.sittingCount);
  }

  /** Swaps periods a and b; false (nothing changed) when not allowed. */
  apply(a: number, b: number): boolean {
    const { state } = this;
    const inst = state.instance;
    const P = inst.periodCount;
    const U = inst.unitCount;
    if (a === b) return false;
    const inv = inst.invigilatorsPerPeriod;
    if (inv !== null && (state.roomsUsed[a] > inv[b] || state.roomsUsed[b] > inv[a])) return false;
    let n = 0;
    for (const [p, q] of [
      [a, b],
      [b, a],
    ]) {
      for (let i = 0; i < state.periodUnitCount[p]; i++) {
        const u = state.periodUnits[p * U + i];
        if (inst.unitAllowed[u * P + q] === 0) return this.clear(n);
        this.units[n] = u;
        this.from[n++] = p;
        this.mark[u] = 1;
      }
    }
    const swap = (p: number): number => (p === a ? b : p === b ? a : p);
    for (let i = 0; i < n; i++) {
      const u = this.units[i];
      const target = swap(this.from[i]);
      for (let k = inst.unitAfterStart[u]; k < inst.unitAfterStart[u + 1]; k++) {
        const o = inst.unitAfterOther[k];
        let to = state.unitPeriod[o];
        if (to < 0) continue;
        if (this.mark[o] !== 0) to = swap(to);
        if (inst.unitAfterSign[k] > 0 ? target <= to : target >= to) return this.clear(n);
      }
    }
    this.clear(n);
    this.count = n;
    let m = 0;
    for (let i = 0; i < n; i++) {
      const u = this.units[i];
      for (let k = inst.unitSittingStart[u]; k < inst.unitSittingStart[u + 1]; k++) {
        const s = inst.unitSittings[k];
        this.sittings[m] = s;
        this.rooms[m++] = state.sittingRoom[s];
        state.unseat(s);
      }
    }
    this.sittingCount = m;
    for (let i = 0; i < n; i++) state.removeUnit(this.units[i]);
    for (let i = 0; i < n; i++) state.placeUnit(this.units[i], swap(this.from[i]));
    for (let i = 0; i < m; i++) state.seat(this.sittings[i], this.rooms[i]);
    return true;
  }

  undo(): void {
    const { state } = this;
    for (let i = 0; i < this.sittingCount; i++) state.unseat(this.sittings[i]);
    for (let i = 0; i < this.count; i++) state.removeUnit(this.units[i]);
    for (let i = 0; i < this.count; i++) state.placeUnit(this.units[i], this.from[i]);
    for (let i = 0; i < this.sittingCount; i++) state.seat(this.sittings[i], this.rooms[i]);
  }

  private clear(n: number): false {
    for (let i = 0; i < n; i++) this.mark[this.units[i]] = 0;
    return false;
  }
}
