import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { GraphQLContext } from '../graphql/context';

declare module '../graphql/context' {
  interface ApiServices {
    /** The ORM the academic and scheduling resolvers read and write through. */
    orm?: MikroORM;
  }
}

/**
 * How long one EntityManager serves a context. An HTTP request is one short execution;
 * a subscription keeps its context for hours and re-executes per event, so its
 * identity map must not outlive an event or it would show stale plans.
 */
const REUSE_MS = 1_000;
const perRequest = new WeakMap<object, { em: EntityManager; createdAt: number }>();

/**
 * One EntityManager per GraphQL execution (its identity map de-duplicates look-ups of
 * nested fields); the services open their own transactions on it.
 */
export function entityManagerOf(context: GraphQLContext): EntityManager {
  const cached = perRequest.get(context.loaders);
  if (cached && Date.now() - cached.createdAt < REUSE_MS) return cached.em;
  const orm = context.services.orm;
  if (!orm) throw new Error('the academic and scheduling resolvers need services.orm in the GraphQL mount');
  const em = orm.em.fork();
  perRequest.set(context.loaders, { em, createdAt: Date.now() });
  return em;
}
