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

  /** Applies the chain of placed unit u towards period q; false (nothing changed) when it is not possible. */
  apply(u: number, q: number): boolean {
    const { state } = this;
    const inst = state.instance;
    const P = inst.periodCount;
    const period = state.unitPeriod;
    const p = period[u];
    if (p < 0 || p === q) return false;
    const chain = this.chain;
    const inChain = this.inChain;
    const { unitAdjStart, unitAdj, unitAllowed, unitAfterStart, unitAfterOther, unitAfterSign } = inst;
    chain[0] = u;
    inChain[u] = 1;
    let size = 1;
    for (let i = 0; i < size; i++) {
      const a = chain[i];
      const other = period[a] === p ? q : p;
      if (state.conflictCount[a * P + other] === 0) continue;
      for (let k = unitAdjStart[a], end = unitAdjStart[a + 1]; k < end; k++) {
        const b = unitAdj[k];
        if (period[b] === other && inChain[b] === 0) {
          chain[size++] = b;
          inChain[b] = 1;
        }
      }
    }
    let ok = true;
    for (let i = 0; i < size && ok; i++) {
      const a = chain[i];
      const target = period[a] === p ? q : p;
      if (unitAllowed[a * P + target] === 0) {
        ok = false;
        break;
      }
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
    for (let i = 0; i < size; i++) inChain[chain[i]] = 0;
    if (!ok) return false;

    this.size = size;
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
