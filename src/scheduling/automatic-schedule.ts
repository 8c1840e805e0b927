/**
 * The AUTOMATIC_SCHEDULE job: solve a DRAFT plan of a term with the CB-CTT solver in a
 * worker thread, keep the plan's locked lectures, and save the rest in the same
 * transaction that completes the job.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Course, Room } from '../academic/entities';
import { requireId, requireInt } from '../academic/validation';
import type { JobEngine } from '../engine/engine';
import { badInput } from '../errors';
import { PermanentJobError, type KindDefaults, type KindRegistration, type ProcessorContext } from '../engine/registry';
import type { JobSnapshot } from '../engine/types';
import { exclusivePer, JobKind } from '../job-kinds';
import { compileModel, CttModelError } from './ctt/model';
import type { SolveProgress, SolveResult } from './ctt/solver';
import { solveInWorker, type SolveInWorkerHooks, type WorkerSolveOptions } from './ctt/solver-worker';
import { ScheduleAssignment, SchedulePlan, SchedulePlanStatus } from './entities';
import { evaluateLectures, type PenaltyBreakdown } from './plan-service';
import { checkScheduleStart } from './schedule-start-check';
import { buildCttModel, codesOf, loadTermData } from './term-data';

export const MIN_TIME_LIMIT_SECONDS = 1;
export const MAX_TIME_LIMIT_SECONDS = 600;
export const DEFAULT_TIME_LIMIT_SECONDS = 60;
export const DEFAULT_SEED = 1;

export const AutomaticScheduleSteps = {
  LOADING: 'Loading the term',
  BUILDING: 'Building the model',
  CONSTRUCTING: 'Constructing',
  OPTIMISING: 'Optimising',
  SAVING: 'Saving the plan',
} as const;

export interface AutomaticScheduleInput {
  planId: string;
  timeLimitSeconds: number;
  seed: number;
}

export interface AutomaticScheduleResult {
  planId: string;
  hardViolations: number;
  penalty: number;
  breakdown: PenaltyBreakdown;
  timeUsedMs: number;
  seed: number;
  iterations: number;
  stopReason: string;
  lecturesPlaced: number;
  lockedKept: number;
}

/** Checks and normalises the job input at enqueue (BAD_USER_INPUT naming the field). */
export function validateAutomaticScheduleInput(raw: unknown): AutomaticScheduleInput {
  if (!raw || typeof raw !== 'object') throw badInput('input must be an object { planId, timeLimitSeconds, seed }');
  const input = raw as Record<string, unknown>;
  return {
    planId: requireId('planId', input.planId),
    timeLimitSeconds: requireInt('timeLimitSeconds', input.timeLimitSeconds ?? DEFAULT_TIME_LIMIT_SECONDS, MIN_TIME_LIMIT_SECONDS, MAX_TIME_LIMIT_SECONDS),
    seed: requireInt('seed', input.seed ?? DEFAULT_SEED, 0, 2 ** 31 - 1),
  };
}

/** One active job per plan. */
export const SCHEDULE_PLAN_KEY = exclusivePer('schedule-plan');
export const schedulePlanKey = (planId: string) => SCHEDULE_PLAN_KEY.key(planId);

/**
 * Starts a solve of a DRAFT plan: refuses at once what a few aggregates over the plan and
 * its term show cannot succeed (`checkScheduleStart`: a BAD_USER_INPUT now, not a failed
 * job later), then enqueues. Nothing of the term is loaded here, so a start costs the
 * same on any term; the job compiles the full model and fails permanently, with the
 * reason, on what only the model shows.
 */
export async function startAutomaticSchedule(
  deps: { em: EntityManager; engine: Pick<JobEngine, 'enqueue'> },
  rawInput: { planId: string; timeLimitSeconds?: number | null; seed?: number | null },
  requestedBy?: string | null,
): Promise<JobSnapshot> {
  const input = validateAutomaticScheduleInput(rawInput);
  const target = await checkScheduleStart(deps.em, input.planId);
  const { job } = await deps.engine.enqueue({
    kind: JobKind.AUTOMATIC_SCHEDULE,
    input,
    requestedBy: requestedBy ?? null,
    exclusiveKey: schedulePlanKey(target.planId),
  });
  return job;
}

export type Solve = (model: Parameters<typeof solveInWorker>[0], options: WorkerSolveOptions, hooks: SolveInWorkerHooks) => Promise<SolveResult>;

