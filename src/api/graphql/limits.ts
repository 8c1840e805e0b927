import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { GraphQLArmorRejectCallback } from '@escape.tech/graphql-armor-types';
import {
  getNamedType,
  GraphQLError,
  isLeafType,
  Kind,
  type SelectionSetNode,
  type DocumentNode,
  type GraphQLSchema,
  type ParseOptions,
  type ValidationRule,
} from 'graphql';
import { fieldExtensionsEstimator, getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { apiError, ErrorCode } from './errors';

/** The bounds every operation is checked against, on HTTP and on the socket alike. */
export interface QueryLimits {
  maxDepth: number;
  maxComplexity: number;
  maxTokens: number;
  maxAliases: number;
  maxDirectives: number;
}

/**
 * Selections the cost estimate visits at most, fragments expanded. graphql-query-complexity
 * walks a fragment again at every spread (2ⁿ visits for n fragments each spreading the next
 * twice); this bound keeps that walk short, and a document beyond it is refused as too
 * complex. No honest query comes near it: a page of 200 jobs with every field is ~40.
 */
export const MAX_COST_NODES = 10_000;

/**
 * The parser's options: graphql-js stops lexing past `maxTokens`, so an oversized document
 * costs no more than that to refuse. Given to Apollo (`parseOptions`) and to the socket's
 * own parse.
 */
export const parseOptions = (limits: QueryLimits): ParseOptions => ({ maxTokens: limits.maxTokens });

/**
 * Fields a document may select once its fragments are expanded. graphql-js's own check
 * that same-named fields can be merged compares such fields in pairs, recursively: its
 * work grows with the square of the fields that share one response path. This bound and
 * `MAX_FIELD_REPEATS` keep that work to a few milliseconds; honest queries are far below
 * both (a page of jobs with every field selects 25 fields, GraphiQL's schema query 226).
 */
export const MAX_EXPANDED_FIELDS = 1_000;
/**
 * Times one response path (e.g. `jobs.edges.node.id`) may be selected, fragments expanded
 * and same-named parents merged (as graphql-js merges them). Honest queries repeat a path
 * at most a few times (a field asked for by two fragments).
 */
export const MAX_FIELD_REPEATS = 10;

type Counted = { count: number; children: Map<string, Counted> };

/**
 * Refuses (QUERY_TOO_COMPLEX) an operation that selects more than `maxFields` fields once
 * its fragments are expanded, or one response path more than `maxRepeats` times. The
 * expanded size is counted first with each fragment's size computed once (so nested
 * spreads cost their length, not 2ⁿ); only a document within it is expanded to find the
 * repeats. Within both, graphql-js's overlap check makes at most about
 * `maxFields × maxRepeats / 2` comparisons.
 */
export function expandedFieldsRule(maxFields = MAX_EXPANDED_FIELDS, maxRepeats = MAX_FIELD_REPEATS): ValidationRule {
  return (context) => {
    const sizes = new Map<string, number>();
    const sizeOf = (selectionSet: SelectionSetNode | undefined, visiting: Set<string>): number => {
      let total = 0;
      for (const selection of selectionSet?.selections ?? []) {
        if (selection.kind === Kind.FIELD) total += 1 + sizeOf(selection.selectionSet, visiting);
        else if (selection.kind === Kind.INLINE_FRAGMENT) total += sizeOf(selection.selectionSet, visiting);
        else total += fragmentSize(selection.name.value, visiting);
      }
      // Only "over the limit" matters: saturate, so nested spreads never reach 2ⁿ.
      return Math.min(total, maxFields + 1);
    };
    const fragmentSize = (name: string, visiting: Set<string>): number => {
      const known = sizes.get(name);
      if (known !== undefined) return known;
      const fragment = context.getFragment(name);
      // Unknown fragments and cycles are graphql-js's to report.
      if (!fragment || visiting.has(name)) return 0;
      visiting.add(name);
      const size = sizeOf(fragment.selectionSet, visiting);
      visiting.delete(name);
      sizes.set(name, size);
      return size;
    };
    const expand = (selectionSet: SelectionSetNode | undefined, into: Counted, visiting: Set<string>): void => {
      for (const selection of selectionSet?.selections ?? []) {
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          let node = into.children.get(key);
          if (!node) into.children.set(key, (node = { count: 0, children: new Map() }));
          node.count++;
          expand(selection.selectionSet, node, visiting);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          expand(selection.selectionSet, into, visiting);
        } else {
          const fragment = context.getFragment(selection.name.value);
          if (!fragment || visiting.has(fragment.name.value)) continue;
          visiting.add(fragment.name.value);
          expand(fragment.selectionSet, into, visiting);
          visiting.delete(fragment.name.value);
        }
      }
    };
    const mostRepeated = (node: Counted, path: string[], worst: { count: number; path: string[] }): void => {
      for (const [key, child] of node.children) {
        if (child.count > worst.count) Object.assign(worst, { count: child.count, path: [...path, key] });
        mostRepeated(child, [...path, key], worst);
      }
    };
    return {
      OperationDefinition(operation) {
        const size = sizeOf(operation.selectionSet, new Set());
        if (size > maxFields) {
          context.reportError(
            apiError(ErrorCode.QUERY_TOO_COMPLEX, `The query selects more than ${maxFields} fields once its fragments are expanded`, { maxFields }),
          );
          return;
        }
        const root: Counted = { count: 1, children: new Map() };
        expand(operation.selectionSet, root, new Set());
        const worst = { count: 0, path: [] as string[] };
        mostRepeated(root, [], worst);
        if (worst.count > maxRepeats) {
          context.reportError(
            apiError(ErrorCode.QUERY_TOO_COMPLEX, `The query selects ${worst.path.join('.')} ${worst.count} times; the limit is ${maxRepeats}`, {
              repeats: worst.count,
              maxRepeats,
            }),
          );
        }
      },
    };
  };
}

