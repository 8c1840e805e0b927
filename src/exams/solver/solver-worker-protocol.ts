/**
 * Messages between `solveExamsInWorker` and the worker entry. Only plain data crosses the
 * boundary (structured clone), so the model goes as `ExamModel`, never compiled.
 */
import type { ExamModel } from '../model/exam-model';
import type { ExamSolveOptions, ExamSolveProgress, ExamSolveResult } from './solver';

/** The serialisable part of `ExamSolveOptions` (no callbacks, no signal). */
export type ExamWorkerSolveOptions = Omit<ExamSolveOptions, 'signal' | 'shouldStop' | 'onProgress'>;

export interface ExamSolverWorkerData {
  model: ExamModel;
  options: ExamWorkerSolveOptions;
  /**
   * One Int32 set to 1 by the parent to ask for a stop. A message could not be read: the
   * solver runs a synchronous loop and never yields to the worker's event loop.
   */
  stopFlag: SharedArrayBuffer;
}

export type ExamSolverWorkerMessage =
  | { type: 'progress'; progress: ExamSolveProgress }
  | { type: 'result'; result: ExamSolveResult }
  | { type: 'error'; name: string; message: string };
