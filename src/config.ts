import path from 'node:path';
import {
  CONNECT_TIMEOUT_MS_DEFAULT,
  IDLE_IN_TRANSACTION_TIMEOUT_MS_DEFAULT,
  LOCK_TIMEOUT_MS_DEFAULT,
  STATEMENT_TIMEOUT_MS_DEFAULT,
  type SessionLimits,
} from './engine/db/session-limits';
import type { EngineSettings } from './engine/engine';
import { ALL_JOB_KINDS, JobKind } from './job-kinds';

/**
 * Every setting of the service, read from environment variables once at start-up.
 * A bad value stops the process with one line naming the variable, the value and
 * what is allowed (ConfigError). The README's configuration table mirrors this file.
 */

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly value: string,
    readonly allowed: string,
  ) {
    super(`Invalid configuration: ${variable}=${JSON.stringify(value)}; allowed: ${allowed}`);
    this.name = 'ConfigError';
  }
}

export enum Role {
  API = 'api',
  WORKER = 'worker',
}

export type NodeEnv = 'development' | 'production' | 'test';
export type LogFormat = 'json' | 'pretty';

export interface KindSettings {
  consumers: number;
}

export interface Config {
  nodeEnv: NodeEnv;
  port: number;
  host: string;
  roles: ReadonlySet<Role>;
  databaseUrl: string | undefined;
  rabbitmqUrl: string | undefined;
  rabbitmqPrefix: string;
  dataDir: string;
  embeddedPostgresPort: number;
  logLevel: string;
  logFormat: LogFormat;
  loadDemoData: boolean;
  /** Limits of every database session (see src/engine/db/session-limits.ts). */
  databaseLimits: SessionLimits;
  /** The engine's settings (consumers come from `kinds`), and the process's own. */
  engine: Omit<EngineSettings, 'consumers'> & {
    shutdownGraceSeconds: number;
    dbPoolSize: number;
    kinds: Record<JobKind, KindSettings>;
  };
  auth: {
    jwtSecret: string | undefined;
    jwksUrl: string | undefined;
    issuer: string | undefined;
    audience: string | undefined;
  };
  graphql: {
    introspection: boolean;
    graphiql: boolean;
    maxDepth: number;
    maxComplexity: number;
    maxBodyBytes: number;
    maxWsPayloadBytes: number;
  };
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function str(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, raw, `an integer from ${min} to ${max}`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, raw, `an integer from ${min} to ${max}`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  if (/^(true|1|yes|on)$/i.test(raw)) return true;
  if (/^(false|0|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, raw, 'true or false');
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  if (!allowed.includes(raw as T)) throw new ConfigError(name, raw, `one of ${allowed.join(', ')}`);
  return raw as T;
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, raw, `a URL starting with ${protocols.join(' or ')}`);
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, raw, `a URL starting with ${protocols.join(' or ')}`);
  return raw;
}

function roles(env: Env): ReadonlySet<Role> {
  const raw = str(env, 'ROLE') ?? 'all';
  if (raw === 'all') return new Set([Role.API, Role.WORKER]);
  const parts = raw.split(',').map((p) => p.trim());
  const allowed = Object.values(Role) as string[];
  if (parts.length === 0 || parts.some((p) => !allowed.includes(p))) {
    throw new ConfigError('ROLE', raw, 'api, worker, all, or api,worker');
  }
  return new Set(parts as Role[]);
}

