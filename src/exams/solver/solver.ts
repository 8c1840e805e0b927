/**
 * The exam solver: construction (saturation-degree colouring with rooms, repaired by
 * iterative forward search), then simulated annealing in the feasible space.
 *
 * This follows the strongest published exam solvers: Müller's ITC-2007 winner
 * (construction by iterative forward search, then local search that never leaves the
 * feasible space) and the simulated annealing of Battistutta, Schaerf & Urli (2017) and
 * Bellio et al. (2021), whose main neighbourhood is the Kempe chain, with room moves and
 * period swaps beside it. A geometric cooling schedule is stretched over the whole budget.
 *
 * Deterministic for a seed: all randomness comes from `SeededRandom`, and when an
 * iteration budget is given the temperature follows the iteration count, so a time limit
 * can only cut a run short, never change its path.
 */
import type { ExamArrangement, ExamModel, ExamPlacement, ExamSeating } from '../model/exam-model';
import { compileExamModel, type ExamInstance } from '../model/exam-instance';
import { construct } from './construction';
import { ExamState } from './exam-state';
import { assignInvigilators } from './invigilation';
import { KempeChainMove } from './kempe-chain';
import { PeriodSwapMove } from './period-swap';
import { SeededRandom } from './random';
import { RoomMove } from './room-move';

export type ExamSolvePhase = 'constructing' | 'optimising';

export interface ExamSolveProgress {
  phase: ExamSolvePhase;
  /** Share of the budget used, 0..1. */
  fraction: number;
  /** Soft cost of the best arrangement so far (Infinity before one exists). */
  bestCost: number;
  /** Hard violations (solver's count) of the best arrangement so far. */
  bestHard: number;
  /** Exams not placed yet. */
  unplacedExams: number;
  iterations: number;
  elapsedMs: number;
}

export interface ExamSolveOptions {
  /** PRNG seed; same seed + same `maxIterations` => same result. Default 1. */
  seed?: number;
  /** Wall-clock budget in ms. Default 60 000 (if `maxIterations` is absent). */
  timeLimitMs?: number;
  /** Iteration budget of the local search; makes the run reproducible. */
  maxIterations?: number;
  /** Cooperative cancellation, checked between units of work (a few ms apart at most). */
  signal?: AbortSignal;
  shouldStop?: () => boolean;
  /** Called at least every `progressIntervalMs` (default 500 ms). */
  onProgress?: (progress: ExamSolveProgress) => void;
  progressIntervalMs?: number;
  /**
   * Annealing temperatures in reported cost units. The start defaults to a calibration:
   * the temperature at which a worsening move of average size is accepted with
   * probability `initialAcceptance`.
   */
  initialTemperature?: number;
  initialAcceptance?: number;
  finalTemperature?: number;
  /** Share of iterations that try a room move (capacitated models). Default 0.1. */
  roomMoveRate?: number;
  /** Share of iterations that try a period swap. Default 0.002. */
  periodSwapRate?: number;
}

export type ExamStopReason = 'iterations' | 'time' | 'aborted' | 'optimal';

export interface ExamSolveResult {
  arrangement: ExamArrangement;
  /**
   * The solver's count of hard violations: unplaced exams, plus those no arrangement
   * avoids (exams that must share a period but share students; an exam larger than every
   * room when splitting is off). The search itself never breaks a hard constraint.
   */
  hard: number;
  /** Soft cost of the arrangement (reported units, as the evaluator computes it). */
  cost: number;
  /** Exams the solver could not place without breaking a hard constraint. */
  unplacedExams: string[];
  iterations: number;
  constructionSteps: number;
  elapsedMs: number;
  stopReason: ExamStopReason;
  seed: number;
}

interface Move {
  undo(): void;
}

