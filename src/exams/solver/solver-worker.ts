/**
 * Runs the exam solver in a worker thread (see `runSolverInWorker`), so a solve does not
 * block the service's event loop.
 */
import { join } from 'node:path';
import { runSolverInWorker, type SolveInWorkerHooks, type SolverWorkerSpec } from '../../solver-runtime/run-solver-in-worker';
import { SolveAbortedError, SolverWorkerError } from '../../solver-runtime/solver-errors';
import type { WorkerSolveOptions } from '../../solver-runtime/worker-protocol';
import type { ExamModel } from '../model/exam-model';
import type { ExamSolveOptions, ExamSolveProgress, ExamSolveResult } from './solver';

/** The serialisable part of `ExamSolveOptions` (no callbacks, no signal). */
export type ExamWorkerSolveOptions = WorkerSolveOptions<ExamSolveOptions>;
export type ExamSolveInWorkerHooks = SolveInWorkerHooks<ExamSolveProgress>;

/** The solve was aborted through the signal. `partial` is the best arrangement if the worker returned one. */
export class ExamSolveAbortedError extends SolveAbortedError<ExamSolveResult> {
  constructor(partial?: ExamSolveResult) {
    super('exam solve aborted', partial);
  }
}

/** The solver failed inside the worker (e.g. an invalid model); carries the original name. */
export class ExamSolverWorkerError extends SolverWorkerError {
  override readonly name = 'ExamSolverWorkerError';
}

const spec: SolverWorkerSpec<ExamSolveResult> = {
  entry: join(__dirname, 'solver-worker-entry'),
  name: 'exam solver',
  aborted: (partial) => new ExamSolveAbortedError(partial),
  failed: (originalName, message) => new ExamSolverWorkerError(originalName, message),
};

export function solveExamsInWorker(model: ExamModel, options: ExamWorkerSolveOptions = {}, hooks: ExamSolveInWorkerHooks = {}): Promise<ExamSolveResult> {
  return runSolverInWorker(spec, model, options, hooks);
}
