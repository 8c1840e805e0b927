import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reapOrphanedPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';

async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('private PostgreSQL', () => {
  let server: PrivatePostgres;

  beforeAll(async () => {
    const started = Date.now();
    server = await startPrivatePostgres({ database: 'selftest' });
    console.info(`private PostgreSQL on ${server.port} started in ${Date.now() - started} ms`);
  });
  afterAll(async () => {
    await server?.destroy();
  });

  it('keeps a table across stop and start, and refuses connections while stopped', async () => {
    expect(server.port).not.toBe(5432);
    expect(server.url).toMatch(/\/selftest$/);
    await query(server.url, 'CREATE TABLE kept (id int primary key, note text)');
    await query(server.url, "INSERT INTO kept VALUES (1, 'before restart')");

    const open = new pg.Client({ connectionString: server.url });
    const lost = new Promise<unknown>((resolve) => open.on('error', resolve));
    await open.connect();

    await server.stop();
    expect(server.running).toBe(false);
    await lost; // the stop ends open sessions
    await expect(query(server.url, 'SELECT 1')).rejects.toThrow();

    await server.start();
    const rows = await query(server.url, 'SELECT note FROM kept WHERE id = 1');
    expect(rows.rows).toEqual([{ note: 'before restart' }]);
  });

  it('can be killed like a crash and started again with committed data', async () => {
    await query(server.url, "INSERT INTO kept VALUES (2, 'before crash')");
    await server.kill();
    expect(server.running).toBe(false);
    await expect(query(server.url, 'SELECT 1')).rejects.toThrow();
    await server.start(); // crash recovery replays the WAL
    const rows = await query(server.url, 'SELECT note FROM kept ORDER BY id');
    expect(rows.rows).toEqual([{ note: 'before restart' }, { note: 'before crash' }]);
  });

  it('is reaped once the process that started it is gone, and only then', async () => {
    const orphan = await startPrivatePostgres();
    const baseDir = path.dirname(orphan.dataDir);
    expect(await reapOrphanedPrivatePostgres()).toBe(0);
    expect((await query(orphan.url, 'SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    writeFileSync(path.join(baseDir, 'owner'), dead.stdout);
    expect(await reapOrphanedPrivatePostgres()).toBe(1);
    expect(existsSync(baseDir)).toBe(false);
    await expect(query(orphan.url, 'SELECT 1')).rejects.toThrow();
    await orphan.destroy();
  });
});
