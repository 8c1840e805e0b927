/**
 * One statement, prepared once per database connection and run by name afterwards, on a
 * connection of MikroORM's pool: for the few reads that every request of a kind makes
 * (the starts' checks), where planning the statement each time would cost the database
 * more than running it. MikroORM's `execute` sends the values inlined in the text, which
 * PostgreSQL must parse and plan on every call.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { Batcher, BATCHES_IN_FLIGHT, statementPerBatch } from './engine/db/batcher';
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
  return runPrepared<Row>(knexClient(em), text, values);
}

const knexClient = (em: EntityManager) => em.getConnection().getKnex().client as unknown as KnexClient;

async function runPrepared<Row>(client: KnexClient, text: string, values: unknown[]): Promise<Row[]> {
  const pg = await client.acquireConnection();
  try {
    return (await pg.query({ name: statementName(text), text, values })).rows as Row[];
  } finally {
    await client.releaseConnection(pg);
  }
}

/** At most this many keys in one lookup statement. */
export const MAX_LOOKUP_BATCH = 64;

/** A keyed read as two statements: for one key (`$1` a key) and for many (`$1` an array of keys). */
export interface LookupStatements {
  one: string;
  many: string;
}

/**
 * A read of one row by key that many requests make at once (the starts' checks): the
 * keys asked for in the same turn — and while a statement is in flight — go together in
 * one prepared statement (see Batcher and statementPerBatch), so that N concurrent
 * requests cost one round trip instead of N. Both statements return each row with its
 * key in `key`; a key with no row gets undefined. A lone key runs `one`: PostgreSQL
 * settles on a generic plan for it after a few calls, while a statement matching an
 * array of keys (`= ANY($1)`) gets a custom plan on every call — planning the starts'
 * checks costs more than running them. Inside a transaction of `em` it runs there,
 * alone, so it sees what that transaction wrote.
 */
export function preparedLookup<Row extends { key: string }>(statements: LookupStatements): (em: EntityManager, key: string) => Promise<Row | undefined> {
  const batchers = new WeakMap<KnexClient, Batcher<string, Row>>();
  return async (em, key) => {
    if (em.isInTransaction()) return (await emSql(em)<Row>(statements.one, [key]))[0];
    const client = knexClient(em);
    let batcher = batchers.get(client);
    if (!batcher) {
      batcher = new Batcher<string, Row>(
        statementPerBatch({
          many: (keys) => runPrepared<Row>(client, statements.many, [keys]),
          one: async (key) => (await runPrepared<Row>(client, statements.one, [key]))[0],
          rowKey: (row) => row.key,
          requestKey: (key) => key,
        }),
        MAX_LOOKUP_BATCH,
        BATCHES_IN_FLIGHT,
      );
      batchers.set(client, batcher);
    }
    return batcher.submit(key);
  };
}
