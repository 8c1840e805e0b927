import type { RequestHandler } from 'express';
import type { GraphQLError, GraphQLFormattedError, GraphQLSchema } from 'graphql';
import type { DocumentCheck } from './document-check';
import { operationCost } from './limits';

/**
 * Express middleware in front of Apollo Server: parses and validates the document once
 * (`documentCheck`: the token limit, the shape rules, graphql-js's rules) and prices the
 * operation, answering 400 with the errors of a document refused by any of them. Apollo
 * would parse, validate and price it again, and keep every document that validates in
 * its store; hostile clients send refused documents, each new, so refusing them here
 * costs one parse and no more. Apollo runs accepted ones as usual; the price of an
 * accepted operation is left in `res.locals.operationCost`, so it is not computed twice.
 */
export function httpDocumentCheck(options: {
  check: DocumentCheck;
  schema: GraphQLSchema;
  maxComplexity: number;
  formatError: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
}): RequestHandler {
  return (req, res, next) => {
    const isGet = req.method === 'GET';
    const source = (isGet ? req.query : req.body) as Record<string, unknown> | undefined;
    const query = source?.query;
    if (typeof query !== 'string') return next();
    const variables = isGet ? jsonObject(source?.variables) : source?.variables;
    const operationName = source?.operationName;
    // Variables or an operation name Apollo will refuse are not priced: let it say why.
    const priceable = (variables === undefined || variables === null || typeof variables === 'object') && (operationName == null || typeof operationName === 'string');
    const checked = options.check(
      query,
      priceable
        ? (document) => {
            const priced = operationCost(options.schema, document, operationName as string | null | undefined, variables as Record<string, unknown> | null | undefined, options.maxComplexity);
            res.locals.operationCost = priced.cost;
            return priced.error;
          }
        : undefined,
    );
    if (!Array.isArray(checked)) return next();
    const errors: readonly GraphQLError[] = checked;
    res.status(400).json({ errors: errors.map((error) => options.formatError(error.toJSON(), error)) });
  };
}

/** A GET request's `variables`, JSON text: parsed, or left as text (which Apollo refuses) when it is not JSON. */
function jsonObject(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}