/** Armor reports "…limit of N exceeded, found M."; M is what the client needs to hear. */
const found = (error: GraphQLError): number | undefined => {
  const match = /found (\d+(?:\.\d+)?)/.exec(error.message);
  return match ? Number(match[1]) : undefined;
};

const refuseAs =
  (code: ErrorCode, what: string, limit: number, key: string): GraphQLArmorRejectCallback =>
  (context, error) => {
    const count = found(error);
    context?.reportError(
      apiError(code, `The query has ${count ?? 'too many'} ${what}; the limit is ${limit}`, { [key]: count, [`max${key[0]!.toUpperCase()}${key.slice(1)}`]: limit }),
    );
  };

/**
 * Validation rules bounding the document's shape, each linear in the document's length
 * (a fragment is measured once and its measure reused at every spread): from GraphQL
 * Armor, depth (fields nested, fragments flattened, introspection's `__schema` exempt: it
 * has its own switch), aliases and directives; ours, `expandedFieldsRule`. Run them alone
 * and before graphql-js's specified rules, whose overlap check is quadratic: a document
 * they refuse never reaches it. Armor's cost rule is off: it does not know the schema
 * (list sizes, page arguments); `complexityError` prices operations instead. Armor's
 * token limit re-parses the text; the parser's own `maxTokens` (see `parseOptions`) does
 * it in the one parse. Refusals are reported as typed errors: QUERY_TOO_DEEP,
 * QUERY_TOO_COMPLEX.
 */
export function shapeRules(limits: QueryLimits): ValidationRule[] {
  const quiet = { propagateOnRejection: false, exposeLimits: true } as const;
  const { validationRules } = new ApolloArmor({
    maxDepth: {
      ...quiet,
      n: limits.maxDepth,
      flattenFragments: true,
      ignoreIntrospection: true,
      onReject: [
        (context, error) => {
          const depth = found(error);
          context?.reportError(
            apiError(ErrorCode.QUERY_TOO_DEEP, `The query is ${depth ?? 'too many'} levels deep; the limit is ${limits.maxDepth}`, { depth, maxDepth: limits.maxDepth }),
          );
        },
      ],
    },
    maxAliases: { ...quiet, n: limits.maxAliases, onReject: [refuseAs(ErrorCode.QUERY_TOO_COMPLEX, 'aliases', limits.maxAliases, 'aliases')] },
    maxDirectives: { ...quiet, n: limits.maxDirectives, onReject: [refuseAs(ErrorCode.QUERY_TOO_COMPLEX, 'directives', limits.maxDirectives, 'directives')] },
    costLimit: { enabled: false },
    maxTokens: { enabled: false },
    blockFieldSuggestion: { enabled: false },
  }).protect();
  return [...(validationRules as ValidationRule[]), expandedFieldsRule()];
}

/**
 * 1 for each object a field resolves to (plus what is selected inside it); scalar and
 * enum fields are free unless a field says otherwise (`evaluation`, `solutionText`).
 * Lists multiply through type-graphql `complexity` options: a page of `first` rows costs
 * `first` × a row (see `pageCost`).
 */
export const objectEstimator: ComplexityEstimator = ({ field, childComplexity }) =>
  isLeafType(getNamedType(field.type)) ? 0 : 1 + childComplexity;

/**
 * The cost of the operation to run: type-graphql's `complexity` field options where
 * given, `objectEstimator` elsewhere. Null when it is within the limit, otherwise the
 * error to send.
 */
export function complexityError(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  maxComplexity: number,
): GraphQLError | null {
  return operationCost(schema, document, operationName, variables, maxComplexity).error;
}

/**
 * The operation's static cost and, when it is over `maxComplexity`, the error to send.
 * What it leaves of the limit is the budget of the fields that charge at run time (see
 * `CostMeter`). Bad variables cost 0 here: execution refuses them (BAD_USER_INPUT).
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  maxComplexity: number,
): { cost: number; error: GraphQLError | null } {
  let complexity: number;
  try {
    complexity = getComplexity({
      schema,
      query: document,
      operationName: operationName ?? undefined,
      variables: variables ?? {},
      estimators: [fieldExtensionsEstimator(), objectEstimator],
      maxQueryNodes: MAX_COST_NODES,
    });
  } catch (error) {
    if (error instanceof GraphQLError && /maximum allowed number of nodes/.test(error.message)) {
      const refusal = apiError(ErrorCode.QUERY_TOO_COMPLEX, `The query has more than ${MAX_COST_NODES} selections once its fragments are expanded`, {
        maxSelections: MAX_COST_NODES,
      });
      return { cost: Number.POSITIVE_INFINITY, error: refusal };
    }
    return { cost: 0, error: null };
  }
  if (complexity <= maxComplexity) return { cost: complexity, error: null };
  return {
    cost: complexity,
    error: apiError(ErrorCode.QUERY_TOO_COMPLEX, `The query costs ${complexity}; the limit is ${maxComplexity}`, { complexity, maxComplexity }),
  };
}
