/**
 * Input checks of the make-up exam services, beside the academic ones they reuse. Each
 * failure is a BAD_USER_INPUT naming the field and the value, raised before anything is
 * written.
 */
import { requireInt } from '../academic/validation';
import { badInput } from '../engine/errors';
import { NO_WEIGHTS, type ExamWeightings } from './model/weightings';

export const MAX_EXAM_MINUTES = 24 * 60;
export const MAX_PENALTY = 1_000_000;
export const MAX_WEIGHT = 1_000_000;
export const MAX_ROOM_CAPACITY = 1_000_000;
/** Scores are points; anything beyond this is a typing mistake. */
export const MAX_SCORE = 1_000;

const show = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : String(value));

export function requireScore(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_SCORE) {
    throw badInput(`${field} must be a number from 0 to ${MAX_SCORE}, got ${show(value)}`, { field, value });
  }
  return value;
}

/** `YYYY-MM-DD`, a real calendar date. */
export function requireDate(field: string, value: unknown): string {
  const m = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value.trim()) : null;
  if (m) {
    const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
    if (d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3])) return m[0];
  }
  throw badInput(`${field} must be a date YYYY-MM-DD, got ${show(value)}`, { field, value });
}

/** `HH:MM` or `HH:MM:SS`, returned as `HH:MM:SS`. */
export function requireTime(field: string, value: unknown): string {
  const m = typeof value === 'string' ? /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/.exec(value.trim()) : null;
  if (!m) throw badInput(`${field} must be a time HH:MM or HH:MM:SS, got ${show(value)}`, { field, value });
  return `${m[1]}:${m[2]}:${m[3] ?? '00'}`;
}

export interface WeightingsInput {
  twoInARow?: number | null;
  twoInADay?: number | null;
  periodSpread?: number | null;
  nonMixedDurations?: number | null;
  frontLoadExams?: number | null;
  frontLoadPeriods?: number | null;
  frontLoadWeight?: number | null;
  proximity?: number | null;
}

/** The weights given, the others from `base`; each an integer from 0. */
export function requireWeightings(field: string, input: WeightingsInput | null | undefined, base: ExamWeightings = NO_WEIGHTS): ExamWeightings {
  const w = input ?? {};
  const pick = (name: keyof WeightingsInput, current: number) => (w[name] == null ? current : requireInt(`${field}.${name}`, w[name], 0, MAX_WEIGHT));
  return {
    twoInARow: pick('twoInARow', base.twoInARow),
    twoInADay: pick('twoInADay', base.twoInADay),
    periodSpread: pick('periodSpread', base.periodSpread),
    nonMixedDurations: pick('nonMixedDurations', base.nonMixedDurations),
    frontLoad: {
      largestExams: pick('frontLoadExams', base.frontLoad.largestExams),
      lastPeriods: pick('frontLoadPeriods', base.frontLoad.lastPeriods),
      weight: pick('frontLoadWeight', base.frontLoad.weight),
    },
    proximity: pick('proximity', base.proximity),
  };
}
