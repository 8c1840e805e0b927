/**
 * Messages between `solveInWorker` and the worker entry. Only plain data crosses the
 * boundary (structured clone), so the model goes as `CttModel`, never compiled.
 */
import type { CttModel } from './model';
import type { SolveOptions, SolveProgress, SolveResult } from './solver';

/** The serialisable part of `SolveOptions` (no callbacks, no signal). */
export type WorkerSolveOptions = Omit<SolveOptions, 'signal' | 'shouldStop' | 'onProgress'>;

export interface SolverWorkerData {
  model: CttModel;
  options: WorkerSolveOptions;
  /**
   * One Int32 set to 1 by the parent to ask for a stop. A message could not be read: the
   * solver runs a synchronous loop and never yields to the worker's event loop.
   */
  stopFlag: SharedArrayBuffer;
}

export type SolverWorkerMessage =
  | { type: 'progress'; progress: SolveProgress }
  | { type: 'result'; result: SolveResult }
  | { type: 'error'; name: string; message: string };
