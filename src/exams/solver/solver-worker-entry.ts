/**
 * Worker-thread entry: runs one exam solve for `solveExamsInWorker` (solver-worker.ts);
 * not meant to be imported.
 */
import { serveSolverWorker } from '../../solver-runtime/serve-solver-worker';
import type { ExamModel } from '../model/exam-model';
import { solveExams, type ExamSolveProgress, type ExamSolveResult } from './solver';
import type { ExamWorkerSolveOptions } from './solver-worker';

serveSolverWorker<ExamModel, ExamWorkerSolveOptions, ExamSolveProgress, ExamSolveResult>(solveExams);
