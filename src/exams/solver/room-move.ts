/**
 * Room moves inside a period: a sitting changes room, or, when the target room cannot take
 * it, swaps rooms with a sitting there (Müller's ExRoomMove / ExRoomSwapMove). They change
 * only room penalties and mixed durations, which Kempe chains move only by accident.
 */
import type { ExamState } from './exam-state';
import type { SeededRandom } from './random';

export class RoomMove {
  private s1 = -1;
  private s2 = -1;
  private r1 = -1;
  private r2 = -1;

  constructor(private readonly state: ExamState) {}

  /** Moves seated sitting s to room r of its period (swapping if needed); false when nothing changed. */
  apply(s: number, r: number, rng: SeededRandom): boolean {
    const { state } = this;
    const inst = state.instance;
    const from = state.sittingRoom[s];
    if (from < 0 || from === r) return false;
    const p = state.unitPeriod[inst.examUnit[inst.sittingExam[s]]];
    state.unseat(s);
    if (state.roomCostAt(s, p, r) >= 0) {
      state.seat(s, r);
      this.s1 = s;
      this.r1 = from;
      this.s2 = -1;
      return true;
    }
    // Swap with one sitting of room r, chosen at random among those of period p.
    const U = inst.unitCount;
    let other = -1;
    let seen = 0;
    for (let i = 0; i < state.periodUnitCount[p]; i++) {
      const v = state.periodUnits[p * U + i];
      for (let k = inst.unitSittingStart[v]; k < inst.unitSittingStart[v + 1]; k++) {
        const t = inst.unitSittings[k];
        if (t !== s && state.sittingRoom[t] === r && rng.nextInt(++seen) === 0) other = t;
      }
    }
    if (other < 0) {
      state.seat(s, from);
      return false;
    }
    state.unseat(other);
    if (state.roomCostAt(s, p, r) >= 0) {
      state.seat(s, r);
      if (state.roomCostAt(other, p, from) >= 0) {
        state.seat(other, from);
        this.s1 = s;
        this.r1 = from;
        this.s2 = other;
        this.r2 = r;
        return true;
      }
      state.unseat(s);
    }
    state.seat(other, r);
    state.seat(s, from);
    return false;
  }

  undo(): void {
    const { state } = this;
    state.unseat(this.s1);
    if (this.s2 >= 0) {
      state.unseat(this.s2);
      state.seat(this.s2, this.r2);
    }
    state.seat(this.s1, this.r1);
  }
}
