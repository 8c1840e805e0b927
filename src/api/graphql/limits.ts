import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { GraphQLArmorRejectCallback } from '@escape.tech/graphql-armor-types';
import {
  BREAK,
  getNamedType,
  GraphQLError,
  isLeafType,
  NoUnusedFragmentsRule,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type ASTNode,
  type DocumentNode,
  type GraphQLSchema,
  type ParseOptions,
  type ValidationRule,
} from 'graphql';
import { fieldExtensionsEstimator, getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { apiError, ErrorCode } from './errors';
import { expandedFieldsRule } from './expanded-fields-rule';

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
 * twice). The shape rules refuse such documents first (`expandedFieldsRule`); this bound
 * is the estimate's own guard, and a document beyond it is refused as too complex.
 */
export const MAX_COST_NODES = 10_000;

/**
 * The parser's options: graphql-js stops lexing past `maxTokens`, so an oversized document
 * costs no more than that to refuse. Given to Apollo (`parseOptions`) and to the socket's
 * own parse.
 */
export const parseOptions = (limits: QueryLimits): ParseOptions => ({ maxTokens: limits.maxTokens });

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
 * QUERY_TOO_COMPLEX. None reads type information: `documentCheck` runs them without it.
 *
 * graphql-js's NoUnusedFragments rule runs with them: the others measure what an
 * operation selects, and a fragment no operation spreads selects nothing of it, yet the
 * overlap check compares the fields inside every fragment definition (graphql-js stops
 * it after a budget: about 5 ms here for one unused fragment of 4,990 `__typename`s).
 * Refused here, as unused (GRAPHQL_VALIDATION_FAILED), such a fragment never reaches it.
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
  return [...(validationRules as ValidationRule[]), expandedFieldsRule(), NoUnusedFragmentsRule];
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
 * `CostMeter`). Bad variables cost 0 here, marked `unpriced`: execution refuses them
 * (BAD_USER_INPUT), provided it reads the variables priced here.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  maxComplexity: number,
): { cost: number; error: GraphQLError | null; unpriced?: true } {
  const key = `${maxComplexity}:${operationName ?? ''}`;
  let ofSchema = fixedCosts.get(schema);
  if (!ofSchema) fixedCosts.set(schema, (ofSchema = new WeakMap()));
  const known = ofSchema.get(document);
  const cost = known?.costs.get(key);
  if (cost !== undefined) return { cost, error: null };
  const priced = priceOperation(schema, document, operationName, variables, maxComplexity);
  if (priced.error === null && !priced.unpriced) {
    const entry: FixedCosts = known ?? { readsVariables: costReadsVariables(schema, document), costs: new Map<string, number>() };
    if (!known) ofSchema.set(document, entry);
    if (!entry.readsVariables) entry.costs.set(key, priced.cost);
  }
  return priced;
}

/**
 * The costs of documents whose cost no variable can change, by limit and operation name:
 * an accepted document is kept (one object per text, see DocumentCheck), so a request
 * sending it again — a client's same mutation with new input — is not priced again.
 */
const fixedCosts = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, FixedCosts>>();
interface FixedCosts {
  readsVariables: boolean;
  costs: Map<string, number>;
}

/**
 * Whether a variable can change the document's cost: one feeds an argument of a field
 * whose cost is a function of its arguments (a page's `first`), or a directive
 * (`@include(if: $v)` leaves a selection out of the price).
 */
function costReadsVariables(schema: GraphQLSchema, document: DocumentNode): boolean {
  const typeInfo = new TypeInfo(schema);
  let reads = false;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Directive(node) {
        if (hasVariable(node)) reads = true;
      },
      Field(node) {
        const complexity = typeInfo.getFieldDef()?.extensions?.complexity;
        if (typeof complexity === 'function' && node.arguments?.some(hasVariable)) reads = true;
      },
    }),
  );
  return reads;
}

function hasVariable(node: ASTNode): boolean {
  let found = false;
  visit(node, {
    Variable() {
      found = true;
      return BREAK;
    },
  });
  return found;
}

function priceOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  maxComplexity: number,
): { cost: number; error: GraphQLError | null; unpriced?: true } {
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
    return { cost: 0, error: null, unpriced: true };
  }
  if (complexity <= maxComplexity) return { cost: complexity, error: null };
  return {
    cost: complexity,
    error: apiError(ErrorCode.QUERY_TOO_COMPLEX, `The query costs ${complexity}; the limit is ${maxComplexity}`, { complexity, maxComplexity }),
  };
}
