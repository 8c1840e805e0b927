/**
 * An operator's `options` in DATABASE_URL joins the engine's session settings instead of
 * replacing them: pg lets a connection string's parameters win over a pool's config, so
 * a URL with `?options=-c …` would otherwise drop the engine's `enable_seqscan=off` (its
 * kept plans read by key) and the relaxed pool's `synchronous_commit=off`. And the ORM's
 * sessions take the URL's parameters too, which MikroORM alone leaves out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, withSessionOptions, type Database } from '../../src/database';
import { poolSql } from '../../src/engine/db/sql';
import { silentLogger } from '../../src/engine/logger';
import { createTestDatabase, type TestDatabase } from '../support/services';

describe('withSessionOptions', () => {
  const ENGINE = '-c enable_seqscan=off';

  it('gives the engine its own options when the URL has none', () => {
    expect(withSessionOptions('postgres://u@h:5432/db', ENGINE)).toEqual({ connectionString: 'postgres://u@h:5432/db', options: ENGINE });
    expect(withSessionOptions('postgres://u@h/db?sslmode=require', ENGINE)).toEqual({
      connectionString: 'postgres://u@h/db?sslmode=require',
      options: ENGINE,
    });
  });

  it("puts the URL's options first and the engine's last, and takes them out of the URL", () => {
    expect(withSessionOptions('postgres://u@h/db?options=-c%20work_mem%3D5MB', ENGINE)).toEqual({
      connectionString: 'postgres://u@h/db',
      options: `-c work_mem=5MB ${ENGINE}`,
    });
  });

  it("keeps the URL's other parameters, in their order and spelling", () => {
    expect(withSessionOptions('postgres://u@h/db?application_name=a%20b&options=-c+work_mem%3D5MB&host=%2Fvar%2Frun%2Fpostgresql', ENGINE)).toEqual({
      connectionString: 'postgres://u@h/db?application_name=a%20b&host=%2Fvar%2Frun%2Fpostgresql',
      options: `-c work_mem=5MB ${ENGINE}`,
    });
  });

  it('reads repeated options as pg does (the last), and an empty one as none', () => {
    expect(withSessionOptions('postgres://u@h/db?options=-c%20a%3D1&options=-c%20b%3D2', ENGINE).options).toBe(`-c b=2 ${ENGINE}`);
    expect(withSessionOptions('postgres://u@h/db?options=', ENGINE)).toEqual({ connectionString: 'postgres://u@h/db', options: ENGINE });
  });
});

describe('a DATABASE_URL with options', () => {
  let testDb: TestDatabase;
  let db: Database;

  beforeAll(async () => {
    testDb = await createTestDatabase('engine_url_options');
    const url = new URL(testDb.url);
    url.searchParams.set('application_name', 'url-options-test');
    url.searchParams.set('options', '-c work_mem=5MB -c enable_seqscan=on');
    db = await openDatabase({ url: url.toString(), poolSize: 2, logger: silentLogger });
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  const SETTINGS = `SELECT current_setting('work_mem') AS work_mem, current_setting('enable_seqscan') AS seqscan,
    current_setting('synchronous_commit') AS sync, current_setting('application_name') AS app`;

  it("the engine's sessions run with the URL's settings and the engine's own, the engine's winning a clash", async () => {
    const [engine] = await poolSql(db.pool)<Record<string, string>>(SETTINGS);
    expect(engine).toEqual({ work_mem: '5MB', seqscan: 'off', sync: 'on', app: 'url-options-test' });
    const [relaxed] = await poolSql(db.relaxedPool)<Record<string, string>>(SETTINGS);
    expect(relaxed).toEqual({ work_mem: '5MB', seqscan: 'off', sync: 'off', app: 'url-options-test' });
  });

  it("the ORM's sessions take the URL's options as given", async () => {
    const [orm] = await db.orm.em.fork().getConnection().execute(SETTINGS);
    expect(orm).toMatchObject({ work_mem: '5MB', seqscan: 'on', app: 'url-options-test' });
  });
});
