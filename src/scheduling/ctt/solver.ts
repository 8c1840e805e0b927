/**
 * The CB-CTT solver: saturation-degree construction, then simulated annealing.
 *
 * The annealing follows the approach that holds most ITC-2007 track-3 records in its
 * class (Bellio, Ceschia, Di Gaspero, Schaerf & Urli 2016): one neighbourhood,
 * "move a lecture to a (period, room); if that slot is taken, swap the two lectures",
 * sampled uniformly at random, evaluated incrementally, with hard violations weighted
 * into the cost and a geometric cooling schedule stretched over the whole budget.
 * Occasional Kempe-chain swaps between two periods (Lü & Hao 2010, Müller 2009) move
 * whole groups of mutually conflicting lectures, which single moves cannot do without
 * violating a hard constraint on the way.
 *
 * Deterministic for a seed: all randomness comes from `SeededRandom`, and when an
 * iteration budget is given the temperature follows the iteration count, so a time
 * limit can only cut a run short — the search, or a construction that outlasts its
 * share of the limit and places the rest unweighed — never change the path of a run
 * it does not cut.
 */
import { constructTimetable, ConstructionStopped } from './construction';
import { compileModel, type CttAssignment, type CttInstance, type CttModel } from './model';
import { SeededRandom } from './random';
import { TimetableState } from './timetable-state';

export type SolvePhase = 'constructing' | 'optimising';

export interface SolveProgress {
  phase: SolvePhase;
  /** Share of the budget used, 0..1 (time, or iterations when that is the tighter budget). */
  fraction: number;
  /** Soft penalty of the best timetable so far (Infinity before one exists). */
  bestPenalty: number;
  /** Hard violations (solver's count) of the best timetable so far. */
  bestHard: number;
  iterations: number;
  elapsedMs: number;
}

export interface SolveOptions {
  /** PRNG seed; same seed + same `maxIterations` ⇒ same result. Default 1. */
  seed?: number;
  /** Wall-clock budget in ms, construction included. Default 60 000 (if `maxIterations` is absent). */
  timeLimitMs?: number;
  /** Iteration budget of the local search; makes the run reproducible. */
  maxIterations?: number;
  /** Cooperative cancellation; checked every few thousand iterations (well under 100 ms). */
  signal?: AbortSignal;
  shouldStop?: () => boolean;
  /** Called at least every `progressIntervalMs` (default 500 ms). */
  onProgress?: (progress: SolveProgress) => void;
  progressIntervalMs?: number;
  /**
   * Annealing start and end temperatures (soft-penalty units). Defaults 8 and 0.1, with
   * hard weight 20 and Kempe rate 0.3: the best of a small sweep on comp02/04/06/07/10/12
   * at a fixed iteration budget (a higher end temperature, or no Kempe moves, was clearly worse).
   */
  initialTemperature?: number;
  finalTemperature?: number;
  /** Cost of one hard violation inside the search. */
  hardWeight?: number;
  /** Share of iterations that try a Kempe-chain swap instead of a move/swap (0..1). */
  kempeRate?: number;
}

export type StopReason = 'iterations' | 'time' | 'aborted' | 'optimal';

export interface SolveResult {
  assignments: CttAssignment[];
  /** The solver's own count of hard violations of the returned timetable (0 = feasible). */
  hard: number;
  /** The solver's own soft penalty (ITC weights) of the returned timetable. */
  penalty: number;
  iterations: number;
  elapsedMs: number;
  stopReason: StopReason;
  seed: number;
}

const DEFAULT_TIME_LIMIT_MS = 60_000;
/** Share of the time limit the construction may take before it places the rest unweighed. */
const CONSTRUCTION_SHARE = 0.6;
const CHECK_EVERY = 2048; // iterations between clock/cancellation checks (~1 ms of work)

/** Solves a model (compiling it) or an already compiled instance. */
export function solveCtt(problem: CttModel | CttInstance, options: SolveOptions = {}): SolveResult {
  const instance = 'lectureCourse' in problem ? problem : compileModel(problem);
  return new Annealer(instance, options).run();
}

