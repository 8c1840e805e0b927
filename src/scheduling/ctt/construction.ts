/**
 * Initial timetable: a saturation-degree (DSatur-style) greedy.
 *
 * Courses whose lectures have the fewest conflict-free periods left are placed first,
 * since they are the ones a later choice would strand; each lecture goes to the
 * conflict-free (period, room) with the smallest soft cost. When a course has no
 * conflict-free period left, its lecture goes to the slot with the fewest hard
 * violations and the local search repairs it.
 *
 * Each choice weighs every course and every slot, so on a large term the greedy can
 * take longer than the whole solve may. Once `hurry` says its time is up, the lectures
 * still unplaced go to the first free slot that makes no conflict (any free slot when
 * none is), unweighed: every lecture has a slot, and the local search improves them in
 * the time that is left.
 */
import type { SeededRandom } from './random';
import type { TimetableState } from './timetable-state';

const HARD = 1_000_000;

export interface ConstructionControl {
  /** Cancellation: construction throws `ConstructionStopped`. */
  shouldStop: () => boolean;
  /** The construction's time is up: the remaining lectures are placed without weighing. */
  hurry?: () => boolean;
  /** Called after each lecture the greedy places (progress reports). */
  onStep?: () => void;
}

/** Places every unplaced, unlocked lecture; locked ones must already be in `state`. */
export function constructTimetable(state: TimetableState, rng: SeededRandom, control: ConstructionControl): void {
  const { shouldStop, hurry, onStep } = control;
  const inst = state.instance;
  const { courseCount: C, periods: P, roomCount: R } = inst;
  const pending: number[][] = Array.from({ length: C }, () => []);
  for (let l = 0; l < inst.lectureCount; l++) if (state.lecPeriod[l] < 0) pending[inst.lectureCourse[l]].push(l);
  const degree = new Int32Array(C);
  for (let a = 0; a < C; a++) for (let b = 0; b < C; b++) if (inst.conflict[a * C + b]) degree[a] += inst.courseLectures[b];
  const freePeriod = (c: number, p: number): boolean => {
    if (state.freeRooms[p] === 0 || inst.unavailable[c * P + p] !== 0) return false;
    if (state.teacherPeriod[inst.courseTeacher[c] * P + p] !== 0) return false;
    for (let i = inst.courseCurriculaStart[c]; i < inst.courseCurriculaStart[c + 1]; i++) {
      if (state.curriculumPeriod[inst.courseCurricula[i] * P + p] !== 0) return false;
    }
    return true;
  };

  let remaining = pending.reduce((n, ls) => n + ls.length, 0);
  while (remaining > 0) {
    if (shouldStop()) throw new ConstructionStopped();
    if (hurry?.()) {
      placeUnweighed(state, pending, freePeriod);
      return;
    }
    // Choose the most constrained course.
    let best = -1;
    let bestFree = Infinity;
    for (let c = 0; c < C; c++) {
      if (pending[c].length === 0) continue;
      let free = 0;
      for (let p = 0; p < P; p++) if (freePeriod(c, p)) free++;
      // Fewer free periods per lecture still to place is more urgent; then higher conflict degree.
      const urgency = free / pending[c].length;
      if (urgency < bestFree || (urgency === bestFree && degree[c] > degree[best])) {
        best = c;
        bestFree = urgency;
      }
    }
    const l = pending[best].pop()!;
    remaining--;
    let bestCost = Infinity;
    let bestP = -1;
    let bestR = -1;
    let ties = 0;
    for (let p = 0; p < P; p++) {
      if (state.freeRooms[p] === 0) continue;
      for (let r = 0; r < R; r++) {
        if (state.slot[p * R + r] >= 0) continue;
        const h0 = state.hard;
        const s = state.insert(l, p, r);
        const cost = (state.hard - h0) * HARD + s;
        state.remove(l);
        if (cost < bestCost) {
          bestCost = cost;
          bestP = p;
          bestR = r;
          ties = 1;
        } else if (cost === bestCost && rng.nextInt(++ties) === 0) {
          // Reservoir choice among equals, so different seeds start from different timetables.
          bestP = p;
          bestR = r;
        }
      }
    }
    state.insert(l, bestP, bestR);
    onStep?.();
  }
}

/**
 * Each pending lecture takes the first period where its course conflicts with nothing
 * and a room is free, in the first free room there; when no such period is left, the
 * first free slot. The model has at least as many slots as lectures, so a free slot
 * always exists. Costs periods × curricula per lecture, not a sweep of every course
 * and slot.
 */
function placeUnweighed(state: TimetableState, pending: number[][], freePeriod: (c: number, p: number) => boolean): void {
  const { periods: P, roomCount: R } = state.instance;
  const freeRoom = (p: number): number => {
    for (let r = 0; r < R; r++) if (state.slot[p * R + r] < 0) return r;
    return -1;
  };
  for (let c = 0; c < pending.length; c++) {
    for (const l of pending[c]) {
      let p = 0;
      while (p < P && !freePeriod(c, p)) p++;
      if (p === P) {
        p = 0;
        while (state.freeRooms[p] === 0) p++;
      }
      state.insert(l, p, freeRoom(p));
    }
    pending[c].length = 0;
  }
}

export class ConstructionStopped extends Error {
  override readonly name = 'ConstructionStopped';
}