const DEFAULT_TIME_LIMIT_MS = 60_000;
/** Iterations between clock, cancellation and progress checks (a few ms of work at most). */
const CHECK_EVERY = 256;
/** Share of the time limit the construction may take before the search starts anyway. */
const CONSTRUCTION_SHARE = 0.6;
/** Default end temperature, internal units: below the smallest cost step (1). */
const FINAL_TEMPERATURE = 0.3;
const CALIBRATION_SAMPLES = 400;
/** How often the search retries units the construction could not place (ms). */
const PENDING_RETRY_MS = 200;
const DEFAULT_INITIAL_ACCEPTANCE = 0.1;

export function solveExams(problem: ExamModel | ExamInstance, options: ExamSolveOptions = {}): ExamSolveResult {
  const instance = 'unitAdj' in problem ? problem : compileExamModel(problem);
  return new ExamAnnealer(instance, options).run();
}

class ExamAnnealer {
  private readonly state: ExamState;
  private readonly rng: SeededRandom;
  private readonly seed: number;
  private readonly start = performance.now();
  private readonly timeLimit: number;
  private readonly maxIterations: number;
  private readonly progressInterval: number;
  private lastProgress = -Infinity;
  private readonly bestPeriod: Int32Array;
  private readonly bestRoom: Int32Array;
  private bestPlaced = -1;
  private bestCost = Infinity;
  private iterations = 0;
  private constructionSteps = 0;
  private searchStart = 0;
  private pending: number[] = [];
  /** Per unit: the hard violations it brings once placed, whatever the search does. */
  private readonly unitHard: Int32Array;

  constructor(
    private readonly instance: ExamInstance,
    private readonly options: ExamSolveOptions,
  ) {
    this.seed = (options.seed ?? 1) >>> 0;
    this.rng = new SeededRandom(this.seed);
    this.state = new ExamState(instance);
    this.maxIterations = options.maxIterations ?? Infinity;
    this.timeLimit = options.timeLimitMs ?? (options.maxIterations === undefined ? DEFAULT_TIME_LIMIT_MS : Infinity);
    this.progressInterval = options.progressIntervalMs ?? 500;
    this.bestPeriod = new Int32Array(instance.unitCount).fill(-1);
    this.bestRoom = new Int32Array(instance.sittingCount).fill(-1);
    this.unitHard = Int32Array.from(instance.unitInternalHard);
    for (let s = 0; s < instance.sittingCount; s++) this.unitHard[instance.examUnit[instance.sittingExam[s]]] += instance.sittingOversize[s];
  }

  /** Hard violations of the best arrangement (or the current one before there is a best). */
  private hardOf(period: Int32Array): number {
    const inst = this.instance;
    let n = 0;
    for (let u = 0; u < inst.unitCount; u++) {
      n += period[u] < 0 ? inst.unitExamStart[u + 1] - inst.unitExamStart[u] : this.unitHard[u];
    }
    return n;
  }

  private cancelled(): boolean {
    return (this.options.signal?.aborted ?? false) || (this.options.shouldStop?.() ?? false);
  }

  private elapsed(): number {
    return performance.now() - this.start;
  }

  private fraction(now: number): number {
    return Math.min(1, Math.max(now / this.timeLimit, this.iterations / this.maxIterations));
  }

  private unplacedExams(ofBest: boolean): number {
    const inst = this.instance;
    const period = ofBest ? this.bestPeriod : this.state.unitPeriod;
    let n = 0;
    for (let u = 0; u < inst.unitCount; u++) if (period[u] < 0) n += inst.unitExamStart[u + 1] - inst.unitExamStart[u];
    return n;
  }

  private report(phase: ExamSolvePhase, now: number, force = false): void {
    if (!this.options.onProgress || (!force && now - this.lastProgress < this.progressInterval)) return;
    this.lastProgress = now;
    const haveBest = this.bestPlaced >= 0;
    const unplaced = haveBest ? this.unplacedExams(true) : this.unplacedExams(false);
    this.options.onProgress({
      phase,
      fraction: this.fraction(now),
      bestCost: haveBest ? this.bestCost / this.instance.costScale : Infinity,
      bestHard: haveBest ? this.hardOf(this.bestPeriod) : Infinity,
      unplacedExams: unplaced,
      iterations: this.iterations,
      elapsedMs: now,
    });
  }

