import { GraphQLError, type GraphQLErrorOptions, type GraphQLFormattedError } from 'graphql';
import { ArgumentValidationError, AuthenticationError, AuthorizationError } from 'type-graphql';
import { EngineError } from '../../engine/errors';
import { newErrorRef } from '../../engine/failure-text';
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
  /** Automatic persisted queries: the hash is unknown, send the query text with it (APQ clients do). */
  PERSISTED_QUERY_NOT_FOUND = 'PERSISTED_QUERY_NOT_FOUND',
  PERSISTED_QUERY_NOT_SUPPORTED = 'PERSISTED_QUERY_NOT_SUPPORTED',
  INTERNAL_SERVER_ERROR = 'INTERNAL_SERVER_ERROR',
}

/** The body of an answer written before any GraphQL runs (a refusal in the HTTP middleware), in GraphQL's error shape. */
export function errorBody(code: ErrorCode, message: string, extensions: Record<string, unknown> = {}): { errors: GraphQLFormattedError[] } {
  return { errors: [{ message, extensions: { code, ...extensions } }] };
}

/** The body of a 429 written before any GraphQL runs (a rate limit, a connection cap). */
export const rateLimitedBody = (message: string, retryAfterSeconds: number) => errorBody(ErrorCode.RATE_LIMITED, message, { retryAfterSeconds });

/** The HTTP status of a refusal that ends a request before execution (Apollo reads `extensions.http`). */
const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  [ErrorCode.UNAUTHENTICATED]: 401,
  [ErrorCode.RATE_LIMITED]: 429,
  [ErrorCode.QUERY_TOO_DEEP]: 400,
  [ErrorCode.QUERY_TOO_COMPLEX]: 400,
};

/**
 * An error this API raised on purpose: its code and message are meant for the client.
 * Any other error reaching the formatter from a resolver is unexpected and is masked.
 */
export class ApiError extends GraphQLError {
  constructor(message: string, options?: GraphQLErrorOptions) {
    // No stack trace: a refusal's cause is the request, and nothing logs it. Capturing
    // one was most of the price of a refusal (a flood of RATE_LIMITED or NOT_FOUND
    // answers builds thousands a second).
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message, options);
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
  }
}

export function apiError(code: ErrorCode, message: string, extensions: Record<string, unknown> = {}): ApiError {
  const status = HTTP_STATUS[code];
  return new ApiError(message, { extensions: { ...extensions, code, ...(status ? { http: { status } } : {}) } });
}

export const notFoundError = (message: string) => apiError(ErrorCode.NOT_FOUND, message);
export const forbiddenError = (message: string) => apiError(ErrorCode.FORBIDDEN, message);
export const unauthenticatedError = (message: string) => apiError(ErrorCode.UNAUTHENTICATED, message);

/**
 * Codes Apollo Server gives the errors of a request it refuses before execution (the
 * text, the parse, validation, variables): they describe what the client sent.
 */
const REQUEST_CODES: Record<string, ErrorCode> = {
  GRAPHQL_PARSE_FAILED: ErrorCode.GRAPHQL_PARSE_FAILED,
  GRAPHQL_VALIDATION_FAILED: ErrorCode.GRAPHQL_VALIDATION_FAILED,
  BAD_USER_INPUT: ErrorCode.BAD_USER_INPUT,
  BAD_REQUEST: ErrorCode.BAD_USER_INPUT,
  OPERATION_RESOLUTION_FAILURE: ErrorCode.BAD_USER_INPUT,
  PERSISTED_QUERY_NOT_FOUND: ErrorCode.PERSISTED_QUERY_NOT_FOUND,
  PERSISTED_QUERY_NOT_SUPPORTED: ErrorCode.PERSISTED_QUERY_NOT_SUPPORTED,
};

/** The longest quoted input a message repeats whole; longer ones keep a prefix and their length. */
const MAX_QUOTED_CHARACTERS = 60;
const QUOTED_PREFIX_CHARACTERS = 40;
/** No message sent is longer than this. */
const MAX_MESSAGE_CHARACTERS = 1_000;

/**
 * Shortens what a message quotes from the request (graphql-js and the services quote
 * bad values whole: a 100 KB string would come back twice), then the message itself.
 * One pass from left to right: a quote left open ends the scan (the rest is kept as it
 * is, then clipped with the message). A pattern tried again from every quote inside an
 * unclosed value (`"\"\"\"…\`) takes steps in the square of its length.
 */
export function clipMessage(message: string): string {
  let clipped = '';
  let from = 0;
  for (;;) {
    const open = message.indexOf('"', from);
    if (open < 0) break;
    let close = open + 1;
    while (close < message.length && message[close] !== '"') close += message[close] === '\\' ? 2 : 1;
    if (close >= message.length) break;
    const inner = message.slice(open + 1, close);
    const quoted = inner.length <= MAX_QUOTED_CHARACTERS ? `"${inner}"` : `"${inner.slice(0, QUOTED_PREFIX_CHARACTERS)}…" (${inner.length} characters)`;
    clipped += message.slice(from, open) + quoted;
    from = close + 1;
  }
  clipped += message.slice(from);
  return clipped.length <= MAX_MESSAGE_CHARACTERS ? clipped : `${clipped.slice(0, MAX_MESSAGE_CHARACTERS - 1)}…`;
}

/**
 * graphql-js's "Did you mean …?" hints name fields, arguments, types and enum values the
 * caller did not know. Applied to a clipped message only (at most MAX_MESSAGE_CHARACTERS):
 * a message quotes the caller's values, and this scan is quadratic in what it is given.
 * A hint cut by the clip has no "?" left: it ends at the message's end.
 */
