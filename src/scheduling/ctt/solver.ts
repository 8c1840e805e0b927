/**
 * The CB-CTT solver: saturation-degree construction, then simulated annealing.
 *
 * The annealing follows the approach that holds most ITC-2007 track-3 records in its
 * class (Bellio, Ceschia, Di Gaspero, Schaerf & Urli 2016): one neighbourhood,
 * "move a lecture to a (period, room); if that slot is taken, swap the two lectures",
 * sampled uniformly at random, evaluated incrementally, with hard violations weighted
 * into the cost and a geometric cooling schedule stretched over the whole budget.
 * Occasional Kempe-chain swaps between two periods let the search move whole groups of
 * mutually conflicting lectures, which single moves cannot do without violating a
 * hard constraint on the way.
 *
 * Deterministic for a seed: all randomness comes from `SeededRandom`, and when an
 * iteration budget is given the temperature follows the iteration count, so a time
 * limit can only cut a run short, never change its path.
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
  /** Wall-clock budget in ms. Default 60 000 (if `maxIterations` is absent). */
  timeLimitMs?: number;
  /** Iteration budget of the local search; makes the run reproducible. */
  maxIterations?: number;
  /** Cooperative cancellation; checked every few thousand iterations (well under 100 ms). */
  signal?: AbortSignal;
  shouldStop?: () => boolean;
  /** Called at least every `progressIntervalMs` (default 500 ms). */
  onProgress?: (progress: SolveProgress) => void;
  progressIntervalMs?: number;
  /** Annealing start and end temperatures (soft-penalty units). */
  initialTemperature?: number;
  finalTemperature?: number;
  /** Cost of one hard violation inside the search. */
  hardWeight?: number;
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
    try {
      constructTimetable(state, this.rng, () => this.cancelled());
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
    const t0 = this.options.initialTemperature ?? 4;
    const tEnd = this.options.finalTemperature ?? 0.15;
    const logRatio = Math.log(tEnd / t0);
    let temperature = t0;
    if (M === 0) return 'optimal';

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
