import type { EntityManager } from '@mikro-orm/postgresql';
import type { Pool, PoolClient } from 'pg';

/**
 * How the engine runs a statement: `$1`-style SQL against either its own pg pool
 * (runner, publisher, maintenance) or the caller's MikroORM transaction (enqueue,
 * and processors that complete inside their own transaction).
 */
export type Sql = <Row = Record<string, unknown>>(text: string, params?: readonly unknown[]) => Promise<Row[]>;

/**
 * Each distinct statement text gets a name, so pg prepares it once per connection and
 * PostgreSQL can reuse its plan: for the engine's short CTEs, planning costs more than
 * executing. (Needs session-level pooling if a pooler sits in front, as LISTEN does.)
 * The engine's texts are module constants, built once: a text built per call (a
 * template with a substitution) is a new string every time, which this look-up must
 * first copy flat to hash — a statement's length of garbage per statement run.
 */
const statementNames = new Map<string, string>();
export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `jiaowu_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return name;
}

export function poolSql(pool: Pool | PoolClient): Sql {
  return async <Row>(text: string, params: readonly unknown[] = []) => {
    const result = await pool.query({ name: statementName(text), text, values: params as unknown[] });
    return result.rows as Row[];
  };
}

/**
 * MikroORM's raw execution goes through knex, which binds `?` placeholders. The
 * engine's statements use `$n`; rewrite them (in order of appearance, so `$1` may
 * appear twice). The engine's SQL never uses the jsonb `?` operators.
 */
export function emSql(em: EntityManager): Sql {
  return async <Row>(text: string, params: readonly unknown[] = []) => {
    const ordered: unknown[] = [];
    const knexText = text.replace(/\$(\d+)/g, (_match, index: string) => {
      const value = params[Number(index) - 1];
      // knex would spread an array into a list of bindings; PostgreSQL wants one array value.
      ordered.push(Array.isArray(value) ? arrayLiteral(value) : value);
      return '?';
    });
    const rows = await em.getConnection().execute(knexText, ordered, 'all', em.getTransactionContext());
    return rows as Row[];
  };
}

/**
 * The parameters of a statement over many rows (`unnest($1::…[], $2::…[], …)`): one array
 * per column, built from each item's values in column order — the same `valuesOf` that
 * the one-row form of the statement binds, so the two forms cannot disagree on the order.
 */
export function columnsOf<T>(items: readonly T[], valuesOf: (item: T) => readonly unknown[]): unknown[][] {
  const rows = items.map(valuesOf);
  return (rows[0] ?? []).map((_, column) => rows.map((row) => row[column]));
}

/** A PostgreSQL array literal (`{"a",NULL,"b"}`) for a flat array of strings, numbers or nulls. */
export function arrayLiteral(values: readonly unknown[]): string {
  const items = values.map((v) => {
    if (v === null || v === undefined) return 'NULL';
    if (typeof v === 'number') return String(v);
    return `"${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  });
  return `{${items.join(',')}}`;
}

/** Runs `work` in one transaction on a pooled client. */
export async function inTransaction<T>(pool: Pool, work: (sql: Sql) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(poolSql(client));
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
