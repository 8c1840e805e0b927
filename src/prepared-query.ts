/**
 * One statement, prepared once per database connection and run by name afterwards, on a
 * connection of MikroORM's pool: for the few reads that every request of a kind makes
 * (the starts' checks), where planning the statement each time would cost the database
 * more than running it. MikroORM's `execute` sends the values inlined in the text, which
 * PostgreSQL must parse and plan on every call.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { emSql, statementName } from './engine/db/sql';

interface PgClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<void>;
}

/**
 * Runs `text` (with `$n` placeholders) as a prepared statement, named by its text as the
 * engine's are (`statementName`). Inside a transaction of `em` it runs there instead
 * (unprepared), so it sees what that transaction wrote.
 */
export async function preparedQuery<Row>(em: EntityManager, text: string, values: unknown[]): Promise<Row[]> {
  if (em.isInTransaction()) return emSql(em)<Row>(text, values);
  const client = em.getConnection().getKnex().client as unknown as KnexClient;
  const pg = await client.acquireConnection();
  try {
    return (await pg.query({ name: statementName(text), text, values })).rows as Row[];
  } finally {
    await client.releaseConnection(pg);
  }
}