/** Per-kind consumer counts: JOB_CONSUMERS_<KIND>, 1–16 each (the seed's rule). */
export const MIN_CONSUMERS = 1;
export const MAX_CONSUMERS = 16;
const DEFAULT_CONSUMERS: Record<JobKind, number> = {
  [JobKind.AUTOMATIC_SCHEDULE]: 2,
  [JobKind.SCHEDULE_PUBLISH]: 1,
  [JobKind.MAKEUP_EXAM_AUTO]: 2,
};

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf<NodeEnv>(env, 'NODE_ENV', ['development', 'production', 'test'], 'development');
  const production = nodeEnv === 'production';
  const kinds = Object.fromEntries(
    ALL_JOB_KINDS.map((kind) => [
      kind,
      { consumers: int(env, `JOB_CONSUMERS_${kind}`, DEFAULT_CONSUMERS[kind], MIN_CONSUMERS, MAX_CONSUMERS) },
    ]),
  ) as Record<JobKind, KindSettings>;
  const retryBaseMs = int(env, 'JOB_RETRY_BASE_MS', 2_000, 100, 3_600_000);
  const retryMaxMs = int(env, 'JOB_RETRY_MAX_MS', 300_000, 100, 86_400_000);
  if (retryMaxMs < retryBaseMs) throw new ConfigError('JOB_RETRY_MAX_MS', String(retryMaxMs), `at least JOB_RETRY_BASE_MS (${retryBaseMs})`);

  return {
    nodeEnv,
    port: int(env, 'PORT', 4000, 0, 65535),
    host: str(env, 'HOST') ?? '0.0.0.0',
    roles: roles(env),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    rabbitmqUrl: url(env, 'RABBITMQ_URL', ['amqp:', 'amqps:']),
    rabbitmqPrefix: (() => {
      const raw = str(env, 'RABBITMQ_PREFIX') ?? 'jiaowu';
      if (!/^[A-Za-z0-9_.-]{1,100}$/.test(raw)) throw new ConfigError('RABBITMQ_PREFIX', raw, 'letters, digits, _ . - (1–100)');
      return raw;
    })(),
    dataDir: path.resolve(str(env, 'JIAOWU_DATA_DIR') ?? '.data'),
    embeddedPostgresPort: int(env, 'EMBEDDED_POSTGRES_PORT', 54329, 1, 65535),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: oneOf<LogFormat>(env, 'LOG_FORMAT', ['json', 'pretty'], production ? 'json' : 'pretty'),
    loadDemoData: bool(env, 'LOAD_DEMO_DATA', !production),
    databaseLimits: {
      statementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', STATEMENT_TIMEOUT_MS_DEFAULT, 0, 3_600_000),
      lockTimeoutMs: int(env, 'DB_LOCK_TIMEOUT_MS', LOCK_TIMEOUT_MS_DEFAULT, 0, 3_600_000),
      idleInTransactionTimeoutMs: int(env, 'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', IDLE_IN_TRANSACTION_TIMEOUT_MS_DEFAULT, 0, 3_600_000),
      connectTimeoutMs: int(env, 'DB_CONNECT_TIMEOUT_MS', CONNECT_TIMEOUT_MS_DEFAULT, 100, 600_000),
    },
    engine: {
      leaseSeconds: int(env, 'JOB_LEASE_SECONDS', 60, 5, 86_400),
      attemptLimit: int(env, 'JOB_ATTEMPT_LIMIT', 5, 1, 100),
      retryBaseMs,
      retryMaxMs,
      publisherPollMs: int(env, 'OUTBOX_POLL_MS', 5_000, 50, 600_000),
      publisherBatchSize: int(env, 'OUTBOX_BATCH_SIZE', 200, 1, 5_000),
      maintenanceIntervalSeconds: int(env, 'MAINTENANCE_INTERVAL_SECONDS', 60, 1, 86_400),
      republishAfterSeconds: int(env, 'OUTBOX_REPUBLISH_AFTER_SECONDS', 300, 5, 86_400 * 7),
      retentionDays: int(env, 'OUTBOX_RETENTION_DAYS', 14, 0, 3650),
      cleanupBatchSize: int(env, 'OUTBOX_CLEANUP_BATCH_SIZE', 500, 1, 100_000),
      shutdownGraceSeconds: int(env, 'SHUTDOWN_GRACE_SECONDS', 30, 0, 3_600),
      dbPoolSize: int(env, 'DB_POOL_SIZE', 20, 2, 500),
      kinds,
    },
    auth: {
      jwtSecret: str(env, 'JWT_SECRET'),
      jwksUrl: url(env, 'JWT_JWKS_URL', ['http:', 'https:']),
      issuer: str(env, 'JWT_ISSUER'),
      audience: str(env, 'JWT_AUDIENCE'),
    },
    graphql: {
      introspection: bool(env, 'GRAPHQL_INTROSPECTION', !production),
      graphiql: bool(env, 'GRAPHIQL', !production),
      maxDepth: int(env, 'GRAPHQL_MAX_DEPTH', 10, 2, 100),
      maxComplexity: int(env, 'GRAPHQL_MAX_COMPLEXITY', 1_000, 10, 1_000_000),
      maxBodyBytes: int(env, 'GRAPHQL_MAX_BODY_BYTES', 1_048_576, 1_024, 104_857_600),
      maxWsPayloadBytes: int(env, 'GRAPHQL_MAX_WS_PAYLOAD_BYTES', 65_536, 1_024, 104_857_600),
    },
  };
}
