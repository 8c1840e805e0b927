/**
 * The MAKEUP_EXAM_AUTO job: arrange a make-up session's exams with the exam solver in a
 * worker thread, check the result with the independent evaluator, and save it in the
 * same transaction that completes the job (only if the session did not change meanwhile).
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireId, requireInt } from '../academic/validation';
import type { JobEngine } from '../engine/engine';
import { badInput } from '../engine/errors';
import { PermanentJobError, type KindDefaults, type KindRegistration, type ProcessorContext } from '../engine/registry';
import type { JobSnapshot } from '../engine/types';
import { say, type CodedText, type ParamsArgument } from '../i18n/message-catalog';
import { exclusivePer, JobKind } from '../job-kinds';
import { MAKEUP_EXAM_MESSAGES } from './job-messages';
import { saveArrangement } from './arrangement-service';
import { MakeupExamSession, MakeupExamSessionFormat } from './entities';
import { evaluateArrangement, type ExamHardViolations, type ExamSoftCost } from './evaluation/evaluator';
import type { ExamModel } from './model/exam-model';
import { ExamModelError } from './model/exam-model-error';
import { validateModel } from './model/validate-model';
import { checkMakeupStart } from './makeup-start-check';
import { loadSessionModel, type SessionModel } from './session-model';
import type { ExamSolveProgress, ExamSolveResult, ExamStopReason } from './solver/solver';
import { ExamSolverWorkerError, solveExamsInWorker, type ExamSolveInWorkerHooks, type ExamWorkerSolveOptions } from './solver/solver-worker';

export const MIN_TIME_LIMIT_SECONDS = 1;
export const MAX_TIME_LIMIT_SECONDS = 600;
export const DEFAULT_TIME_LIMIT_SECONDS = 60;
export const DEFAULT_SEED = 1;
/** An iteration budget makes a run reproducible whatever the machine's speed. */
export const MAX_ITERATIONS = 1_000_000_000;

/** One active arrangement per make-up session. */
export const MAKEUP_EXAM_SESSION_KEY = exclusivePer('makeup-exam-session');
export const makeupExamSessionKey = (sessionId: string) => MAKEUP_EXAM_SESSION_KEY.key(sessionId);

/** The job's steps, in order, as coded text (codes and sentences in job-messages.ts). */
export const MAKEUP_EXAM_STEPS = {
  COLLECTING: say(MAKEUP_EXAM_MESSAGES, 'makeup.collecting'),
  BUILDING: say(MAKEUP_EXAM_MESSAGES, 'makeup.building-graph'),
  ASSIGNING_PERIODS: say(MAKEUP_EXAM_MESSAGES, 'makeup.assigning-periods'),
  OPTIMISING: say(MAKEUP_EXAM_MESSAGES, 'makeup.optimising'),
  ASSIGNING_INVIGILATORS: say(MAKEUP_EXAM_MESSAGES, 'makeup.assigning-invigilators'),
  SAVING: say(MAKEUP_EXAM_MESSAGES, 'makeup.saving'),
} as const;

/** The steps' English sentences (what `currentStep` says by default). */
export const MakeupExamSteps = Object.fromEntries(Object.entries(MAKEUP_EXAM_STEPS).map(([key, step]) => [key, step.text])) as {
  readonly [K in keyof typeof MAKEUP_EXAM_STEPS]: string;
};

type Messages = typeof MAKEUP_EXAM_MESSAGES;
const text = <K extends keyof Messages & string>(code: K, ...params: ParamsArgument<Messages[K]>) => say(MAKEUP_EXAM_MESSAGES, code, ...params);

export interface MakeupExamArrangementInput {
  sessionId: string;
  timeLimitSeconds: number;
  seed: number;
  /** Moves of the local search; with it the same seed gives the same arrangement on any machine. */
  maxIterations: number | null;
}

export interface MakeupExamArrangementResult {
  sessionId: string;
  arrangementId: string;
  exams: number;
  students: number;
  periodsUsed: number;
  hardViolations: number;
  cost: number;
  hard: ExamHardViolations;
  soft: ExamSoftCost;
  unplacedExams: string[];
  timeUsedMs: number;
  seed: number;
  iterations: number;
  stopReason: ExamStopReason;
}

