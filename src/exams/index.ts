/**
 * Public surface of the make-up exam core: the model, the ITC-2007 and Toronto formats,
 * the evaluator and the solver. Everything here is pure computation: no database, no
 * GraphQL, no engine.
 */
export {
  ExamCapacityMode,
  PeriodConstraintKind,
  type Exam,
  type ExamArrangement,
  type ExamInvigilator,
  type ExamModel,
  type ExamPeriod,
  type ExamPlacement,
  type ExamRoom,
  type ExamSeating,
  type InvigilatorDuty,
  type PeriodConstraint,
} from './model/exam-model';
export { ExamModelError } from './model/exam-model-error';
export { NO_WEIGHTS, PROXIMITY_COST, TORONTO_WEIGHTS, type ExamWeightings, type FrontLoad } from './model/weightings';
export { largestExams, periodDays, validateModel } from './model/validate-model';
export { compileExamModel, type ExamInstance } from './model/exam-instance';
export {
  compileMakeupSession,
  DEFAULT_PASSING_SCORE,
  type MakeupCourse,
  type MakeupEnrolment,
  type MakeupSession,
} from './model/makeup-session';
export { ExamFormatError } from './formats/exam-format-error';
export { formatItc2007Exam, parseItc2007Exam, type Itc2007ParseOptions } from './formats/itc2007-exam-format';
export { formatItc2007Solution, parseItc2007Solution } from './formats/itc2007-solution-format';
export { formatTorontoCourses, formatTorontoStudents, MAX_TORONTO_PERIODS, parseToronto, type TorontoParseOptions } from './formats/toronto-format';
export { formatTorontoSolution, parseTorontoSolution } from './formats/toronto-solution-format';
export { evaluateArrangement, type ExamEvaluation, type ExamHardViolations, type ExamSoftCost } from './evaluation/evaluator';
export {
  solveExams,
  type ExamSolveOptions,
  type ExamSolvePhase,
  type ExamSolveProgress,
  type ExamSolveResult,
  type ExamStopReason,
} from './solver/solver';
export {
  ExamSolveAbortedError,
  ExamSolverWorkerError,
  solveExamsInWorker,
  type ExamSolveInWorkerHooks,
  type ExamWorkerSolveOptions,
} from './solver/solver-worker';
