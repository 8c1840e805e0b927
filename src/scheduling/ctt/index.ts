/**
 * Public surface of the course-timetabling core (ITC-2007 track 3 / UD2), for the
 * AUTOMATIC_SCHEDULE processor and the benchmarks. Everything here is pure computation:
 * no database, no GraphQL.
 */
export {
  compileModel,
  CttModelError,
  type CttAssignment,
  type CttCourse,
  type CttCourseUnavailability,
  type CttCurriculum,
  type CttInstance,
  type CttLockedAssignment,
  type CttModel,
  type CttRoom,
  type CttTeacherUnavailability,
} from './model';
export { CttFormatError, formatSolution, parseCtt, parseSolution } from './ctt-format';
export { CTT_WEIGHTS, evaluateTimetable, type CttEvaluation, type CttHardViolations, type CttSoftPenalty } from './evaluator';
export { solveCtt, type SolveOptions, type SolvePhase, type SolveProgress, type SolveResult, type StopReason } from './solver';
export { CttSolveAbortedError, CttSolverWorkerError, solveInWorker, type SolveInWorkerHooks, type WorkerSolveOptions } from './solver-worker';
