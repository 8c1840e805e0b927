/**
 * Runs the timetable solver in a worker thread (see `runSolverInWorker`), so a solve does
 * not block the service's event loop.
 */
import { join } from 'node:path';
import { runSolverInWorker, type SolveInWorkerHooks as WorkerHooks, type SolverWorkerSpec } from '../../solver-runtime/run-solver-in-worker';
import { SolveAbortedError, SolverWorkerError } from '../../solver-runtime/solver-errors';
import type { WorkerSolveOptions as SerialisableOptions } from '../../solver-runtime/worker-protocol';
import type { CttModel } from './model';
import type { SolveOptions, SolveProgress, SolveResult } from './solver';

/** The serialisable part of `SolveOptions` (no callbacks, no signal). */
export type WorkerSolveOptions = SerialisableOptions<SolveOptions>;
export type SolveInWorkerHooks = WorkerHooks<SolveProgress>;

/** The solve was aborted through the signal. `partial` is the best timetable if the worker returned one. */
export class CttSolveAbortedError extends SolveAbortedError<SolveResult> {
  constructor(partial?: SolveResult) {
    super('timetable solve aborted', partial);
  }
}

/** The solver failed inside the worker (e.g. an invalid model); carries the original name. */
export class CttSolverWorkerError extends SolverWorkerError {
  override readonly name = 'CttSolverWorkerError';
}

const spec: SolverWorkerSpec<SolveResult> = {
  entry: join(__dirname, 'solver-worker-entry'),
  name: 'solver',
  aborted: (partial) => new CttSolveAbortedError(partial),
  failed: (originalName, message) => new CttSolverWorkerError(originalName, message),
};

export function solveInWorker(model: CttModel, options: WorkerSolveOptions = {}, hooks: SolveInWorkerHooks = {}): Promise<SolveResult> {
  return runSolverInWorker(spec, model, options, hooks);
}