/** Checks and normalises the job input at enqueue (BAD_USER_INPUT naming the field). */
export function validateMakeupExamArrangementInput(raw: unknown): MakeupExamArrangementInput {
  if (!raw || typeof raw !== 'object') throw badInput('input must be an object { sessionId, timeLimitSeconds, seed }');
  const input = raw as Record<string, unknown>;
  return {
    sessionId: requireId('sessionId', input.sessionId),
    timeLimitSeconds: requireInt('timeLimitSeconds', input.timeLimitSeconds ?? DEFAULT_TIME_LIMIT_SECONDS, MIN_TIME_LIMIT_SECONDS, MAX_TIME_LIMIT_SECONDS),
    seed: requireInt('seed', input.seed ?? DEFAULT_SEED, 0, 2 ** 31 - 1),
    maxIterations: input.maxIterations == null ? null : requireInt('maxIterations', input.maxIterations, 1, MAX_ITERATIONS),
  };
}

/** Why a session cannot be arranged as it is, in words a person can act on; null when it can. */
function arrangeable(data: SessionModel): CodedText | null {
  const { session, model } = data;
  const sessionCode = session.code;
  if (model.periods.length === 0) return text('makeup.no-periods', { sessionCode });
  if (session.capacitated && model.rooms.length === 0) return text('makeup.no-rooms', { sessionCode });
  if (model.exams.length === 0) {
    return session.format === MakeupExamSessionFormat.TERM
      ? text('makeup.no-failed-students', { sessionCode, passingScore: session.passingScore })
      : text('makeup.no-exams', { sessionCode });
  }
  if (session.format === MakeupExamSessionFormat.TERM && data.invigilators.length === 0) return text('makeup.no-invigilators', { sessionCode });
  try {
    validateModel(model);
  } catch (error) {
    if (error instanceof ExamModelError) return text('makeup.session-invalid', { sessionCode, detail: error.message });
    throw error;
  }
  return null;
}

/** A failure no retry fixes, its sentence starting with a capital (it is a job's error message). */
const failure = (coded: CodedText) => new PermanentJobError({ ...coded, text: coded.text.charAt(0).toUpperCase() + coded.text.slice(1) });

/**
 * Starts an arrangement of a session: refuses at once a session with nothing to arrange
 * (`checkMakeupStart`: a BAD_USER_INPUT now, not a failed job later), then enqueues; a
 * second start while one is active is a CONFLICT naming it. Nothing of the session is
 * loaded here; the job builds and checks the full model and fails permanently, with the
 * reason, on what only the model shows.
 */
export async function startMakeupExamArrangement(
  deps: { em: EntityManager; engine: Pick<JobEngine, 'enqueue'> },
  rawInput: { sessionId: string; timeLimitSeconds?: number | null; seed?: number | null; maxIterations?: number | null },
  requestedBy?: string | null,
): Promise<JobSnapshot> {
  const input = validateMakeupExamArrangementInput(rawInput);
  await checkMakeupStart(deps.em, input.sessionId);
  const { job } = await deps.engine.enqueue({
    kind: JobKind.MAKEUP_EXAM_AUTO,
    input,
    requestedBy: requestedBy ?? null,
    exclusiveKey: makeupExamSessionKey(input.sessionId),
  });
  return job;
}

export type ExamSolve = (model: ExamModel, options: ExamWorkerSolveOptions, hooks: ExamSolveInWorkerHooks) => Promise<ExamSolveResult>;

