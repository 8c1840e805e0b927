import type { RequestHandler } from 'express';
import { parse, validate, type GraphQLFormattedError, type GraphQLError, type GraphQLSchema, type ParseOptions, type ValidationRule } from 'graphql';

/**
 * Express middleware in front of Apollo Server: refuses (400) a document that breaks the
 * shape rules (`shapeRules`) before Apollo validates it. Apollo runs its validation rules
 * in one pass with graphql-js's own, whose overlap check is quadratic, and a plugin that
 * throws earlier turns into a 500; so the linear rules run here, alone, first. Text that
 * does not parse goes on to Apollo, which reports it (GRAPHQL_PARSE_FAILED).
 */
export function shapeCheck(options: {
  schema: GraphQLSchema;
  rules: readonly ValidationRule[];
  parseOptions: ParseOptions;
  formatError: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
}): RequestHandler {
  // Clients send the same few documents again and again: the texts that passed are
  // remembered (least recently used first out), so a repeat costs a look-up, not a parse
  // and a validation. Only accepted texts of bounded length: refused ones are each new.
  const accepted = new Map<string, true>();
  const remember = (query: string) => {
    if (query.length > MAX_REMEMBERED_LENGTH) return;
    accepted.set(query, true);
    if (accepted.size > MAX_REMEMBERED) accepted.delete(accepted.keys().next().value!);
  };
  return (req, res, next) => {
    const body = req.body as { query?: unknown } | undefined;
    const query = typeof body?.query === 'string' ? body.query : req.method === 'GET' && typeof req.query.query === 'string' ? req.query.query : undefined;
    if (query === undefined) return next();
    if (accepted.delete(query)) {
      accepted.set(query, true);
      return next();
    }
    let errors: readonly GraphQLError[];
    try {
      errors = validate(options.schema, parse(query, options.parseOptions), options.rules);
    } catch {
      return next();
    }
    if (errors.length === 0) {
      remember(query);
      return next();
    }
    res.status(400).json({ errors: errors.map((error) => options.formatError(error.toJSON(), error)) });
  };
}

/** Accepted documents remembered, and the longest text remembered (characters). */
const MAX_REMEMBERED = 200;
const MAX_REMEMBERED_LENGTH = 4_096;