export interface AutomaticScheduleOptions {
  /** The solver runner; the worker thread by default (tests may wrap it). */
  solve?: Solve;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Names a step and lets it reach the database before the next (steps close together would merge). */
async function enterStep(ctx: ProcessorContext<unknown>, name: string, message?: string): Promise<void> {
  ctx.progress.step(name, message);
  await sleep(20);
}

const lockSignature = (rows: readonly ScheduleAssignment[]) =>
  rows
    .map((a) => `${a.course.id}/${a.lectureIndex}@${a.day}.${a.period}:${a.room.id}`)
    .sort()
    .join('|');

export function createAutomaticScheduleProcessor(options: AutomaticScheduleOptions = {}) {
  const solve = options.solve ?? solveInWorker;
  return async (ctx: ProcessorContext<AutomaticScheduleInput>): Promise<AutomaticScheduleResult> => {
    const input = validateAutomaticScheduleInput(ctx.input);
    const { em, signal } = ctx;

    await enterStep(ctx, AutomaticScheduleSteps.LOADING);
    const plan = await em.findOne(SchedulePlan, { id: input.planId });
    if (!plan) throw new PermanentJobError(`Schedule plan ${input.planId} no longer exists`);
    if (plan.status !== SchedulePlanStatus.DRAFT) {
      throw new PermanentJobError(`Plan "${plan.name}" is ${plan.status} now; only a DRAFT can be scheduled (copy it to make a new draft)`);
    }
    const data = await loadTermData(em, plan.term.id);
    const locked = await em.find(ScheduleAssignment, { plan, locked: true });

    await enterStep(ctx, AutomaticScheduleSteps.BUILDING, `${data.courses.length} courses, ${data.rooms.length} rooms, ${locked.length} locked lectures`);
    const model = buildCttModel(data, locked);
    try {
      compileModel(model);
    } catch (error) {
      if (error instanceof CttModelError) throw new PermanentJobError(`Term ${data.term.code} cannot be timetabled as it is: ${error.message}`);
      throw error;
    }

    await enterStep(ctx, AutomaticScheduleSteps.CONSTRUCTING);
    let optimising = false;
    const onProgress = (p: SolveProgress) => {
      if (p.phase === 'optimising' && !optimising) {
        optimising = true;
        ctx.progress.step(AutomaticScheduleSteps.OPTIMISING);
      }
      const best = Number.isFinite(p.bestPenalty) ? `best penalty ${p.bestPenalty}` : 'no timetable yet';
      const hard = p.bestHard > 0 && Number.isFinite(p.bestPenalty) ? `, ${p.bestHard} hard violations` : '';
      ctx.progress.report(p.fraction, `${best}${hard}, ${p.iterations} moves`);
    };
    const solved = await solve(model, { seed: input.seed, timeLimitMs: input.timeLimitSeconds * 1_000, progressIntervalMs: 500 }, { signal, onProgress });
    signal.throwIfAborted();

    await enterStep(ctx, AutomaticScheduleSteps.SAVING);
    const codes = codesOf(data);
    // Lock rows keep their lecture index; the solver's other lectures of a course take the free ones.
    const lockedAt = new Map(locked.map((a) => [`${a.course.id}@${a.day}.${a.period}:${a.room.id}`, a]));
    const usedIndices = new Map<string, Set<number>>();
    for (const a of locked) usedIndices.set(a.course.id, (usedIndices.get(a.course.id) ?? new Set()).add(a.lectureIndex));
    const fresh: { courseId: string; lectureIndex: number; day: number; period: number; roomId: string }[] = [];
    const keptLocks = new Set<ScheduleAssignment>();
    for (const a of solved.assignments) {
      const course = codes.courseByCode.get(a.course)!;
      const room = codes.roomByCode.get(a.room)!;
      const lock = lockedAt.get(`${course.id}@${a.day}.${a.period}:${room.id}`);
      if (lock && !keptLocks.has(lock)) {
        keptLocks.add(lock);
        continue;
      }
      const used = usedIndices.get(course.id) ?? new Set<number>();
      let index = 0;
      while (used.has(index)) index++;
      used.add(index);
      usedIndices.set(course.id, used);
      fresh.push({ courseId: course.id, lectureIndex: index, day: a.day, period: a.period, roomId: room.id });
    }
    const placed = [
      ...locked.map((a) => ({ courseId: a.course.id, lectureIndex: a.lectureIndex, day: a.day, period: a.period, roomId: a.room.id })),
      ...fresh,
    ];
    const evaluation = evaluateLectures(data, placed, solved.assignments);
    const signature = lockSignature(locked);

    return ctx.completeWithin(async (tx) => {
      // The plan must still be the DRAFT we solved, with the same locks.
      const current = await tx.findOne(SchedulePlan, { id: plan.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!current) throw new PermanentJobError(`Schedule plan ${plan.id} was deleted during the solve`);
      if (current.status !== SchedulePlanStatus.DRAFT) {
        throw new PermanentJobError(`Plan "${current.name}" became ${current.status} during the solve; the result was not saved`);
      }
      const nowLocked = await tx.find(ScheduleAssignment, { plan: plan.id, locked: true });
      if (lockSignature(nowLocked) !== signature) {
        throw new PermanentJobError(`The locked lectures of plan "${current.name}" changed during the solve; start the schedule again`);
      }
      await tx.nativeDelete(ScheduleAssignment, { plan: plan.id, locked: false });
      for (const a of fresh) {
        tx.create(ScheduleAssignment, {
          plan: current,
          course: tx.getReference(Course, a.courseId),
          lectureIndex: a.lectureIndex,
          day: a.day,
          period: a.period,
          room: tx.getReference(Room, a.roomId),
          locked: false,
        });
      }
      current.updatedAt = new Date();
      return {
        planId: plan.id,
        hardViolations: evaluation.hardViolations,
        penalty: evaluation.penalty,
        breakdown: evaluation.breakdown,
        timeUsedMs: Math.round(solved.elapsedMs),
        seed: solved.seed,
        iterations: solved.iterations,
        stopReason: solved.stopReason,
        lecturesPlaced: placed.length,
        lockedKept: keptLocks.size,
      } satisfies AutomaticScheduleResult;
    });
  };
}

export function automaticScheduleRegistration(defaults: KindDefaults, options: AutomaticScheduleOptions = {}): KindRegistration<AutomaticScheduleInput, AutomaticScheduleResult> {
  return {
    kind: JobKind.AUTOMATIC_SCHEDULE,
    defaults,
    validateInput: validateAutomaticScheduleInput,
    processor: createAutomaticScheduleProcessor(options),
  };
}