export interface MakeupExamArrangementOptions {
  /** The solver runner; the worker thread by default (tests may wrap it). */
  solve?: ExamSolve;
  /**
   * Test hook: called inside the saving transaction once the old arrangement is gone and
   * before the new one is written in full; throwing rolls the whole save back.
   */
  beforeSave?: (sessionId: string) => void | Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Names a step and lets it reach the database before the next (steps close together would merge). */
async function enterStep(ctx: ProcessorContext<unknown>, name: CodedText, message?: CodedText): Promise<void> {
  ctx.progress.step(name, message);
  await sleep(20);
}

function progressMessage(p: ExamSolveProgress): CodedText {
  const complete = Number.isFinite(p.bestCost);
  return text('solver.progress', {
    bestPenalty: complete ? Number(p.bestCost.toFixed(4)) : null,
    hardViolations: complete ? p.bestHard : 0,
    moves: p.iterations,
    unplacedExams: p.unplacedExams,
  });
}

export function createMakeupExamArrangementProcessor(options: MakeupExamArrangementOptions = {}) {
  const solve = options.solve ?? solveExamsInWorker;
  return async (ctx: ProcessorContext<MakeupExamArrangementInput>): Promise<MakeupExamArrangementResult> => {
    const input = validateMakeupExamArrangementInput(ctx.input);
    const { em, signal } = ctx;

    await enterStep(ctx, MAKEUP_EXAM_STEPS.COLLECTING);
    const data = await loadSessionModel(em, input.sessionId).catch((error: { code?: string }) => {
      if (error.code === 'NOT_FOUND') throw failure(text('makeup.session-missing', { sessionId: input.sessionId }));
      throw error;
    });
    const problem = arrangeable(data);
    if (problem) throw failure(problem);
    const { model } = data;

    await enterStep(
      ctx,
      MAKEUP_EXAM_STEPS.BUILDING,
      text('makeup.model-size', { exams: model.exams.length, students: data.students, periods: model.periods.length, rooms: model.rooms.length }),
    );
    // The solver starts by constructing: the step is entered now, as a small session can be
    // built before the solver's first report, which then already says "optimising".
    await enterStep(ctx, MAKEUP_EXAM_STEPS.ASSIGNING_PERIODS);
    // The solver constructs, then optimises; it never goes back.
    let optimising = false;
    const onProgress = (p: ExamSolveProgress) => {
      if (p.phase === 'optimising' && !optimising) {
        optimising = true;
        ctx.progress.step(MAKEUP_EXAM_STEPS.OPTIMISING);
      }
      ctx.progress.report(p.fraction, progressMessage(p));
    };
    let solved: ExamSolveResult;
    try {
      solved = await solve(
        model,
        { seed: input.seed, timeLimitMs: input.timeLimitSeconds * 1_000, ...(input.maxIterations === null ? {} : { maxIterations: input.maxIterations }), progressIntervalMs: 500 },
        { signal, onProgress },
      );
    } catch (error) {
      if (error instanceof ExamSolverWorkerError && error.originalName === 'ExamModelError') {
        throw failure(text('makeup.session-invalid', { sessionCode: data.session.code, detail: error.message }));
      }
      throw error;
    }
    signal.throwIfAborted();

    await enterStep(ctx, MAKEUP_EXAM_STEPS.ASSIGNING_INVIGILATORS, text('makeup.invigilation-size', { rooms: solved.arrangement.invigilation.length }));
    const evaluation = evaluateArrangement(model, solved.arrangement);

    await enterStep(ctx, MAKEUP_EXAM_STEPS.SAVING);
    return ctx.completeWithin(async (tx) => {
      // The session must still be what was arranged: any edit since raised its revision.
      const current = await tx.findOne(MakeupExamSession, { id: data.session.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!current) throw failure(text('makeup.session-deleted', { sessionCode: data.session.code }));
      if (current.revision !== data.session.revision) throw failure(text('makeup.session-changed', { sessionCode: current.code }));
      const saved = await saveArrangement(tx, data, current, solved.arrangement, evaluation, {
        jobId: ctx.job.id,
        seed: solved.seed,
        timeUsedMs: Math.round(solved.elapsedMs),
        iterations: solved.iterations,
        unplacedExams: solved.unplacedExams,
        beforeRows: options.beforeSave ? () => options.beforeSave!(current.id) : undefined,
      });
      return {
        sessionId: current.id,
        arrangementId: saved.id,
        exams: model.exams.length,
        students: data.students,
        periodsUsed: new Set(solved.arrangement.placements.map((p) => p.period)).size,
        hardViolations: evaluation.hard.total,
        cost: evaluation.soft.total,
        hard: evaluation.hard,
        soft: evaluation.soft,
        unplacedExams: solved.unplacedExams,
        timeUsedMs: Math.round(solved.elapsedMs),
        seed: solved.seed,
        iterations: solved.iterations,
        stopReason: solved.stopReason,
      } satisfies MakeupExamArrangementResult;
    });
  };
}

export function makeupExamArrangementRegistration(
  defaults: KindDefaults,
  options: MakeupExamArrangementOptions = {},
): KindRegistration<MakeupExamArrangementInput, MakeupExamArrangementResult> {
  return {
    kind: JobKind.MAKEUP_EXAM_AUTO,
    defaults,
    validateInput: validateMakeupExamArrangementInput,
    processor: createMakeupExamArrangementProcessor(options),
  };
}
