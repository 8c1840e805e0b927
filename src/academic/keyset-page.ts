import type { EntityClass, EntityManager } from '@mikro-orm/postgresql';
import { badInput } from '../engine/errors';
import { idList, requireId, requireInt } from './validation';

/** Rows a page holds unless the caller asks otherwise (as `jobs`): nested lists then fit the default cost limit. */
export const DEFAULT_PAGE_SIZE = 20;
/** The most rows one page may hold. */
export const MAX_PAGE_SIZE = 500;

/** One page of a list: at most `first` rows, starting after the row with id `after`. */
export interface Page {
  first: number;
  after?: string | null;
}

/**
 * How to read one list of children in pages, in SQL over the alias `x` (the child's
 * table). `order` is the list's order and must end in a unique key; every key is a column
 * of `x`. Values come from the list's own domain module, never from a caller.
 */
export interface KeysetList {
  /** The child's table, e.g. `academic_courses`. */
  table: string;
  /** What a row is called in an error ("course"). */
  noun: string;
  /** The expression naming a row's parent, e.g. `x.term_id`. */
  parent: string;
  /** Tables joined to `x` to reach the parent (e.g. a many-to-many pivot). */
  join?: string;
  /** Column names of `x`, in order; the last one unique (e.g. `['code']`, `['day', 'period', 'id']`). */
  order: readonly string[];
  /** A further condition over `x`, with its parameters. */
  where?: { sql: string; params: readonly unknown[] };
}

export function checkPage(page: Page): { first: number; after: string | null } {
  const first = requireInt('first', page.first, 1, MAX_PAGE_SIZE);
  const after = page.after == null ? null : requireId('after', page.after);
  return { first, after };
}

/**
 * One page of children for each parent, in one statement: a LATERAL subquery per parent
 * reads at most `first` rows after the `after` row (keyset: rows whose order keys come
 * after that row's), so with an index on (parent, order…) the rows read are the rows sent,
 * however long the list. Results come back per parent, in the parents' order.
 *
 * `after` names the last row of the previous page (its id); an id that is not a row of
 * this list is a BAD_USER_INPUT naming `after`.
 */
export async function keysetPage<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  list: KeysetList,
  parentIds: string | readonly string[],
  page: Page,
): Promise<{ parent: string; row: T }[]> {
  const parents = idList('parentId', parentIds);
  const { first, after } = checkPage(page);
  const keys = (alias: string) => list.order.map((column) => `${alias}."${column}"`).join(', ');
  const keyset = after ? `and (${keys('x')}) > (select ${keys('x')} from "${list.table}" x where x.id = ?)` : '';
  const sql = `
    select page.* from unnest(string_to_array(?, ',')::uuid[]) with ordinality as parent(id, position)
    cross join lateral (
      select x.*, ${list.parent} as "page_parent"
      from "${list.table}" x ${list.join ?? ''}
      where ${list.parent} = parent.id ${list.where ? `and ${list.where.sql}` : ''} ${keyset}
      order by ${keys('x')}
      limit ?
    ) page
    order by parent.position, ${keys('page')}`;
  const params = [parents.join(','), ...(list.where?.params ?? []), ...(after ? [after] : []), first];
  const rows = await em.getConnection().execute<Record<string, unknown>[]>(sql, params, 'all', em.getTransactionContext());
  if (rows.length === 0 && after) await requireRow(em, list, after);
  return rows.map(({ page_parent: parent, ...columns }) => ({ parent: String(parent), row: em.map(entity, columns as never) }));
}

/** One page of a list that has no parent (e.g. every term), as `keysetPage` reads one per parent. */
export async function keysetRootPage<T extends object>(em: EntityManager, entity: EntityClass<T>, list: Omit<KeysetList, 'parent' | 'join'>, page: Page): Promise<T[]> {
  const { first, after } = checkPage(page);
  const keys = list.order.map((column) => `x."${column}"`).join(', ');
  const conditions = [
    ...(list.where ? [list.where.sql] : []),
    ...(after ? [`(${keys}) > (select ${keys} from "${list.table}" x where x.id = ?)`] : []),
  ];
  const sql = `select x.* from "${list.table}" x ${conditions.length > 0 ? `where ${conditions.join(' and ')}` : ''} order by ${keys} limit ?`;
  const params = [...(list.where?.params ?? []), ...(after ? [after] : []), first];
  const rows = await em.getConnection().execute<Record<string, unknown>[]>(sql, params, 'all', em.getTransactionContext());
  if (rows.length === 0 && after) await requireRow(em, list, after);
  return rows.map((columns) => em.map(entity, columns as never));
}

async function requireRow(em: EntityManager, list: Pick<KeysetList, 'table' | 'noun'>, id: string): Promise<void> {
  const found = await em.getConnection().execute<unknown[]>(`select 1 from "${list.table}" where id = ?`, [id], 'all', em.getTransactionContext());
  if (found.length === 0) throw badInput(`after: no ${list.noun} with id ${id}`, { field: 'after', value: id });
}
