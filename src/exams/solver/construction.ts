/**
 * Construction: saturation-degree graph colouring with room assignment, repaired by
 * iterative forward search when it gets stuck.
 *
 * The next unit is the one with the fewest periods still free of conflicts (DSatur,
 * Brélaz 1979; the standard first heuristic for exam timetabling since Carter et al.
 * 1996), larger degree and size first among equals. It goes to the cheapest period where
 * it is feasible, rooms included. When no period is feasible, it goes where it displaces
 * the least (Müller's iterative forward search, the ITC-2007 winner's construction): the
 * units in its way are unplaced and queued again, and each unplacement makes a unit
 * dearer to displace next time, which breaks cycles.
 */
import type { ExamState } from './exam-state';
import type { SeededRandom } from './random';

export interface ConstructionLimits {
  /** Units placed or displaced before giving up. */
  maxSteps: number;
  /** Polled every step (time limit, cancellation). */
  shouldStop: () => boolean;
  onStep?: (step: number, unplaced: number) => void;
}

export interface ConstructionOutcome {
  steps: number;
  /** Units with no period at all (every period too short, or rooms too small even when empty). */
  impossible: number[];
  /** Units still unplaced (including `impossible`). */
  unplaced: number;
  stopped: boolean;
}

/** Chance of a random period in a stuck step: keeps the search from cycling between two repairs. */
const NOISE = 0.02;

interface SavedUnit {
  unit: number;
  period: number;
  rooms: number[];
}

