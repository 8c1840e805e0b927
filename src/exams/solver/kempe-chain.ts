/**
 * The Kempe-chain move, the main neighbourhood of exam timetabling since Thompson &
 * Dowsland (1996) and the workhorse of the strongest ITC-2007 and Toronto solvers
 * (Müller 2009; Demeester et al. 2012; Battistutta, Schaerf & Urli 2017; Bellio et al. 2021).
 *
 * Moving unit u from period p to q also moves every unit in q that conflicts with it, every
 * unit in p that conflicts with those, and so on: the closure swaps periods p and q, so
 * no student conflict appears. Orderings (AFTER) and period lengths are checked on the
 * chain; rooms of the moved sittings are chosen again in their new periods. A chain that
 * breaks anything is not applied.
 */
import type { ExamState } from './exam-state';

export class KempeChainMove {
  private readonly chain: Int32Array;
  private readonly inChain: Uint8Array;
  private readonly fromPeriod: Int32Array;
  private readonly sittings: Int32Array;
  private readonly fromRoom: Int32Array;
  private size = 0;
  private sittingCount = 0;
  /** Units moved by the last applied chain. */
  get chainSize(): number {
    return this.size;
  }

  constructor(private readonly state: ExamState) {
    const inst = state.instance;
    this.chain = new Int32Array(inst.unitCount);
    this.inChain = new Uint8Array(inst.unitCount);
    this.fromPeriod = new Int32Array(inst.unitCount);
    this.sittings = new Int32Array(inst.sittingCount);
    this.fromRoom = new Int32Array(inst.sittingCount);
  }

  private p = -1;
  private q = -1;

  /** Cost change of the built chain without its rooms: student pairs and period costs. */
  delta = 0;

  /**
   * Builds the chain of placed unit u towards period q, checks it (period lengths,
   * orderings) and computes `delta`; nothing changes yet. False when it breaks something.
   *
   * One pass over the chain's adjacency does both: a neighbour in the other period of the
   * two joins the chain, and its pair with the unit does not change cost (a pair split over
   * p and q stays split); a neighbour elsewhere contributes the change of their pair cost.
   */
  build(u: number, q: number): boolean {
    const { state } = this;
    const inst = state.instance;
    const P = inst.periodCount;
    const period = state.unitPeriod;
    const p = period[u];
    if (p < 0 || p === q) return false;
    const chain = this.chain;
    const inChain = this.inChain;
    const { unitAdjStart, unitAdj, unitAdjWeight, pairCost, unitPeriodCost, unitAllowed, unitAfterStart, unitAfterOther, unitAfterSign } = inst;
    chain[0] = u;
    inChain[u] = 1;
    let size = 1;
    let delta = 0;
    let ok = true;
    for (let i = 0; i < size; i++) {
      const a = chain[i];
      const from = period[a];
      const to = from === p ? q : p;
      if (unitAllowed[a * P + to] === 0) {
        ok = false;
        break;
      }
      const rowFrom = from * P;
      const rowTo = to * P;
      for (let k = unitAdjStart[a], end = unitAdjStart[a + 1]; k < end; k++) {
        const b = unitAdj[k];
        const pb = period[b];
        if (pb === to) {
          if (inChain[b] === 0) {
            chain[size++] = b;
            inChain[b] = 1;
          }
        } else if (pb >= 0) {
          delta += unitAdjWeight[k] * (pairCost[rowTo + pb] - pairCost[rowFrom + pb]);
        }
      }
      delta += unitPeriodCost[a * P + to] - unitPeriodCost[a * P + from];
    }
    this.size = size;
    this.p = p;
    this.q = q;
    this.delta = delta;
    for (let i = 0; i < size && ok; i++) {
      const a = chain[i];
      const target = period[a] === p ? q : p;
      for (let k = unitAfterStart[a], end = unitAfterStart[a + 1]; k < end; k++) {
        const o = unitAfterOther[k];
        let to = period[o];
        if (to < 0) continue;
        if (inChain[o] !== 0) to = to === p ? q : p;
        if (unitAfterSign[k] > 0 ? target <= to : target >= to) {
          ok = false;
          break;
        }
      }
    }
    if (!ok) this.clearMarks();
    return ok;
  }

