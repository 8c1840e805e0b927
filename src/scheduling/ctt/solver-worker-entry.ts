/**
 * Worker-thread entry: runs one timetable solve for `solveInWorker` (solver-worker.ts);
 * not meant to be imported.
 */
import { serveSolverWorker } from '../../solver-runtime/serve-solver-worker';
import type { CttModel } from './model';
import { solveCtt, type SolveProgress, type SolveResult } from './solver';
import type { WorkerSolveOptions } from './solver-worker';

serveSolverWorker<CttModel, WorkerSolveOptions, SolveProgress, SolveResult>(solveCtt);