  private saveBest(): void {
    this.bestPlaced = this.state.placedUnits;
    this.bestCost = this.state.cost;
    this.bestPeriod.set(this.state.unitPeriod);
    this.bestRoom.set(this.state.sittingRoom);
  }

  private improvesBest(): boolean {
    const { state } = this;
    return state.placedUnits > this.bestPlaced || (state.placedUnits === this.bestPlaced && state.cost < this.bestCost);
  }

  run(): ExamSolveResult {
    this.report('constructing', this.elapsed(), true);
    const constructionDeadline = this.timeLimit * CONSTRUCTION_SHARE;
    const outcome = construct(this.state, this.rng, {
      maxSteps: Number.isFinite(this.maxIterations) ? 50 * this.instance.unitCount + 1000 : Infinity,
      shouldStop: () => this.cancelled() || this.elapsed() >= constructionDeadline,
      onStep: () => this.report('constructing', this.elapsed()),
    });
    this.constructionSteps = outcome.steps;
    this.saveBest();
    const impossible = new Set(outcome.impossible);
    for (let u = 0; u < this.instance.unitCount; u++) if (this.state.unitPeriod[u] < 0 && !impossible.has(u)) this.pending.push(u);
    let stopReason: ExamStopReason;
    if (this.cancelled()) stopReason = 'aborted';
    else {
      this.searchStart = this.elapsed();
      this.report('optimising', this.searchStart, true);
      stopReason = this.anneal();
    }
    this.report('optimising', this.elapsed(), true);
    return this.result(stopReason);
  }

  /** Greedily places units the construction left out, where they now fit. */
  private placePending(): void {
    const { state, instance } = this;
    const P = instance.periodCount;
    this.pending = this.pending.filter((u) => {
      let best = -1;
      let bestCost = Infinity;
      for (let p = 0; p < P; p++) {
        if (instance.unitAllowed[u * P + p] === 0 || state.conflictCount[u * P + p] > 0 || !state.afterAllows(u, p)) continue;
        const before = state.cost;
        if (!state.tryPlace(u, p)) continue;
        const cost = state.cost - before;
        state.unplace(u);
        if (cost < bestCost) {
          best = p;
          bestCost = cost;
        }
      }
      if (best < 0) return true;
      state.tryPlace(u, best);
      return false;
    });
    if (this.improvesBest()) this.saveBest();
  }

  /** Start temperature from the average worsening move of a random sample. */
  private calibrate(kempe: KempeChainMove): number {
    const { state, instance, rng } = this;
    let sum = 0;
    let n = 0;
    for (let i = 0; i < CALIBRATION_SAMPLES; i++) {
      if ((i & 31) === 0) {
        if (this.cancelled()) break;
        this.report('optimising', this.elapsed());
      }
      const u = rng.nextInt(instance.unitCount);
      if (state.unitPeriod[u] < 0) continue;
      const before = state.cost;
      if (!kempe.apply(u, rng.nextInt(instance.periodCount))) continue;
      const delta = state.cost - before;
      kempe.undo();
      if (delta > 0) {
        sum += delta;
        n++;
      }
    }
    return n === 0 ? 10 * instance.costScale : sum / n / Math.log(1 / (this.options.initialAcceptance ?? DEFAULT_INITIAL_ACCEPTANCE));
  }