class Annealer {
  private readonly state: TimetableState;
  private readonly rng: SeededRandom;
  private readonly seed: number;
  private readonly start = performance.now();
  private readonly timeLimit: number;
  private readonly maxIterations: number;
  private readonly progressInterval: number;
  private lastProgress = -Infinity;
  private bestPeriod: Int32Array;
  private bestRoom: Int32Array;
  private bestHard = Infinity;
  private bestSoft = Infinity;
  private iterations = 0;

  constructor(
    private readonly instance: CttInstance,
    private readonly options: SolveOptions,
  ) {
    this.seed = (options.seed ?? 1) >>> 0;
    this.rng = new SeededRandom(this.seed);
    this.state = new TimetableState(instance);
    this.maxIterations = options.maxIterations ?? Infinity;
    this.timeLimit = options.timeLimitMs ?? (options.maxIterations === undefined ? DEFAULT_TIME_LIMIT_MS : Infinity);
    this.progressInterval = options.progressIntervalMs ?? 500;
    this.bestPeriod = new Int32Array(instance.lectureCount);
    this.bestRoom = new Int32Array(instance.lectureCount);
  }

  private cancelled(): boolean {
    return (this.options.signal?.aborted ?? false) || (this.options.shouldStop?.() ?? false);
  }

  private elapsed(): number {
    return performance.now() - this.start;
  }

  private fraction(now: number): number {
    const byTime = now / this.timeLimit;
    const byIter = this.iterations / this.maxIterations;
    return Math.min(1, Math.max(byTime, byIter));
  }

  private report(phase: SolvePhase, now: number, force = false): void {
    if (!this.options.onProgress || (!force && now - this.lastProgress < this.progressInterval)) return;
    this.lastProgress = now;
    this.options.onProgress({
      phase,
      fraction: this.fraction(now),
      bestPenalty: this.bestSoft,
      bestHard: this.bestHard,
      iterations: this.iterations,
      elapsedMs: now,
    });
  }

  private saveBest(): void {
    this.bestHard = this.state.hard;
    this.bestSoft = this.state.soft;
    this.bestPeriod.set(this.state.lecPeriod);
    this.bestRoom.set(this.state.lecRoom);
  }

  run(): SolveResult {
    const { state, instance } = this;
    this.report('constructing', this.elapsed(), true);
    for (let l = 0; l < instance.lectureCount; l++) {
      if (instance.lockedPeriod[l] >= 0) state.insert(l, instance.lockedPeriod[l], instance.lockedRoom[l]);
    }
    let stopReason: StopReason | undefined;
    // The construction gets a share of the limit, so the search has time to repair what a
    // hurried construction leaves.
    const constructionDeadline = this.timeLimit * CONSTRUCTION_SHARE;
    try {
      constructTimetable(state, this.rng, {
        shouldStop: () => this.cancelled(),
        hurry: () => this.elapsed() >= constructionDeadline,
        onStep: () => this.report('constructing', this.elapsed()),
      });
    } catch (e) {
      if (!(e instanceof ConstructionStopped)) throw e;
      stopReason = 'aborted';
    }
    if (stopReason === undefined) {
      this.saveBest();
      this.report('optimising', this.elapsed(), true);
      stopReason = this.anneal();
      this.report('optimising', this.elapsed(), true);
    }
    return this.result(stopReason);
  }

  private result(stopReason: StopReason): SolveResult {
    const { instance } = this;
    const assignments: CttAssignment[] = [];
    if (this.bestHard !== Infinity) {
      for (let l = 0; l < instance.lectureCount; l++) {
        const p = this.bestPeriod[l];
        assignments.push({
          course: instance.courseCodes[instance.lectureCourse[l]],
          room: instance.roomCodes[this.bestRoom[l]],
          day: Math.floor(p / instance.periodsPerDay),
          period: p % instance.periodsPerDay,
        });
      }
    }
    return {
      assignments,
      hard: this.bestHard === Infinity ? -1 : this.bestHard,
      penalty: this.bestSoft === Infinity ? -1 : this.bestSoft,
      iterations: this.iterations,
      elapsedMs: this.elapsed(),
      stopReason,
      seed: this.seed,
    };
  }

