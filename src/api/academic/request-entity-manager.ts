import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { GraphQLContext } from '../graphql/context';

declare module '../graphql/context' {
  interface ApiServices {
    /** The ORM the academic and scheduling resolvers read and write through. */
    orm?: MikroORM;
  }
}

/**
 * Keyed by the context's per-execution loaders, so an EntityManager lives exactly as
 * long as one execution: an HTTP request, or one event of a subscription (see
 * `GraphQLContext.newExecution`). Its identity map then never shows what an earlier
 * event read.
 */
const perExecution = new WeakMap<object, EntityManager>();

/**
 * One EntityManager per GraphQL execution (its identity map de-duplicates look-ups of
 * nested fields); the services open their own transactions on it.
 */
export function entityManagerOf(context: GraphQLContext): EntityManager {
  const cached = perExecution.get(context.loaders);
  if (cached) return cached;
  const em = ormOf(context).em.fork();
  perExecution.set(context.loaders, em);
  return em;
}

/**
 * The ORM's root EntityManager, for work that only runs SQL on its pool (the job starts'
 * prepared checks): a fork per request would allocate an identity map, a unit of work and
 * three DataLoaders that such work never touches, for the young generation to collect.
 * MikroORM refuses entity operations on the root (`allowGlobalContext` is off), so work
 * that needs an identity map fails loudly instead of sharing one.
 */
export function rootEntityManagerOf(context: GraphQLContext): EntityManager {
  return ormOf(context).em;
}

function ormOf(context: GraphQLContext): MikroORM {
  const orm = context.services.orm;
  if (!orm) throw new Error('the academic and scheduling resolvers need services.orm in the GraphQL mount');
  return orm;
}
