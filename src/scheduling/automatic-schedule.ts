/**
 * The AUTOMATIC_SCHEDULE job: solve a DRAFT plan of a term with the CB-CTT solver in a
 * worker thread, keep the plan's locked lectures, and save the rest in the same
 * transaction that completes the job.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Course, Room } from '../academic/entities';
import { lockTermRevision } from '../academic/academic-service';
import { requireId, requireInt } from '../academic/validation';
import type { JobEngine } from '../engine/engine';
import { badInput } from '../errors';
import { PermanentJobError, type KindDefaults, type KindRegistration, type ProcessorContext } from '../engine/registry';
import type { JobSnapshot } from '../engine/types';
import { say, type CodedText, type ParamsArgument } from '../i18n/message-catalog';
import { exclusivePer, JobKind } from '../job-kinds';
import { AUTOMATIC_SCHEDULE_MESSAGES } from './job-messages';
import { compileModel, CttModelError } from './ctt/model';
import type { SolveProgress, SolveResult } from './ctt/solver';
import { solveInWorker, type SolveInWorkerHooks, type WorkerSolveOptions } from './ctt/solver-worker';
import { ScheduleAssignment, SchedulePlan, SchedulePlanStatus } from './entities';
import { evaluateLectures, type PenaltyBreakdown } from './plan-service';
import { checkScheduleStart } from './schedule-start-check';
import { buildCttModel, codesOf, loadTermData, onOneSnapshot } from './term-data';

export const MIN_TIME_LIMIT_SECONDS = 1;
export const MAX_TIME_LIMIT_SECONDS = 600;
export const DEFAULT_TIME_LIMIT_SECONDS = 60;
export const DEFAULT_SEED = 1;

/** The job's steps, in order, as coded text (codes and sentences in job-messages.ts). */
export const AUTOMATIC_SCHEDULE_STEPS = {
  LOADING: say(AUTOMATIC_SCHEDULE_MESSAGES, 'schedule.loading-term'),
  BUILDING: say(AUTOMATIC_SCHEDULE_MESSAGES, 'schedule.building-model'),
  CONSTRUCTING: say(AUTOMATIC_SCHEDULE_MESSAGES, 'schedule.constructing'),
  OPTIMISING: say(AUTOMATIC_SCHEDULE_MESSAGES, 'schedule.optimising'),
  SAVING: say(AUTOMATIC_SCHEDULE_MESSAGES, 'schedule.saving'),
} as const;

/** The steps' English sentences (what `currentStep` says by default). */
export const AutomaticScheduleSteps = Object.fromEntries(Object.entries(AUTOMATIC_SCHEDULE_STEPS).map(([key, step]) => [key, step.text])) as {
  readonly [K in keyof typeof AUTOMATIC_SCHEDULE_STEPS]: string;
};

type Messages = typeof AUTOMATIC_SCHEDULE_MESSAGES;
/** A failure no retry fixes, with its code and parameters. */
const failure = <K extends keyof Messages & string>(code: K, ...params: ParamsArgument<Messages[K]>) =>
  new PermanentJobError(say(AUTOMATIC_SCHEDULE_MESSAGES, code, ...params));

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
async function enterStep(ctx: ProcessorContext<unknown>, name: CodedText, message?: CodedText): Promise<void> {
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

    await enterStep(ctx, AUTOMATIC_SCHEDULE_STEPS.LOADING);
    const plan = await em.findOne(SchedulePlan, { id: input.planId });
    if (!plan) throw failure('schedule.plan-missing', { planId: input.planId });
    if (plan.status !== SchedulePlanStatus.DRAFT) {
      throw failure('schedule.plan-not-draft', { planName: plan.name, status: plan.status });
    }
    const { data, locked } = await onOneSnapshot(em, async (em) => ({
      data: await loadTermData(em, plan.term.id),
      locked: await em.find(ScheduleAssignment, { plan: plan.id, locked: true }),
    }));

    await enterStep(
      ctx,
      AUTOMATIC_SCHEDULE_STEPS.BUILDING,
      say(AUTOMATIC_SCHEDULE_MESSAGES, 'schedule.model-size', { courses: data.courses.length, rooms: data.rooms.length, lockedLectures: locked.length }),
    );
    const model = buildCttModel(data, locked);
    try {
      compileModel(model);
    } catch (error) {
      if (error instanceof CttModelError) throw failure('schedule.term-infeasible', { termCode: data.term.code, detail: error.message });
      throw error;
    }

    await enterStep(ctx, AUTOMATIC_SCHEDULE_STEPS.CONSTRUCTING);
    let optimising = false;
    const onProgress = (p: SolveProgress) => {
      if (p.phase === 'optimising' && !optimising) {
        optimising = true;
        ctx.progress.step(AUTOMATIC_SCHEDULE_STEPS.OPTIMISING);
      }
      const complete = Number.isFinite(p.bestPenalty);
      ctx.progress.report(
        p.fraction,
        say(AUTOMATIC_SCHEDULE_MESSAGES, 'solver.progress', {
          bestPenalty: complete ? p.bestPenalty : null,
          hardViolations: complete ? p.bestHard : 0,
          moves: p.iterations,
        }),
      );
    };
    const solved = await solve(model, { seed: input.seed, timeLimitMs: input.timeLimitSeconds * 1_000, progressIntervalMs: 500 }, { signal, onProgress });
    signal.throwIfAborted();

    await enterStep(ctx, AUTOMATIC_SCHEDULE_STEPS.SAVING);
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
      if (!current) throw failure('schedule.plan-deleted', { planId: plan.id });
      if (current.status !== SchedulePlanStatus.DRAFT) {
        throw failure('schedule.plan-status-changed', { planName: current.name, status: current.status });
      }
      const nowLocked = await tx.find(ScheduleAssignment, { plan: plan.id, locked: true });
      if (lockSignature(nowLocked) !== signature) {
        throw failure('schedule.locks-changed', { planName: current.name });
      }
      // And the term what it was solved for: any change since raised its revision, and
      // none can commit before this transaction does.
      if ((await lockTermRevision(tx, data.term.id)) !== data.term.revision) throw failure('schedule.term-changed', { termCode: data.term.code });
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