  private anneal(): StopReason {
    const { state, rng, instance } = this;
    const P = instance.periods;
    const R = instance.roomCount;
    const lecCourse = instance.lectureCourse;
    const unavailable = instance.unavailable;
    const lockedPeriod = instance.lockedPeriod;
    const lecPeriod = state.lecPeriod;
    const lecRoom = state.lecRoom;
    const slot = state.slot;
    const movableList: number[] = [];
    for (let l = 0; l < instance.lectureCount; l++) if (lockedPeriod[l] < 0) movableList.push(l);
    const movable = Int32Array.from(movableList);
    const M = movable.length;
    const hardWeight = this.options.hardWeight ?? 20;
    const t0 = this.options.initialTemperature ?? 8;
    const tEnd = this.options.finalTemperature ?? 0.1;
    const logRatio = Math.log(tEnd / t0);
    let temperature = t0;
    if (M === 0) return 'optimal';
    const kempe = new KempeChains(instance, state);
    // Compared with a 32-bit draw, so the rate costs one integer comparison per iteration.
    const kempeThreshold = Math.floor((this.options.kempeRate ?? 0.3) * 4294967296);

    for (;;) {
      if (this.iterations % CHECK_EVERY === 0) {
        if (this.bestHard === 0 && this.bestSoft === 0) return 'optimal';
        if (this.iterations >= this.maxIterations) return 'iterations';
        const now = this.elapsed();
        if (now >= this.timeLimit) return 'time';
        if (this.cancelled()) return 'aborted';
        this.report('optimising', now);
        // Time-stretched geometric cooling: T goes from t0 to tEnd over the budget.
        temperature = t0 * Math.exp(logRatio * this.fraction(now));
      }
      this.iterations++;

      const l = movable[rng.nextInt(M)];
      const c = lecCourse[l];
      const p1 = lecPeriod[l];
      const r1 = lecRoom[l];
      if (kempeThreshold > 0 && rng.nextUint32() < kempeThreshold) {
        const hardBefore = state.hard;
        const softBefore = state.soft;
        if (!kempe.apply(l, rng.nextInt(P))) continue;
        const delta = (state.hard - hardBefore) * hardWeight + (state.soft - softBefore);
        if (delta <= 0 || rng.nextFloat() < Math.exp(-delta / temperature)) {
          if (state.hard < this.bestHard || (state.hard === this.bestHard && state.soft < this.bestSoft)) this.saveBest();
        } else {
          kempe.undo();
        }
        continue;
      }
      // Mostly any slot; sometimes keep the room (time-only move, kind to room stability)
      // or keep the period (room-only move, the only way to fix capacity without side effects).
      const kind = rng.nextUint32() & 7;
      const p2 = kind === 0 ? p1 : rng.nextInt(P);
      const r2 = kind === 1 || kind === 2 ? r1 : rng.nextInt(R);
      if (p2 === p1 && r2 === r1) continue;
      if (unavailable[c * P + p2] !== 0) continue;
      const l2 = slot[p2 * R + r2];
      if (l2 >= 0) {
        const c2 = lecCourse[l2];
        if (c2 === c || lockedPeriod[l2] >= 0 || unavailable[c2 * P + p1] !== 0) continue;
      }

      const hardBefore = state.hard;
      let soft = state.remove(l);
      if (l2 >= 0) soft += state.remove(l2);
      soft += state.insert(l, p2, r2);
      if (l2 >= 0) soft += state.insert(l2, p1, r1);
      const delta = (state.hard - hardBefore) * hardWeight + soft;
      if (delta <= 0 || rng.nextFloat() < Math.exp(-delta / temperature)) {
        if (state.hard < this.bestHard || (state.hard === this.bestHard && state.soft < this.bestSoft)) this.saveBest();
      } else {
        state.remove(l);
        if (l2 >= 0) state.remove(l2);
        state.insert(l, p1, r1);
        if (l2 >= 0) state.insert(l2, p2, r2);
      }
    }
  }
}

/**
 * Kempe-chain swap of two periods: starting from one lecture at p1, take the closure of
 * lectures at p1 and p2 linked by conflicts (shared curriculum or teacher) and exchange
 * their periods. If the timetable has no conflict in p1 and p2, it has none afterwards.
 * Each lecture keeps its room when that room is free in the new period; the others take
 * the free room closest in capacity (the smallest that fits, else the largest).
 */
