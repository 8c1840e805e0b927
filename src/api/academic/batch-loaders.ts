import DataLoader from 'dataloader';
import { wrap, type EntityClass, type EntityManager } from '@mikro-orm/postgresql';
import type { GraphQLContext } from '../graphql/context';
import { entityManagerOf } from './request-entity-manager';

/**
 * Batching for the academic and scheduling field resolvers. A field resolved once per
 * row of a list (each term's courses, each assignment's room, each job's plan) would
 * otherwise issue one query per row; these loaders gather the look-ups of one tick
 * into one query.
 *
 * Loaders live as long as their EntityManager (one GraphQL execution, see
 * `entityManagerOf`) and do not cache: a document with several mutations must read
 * what the previous one wrote.
 */
const loadersByEm = new WeakMap<EntityManager, Map<string, DataLoader<string, unknown>>>();

function loaderFor<V>(em: EntityManager, name: string, batch: (em: EntityManager, keys: readonly string[]) => Promise<V[]>): DataLoader<string, V> {
  let loaders = loadersByEm.get(em);
  if (!loaders) loadersByEm.set(em, (loaders = new Map()));
  let loader = loaders.get(name) as DataLoader<string, V> | undefined;
  if (!loader) {
    loader = new DataLoader<string, V>((keys) => batch(em, keys), { cache: false, maxBatchSize: 500 });
    loaders.set(name, loader as DataLoader<string, unknown>);
  }
  return loader;
}

type Identified = { id: string };

/**
 * The entity with this id, or null. An entity the execution already holds (a populated
 * relation) is returned without a query.
 */
export function entityById<T extends Identified>(ctx: GraphQLContext, entity: EntityClass<T>, anyCaseId: string): Promise<T | null> {
  // uuids compare case-insensitively in PostgreSQL, and come back lower-case.
  const id = anyCaseId.toLowerCase();
  const em = entityManagerOf(ctx);
  const known = em.getUnitOfWork().getById<T>(entity.name, id as never);
  if (known && wrap(known).isInitialized()) return Promise.resolve(known);
  return loaderFor<T | null>(em, `${entity.name}#id`, async (em, ids) => {
    const rows = await em.find(entity, { id: { $in: [...ids] } } as never);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id) ?? null);
  }).load(id);
}

/** Like `entityById`, for a reference the database guarantees (a foreign key). */
export async function referenced<T extends Identified>(ctx: GraphQLContext, entity: EntityClass<T>, ref: T): Promise<T> {
  const row = await entityById(ctx, entity, ref.id);
  if (!row) throw new Error(`${entity.name} ${ref.id} vanished while it was being read`);
  return row;
}

/**
 * One page of the children of one parent (a term's courses, a plan's lectures), read
 * with those of every other parent asked for in the same tick with the same page
 * arguments: `load` returns each row with its parent, in order (see `keysetPage`).
 */
export function pageOf<T>(
  ctx: GraphQLContext,
  name: string,
  page: { first: number; after?: string | null },
  load: (em: EntityManager, parentIds: string[], page: { first: number; after?: string | null }) => Promise<{ parent: string; row: T }[]>,
  parentId: string,
): Promise<T[]> {
  return loaderFor<T[]>(entityManagerOf(ctx), `${name}#page#${page.first}:${page.after ?? ''}`, async (em, parentIds) => {
    const groups = new Map<string, T[]>(parentIds.map((id) => [id, []]));
    for (const { parent, row } of await load(em, [...new Set(parentIds)], page)) groups.get(parent)?.push(row);
    return parentIds.map((id) => groups.get(id)!);
  }).load(parentId);
}

/** The parent of a term's row, for `childrenOf`. */
export const termIdOf = (row: { term: { id: string } }): string => row.term.id;

/**
 * The children of one parent (a term's courses, a plan's assignments), fetched together
 * with those of every other parent asked for in the same tick. `load` reads the
 * children of many parents in the order they are to be shown; `parentOf` names a
 * child's parent.
 */
export function childrenOf<T>(
  ctx: GraphQLContext,
  name: string,
  load: (em: EntityManager, parentIds: string[]) => Promise<T[]>,
  parentOf: (row: T) => string,
  parentId: string,
): Promise<T[]> {
  return loaderFor<T[]>(entityManagerOf(ctx), `${name}#children`, async (em, parentIds) => {
    const groups = new Map<string, T[]>(parentIds.map((id) => [id, []]));
    for (const row of await load(em, [...parentIds])) groups.get(parentOf(row))?.push(row);
    return parentIds.map((id) => groups.get(id)!);
  }).load(parentId);
}