  private clearMarks(): void {
    for (let i = 0; i < this.size; i++) this.inChain[this.chain[i]] = 0;
  }

  /** Room and mixed-duration cost the chain's rooms carry now: the most a re-seating can save. */
  roomCostBound(): number {
    const { state } = this;
    const inst = state.instance;
    let bound = 0;
    for (let i = 0; i < this.size; i++) {
      const a = this.chain[i];
      for (let k = inst.unitSittingStart[a]; k < inst.unitSittingStart[a + 1]; k++) bound += inst.roomPenalty[state.sittingRoom[inst.unitSittings[k]]];
    }
    const R = inst.roomCount;
    for (let r = 0; r < R; r++) {
      const dp = state.distinctDurations[this.p * R + r];
      const dq = state.distinctDurations[this.q * R + r];
      if (dp > 1) bound += (dp - 1) * inst.mixedDurationWeight;
      if (dq > 1) bound += (dq - 1) * inst.mixedDurationWeight;
    }
    return bound;
  }

  /** Drops a built chain that will not be applied. */
  discard(): void {
    this.clearMarks();
  }

  /** Applies the built chain, choosing rooms anew; false (nothing changed) when they do not fit. */
  applyBuilt(): boolean {
    const { state } = this;
    const inst = state.instance;
    const period = state.unitPeriod;
    const { p, q, size } = this;
    const chain = this.chain;
    this.clearMarks();
    let n = 0;
    const { unitSittingStart, unitSittings, sittingSize } = inst;
    for (let i = 0; i < size; i++) {
      const a = chain[i];
      this.fromPeriod[i] = period[a];
      for (let k = unitSittingStart[a], end = unitSittingStart[a + 1]; k < end; k++) {
        const s = unitSittings[k];
        this.sittings[n] = s;
        this.fromRoom[n++] = state.sittingRoom[s];
      }
    }
    this.sittingCount = n;
    for (let i = 0; i < n; i++) state.unseat(this.sittings[i]);
    for (let i = 0; i < size; i++) state.removeUnit(chain[i]);
    for (let i = 0; i < size; i++) state.placeUnit(chain[i], this.fromPeriod[i] === p ? q : p);
    if (n === 0) return true;
    // Largest sittings choose first; sort the (short) list in place by insertion.
    const order = this.sittings;
    const rooms = this.fromRoom;
    for (let i = 1; i < n; i++) {
      const s = order[i];
      const r = rooms[i];
      let j = i - 1;
      while (j >= 0 && sittingSize[order[j]] < sittingSize[s]) {
        order[j + 1] = order[j];
        rooms[j + 1] = rooms[j];
        j--;
      }
      order[j + 1] = s;
      rooms[j + 1] = r;
    }
    for (let i = 0; i < n; i++) {
      const s = order[i];
      const r = state.chooseRoom(s, period[inst.examUnit[inst.sittingExam[s]]]);
      if (r < 0) {
        for (let j = 0; j < i; j++) state.unseat(order[j]);
        this.restore();
        return false;
      }
      state.seat(s, r);
    }
    return true;
  }

  /** Builds and applies in one go; false (nothing changed) when not possible. */
  apply(u: number, q: number): boolean {
    return this.build(u, q) && this.applyBuilt();
  }

  /** Puts every unit and sitting of the last applied chain back where it was. */
  undo(): void {
    const { state } = this;
    for (let i = 0; i < this.sittingCount; i++) state.unseat(this.sittings[i]);
    this.restore();
  }

  /** From "chain placed in the new periods, unseated" back to the original arrangement. */
  private restore(): void {
    const { state } = this;
    for (let i = 0; i < this.size; i++) state.removeUnit(this.chain[i]);
    for (let i = 0; i < this.size; i++) state.placeUnit(this.chain[i], this.fromPeriod[i]);
    for (let i = 0; i < this.sittingCount; i++) state.seat(this.sittings[i], this.fromRoom[i]);
  }
}
