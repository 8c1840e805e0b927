import 'reflect-metadata';
import { createPubSub } from '@graphql-yoga/subscription';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';
import { buildSchema } from 'type-graphql';
import { authChecker } from './auth-checker';
import { resolvers } from './resolvers';
import { validateArgument } from './validate-argument';

/** Where the committed SDL lives (relative to the repository root). */
export const SCHEMA_FILE = 'schema/schema.graphql';

let built: Promise<GraphQLSchema> | undefined;

/**
 * type-graphql insists on a PubSub when there are subscriptions. The job
 * subscriptions use their own `subscribe` functions (per-job listener sets); this one
 * is there for simple topic-based subscriptions other modules may add (in-process only).
 */
export const apiPubSub = createPubSub();

/** The API's schema, built once per process from the resolver list. */
export function buildApiSchema(): Promise<GraphQLSchema> {
  return (built ??= buildSchema({
    resolvers,
    authChecker,
    authMode: 'error',
    pubSub: apiPubSub,
    validateFn: validateArgument,
    scalarsMap: [{ type: Date, scalar: DateTimeResolver }],
  }));
}

/** The SDL committed as schema/schema.graphql: sorted, so the file changes only with the schema. */
export function printApiSchema(schema: GraphQLSchema): string {
  return (
    '# Generated from the type-graphql resolvers by `npm run schema:emit`. Do not edit by hand;\n' +
    '# `npm run schema:check` (and test/api/schema.test.ts) fail when it is stale.\n\n' +
    printSchema(lexicographicSortSchema(schema)) +
    '\n'
  );
}
