/**
 * Errors the engine raises for a caller's mistake; the API maps `code` to
 * `extensions.code`. Anything else is an internal error.
 */
export type EngineErrorCode = 'BAD_USER_INPUT' | 'NOT_FOUND' | 'CONFLICT';

export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

export const notFound = (message: string, details?: Record<string, unknown>) => new EngineError('NOT_FOUND', message, details);
export const conflict = (message: string, details?: Record<string, unknown>) => new EngineError('CONFLICT', message, details);
export const badInput = (message: string, details?: Record<string, unknown>) => new EngineError('BAD_USER_INPUT', message, details);

/** PostgreSQL's unique_violation on a named constraint or index. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const e = error as { code?: string; constraint?: string; message?: string } | null;
  if (!e) return false;
  if (e.code === '23505' && e.constraint === constraint) return true;
  // knex/MikroORM wrap the driver error; the constraint name stays in the message.
  return typeof e.message === 'string' && e.message.includes(constraint) && /duplicate key|unique/i.test(e.message);
}
