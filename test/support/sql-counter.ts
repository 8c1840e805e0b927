/**
 * Counts the SQL statements this process sends and the rows they return, across every
 * copy of `pg` loaded here (the engine's pool and the ORM's driver may load different
 * ones): for tests that prove an operation's work is bounded by counting it.
 */
import { createRequire } from 'node:module';
import path from 'node:path';

type Method = (this: { text?: string; name?: string }, ...args: unknown[]) => unknown;
type QueryClass = { prototype: { submit: Method; handleDataRow: Method } };

export interface SqlCount {
  statements: number;
  rows: number;
  texts: string[];
  /** The prepared statement's name, or null for an unnamed one, per statement. */
  names: (string | null)[];
}

function queryClasses(): QueryClass[] {
  const roots = [path.resolve('package.json'), path.resolve('node_modules/@mikro-orm/postgresql/package.json'), path.resolve('node_modules/knex/package.json')];
  const found = new Set<QueryClass>();
  for (const root of roots) {
    try {
      found.add(createRequire(root)('pg').Query);
    } catch {
      // that package has no copy of its own
    }
  }
  return [...found];
}

/**
 * Counts what `work` sends (everything the process sends meanwhile: run it alone).
 * At pg's `Query` (every statement is submitted to the connection by one, and each data
 * row it receives passes through it) rather than `Client.query`, which the service wraps
 * per connection.
 */
export async function countSql<T>(work: () => Promise<T>): Promise<{ result: T; count: SqlCount }> {
  const count: SqlCount = { statements: 0, rows: 0, texts: [], names: [] };
  const restore: (() => void)[] = [];
  for (const Query of queryClasses()) {
    const { submit, handleDataRow } = Query.prototype;
    Query.prototype.submit = function (...args) {
      count.statements++;
      count.texts.push((this.text ?? '').replace(/\s+/g, ' ').trim().slice(0, 120));
      count.names.push(this.name ?? null);
      return submit.apply(this, args);
    };
    Query.prototype.handleDataRow = function (...args) {
      count.rows++;
      return handleDataRow.apply(this, args);
    };
    restore.push(() => Object.assign(Query.prototype, { submit, handleDataRow }));
  }
  try {
    return { result: await work(), count };
  } finally {
    for (const undo of restore) undo();
  }
}
