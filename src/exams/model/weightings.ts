/**
 * The soft-constraint weights: ITC-2007's "institutional model index" plus Carter's
 * proximity cost of the Toronto benchmark. Every term is per student and per pair of that
 * student's exams, except mixed durations (per room and period) and front load (per exam).
 */
export interface FrontLoad {
  /** How many of the largest exams (by students; ties: the earlier exam is larger) count. */
  largestExams: number;
  /** How many of the last periods they should avoid. */
  lastPeriods: number;
  /** Cost per large exam placed in one of those periods. */
  weight: number;
}

export interface ExamWeightings {
  /** Per student with exams in two adjacent periods of one day. */
  twoInARow: number;
  /** Per student with two exams on one day that are not adjacent. */
  twoInADay: number;
  /** A student's second exam within this many periods after the first costs 1 (0: off). */
  periodSpread: number;
  /** Per room and period: (number of distinct durations - 1) x this. */
  nonMixedDurations: number;
  frontLoad: FrontLoad;
  /**
   * Multiplier of Carter's proximity cost: per student, 16, 8, 4, 2, 1 for two exams 1..5
   * periods apart (days ignored), the total divided by the number of students. 0: off.
   */
  proximity: number;
}

/** 2^(5-d) for d = 1..5 periods apart; 0 beyond. Index 0 is unused (same period). */
export const PROXIMITY_COST: readonly number[] = [0, 16, 8, 4, 2, 1];

/** No soft constraint at all: any feasible arrangement costs 0. */
export const NO_WEIGHTS: ExamWeightings = Object.freeze({
  twoInARow: 0,
  twoInADay: 0,
  periodSpread: 0,
  nonMixedDurations: 0,
  frontLoad: Object.freeze({ largestExams: 0, lastPeriods: 0, weight: 0 }),
  proximity: 0,
});

/** Toronto benchmark: the proximity cost alone. */
export const TORONTO_WEIGHTS: ExamWeightings = Object.freeze({ ...NO_WEIGHTS, proximity: 1 });
