/**
 * The make-up exam problem as plain data keyed by codes: what a session compiles to,
 * what the ITC-2007 and Toronto importers produce, and what crosses a worker boundary.
 * It knows no file format and no database.
 *
 * Time is a sequence of periods. Two periods are on the same day when they carry the same
 * date; "adjacent" means consecutive in the sequence and on the same day (ITC-2007: two in
 * a row is never counted overnight). A period without a date is a day of its own.
 */
import type { ExamWeightings } from './weightings';

/** Whether exams need seats. Toronto instances have no rooms ("uncapacitated"). */
export enum ExamCapacityMode {
  Capacitated = 'CAPACITATED',
  Uncapacitated = 'UNCAPACITATED',
}

/** A hard constraint between the periods of two exams. */
export enum PeriodConstraintKind {
  /** Both exams in the same period (ITC-2007 EXAM_COINCIDENCE). */
  SamePeriod = 'SAME_PERIOD',
  /** The exams in different periods (ITC-2007 EXCLUSION). */
  DifferentPeriod = 'DIFFERENT_PERIOD',
  /** `first` in a strictly later period than `second` (ITC-2007 AFTER). */
  After = 'AFTER',
}

export interface ExamPeriod {
  /** ISO date `YYYY-MM-DD`; periods with equal dates form one day. Null: a day of its own. */
  date: string | null;
  /** Start time `HH:MM:SS` (display and export only). */
  start: string | null;
  /** Length in minutes; an exam longer than its period is a hard violation. */
  duration: number;
  /** Soft: added once for every exam placed in this period. */
  penalty: number;
}

export interface ExamRoom {
  code: string;
  /** Seats; the exams sharing the room in one period may not need more. */
  capacity: number;
  /** Soft: added once for every exam seated in this room (per period used). */
  penalty: number;
}

export interface Exam {
  code: string;
  /** Minutes. */
  duration: number;
  /** Ids of the students who sit it; two exams sharing a student may not share a period. */
  students: string[];
  /** Hard: no other exam in the same room and period. */
  roomExclusive?: boolean;
}

export interface ExamInvigilator {
  code: string;
  /** Indices of the periods this invigilator can supervise. */
  availablePeriods: number[];
}

export interface PeriodConstraint {
  kind: PeriodConstraintKind;
  first: string;
  second: string;
}

export interface ExamModel {
  name: string;
  capacity: ExamCapacityMode;
  /**
   * What happens to an exam with more students than the largest room. `false` (ITC-2007):
   * an exam sits in exactly one room, and such an exam cannot be seated without a capacity
   * violation. `true` (make-up sessions): the exam is split over as few rooms as its size
   * needs (in parts proportional to the largest rooms), all in the same period, each room
   * with its own invigilator.
   */
  roomSplitting: boolean;
  periods: ExamPeriod[];
  rooms: ExamRoom[];
  exams: Exam[];
  constraints: PeriodConstraint[];
  weightings: ExamWeightings;
  /**
   * When present, every room in use in a period needs an invigilator available then, and
   * nobody supervises two rooms at once. Absent: invigilation is not part of the problem
   * (the benchmarks).
   */
  invigilators?: ExamInvigilator[];
}

/** Students of an exam seated in one room. */
export interface ExamSeating {
  room: string;
  seats: number;
}

export interface ExamPlacement {
  exam: string;
  /** 0-based index into `ExamModel.periods`. */
  period: number;
  /** Empty for an uncapacitated model; one entry unless the exam is split. */
  rooms: ExamSeating[];
}

export interface InvigilatorDuty {
  period: number;
  room: string;
  invigilator: string;
}

/** A (possibly partial) answer to an `ExamModel`; exams without a placement are unplaced. */
export interface ExamArrangement {
  placements: ExamPlacement[];
  invigilation: InvigilatorDuty[];
}