export function construct(state: ExamState, rng: SeededRandom, limits: ConstructionLimits): ConstructionOutcome {
  const inst = state.instance;
  const U = inst.unitCount;
  const P = inst.periodCount;
  const degree = Int32Array.from({ length: U }, (_, u) => inst.unitAdjStart[u + 1] - inst.unitAdjStart[u]);
  const displaced = new Int32Array(U);
  const pending: number[] = [];
  for (let u = 0; u < U; u++) if (state.unitPeriod[u] < 0) pending.push(u);
  const impossible: number[] = [];
  let steps = 0;

  const takeNext = (): number => {
    let bestIndex = -1;
    let ties = 0;
    for (let i = 0; i < pending.length; i++) {
      const u = pending[i];
      if (bestIndex < 0) {
        bestIndex = i;
        ties = 1;
        continue;
      }
      const b = pending[bestIndex];
      const cmp = state.freePeriods[u] - state.freePeriods[b] || degree[b] - degree[u] || inst.unitSize[b] - inst.unitSize[u];
      if (cmp < 0) {
        bestIndex = i;
        ties = 1;
      } else if (cmp === 0 && rng.nextInt(++ties) === 0) {
        bestIndex = i;
      }
    }
    const u = pending[bestIndex];
    pending[bestIndex] = pending[pending.length - 1];
    pending.pop();
    return u;
  };

  const save = (v: number): SavedUnit => {
    const rooms: number[] = [];
    for (let k = inst.unitSittingStart[v]; k < inst.unitSittingStart[v + 1]; k++) rooms.push(state.sittingRoom[inst.unitSittings[k]]);
    return { unit: v, period: state.unitPeriod[v], rooms };
  };
  const restore = (saved: SavedUnit): void => {
    state.placeUnit(saved.unit, saved.period);
    const start = inst.unitSittingStart[saved.unit];
    saved.rooms.forEach((r, i) => state.seat(inst.unitSittings[start + i], r));
  };

  /** Units placed in p that block u: conflicts and broken orderings. */
  const blockers = (u: number, p: number): number[] => {
    const out: number[] = [];
    if (state.conflictCount[u * P + p] > 0) {
      for (let k = inst.unitAdjStart[u]; k < inst.unitAdjStart[u + 1]; k++) if (state.unitPeriod[inst.unitAdj[k]] === p) out.push(inst.unitAdj[k]);
    }
    for (let k = inst.unitAfterStart[u]; k < inst.unitAfterStart[u + 1]; k++) {
      const v = inst.unitAfterOther[k];
      const q = state.unitPeriod[v];
      // A unit can block twice (a conflict and an ordering, or two orderings): list it once.
      if (q >= 0 && (inst.unitAfterSign[k] > 0 ? p <= q : p >= q) && !out.includes(v)) out.push(v);
    }
    return out;
  };

  /**
   * What placing u in p would displace, by trial: the blockers, then (for rooms) the
   * cheapest other units of p until u's sittings fit. The state is left as it was.
   * Null when u does not fit even in an empty p.
   */
  const displacement = (u: number, p: number): number[] | null => {
    const victims = blockers(u, p);
    if (!inst.capacitated || inst.unitSittingStart[u + 1] === inst.unitSittingStart[u]) return victims;
    const saved = victims.map(save);
    for (const v of victims) state.unplace(v);
    let fits = state.tryPlace(u, p);
    if (!fits) {
      const others: number[] = [];
      for (let i = 0; i < state.periodUnitCount[p]; i++) others.push(state.periodUnits[p * U + i]);
      others.sort((a, b) => displaced[a] - displaced[b] || inst.unitSize[b] - inst.unitSize[a] || a - b);
      for (const v of others) {
        saved.push(save(v));
        victims.push(v);
        state.unplace(v);
        if ((fits = state.tryPlace(u, p))) break;
      }
    }
    if (fits) state.unplace(u);
    for (let i = saved.length - 1; i >= 0; i--) restore(saved[i]);
    return fits ? victims : null;
  };

  while (pending.length > 0 && steps < limits.maxSteps) {
    if (limits.shouldStop()) return { steps, impossible, unplaced: pending.length + impossible.length, stopped: true };
    steps++;
    const u = takeNext();

    // The cheapest feasible period.
    let best = -1;
    let bestCost = Infinity;
    let ties = 0;
    for (let p = 0; p < P; p++) {
      if (inst.unitAllowed[u * P + p] === 0 || state.conflictCount[u * P + p] > 0 || !state.afterAllows(u, p)) continue;
      const before = state.cost;
      if (!state.tryPlace(u, p)) continue;
      const cost = state.cost - before;
      state.unplace(u);
      if (cost < bestCost) {
        best = p;
        bestCost = cost;
        ties = 1;
      } else if (cost === bestCost && rng.nextInt(++ties) === 0) {
        best = p;
      }
    }
    if (best >= 0) {
      state.tryPlace(u, best);
      limits.onStep?.(steps, pending.length + impossible.length);
      continue;
    }

    // Stuck: the period that displaces the least.
    let target = -1;
    let victims: number[] = [];
    let bestScore = Infinity;
    ties = 0;
    const candidates: { p: number; victims: number[] }[] = [];
    for (let p = 0; p < P; p++) {
      if (inst.unitAllowed[u * P + p] === 0) continue;
      const v = displacement(u, p);
      if (v === null) continue;
      candidates.push({ p, victims: v });
      let score = 0;
      for (const x of v) score += 1 + displaced[x];
      if (score < bestScore) {
        bestScore = score;
        target = p;
        victims = v;
        ties = 1;
      } else if (score === bestScore && rng.nextInt(++ties) === 0) {
        target = p;
        victims = v;
      }
    }
    if (target < 0) {
      impossible.push(u);
      limits.onStep?.(steps, pending.length + impossible.length);
      continue;
    }
    if (candidates.length > 1 && rng.nextFloat() < NOISE) {
      const pick = candidates[rng.nextInt(candidates.length)];
      target = pick.p;
      victims = pick.victims;
    }
    for (const v of victims) {
      state.unplace(v);
      displaced[v]++;
      pending.push(v);
    }
    if (!state.tryPlace(u, target)) throw new Error(`construction: unit ${u} does not fit period ${target} after displacing its blockers`);
    limits.onStep?.(steps, pending.length + impossible.length);
  }
  return { steps, impossible, unplaced: pending.length + impossible.length, stopped: false };
}
