/**
 * Input checks shared by the academic and scheduling services. Each failure is a
 * BAD_USER_INPUT naming the field and the value, raised before anything is written.
 */
import { badInput } from '../errors';

export const MAX_DAYS_PER_WEEK = 7;
export const MAX_PERIODS_PER_DAY = 24;
export const MAX_CODE_LENGTH = 64;
export const MAX_NAME_LENGTH = 200;
/**
 * A course's students and a room's seats: far above any lecture hall. A lecture then
 * costs at most 99,999 of room capacity penalty, so a term's stays within the API's
 * 32-bit integers up to 21,474 lectures.
 */
export const MAX_STUDENTS = 100_000;
export const MAX_ROOM_CAPACITY = 100_000;
/**
 * A term's courses: a large university's sections, several times over. Compiling a
 * term's timetable model keeps a course × course conflict table (10,000 courses: 100 MB)
 * and weighs every pair of courses, at every start, solve and evaluation.
 */
export const MAX_COURSES_PER_TERM = 10_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const show = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : String(value));

export function requireInt(field: string, value: unknown, min: number, max: number = Number.MAX_SAFE_INTEGER, why = ''): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw badInput(`${field} must be an integer ${range}${why}, got ${show(value)}`, { field, value });
  }
  return value;
}

/**
 * The C0 control characters and DEL: no code or name needs one, and PostgreSQL refuses
 * NUL in text outright (an internal error if it reached the database).
 */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function refuseControlCharacters(field: string, text: string, value: unknown): void {
  const found = CONTROL_CHARACTER.exec(text);
  if (found) {
    const code = `U+${found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    throw badInput(`${field} must not contain control characters (found ${code}), got ${show(value)}`, { field, value });
  }
}

/** A code as used in the ITC-2007 files: no blanks (the formats split on whitespace). */
export function requireCode(field: string, value: unknown): string {
  if (typeof value !== 'string') throw badInput(`${field} must be a string, got ${show(value)}`, { field, value });
  const code = value.trim();
  if (code.length === 0 || code.length > MAX_CODE_LENGTH) {
    throw badInput(`${field} must be 1–${MAX_CODE_LENGTH} characters, got ${show(value)}`, { field, value });
  }
  if (/\s/.test(code)) throw badInput(`${field} must not contain blanks (the ITC-2007 formats separate fields by blanks), got ${show(value)}`, { field, value });
  refuseControlCharacters(field, code, value);
  return code;
}

export function requireName(field: string, value: unknown): string {
  if (typeof value !== 'string') throw badInput(`${field} must be a string, got ${show(value)}`, { field, value });
  const name = value.trim();
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) {
    throw badInput(`${field} must be 1–${MAX_NAME_LENGTH} characters, got ${show(value)}`, { field, value });
  }
  refuseControlCharacters(field, name, value);
  return name;
}

export const isId = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

export function requireId(field: string, value: unknown): string {
  if (!isId(value)) throw badInput(`${field} must be an id (uuid), got ${show(value)}`, { field, value });
  return value.toLowerCase();
}

/** One id or several, each checked as `requireId` does. */
export const idList = (field: string, value: string | readonly string[]): string[] =>
  (typeof value === 'string' ? [value] : value).map((id) => requireId(field, id));

export function requirePeriodLabels(field: string, value: unknown, periodsPerDay: number): string[] {
  if (!Array.isArray(value)) throw badInput(`${field} must be a list of strings`, { field, value });
  if (value.length !== 0 && value.length !== periodsPerDay) {
    throw badInput(`${field} must have one label per period of the day (${periodsPerDay}) or none, got ${value.length}`, { field, value });
  }
  return value.map((label, i) => requireName(`${field}[${i}]`, label));
}
