import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { GraphQLContext } from '../graphql/context';

declare module '../graphql/context' {
  interface ApiServices {
    /** The ORM the academic and scheduling resolvers read and write through. */
    orm?: MikroORM;
  }
}

const perRequest = new WeakMap<object, EntityManager>();

/**
 * One EntityManager per GraphQL request (its identity map de-duplicates look-ups of
 * nested fields); the services open their own transactions on it.
 */
export function entityManagerOf(context: GraphQLContext): EntityManager {
  let em = perRequest.get(context.loaders);
  if (!em) {
    const orm = context.services.orm;
    if (!orm) throw new Error('the academic and scheduling resolvers need services.orm in the GraphQL mount');
    em = orm.em.fork();
    perRequest.set(context.loaders, em);
  }
  return em;
}
