import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ArgumentValidationError } from 'type-graphql';
import { EngineError } from '../../engine/errors';
import { AuthError } from '../auth/authenticator';

/** Every `extensions.code` this API sends. */
export enum ErrorCode {
  BAD_USER_INPUT = 'BAD_USER_INPUT',
  NOT_FOUND = 'NOT_FOUND',
  CONFLICT = 'CONFLICT',
  UNAUTHENTICATED = 'UNAUTHENTICATED',
  FORBIDDEN = 'FORBIDDEN',
  GRAPHQL_PARSE_FAILED = 'GRAPHQL_PARSE_FAILED',
  GRAPHQL_VALIDATION_FAILED = 'GRAPHQL_VALIDATION_FAILED',
  QUERY_TOO_DEEP = 'QUERY_TOO_DEEP',
  QUERY_TOO_COMPLEX = 'QUERY_TOO_COMPLEX',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  /** Too many operations, subscribes or sockets for one caller; `retryAfterSeconds` says when to try again. */
  RATE_LIMITED = 'RATE_LIMITED',
  INTERNAL_SERVER_ERROR = 'INTERNAL_SERVER_ERROR',
}

const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  [ErrorCode.UNAUTHENTICATED]: 401,
  [ErrorCode.RATE_LIMITED]: 429,
};

export function apiError(code: ErrorCode, message: string, extensions: Record<string, unknown> = {}): GraphQLError {
  const status = HTTP_STATUS[code];
  return new GraphQLError(message, { extensions: { ...extensions, code, ...(status ? { http: { status } } : {}) } });
}

export const notFoundError = (message: string) => apiError(ErrorCode.NOT_FOUND, message);
export const forbiddenError = (message: string) => apiError(ErrorCode.FORBIDDEN, message);
export const unauthenticatedError = (message: string) => apiError(ErrorCode.UNAUTHENTICATED, message);

const KNOWN = new Set<string>(Object.values(ErrorCode));

/**
 * One formatter for HTTP (Apollo's formatError) and the socket (graphql-ws onNext /
 * onError): every error gets a known `extensions.code`; internal errors lose their
 * message in production; stack traces leave only in development.
 */
export function createErrorFormatter(options: { production: boolean; onInternal?: (error: unknown) => void }) {
  return function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
    const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
    const base = { message: formatted.message, ...(formatted.locations ? { locations: formatted.locations } : {}), ...(formatted.path ? { path: formatted.path } : {}) };
    const stack = !options.production ? (formatted.extensions?.stacktrace as unknown) : undefined;
    const withCode = (code: string, message = base.message, extra: Record<string, unknown> = {}): GraphQLFormattedError => ({
      ...base,
      message,
      extensions: { ...extra, code, ...(stack ? { stacktrace: stack } : {}) },
    });

    if (original instanceof EngineError) return withCode(original.code, original.message);
    if (original instanceof AuthError) return withCode(original.code, original.message);
    if (original instanceof ArgumentValidationError) {
      const problems = original.extensions.validationErrors.flatMap((v) => describeValidation(v));
      return withCode(ErrorCode.BAD_USER_INPUT, `Invalid arguments: ${problems.join('; ')}`, { problems });
    }
    // Apollo re-codes validation errors as GRAPHQL_VALIDATION_FAILED; a rule's own code (QUERY_TOO_DEEP) wins.
    const ownCode = original instanceof GraphQLError ? original.extensions?.code : undefined;
    const code = typeof ownCode === 'string' && KNOWN.has(ownCode) ? ownCode : formatted.extensions?.code;
    if (typeof code === 'string' && KNOWN.has(code)) {
      const { stacktrace: _s, http: _h, ...rest } = (formatted.extensions ?? {}) as Record<string, unknown>;
      return withCode(code, base.message, rest);
    }
    if (typeof code === 'string' && /^(BAD_REQUEST|PERSISTED_QUERY_NOT_FOUND|PERSISTED_QUERY_NOT_SUPPORTED|OPERATION_RESOLUTION_FAILURE)$/.test(code)) {
      return withCode(ErrorCode.BAD_USER_INPUT);
    }
    // type-graphql's own authorization errors.
    const name = (original as { name?: string } | null)?.name;
    if (name === 'UnauthorizedError') return withCode(ErrorCode.UNAUTHENTICATED, 'Sign in: this operation needs a bearer token');
    if (name === 'ForbiddenError') return withCode(ErrorCode.FORBIDDEN, 'Your roles do not allow this operation');
    // graphql-js coercion/validation errors carry no originalError.
    if (error instanceof GraphQLError && !error.originalError && !code) {
      return withCode(error.nodes ? ErrorCode.GRAPHQL_VALIDATION_FAILED : ErrorCode.BAD_USER_INPUT);
    }
    options.onInternal?.(original);
    return withCode(ErrorCode.INTERNAL_SERVER_ERROR, options.production ? 'Internal server error' : base.message);
  };
}

function describeValidation(v: { property: string; constraints?: Record<string, string>; children?: unknown[] }): string[] {
  const own = Object.values(v.constraints ?? {});
  const children = ((v.children ?? []) as (typeof v)[]).flatMap((c) => describeValidation(c).map((m) => `${v.property}.${m}`));
  return [...own, ...children];
}
