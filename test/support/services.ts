// Where the tests find the machine's shared PostgreSQL and RabbitMQ, and how a test file
// gets an isolated database and isolated broker names on them.
//
// Nothing here imports vitest: benchmarks (compiled to dist/) use it from plain node.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { connect } from 'amqplib';
import pg from 'pg';
import { rabbitMqTopology } from '../../src/engine/transport/rabbitmq-transport';

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const DEFAULT_RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:5672';

/** Set by the global setup: '1' when the broker answered, '0' when it did not. */
export const RABBIT_ENV_FLAG = 'JIAOWU_TEST_RABBIT';

/** Base URL of the shared test PostgreSQL server (env `DATABASE_URL`). */
export function testDatabaseUrl(): string {
  return process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
}

/** URL of the shared RabbitMQ broker (env `RABBITMQ_URL`). */
export function rabbitUrl(): string {
  return process.env.RABBITMQ_URL || DEFAULT_RABBITMQ_URL;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Whether a TCP connection to host:port opens within `timeoutMs`. */
export function tcpAnswers(host: string, port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Whether an AMQP broker answers at `url` (default: `rabbitUrl()`): TCP connect plus a
 * full AMQP handshake (amqplib connect + close), all within `timeoutMs`.
 */
export async function rabbitAvailable(url: string = rabbitUrl(), timeoutMs = 2000): Promise<boolean> {
  const target = new URL(url);
  const port = Number(target.port || 5672);
  if (!(await tcpAnswers(target.hostname, port, timeoutMs))) return false;
  try {
    const connecting = connect(url, { timeout: timeoutMs });
    const model = await withTimeout(connecting, timeoutMs, `AMQP handshake with ${target.host}`).catch(
      (error: unknown) => {
        // A late success must not leave a connection open.
        connecting.then((late) => late.close()).catch(() => undefined);
        throw error;
      },
    );
    model.on('error', () => undefined);
    await model.close().catch(() => undefined);
    return true;
  } catch {
    return false;
  }
}

/** Whether PostgreSQL answers a `SELECT 1` at `url` (default: `testDatabaseUrl()`). */
export async function postgresAvailable(url: string = testDatabaseUrl(), timeoutMs = 3000): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

// Synchronous probe for when the global setup did not run (a file started some other way).
function rabbitAnswersSync(): boolean {
  const target = new URL(rabbitUrl());
  const script =
    "const s=require('net').connect({host:process.argv[1],port:+process.argv[2]});" +
    's.setTimeout(2000,()=>process.exit(1));' +
    "s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(1));";
  const result = spawnSync(process.execPath, ['-e', script, target.hostname, target.port || '5672'], {
    timeout: 5000,
    stdio: 'ignore',
  });
  return result.status === 0;
}

function callerTestFile(): string {
  const stack = new Error().stack ?? '';
  for (const line of stack.split('\n').slice(1)) {
    const match = /(?:\(|at )((?:file:\/\/)?\/[^():]+\.[cm]?[jt]s)/.exec(line);
    if (match && !match[1].includes('/test/support/services.')) {
      return path.relative(process.cwd(), match[1].replace(/^file:\/\//, ''));
    }
  }
  return '(unknown test file)';
}

/**
 * For test files that need the shared broker: `describe.runIf(requireRabbit())(...)`.
 * Returns true when RabbitMQ answers. When it does not: under `CI=true` it throws (the
 * file fails, it is never skipped); otherwise it prints a loud warning naming the file
 * and returns false so the file can skip.
 */
export function requireRabbit(file: string = callerTestFile()): boolean {
  const flag = process.env[RABBIT_ENV_FLAG];
  const available = flag === undefined ? rabbitAnswersSync() : flag === '1';
  if (available) return true;
  const why = `RabbitMQ does not answer at ${redact(rabbitUrl())}`;
  if (process.env.CI === 'true') {
    throw new Error(
      `${why}; ${file} needs it and CI=true forbids skipping. ` +
        'Start it with `rabbitmq-server -detached` (or set RABBITMQ_URL).',
    );
  }
  const bar = '!'.repeat(78);
  console.warn(
    `\n${bar}\n!! SKIPPING ${file}\n!! because ${why}.\n` +
      '!! Start it with `rabbitmq-server -detached`; under CI=true this is a failure.\n' +
      `${bar}\n`,
  );
  return false;
}

/** The URL with its password hidden, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

function randomSuffix(): string {
  return randomBytes(4).toString('hex');
}

function sanitize(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

export interface TestDatabase {
  /** The database's name on the shared server. */
  name: string;
  /** Connection URL of the new database. */
  url: string;
  /** Drops the database, closing any connection still open to it. Safe to call twice. */
  drop(): Promise<void>;
}

/**
 * Creates a fresh, uniquely named database on the shared server (`testDatabaseUrl()`
 * or `baseUrl`) for one test file. Call `drop()` in `afterAll`.
 */
export async function createTestDatabase(prefix: string, baseUrl: string = testDatabaseUrl()): Promise<TestDatabase> {
  const name = `t_${sanitize(prefix).slice(0, 40) || 'db'}_${Date.now().toString(36)}_${randomSuffix()}`;
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 5000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  await admin((client) => client.query(`CREATE DATABASE "${name}"`));
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    url: url.toString(),
    async drop() {
      if (dropped) return;
      await admin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
      dropped = true;
    },
  };
}

const TEST_DATABASE_NAME = /^t_[a-z0-9_]*_([0-9a-z]{8,9})_[0-9a-f]{8}$/;

/**
 * Drops databases made by `createTestDatabase` more than `maxAgeMs` ago (default 6 h):
 * leftovers of test processes that died before `drop()`. Younger ones may belong to a
 * run in progress and are kept. Best effort; returns the names dropped.
 */
export async function dropStaleTestDatabases(
  maxAgeMs = 6 * 60 * 60 * 1000,
  baseUrl: string = testDatabaseUrl(),
): Promise<string[]> {
  const client = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  const dropped: string[] = [];
  try {
    await client.connect();
    const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 't\\_%'");
    for (const { datname } of rows) {
      const match = TEST_DATABASE_NAME.exec(datname);
      if (!match) continue;
      const createdAt = parseInt(match[1], 36);
      if (!(createdAt > 1.6e12) || Date.now() - createdAt < maxAgeMs) continue;
      try {
        await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
        dropped.push(datname);
      } catch {
        // someone else dropped it, or it is busy: next time
      }
    }
  } catch {
    // best effort
  } finally {
    await client.end().catch(() => undefined);
  }
  return dropped;
}

// Names of queues and exchanges created under each prefix, for cleanup.
const trackedQueues = new Set<string>();
const trackedExchanges = new Set<string>();

/**
 * A prefix for the RabbitMQ queues and exchanges of one test file or test:
 * `t_<name>_<random>`. Name every object you declare with it and register the names
 * with `trackQueue` / `trackExchange` so `deleteRabbitObjects` can remove them.
 */
export function uniquePrefix(name: string): string {
  return `t_${sanitize(name).slice(0, 40) || 'x'}_${randomSuffix()}`;
}

/** Remember a queue for `deleteRabbitObjects`. Returns the name. */
export function trackQueue(name: string): string {
  trackedQueues.add(name);
  return name;
}

/** Remember an exchange for `deleteRabbitObjects`. Returns the name. */
export function trackExchange(name: string): string {
  trackedExchanges.add(name);
  return name;
}

export interface DeleteRabbitObjectsOptions {
  /** Broker to clean (default `rabbitUrl()`). */
  url?: string;
  /** More queue names to delete (besides tracked ones starting with the prefix). */
  queues?: string[];
  /** More exchange names to delete. */
  exchanges?: string[];
  /**
   * Also list the broker's queues and exchanges with `rabbitmqctl -n <node> list_…` and
   * delete those starting with the prefix (a local broker only; the management API may
   * be absent). Pass the node name, e.g. 'rabbit@localhost'; off by default.
   */
  listWithRabbitmqctl?: string;
}

function listWithRabbitmqctl(node: string, what: 'list_queues' | 'list_exchanges'): string[] {
  const result = spawnSync('rabbitmqctl', ['-n', node, '-q', '--no-table-headers', what, 'name'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (result.status !== 0 || typeof result.stdout !== 'string') return [];
  return result.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

/**
 * Best-effort removal of the queues and exchanges whose names start with `prefix`:
 * those registered with `trackQueue`/`trackExchange` plus `options.queues/exchanges`
 * (and optionally those `rabbitmqctl` lists). Never throws; returns what it deleted.
 */
export async function deleteRabbitObjects(
  prefix: string,
  options: DeleteRabbitObjectsOptions = {},
): Promise<{ queues: string[]; exchanges: string[] }> {
  const queues = new Set([...trackedQueues].filter((name) => name.startsWith(prefix)));
  const exchanges = new Set([...trackedExchanges].filter((name) => name.startsWith(prefix)));
  for (const name of options.queues ?? []) queues.add(name);
  for (const name of options.exchanges ?? []) exchanges.add(name);
  if (options.listWithRabbitmqctl) {
    for (const name of listWithRabbitmqctl(options.listWithRabbitmqctl, 'list_queues')) {
      if (name.startsWith(prefix)) queues.add(name);
    }
    for (const name of listWithRabbitmqctl(options.listWithRabbitmqctl, 'list_exchanges')) {
      if (name.startsWith(prefix)) exchanges.add(name);
    }
  }
  const deleted = { queues: [] as string[], exchanges: [] as string[] };
  if (queues.size === 0 && exchanges.size === 0) return deleted;
  let model;
  try {
    model = await connect(options.url ?? rabbitUrl(), { timeout: 5000 });
  } catch {
    return deleted;
  }
  model.on('error', () => undefined);
  try {
    // A failed delete closes the channel, so use one channel per object.
    for (const name of queues) {
      try {
        const channel = await model.createChannel();
        channel.on('error', () => undefined);
        await channel.deleteQueue(name);
        await channel.close().catch(() => undefined);
        deleted.queues.push(name);
        trackedQueues.delete(name);
      } catch {
        // best effort
      }
    }
    for (const name of exchanges) {
      try {
        const channel = await model.createChannel();
        channel.on('error', () => undefined);
        await channel.deleteExchange(name);
        await channel.close().catch(() => undefined);
        deleted.exchanges.push(name);
        trackedExchanges.delete(name);
      } catch {
        // best effort
      }
    }
  } finally {
    await model.close().catch(() => undefined);
  }
  return deleted;
}

/** Deletes what a RabbitMQ transport with `prefix` declared for these kinds: work queues, delay buckets, exchanges. */
export function deleteEngineTopology(prefix: string, kinds: readonly string[]): Promise<{ queues: string[]; exchanges: string[] }> {
  const topology = rabbitMqTopology(prefix);
  const delays = topology.delayBucketsMs.map(topology.delay);
  return deleteRabbitObjects(prefix, {
    queues: [...kinds.map(topology.workQueue), ...delays, topology.parked],
    exchanges: [topology.workExchange, ...delays],
  });
}
