import { EngineError, isUniqueViolation, type EngineErrorCode } from './engine/errors';

/**
 * The errors the domains (academic, scheduling) share: a mistake in what a person
 * asked for, carrying the `extensions.code` the API sends (an EngineError, which the
 * API maps). Thrown inside a job's processor, such an error fails the job at once —
 * the same input fails the same way on every retry (`retryable: false`, which the
 * engine's retry policy honours) — except a CONFLICT, which can clear once the work it
 * conflicts with ends.
 */
export class UserError extends EngineError {
  readonly retryable: boolean;

  constructor(code: EngineErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message, details);
    this.name = 'UserError';
    this.retryable = code === 'CONFLICT';
  }
}

export const badInput = (message: string, details?: Record<string, unknown>) => new UserError('BAD_USER_INPUT', message, details);
export const notFound = (message: string, details?: Record<string, unknown>) => new UserError('NOT_FOUND', message, details);
export const conflict = (message: string, details?: Record<string, unknown>) => new UserError('CONFLICT', message, details);

/**
 * A write that takes a value a unique constraint keeps one of (a code), checked free
 * before it writes. Of two edits racing for one value, both pass that check and the
 * second meets the constraint when it commits: it gets `taken()` — the check's CONFLICT —
 * not an internal error. `taken` null: the write takes no such value.
 */
export async function takenAsConflict<T>(write: Promise<T>, constraint: string, taken: (() => EngineError) | null): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (taken && isUniqueViolation(error, constraint)) throw taken();
    throw error;
  }
}
