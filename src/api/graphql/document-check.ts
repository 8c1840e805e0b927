import { GraphQLError, parse, specifiedRules, validate, type DocumentNode, type GraphQLSchema, type ParseOptions, type ValidationRule } from 'graphql';
import { DocumentCache } from './document-cache';
import { ErrorCode } from './errors';

export type DocumentCheck = (query: string) => DocumentNode | GraphQLError[];

/**
 * Parses and validates a document text once, for HTTP and the socket alike: the parser
 * stops at `parseOptions.maxTokens`; the shape rules (linear) run alone and first, and
 * only a document they accept meets graphql-js's rules (whose overlap check is
 * quadratic) and `extraRules`. Errors carry the codes Apollo gives them
 * (GRAPHQL_PARSE_FAILED, GRAPHQL_VALIDATION_FAILED) unless a rule coded them already
 * (QUERY_TOO_DEEP, QUERY_TOO_COMPLEX). Accepted short documents are kept by their text:
 * an honest client's repeated query costs a lookup.
 */
export function documentCheck(options: {
  schema: GraphQLSchema;
  parseOptions: ParseOptions;
  shapeRules: readonly ValidationRule[];
  extraRules: readonly ValidationRule[];
  cache?: DocumentCache;
}): DocumentCheck {
  const cache = options.cache ?? new DocumentCache();
  const rules = [...specifiedRules, ...options.extraRules];
  return (query) => {
    const hit = cache.peek(query);
    if (hit) return hit;
    let document: DocumentNode;
    try {
      document = parse(query, options.parseOptions);
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error;
      return [new GraphQLError(error.message, { source: error.source, positions: error.positions, extensions: { code: ErrorCode.GRAPHQL_PARSE_FAILED } })];
    }
    const shapeErrors = validate(options.schema, document, options.shapeRules);
    const errors = shapeErrors.length > 0 ? shapeErrors : validate(options.schema, document, rules);
    if (errors.length > 0) {
      return errors.map((e) => (e.extensions.code ? e : new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: ErrorCode.GRAPHQL_VALIDATION_FAILED } })));
    }
    cache.keep(query, document);
    return document;
  };
}