const withoutSuggestions = (message: string) => message.replace(/ ?Did you mean [^?]*(?:\?|$)/g, '');

export { newErrorRef };

/** The error at the bottom of GraphQLError wrappings (located errors, Apollo's validation errors). */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && !chain.includes(current)) {
    chain.push(current);
    current = current instanceof GraphQLError ? current.originalError : undefined;
  }
  return chain;
}

export interface ErrorFormatterOptions {
  production: boolean;
  /** Called once per unexpected error with the ref the client was given; log it there. */
  onInternal?: (error: unknown, ref: string) => void;
}

/**
 * One formatter for HTTP (Apollo's formatError) and the socket (graphql-ws onNext /
 * onError). Only errors this API raised on purpose (ApiError, the services'
 * EngineError, AuthError, argument validation) and the request errors of graphql-js and
 * Apollo (parse, validation, variables, persisted queries) keep their code and message;
 * every other error is logged through `onInternal` with a ref and reaches the client as
 * INTERNAL_SERVER_ERROR "Internal server error (ref …)". Messages are clipped; in
 * production they carry no "Did you mean" hints and no stack traces.
 */
/**
 * The input field a refusal names (`extensions.field`), so a UI can point at it and say
 * the refusal in its own language beside the code. Only a schema name is sent: the other
 * details of a refusal may quote the caller's input at any length.
 */
function fieldOf(error: EngineError): Record<string, unknown> {
  const field = error.details.field;
  return typeof field === 'string' && /^[A-Za-z][A-Za-z0-9.]{0,63}$/.test(field) ? { field } : {};
}

export function createErrorFormatter(options: ErrorFormatterOptions) {
  return function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
    const base = { ...(formatted.locations ? { locations: formatted.locations } : {}), ...(formatted.path ? { path: formatted.path } : {}) };
    const stack = !options.production ? (formatted.extensions?.stacktrace as unknown) : undefined;
    const send = (code: string, message: string, extra: Record<string, unknown> = {}): GraphQLFormattedError => ({
      message: options.production ? withoutSuggestions(clipMessage(message)) : clipMessage(message),
      ...base,
      extensions: { ...extra, code, ...(stack ? { stacktrace: stack } : {}) },
    });

    const chain = causes(error);
    for (const cause of chain) {
      if (cause instanceof EngineError) return send(cause.code, cause.message, fieldOf(cause));
      if (cause instanceof AuthError) return send(cause.code, cause.message);
      if (cause instanceof ArgumentValidationError) {
        const problems = cause.extensions.validationErrors.flatMap((v) => describeValidation(v)).map(clipMessage);
        const field = cause.extensions.validationErrors.map((v) => fieldPath(v)).find((path) => path !== null);
        return send(ErrorCode.BAD_USER_INPUT, `Invalid arguments: ${problems.join('; ')}`, { problems, ...(field ? { field } : {}) });
      }
      if (cause instanceof ApiError) {
        const { code, http: _http, ...rest } = cause.extensions as Record<string, unknown>;
        return send(String(code), cause.message, rest);
      }
      if (cause instanceof AuthenticationError) return send(ErrorCode.UNAUTHENTICATED, 'Sign in: this operation needs a bearer token');
      if (cause instanceof AuthorizationError) return send(ErrorCode.FORBIDDEN, 'Your roles do not allow this operation');
    }

    // Errors about the request itself, before execution: they carry no path. A non-GraphQL
    // error at the bottom is a failure inside the server (context creation, a plugin, a
    // stream), unless Apollo coded it as the caller's (a custom scalar refusing a variable).
    const bottom = chain.at(-1);
    const ownCode = formatted.extensions?.code;
    const requestCode = typeof ownCode === 'string' ? REQUEST_CODES[ownCode] : undefined;
    if (!formatted.path && error instanceof GraphQLError) {
      if (requestCode && (bottom instanceof GraphQLError || requestCode === ErrorCode.BAD_USER_INPUT)) return send(requestCode, formatted.message);
      // graphql-js's own refusals of variables or the operation name (the socket's
      // validation errors arrive coded already).
      if (ownCode === undefined && bottom instanceof GraphQLError) return send(ErrorCode.BAD_USER_INPUT, formatted.message);
    }

    const ref = newErrorRef();
    options.onInternal?.(bottom, ref);
    return send(ErrorCode.INTERNAL_SERVER_ERROR, `Internal server error (ref ${ref})`);
  };
}

/** The path of the first argument a validation error refuses (`input.timeLimitSeconds`), a schema name. */
function fieldPath(v: { property: string; constraints?: Record<string, string>; children?: unknown[] }): string | null {
  if (!/^[A-Za-z][A-Za-z0-9]{0,63}$/.test(v.property)) return null;
  if (Object.keys(v.constraints ?? {}).length > 0) return v.property;
  for (const child of (v.children ?? []) as (typeof v)[]) {
    const path = fieldPath(child);
    if (path !== null) return `${v.property}.${path}`;
  }
  return null;
}

function describeValidation(v: { property: string; constraints?: Record<string, string>; children?: unknown[] }): string[] {
  const own = Object.values(v.constraints ?? {});
  const children = ((v.children ?? []) as (typeof v)[]).flatMap((c) => describeValidation(c).map((m) => `${v.property}.${m}`));
  return [...own, ...children];
}
