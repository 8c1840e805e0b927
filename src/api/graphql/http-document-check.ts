import { parse as parseUrl } from 'node:url';
import type { Request, RequestHandler } from 'express';
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
 * The check reads the request as Apollo will (`operationOf`): a document or variables
 * read differently here would let Apollo run what was never checked or priced.
 */
export function httpDocumentCheck(options: {
  check: DocumentCheck;
  schema: GraphQLSchema;
  maxComplexity: number;
  formatError: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
}): RequestHandler {
  return (req, res, next) => {
    const operation = operationOf(req);
    if (operation === undefined) return next();
    const { query, variables, operationName } = operation;
    if (typeof query !== 'string') return next();
    // Variables or an operation name Apollo will refuse are not priced: let it say why.
    const priceable = (variables === undefined || variables === null || typeof variables === 'object') && (operationName == null || typeof operationName === 'string');
    const checked = options.check(
      query,
      priceable
        ? (document) => {
            const priced = operationCost(options.schema, document, operationName as string | null | undefined, variables as Record<string, unknown> | null | undefined, options.maxComplexity);
            // Unpriced (variables execution will refuse): Apollo prices it again with its own.
            if (!priced.unpriced) res.locals.operationCost = priced.cost;
            return priced.error;
          }
        : undefined,
    );
    if (!Array.isArray(checked)) return next();
    const errors: readonly GraphQLError[] = checked;
    res.status(400).json({ errors: errors.map((error) => options.formatError(error.toJSON(), error)) });
  };
}

/**
 * The operation as Apollo Server reads it: a POST's JSON body, or a GET's search
 * parameters read as its Express integration reads them (`url.parse(req.url).search`,
 * `URLSearchParams`). Not Express's `req.query`: its parser stops after 1,000 parameters,
 * so a `query` or `variables` placed after them would reach Apollo unseen here.
 * Undefined for a request Apollo refuses before running anything (a parameter given
 * twice, another method).
 */
function operationOf(req: Request): { query: unknown; variables: unknown; operationName: unknown } | undefined {
  if (req.method === 'POST') {
    const body = req.body as Record<string, unknown> | undefined;
    return { query: body?.query, variables: body?.variables, operationName: body?.operationName };
  }
  if (req.method !== 'GET') return undefined;
  const params = new URLSearchParams(parseUrl(req.url).search ?? '');
  const once = (name: string): string | undefined | null => {
    const values = params.getAll(name);
    return values.length > 1 ? null : values[0];
  };
  const [query, variables, operationName] = [once('query'), once('variables'), once('operationName')];
  if (query === null || variables === null || operationName === null) return undefined;
  return { query, variables: jsonObject(variables), operationName };
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
