import {
  GraphQLError,
  getNamedType,
  isLeafType,
  Kind,
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';
import { fieldExtensionsEstimator, getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { apiError, ErrorCode } from './errors';

export interface QueryLimits {
  maxDepth: number;
  maxComplexity: number;
}

/** Depth of the deepest field path of each operation (fragments followed, cycles cut). */
function selectionDepth(
  selectionSet: SelectionSetNode | undefined,
  fragments: Record<string, FragmentDefinitionNode>,
  visited: Set<string>,
): number {
  if (!selectionSet) return 0;
  let deepest = 0;
  for (const selection of selectionSet.selections) {
    let depth = 0;
    if (selection.kind === Kind.FIELD) {
      // Introspection (__schema, __type, __typename) is gated by its own switch; its
      // type-reference chains are deep by nature (GraphiQL's query is 15 levels).
      depth = selection.name.value.startsWith('__') ? 0 : 1 + selectionDepth(selection.selectionSet, fragments, visited);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      depth = selectionDepth(selection.selectionSet, fragments, visited);
    } else {
      const name = selection.name.value;
      const fragment = fragments[name];
      if (!fragment || visited.has(name)) continue;
      visited.add(name);
      depth = selectionDepth(fragment.selectionSet, fragments, visited);
      visited.delete(name);
    }
    if (depth > deepest) deepest = depth;
  }
  return deepest;
}

/** A validation rule refusing operations nested deeper than `maxDepth` fields. */
export function depthLimitRule(maxDepth: number) {
  return (context: ValidationContext): ASTVisitor => {
    const document = context.getDocument();
    const fragments: Record<string, FragmentDefinitionNode> = {};
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
    }
    return {
      OperationDefinition(node: OperationDefinitionNode) {
        const depth = selectionDepth(node.selectionSet, fragments, new Set());
        if (depth > maxDepth) {
          context.reportError(
            new GraphQLError(`The query is ${depth} levels deep; the limit is ${maxDepth}`, {
              nodes: [node],
              extensions: { code: ErrorCode.QUERY_TOO_DEEP, depth, maxDepth },
            }),
          );
        }
      },
    };
  };
}

/**
 * 1 for each object a field resolves to (plus what is selected inside it); scalar and
 * enum fields are free — the cost counts objects fetched, not bytes. Lists multiply
 * through type-graphql `complexity` options (e.g. `jobs`: `first` × the node's cost).
 */
export const objectEstimator: ComplexityEstimator = ({ field, childComplexity }) =>
  isLeafType(getNamedType(field.type)) ? 0 : 1 + childComplexity;

/**
 * The cost of the operation to run: type-graphql's `complexity` field options where
 * given (e.g. a page of `first` jobs), `objectEstimator` elsewhere. Null when it is within
 * the limit, otherwise the error to send.
 */
export function complexityError(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
  maxComplexity: number,
): GraphQLError | null {
  let complexity: number;
  try {
    complexity = getComplexity({
      schema,
      query: document,
      operationName: operationName ?? undefined,
      variables: variables ?? {},
      estimators: [fieldExtensionsEstimator(), objectEstimator],
    });
  } catch (error) {
    // Bad variables and the like: execution reports them properly.
    void error;
    return null;
  }
  if (complexity <= maxComplexity) return null;
  return apiError(ErrorCode.QUERY_TOO_COMPLEX, `The query costs ${complexity}; the limit is ${maxComplexity}`, {
    complexity,
    maxComplexity,
  });
}