class KempeChains {
  private readonly chain: Int32Array;
  private readonly fromPeriod: Int32Array;
  private readonly fromRoom: Int32Array;
  private size = 0;
  private readonly inChain: Uint8Array;
  private readonly roomsBySize: Int32Array;

  constructor(
    private readonly instance: CttInstance,
    private readonly state: TimetableState,
  ) {
    const n = 2 * instance.roomCount;
    this.chain = new Int32Array(n);
    this.fromPeriod = new Int32Array(n);
    this.fromRoom = new Int32Array(n);
    this.inChain = new Uint8Array(instance.lectureCount);
    this.roomsBySize = Int32Array.from([...instance.roomCapacity.keys()].sort((a, b) => instance.roomCapacity[a] - instance.roomCapacity[b]));
  }

  /** Builds and applies the chain of lecture l with period p2; false (nothing changed) if not applicable. */
  apply(l: number, p2: number): boolean {
    const { instance, state } = this;
    const R = instance.roomCount;
    const P = instance.periods;
    const C = instance.courseCount;
    const p1 = state.lecPeriod[l];
    if (p2 === p1) return false;
    const chain = this.chain;
    chain[0] = l;
    this.inChain[l] = 1;
    let size = 1;
    let ok = true;
    // Breadth-first closure: lectures of the other period that conflict with a chain member.
    for (let i = 0; i < size && ok; i++) {
      const a = chain[i];
      const ca = instance.lectureCourse[a];
      const other = state.lecPeriod[a] === p1 ? p2 : p1;
      for (let r = 0; r < R; r++) {
        const b = state.slot[other * R + r];
        if (b < 0 || this.inChain[b]) continue;
        const cb = instance.lectureCourse[b];
        if (cb !== ca && instance.conflict[ca * C + cb] === 0) continue;
        chain[size++] = b;
        this.inChain[b] = 1;
      }
    }
    for (let i = 0; i < size; i++) {
      const a = chain[i];
      this.inChain[a] = 0;
      const target = state.lecPeriod[a] === p1 ? p2 : p1;
      if (instance.lockedPeriod[a] >= 0 || instance.unavailable[instance.lectureCourse[a] * P + target] !== 0) ok = false;
    }
    if (!ok) return false;
    // Each period must have room for what comes in beyond what leaves.
    let toP2 = 0;
    for (let i = 0; i < size; i++) if (state.lecPeriod[chain[i]] === p1) toP2++;
    const toP1 = size - toP2;
    if (toP2 - toP1 > state.freeRooms[p2] || toP1 - toP2 > state.freeRooms[p1]) return false;
    this.size = size;
    for (let i = 0; i < size; i++) {
      const a = chain[i];
      this.fromPeriod[i] = state.lecPeriod[a];
      this.fromRoom[i] = state.lecRoom[a];
      state.remove(a);
    }
    // First the lectures whose room is free in the new period, then the rest.
    const pending: number[] = [];
    for (let i = 0; i < size; i++) {
      const target = this.fromPeriod[i] === p1 ? p2 : p1;
      const r = this.fromRoom[i];
      if (state.slot[target * R + r] < 0) state.insert(chain[i], target, r);
      else pending.push(i);
    }
    for (const i of pending) {
      const a = chain[i];
      const target = this.fromPeriod[i] === p1 ? p2 : p1;
      const students = instance.courseStudents[instance.lectureCourse[a]];
      let chosen = -1;
      for (let k = 0; k < R; k++) {
        const r = this.roomsBySize[k];
        if (state.slot[target * R + r] >= 0) continue;
        chosen = r;
        if (instance.roomCapacity[r] >= students) break;
      }
      // Found: the capacity check above guarantees a free room.
      state.insert(a, target, chosen);
    }
    return true;
  }

  /** Puts every lecture of the last applied chain back where it was. */
  undo(): void {
    const { state } = this;
    for (let i = 0; i < this.size; i++) state.remove(this.chain[i]);
    for (let i = 0; i < this.size; i++) state.insert(this.chain[i], this.fromPeriod[i], this.fromRoom[i]);
  }
}
