import { GraphQLError, parse, specifiedRules, TypeInfo, validate, type DocumentNode, type GraphQLSchema, type ParseOptions, type ValidationRule } from 'graphql';
import { DocumentCache } from './document-cache';
import { ErrorCode } from './errors';

/**
 * The document of `query`, or the errors to refuse it with. `price`, when given, refuses
 * an operation by its cost; it depends on the request (variables, operation name), so
 * it runs on every call, before graphql-js's rules when the document is new.
 */
export type DocumentCheck = (query: string, price?: (document: DocumentNode) => GraphQLError | null) => DocumentNode | GraphQLError[];

/**
 * Parses and validates a document text once, for HTTP and the socket alike: the parser
 * stops at `parseOptions.maxTokens`; the shape rules (linear) run alone and first, then
 * the price (a walk of the document), and only a document both accept meets graphql-js's
 * rules (whose overlap check is quadratic, and which cost more than the others together)
 * and `extraRules`: most hostile documents are refused by the cheaper checks. Errors carry the codes Apollo gives them
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
  const untyped = new UntypedInfo(options.schema);
  return (query, price) => {
    const hit = cache.peek(query);
    if (hit) {
      const tooCostly = price?.(hit);
      return tooCostly ? [tooCostly] : hit;
    }
    let document: DocumentNode;
    try {
      document = parse(query, options.parseOptions);
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error;
      return [new GraphQLError(error.message, { source: error.source, positions: error.positions, extensions: { code: ErrorCode.GRAPHQL_PARSE_FAILED } })];
    }
    const shapeErrors = validate(options.schema, document, options.shapeRules, undefined, untyped);
    if (shapeErrors.length > 0) return shapeErrors.map(coded);
    const tooCostly = price?.(document);
    if (tooCostly) return [tooCostly];
    const errors = validate(options.schema, document, rules);
    if (errors.length > 0) return errors.map(coded);
    cache.keep(query, document);
    return document;
  };
}

/**
 * The type information of a pass that needs none: the shape rules read names and
 * fragments only, so their pass — which every new document meets, refused or not — skips
 * TypeInfo's bookkeeping at every node (half the pass's time on ten aliased lists: 165–190
 * µs → 75–80 µs). Holds no state, so one serves every call.
 */
class UntypedInfo extends TypeInfo {
  override enter(): void {}
  override leave(): void {}
}

/** A validation error with the code Apollo gives it, unless a rule coded it already. */
const coded = (e: GraphQLError): GraphQLError =>
  e.extensions.code ? e : new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: ErrorCode.GRAPHQL_VALIDATION_FAILED } });

