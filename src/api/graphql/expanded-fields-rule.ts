import { Kind, type SelectionSetNode, type ValidationRule } from 'graphql';
import { apiError, ErrorCode } from './errors';

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
