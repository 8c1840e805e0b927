import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/database';
import { silentLogger } from '../src/engine/logger';
import { migrationsList } from '../migrations';
import { createTestDb } from './support/engine-harness';
import { ormAsyncContextEntries } from './support/orm-async-context';
import { createTestDatabase, type TestDatabase } from './support/services';

/**
 * The entities and the migrations must describe the same schema. Two checks, because
 * MikroORM's diff does not compare partial-index predicates (a unique index `WHERE
 * exclusive_key IS NOT NULL` and one `WHERE … IS NULL` look the same to it):
 *  1. on a database built by the migrations, the ORM's update diff is empty;
 *  2. the catalog (columns, indexes with their full definitions, constraints) of that
 *     database equals the catalog of a database built from the entities alone.
 */

let migrated: Awaited<ReturnType<typeof createTestDb>>;
let fromEntitiesDb: TestDatabase;
let fromEntities: Database;

beforeAll(async () => {
  migrated = await createTestDb('migrations_applied');
  fromEntitiesDb = await createTestDatabase('migrations_entities');
  fromEntities = await openDatabase({ url: fromEntitiesDb.url, poolSize: 2, logger: silentLogger, migrate: false });
  await fromEntities.orm.getSchemaGenerator().createSchema();
});
afterAll(async () => {
  await fromEntities?.close();
  await fromEntitiesDb?.drop();
  await migrated?.close();
});

type Catalog = Record<'columns' | 'indexes' | 'constraints', string[]>;

async function catalog(url: string): Promise<Catalog> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const skip = `('mikro_orm_migrations')`;
    const columns = await client.query(
      `SELECT table_name || '.' || column_name || ' ' || udt_name || ' ' || is_nullable || ' default ' || coalesce(column_default, '-') AS line
       FROM information_schema.columns WHERE table_schema = 'public' AND table_name NOT IN ${skip}`,
    );
    const indexes = await client.query(`SELECT indexdef AS line FROM pg_indexes WHERE schemaname = 'public' AND tablename NOT IN ${skip}`);
    const constraints = await client.query(
      `SELECT c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid) AS line
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
       WHERE n.nspname = 'public' AND c.conrelid::regclass::text NOT IN ${skip}`,
    );
    const lines = (r: pg.QueryResult<{ line: string }>) => r.rows.map((row) => row.line).sort();
    return { columns: lines(columns), indexes: lines(indexes), constraints: lines(constraints) };
  } finally {
    await client.end();
  }
}

/** Lines present in one catalog and not the other, marked `+` (entities only) or `-` (migrations only). */
function differences(fromMigrations: Catalog, fromModel: Catalog): string[] {
  const out: string[] = [];
  for (const part of ['columns', 'indexes', 'constraints'] as const) {
    const a = new Set(fromMigrations[part]);
    const b = new Set(fromModel[part]);
    for (const line of b) if (!a.has(line)) out.push(`+ ${part}: ${line}`);
    for (const line of a) if (!b.has(line)) out.push(`- ${part}: ${line}`);
  }
  return out;
}

describe('entities and migrations agree', () => {
  it('every listed migration was applied, none is pending', async () => {
    const migrator = migrated.db.orm.getMigrator();
    expect(await migrator.getPendingMigrations()).toEqual([]);
    const executed = (await migrator.getExecutedMigrations()).map((m) => m.name);
    expect(executed).toEqual(migrationsList.map((m) => m.name));
  });

  it("the ORM's schema diff against the migrated database is empty", async () => {
    const diff = await migrated.db.orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
    expect(diff.trim(), `the entities want this schema change; write a migration:\n${diff}`).toBe('');
  });

  it('the migrated catalog equals the catalog built from the entities (including partial-index predicates)', async () => {
    const fromMigrations = await catalog(migrated.db.url);
    const fromModel = await catalog(fromEntities.url);
    expect(fromMigrations.columns.length).toBeGreaterThan(10);
    expect(fromMigrations.indexes.some((line) => /jobs_exclusive_key_active_unique .* WHERE \(exclusive_key IS NOT NULL\)/.test(line))).toBe(true);
    expect(differences(fromMigrations, fromModel)).toEqual([]);
  });
});

describe('the checks fail when entities and migrations disagree', () => {
  let drifted: Awaited<ReturnType<typeof createTestDb>>;
  beforeAll(async () => {
    drifted = await createTestDb('migrations_drift');
  });
  afterAll(async () => {
    await drifted?.close();
  });

  it('a missing column, an extra column or a missing index shows in the ORM diff', async () => {
    await drifted.db.pool.query('ALTER TABLE jobs DROP COLUMN message');
    await drifted.db.pool.query('ALTER TABLE job_outbox ADD COLUMN stray int');
    await drifted.db.pool.query('DROP INDEX job_outbox_pending_index');
    const diff = await drifted.db.orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
    expect(diff).toMatch(/add column "message"/);
    expect(diff).toMatch(/drop column "stray"/);
    expect(diff).toMatch(/create index "job_outbox_pending_index"/);
  });

  it('a partial index with another predicate shows in the catalog comparison', async () => {
    await drifted.db.pool.query('DROP INDEX jobs_exclusive_key_active_unique');
    await drifted.db.pool.query('CREATE UNIQUE INDEX jobs_exclusive_key_active_unique ON jobs (exclusive_key) WHERE exclusive_key IS NULL');
    const diff = differences(await catalog(drifted.db.url), await catalog(fromEntities.url));
    expect(diff.filter((line) => line.includes('jobs_exclusive_key_active_unique'))).toHaveLength(2);
  });
});

describe('migrations at start-up', () => {
  it('several processes opening the same fresh database at once all succeed (one migrates, the others wait)', async () => {
    const fresh = await createTestDatabase('migrate_race');
    try {
      const opened = await Promise.all([1, 2, 3, 4].map(() => openDatabase({ url: fresh.url, poolSize: 2, logger: silentLogger })));
      const { rows } = await opened[0]!.pool.query('SELECT count(*)::int AS n FROM mikro_orm_migrations');
      expect(rows[0].n).toBe(opened[0]!.orm.config.get('migrations').migrationsList!.length);
      await Promise.all(opened.map((db) => db.close()));
    } finally {
      await fresh.drop();
    }
  });

  it('migrating enters no AsyncLocalStorage of the ORM (which would leave promise hooks on for the life of the process)', async () => {
    const fresh = await createTestDatabase('migrate_no_als');
    try {
      const { result: db, entries } = await ormAsyncContextEntries(() => openDatabase({ url: fresh.url, poolSize: 2, logger: silentLogger }));
      try {
        const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM mikro_orm_migrations');
        expect(rows[0].n).toBe(migrationsList.length);
      } finally {
        await db.close();
      }
      expect(entries).toEqual([]);
    } finally {
      await fresh.drop();
    }
  });
});