  private anneal(): ExamStopReason {
    const { state, rng, instance } = this;
    const P = instance.periodCount;
    const U = instance.unitCount;
    const M = instance.sittingCount;
    const R = instance.roomCount;
    const kempe = new KempeChainMove(state);
    const roomMove = new RoomMove(state);
    const periodSwap = new PeriodSwapMove(state);
    if (P < 2 && (M === 0 || R < 2)) return 'optimal';
    const scale = instance.costScale;
    const tEnd = this.options.finalTemperature !== undefined ? this.options.finalTemperature * scale : FINAL_TEMPERATURE;
    const t0 = Math.max(10 * tEnd, this.options.initialTemperature !== undefined ? this.options.initialTemperature * scale : this.calibrate(kempe));
    const logRatio = Math.log(tEnd / t0);
    const roomThreshold = M > 0 && R > 1 ? Math.floor((this.options.roomMoveRate ?? 0.1) * 4294967296) : 0;
    const swapThreshold = roomThreshold + Math.floor((this.options.periodSwapRate ?? 0.002) * 4294967296);
    let temperature = t0;
    let lastPendingTry = -Infinity;
    const seated = M > 0;
    const searchBudget = this.timeLimit - this.searchStart;

    for (;;) {
      if (this.iterations % CHECK_EVERY === 0) {
        if (this.bestPlaced === U && this.bestCost === 0) return 'optimal';
        if (this.iterations >= this.maxIterations) return 'iterations';
        const now = this.elapsed();
        if (now >= this.timeLimit) return 'time';
        if (this.cancelled()) return 'aborted';
        if (this.pending.length > 0 && now - lastPendingTry >= PENDING_RETRY_MS) {
          lastPendingTry = now;
          this.placePending();
        }
        this.report('optimising', now);
        const byTime = (now - this.searchStart) / searchBudget;
        const byIterations = this.iterations / this.maxIterations;
        temperature = t0 * Math.exp(logRatio * Math.min(1, Math.max(byTime, byIterations)));
      }
      this.iterations++;

      const draw = rng.nextUint32();
      // Metropolis: accept a change of cost delta iff delta <= threshold (exp(-delta/T) > u).
      const threshold = -temperature * Math.log(rng.nextFloat());
      const before = state.cost;
      let move: Move;
      if (draw < roomThreshold) {
        const s = rng.nextInt(M);
        if (!roomMove.apply(s, rng.nextInt(R), rng)) continue;
        move = roomMove;
      } else if (draw < swapThreshold) {
        const a = rng.nextInt(P);
        if (!periodSwap.apply(a, rng.nextInt(P))) continue;
        move = periodSwap;
      } else {
        const u = rng.nextInt(U);
        if (state.unitPeriod[u] < 0 || !kempe.build(u, rng.nextInt(P))) continue;
        // Rejected on the period part alone when even the best re-seating could not save it.
        if (kempe.delta - (seated ? kempe.roomCostBound() : 0) > threshold) {
          kempe.discard();
          continue;
        }
        if (!kempe.applyBuilt()) continue;
        move = kempe;
      }
      if (state.cost - before > threshold) move.undo();
      else if (this.improvesBest()) this.saveBest();
    }
  }

  private result(stopReason: ExamStopReason): ExamSolveResult {
    const inst = this.instance;
    const model = inst.model;
    const placements: ExamPlacement[] = [];
    const unplacedExams: string[] = [];
    const examSittings: number[][] = model.exams.map(() => []);
    for (let s = 0; s < inst.sittingCount; s++) examSittings[inst.sittingExam[s]].push(s);
    model.exams.forEach((exam, e) => {
      const period = this.bestPeriod[inst.examUnit[e]];
      if (period < 0) {
        unplacedExams.push(exam.code);
        return;
      }
      const seats = new Map<number, number>();
      for (const s of examSittings[e]) seats.set(this.bestRoom[s], (seats.get(this.bestRoom[s]) ?? 0) + inst.sittingSize[s]);
      const rooms: ExamSeating[] = [...seats].sort((a, b) => a[0] - b[0]).map(([r, n]) => ({ room: model.rooms[r].code, seats: n }));
      placements.push({ exam: exam.code, period, rooms });
    });
    return {
      arrangement: { placements, invigilation: assignInvigilators(model, placements) },
      hard: this.hardOf(this.bestPeriod),
      cost: this.bestCost / inst.costScale,
      unplacedExams,
      iterations: this.iterations,
      constructionSteps: this.constructionSteps,
      elapsedMs: this.elapsed(),
      stopReason,
      seed: this.seed,
    };
  }
}
