import net from 'node:net';
import path from 'node:path';
import {
  CONNECT_TIMEOUT_MS_DEFAULT,
  IDLE_IN_TRANSACTION_TIMEOUT_MS_DEFAULT,
  LOCK_TIMEOUT_MS_DEFAULT,
  STATEMENT_TIMEOUT_MS_DEFAULT,
  type SessionLimits,
} from './engine/db/session-limits';
import type { EngineSettings } from './engine/engine';
import { FAST_START_MAX_RATE_DEFAULT } from './engine/fast-start-pacer';
import { MIN_LEASE_SECONDS } from './engine/progress-reporter';
import { FAST_START_HEAD_START_MS_DEFAULT } from './engine/publisher';
import { MAX_JOBS_PER_MESSAGE } from './engine/transport/job-message';
import { JOB_KINDS } from './job-kind-descriptors';
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

/** Who may read /health/messaging and /metrics (/health/live and /health/ready stay public). */
export enum OpsAccess {
  PUBLIC = 'public',
  /** Only clients on this machine, reaching the process directly (no forwarding proxy headers). */
  LOOPBACK = 'loopback',
  /** Only requests bearing OPS_TOKEN (`Authorization: Bearer <OPS_TOKEN>`). */
  TOKEN = 'token',
}

/** Signature algorithms a JWKS key may use; HMAC and `none` are never taken from a JWKS. */
export const JWKS_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** Per-client limits of the API, sized for an office (many people, a few tabs each). */
export const DEFAULT_LIMITS = {
  // In flight: well above a page's queries at once (a body is held while it arrives).
  http: { perSubject: 20, perAddress: 10, burst: 200, maxInFlightPerCaller: 64 },
  socket: {
    maxConnectionsPerAddress: 128,
    connectsPerSecond: 10,
    connectBurst: 100,
    maxConnectionsPerSubject: 10,
    maxSubscriptionsPerSocket: 100,
    subscribePerSecond: 10,
    subscribeBurst: 200,
    maxEventCost: 20,
    maxDashboardsPerSubject: 4,
    messagesPerSecond: 50,
    // Above what a subscribe flood sends before its own limit closes its socket (the
    // subscribe burst, then 100 refusals), so that limit, with its penalty, comes first.
    messageBurst: 500,
    // Events queued for one subscription whose client falls behind (see BacklogLimit):
    // a dashboard may lag a burst of thousands of jobs' events and still catch up.
    maxPendingEvents: 10_000,
  },
  refusalCost: 5,
  refusedCallerSeconds: 30,
} as const;
/** The HTTP server's bounds on connections, in every role (a worker serves health and metrics too). */
export interface HttpConnectionSettings {
  /** Open TCP connections per client address (IPv6: its /64), HTTP and graphql-ws together. */
  maxPerAddress: number;
  /** Open connections in all: beyond, new ones are closed at once (within what the process's file descriptors hold). */
  maxTotal: number;
  /** A request's headers must arrive within this (408 and closed otherwise). */
  headersTimeoutMs: number;
  /** A whole request, body included, must arrive within this (408 and closed otherwise). */
  requestTimeoutMs: number;
  /** A connection whose client takes none of what waits to be sent to it for this long is closed (see dropStalledSends). */
  sendTimeoutMs: number;
  /**
   * Reverse proxies (addresses or CIDR ranges) whose `X-Forwarded-For` names the client:
   * the per-address limits then key the client, not the proxy (see ClientAddresses).
   */
  trustedProxies: readonly string[];
}

/**
 * Node's own timeouts (60 s for headers, 300 s for a request) and no cap per address
 * let one address that opens connections and sends their headers a byte at a time
 * (slowloris) hold thousands of them, each a file descriptor and buffers, for minutes.
 * An office's browsers need a few connections each.
 */
export const DEFAULT_HTTP_CONNECTIONS: HttpConnectionSettings = {
  // Above the graphql-ws sockets allowed per address (128), with room for HTTP requests beside them.
  maxPerAddress: 256,
  maxTotal: 10_000,
  headersTimeoutMs: 10_000,
  // An admin's `.ctt` import of GRAPHQL_MAX_BODY_BYTES over a slow link.
  requestTimeoutMs: 120_000,
  // nginx's default send_timeout: a client that reads at all moves within it.
  sendTimeoutMs: 60_000,
  // Nobody: a client could otherwise name any address it likes in X-Forwarded-For.
  trustedProxies: [],
};
/** Requests per client address to what anyone may ask without a token (operator endpoints, the web page's files). */
export interface AddressRateSettings {
  perSecond: number;
  /** Extra requests in bursts, refilled every 10 s. */
  burst: number;
}
/** A prober or scraper asks every few seconds: this is lavish for one, and bounds a flood. */
export const DEFAULT_OPS_RATE: AddressRateSettings = { perSecond: 10, burst: 100 };
/**
 * A browser loads the page's index and a dozen files, then caches the files for a year:
 * lavish for a room of browsers behind one address, and bounds a flood of page requests.
 */
export const DEFAULT_PAGE_RATE: AddressRateSettings = { perSecond: 50, burst: 500 };
/** A token may be valid for at most this long (exp − iat, or exp − now without iat). */
export const DEFAULT_JWT_MAX_LIFETIME_SECONDS = 86_400;

export interface KindSettings {
  consumers: number;
  prefetch: number;
  /** Held deliveries of the kind this process claims before a processor slot is free (see KindDefaults.claimAhead). */
  claimAhead: number;
  /** Jobs of the kind this process's publisher packs into one RabbitMQ message. */
  jobsPerMessage: number;
}

export interface Config {
  nodeEnv: NodeEnv;
  port: number;
  host: string;
  httpConnections: HttpConnectionSettings;
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
    /** Longest validity a token may claim, in seconds. */
    maxLifetimeSeconds: number;
    /** Algorithms accepted from the JWKS (a shared secret is always HS256). */
    algorithms: string[];
  };
  /** Rate limits per caller (HTTP operations, socket subscribes) and socket caps; see the README's "Limits". */
  limits: {
    /** Operations per second per subject or address, the burst allowance, and operations of one caller in flight at once. */
    http: { perSubject: number; perAddress: number; burst: number; maxInFlightPerCaller: number };
    socket: {
      maxConnectionsPerAddress: number;
      /** New sockets (upgrades) per second per client address, plus `connectBurst` per burst window. */
      connectsPerSecond: number;
      connectBurst: number;
      maxConnectionsPerSubject: number;
      maxSubscriptionsPerSocket: number;
      subscribePerSecond: number;
      subscribeBurst: number;
      maxEventCost: number;
      maxDashboardsPerSubject: number;
      /** Messages (and ping frames) per second one socket may send, plus `messageBurst` at once. */
      messagesPerSecond: number;
      messageBurst: number;
      /** Events waiting for one subscription's client beyond which they are conflated (newest per job), and its socket dropped if half as many jobs still wait. */
      maxPendingEvents: number;
    };
    /** What an operation refused before it runs spends of its caller's allowance (HTTP operations, socket subscribes); any other spends 1. */
    refusalCost: number;
    /** How long a caller refused lately waits behind everyone else (src/api/refused-callers.ts); 0: never. */
    refusedCallerSeconds: number;
  };
  ops: { access: OpsAccess; token: string | undefined };
  /** Requests per address to /health/* and /metrics, in every role. */
  opsRate: AddressRateSettings;
  graphql: {
    introspection: boolean;
    graphiql: boolean;
    /** The folder the web page is served from (`vite build` output); null: no page at `/`. */
    webRoot: string | null;
    /** Requests per address for the page and its files (and, while the page is served, any path nothing else answers). */
    pageRate: AddressRateSettings;
    maxDepth: number;
    maxComplexity: number;
    maxTokens: number;
    maxAliases: number;
    maxDirectives: number;
    maxBodyBytes: number;
    /** The body limit of a request without a token that verifies (at most `maxBodyBytes`). */
    maxAnonymousBodyBytes: number;
    maxWsPayloadBytes: number;
    /** How often an API process compares the jobs its subscriptions watch with the database. */
    subscriptionResyncIntervalMs: number;
    /** Most job ids one such comparison reads. */
    subscriptionResyncBatchSize: number;
  };
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function str(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** The HTTP server's connection bounds; Node refuses a headers timeout longer than the request timeout. */
function httpConnections(env: Env): HttpConnectionSettings {
  const headersTimeoutMs = int(env, 'HTTP_HEADERS_TIMEOUT_MS', DEFAULT_HTTP_CONNECTIONS.headersTimeoutMs, 1_000, 600_000);
  const requestTimeoutMs = int(env, 'HTTP_REQUEST_TIMEOUT_MS', DEFAULT_HTTP_CONNECTIONS.requestTimeoutMs, 1_000, 3_600_000);
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError('HTTP_REQUEST_TIMEOUT_MS', String(requestTimeoutMs), `at least HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs})`);
  }
  return {
    maxPerAddress: int(env, 'HTTP_MAX_CONNECTIONS_PER_ADDRESS', DEFAULT_HTTP_CONNECTIONS.maxPerAddress, 1, 1_000_000),
    maxTotal: int(env, 'HTTP_MAX_CONNECTIONS', DEFAULT_HTTP_CONNECTIONS.maxTotal, 1, 1_000_000),
    headersTimeoutMs,
    requestTimeoutMs,
    sendTimeoutMs: int(env, 'HTTP_SEND_TIMEOUT_MS', DEFAULT_HTTP_CONNECTIONS.sendTimeoutMs, 1_000, 3_600_000),
    trustedProxies: trustedProxies(env),
  };
}

/** `TRUSTED_PROXIES`: a comma-separated list of IPv4/IPv6 addresses and CIDR ranges. */
function trustedProxies(env: Env): string[] {
  const raw = str(env, 'TRUSTED_PROXIES');
  if (raw === undefined) return [];
  const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const entry of entries) {
    if (!proxyRange(entry)) throw new ConfigError('TRUSTED_PROXIES', raw, 'comma-separated IP addresses or CIDR ranges, e.g. 10.0.0.5,10.1.0.0/16,fd00::/8');
  }
  return entries;
}

/** A `TRUSTED_PROXIES` entry: one address (no prefix) or a CIDR range. */
export interface ProxyRange {
  address: string;
  prefix: number | undefined;
  family: 'ipv4' | 'ipv6';
}

/** An address or CIDR range ("10.0.0.5", "10.1.0.0/16", "fd00::/8"), or null when the entry is neither. */
export function proxyRange(entry: string): ProxyRange | null {
  const [address = '', prefix, ...rest] = entry.split('/');
  const version = net.isIP(address);
  if (version === 0 || rest.length > 0) return null;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (prefix === undefined) return { address, prefix: undefined, family };
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > (version === 4 ? 32 : 128)) return null;
  return { address, prefix: Number(prefix), family };
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

/**
 * The URL with its password (user-info or `password=` parameter) replaced by `***`, for
 * messages and logs. Works on text that does not parse too: everything between the
 * scheme's `user:` and the last `@` counts as the password.
 */
export function redactUrl(value: string): string {
  let redacted = value.replace(/([?&]password=)[^&#]*/gi, '$1***');
  const userInfo = /^([a-z][a-z0-9+.-]*:\/\/)(.*)@/i.exec(redacted);
  if (userInfo) {
    const colon = userInfo[2]!.indexOf(':');
    if (colon >= 0) redacted = `${userInfo[1]}${userInfo[2]!.slice(0, colon)}:***@${redacted.slice(userInfo[0].length)}`;
  }
  return redacted;
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, redactUrl(raw), `a URL starting with ${protocols.join(' or ')}`);
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, redactUrl(raw), `a URL starting with ${protocols.join(' or ')}`);
  return raw;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** JWT_JWKS_URL: https; plain http only to this machine and outside production (a local identity provider). */
function jwksUrl(env: Env, production: boolean): string | undefined {
  const raw = url(env, 'JWT_JWKS_URL', ['https:', 'http:']);
  if (raw === undefined) return undefined;
  const parsed = new URL(raw);
  if (parsed.protocol === 'http:' && (production || !LOOPBACK_HOSTS.has(parsed.hostname))) {
    throw new ConfigError('JWT_JWKS_URL', redactUrl(raw), 'an https: URL (http: only to localhost outside production)');
  }
  return raw;
}

function algorithms(env: Env): string[] {
  const raw = str(env, 'JWT_ALGORITHMS') ?? 'RS256,ES256,EdDSA';
  const list = raw.split(',').map((a) => a.trim());
  if (list.some((a) => !(JWKS_ALGORITHMS as readonly string[]).includes(a))) {
    throw new ConfigError('JWT_ALGORITHMS', raw, `a comma-separated list of ${JWKS_ALGORITHMS.join(', ')}`);
  }
  return [...new Set(list)];
}

function opsAccess(env: Env, production: boolean): { access: OpsAccess; token: string | undefined } {
  const access = oneOf<OpsAccess>(env, 'OPS_ENDPOINTS', Object.values(OpsAccess), OpsAccess.PUBLIC);
  const token = str(env, 'OPS_TOKEN');
  const minBytes = production ? 32 : 16;
  if (access === OpsAccess.TOKEN && (token === undefined || Buffer.byteLength(token) < minBytes)) {
    throw new ConfigError('OPS_TOKEN', token === undefined ? '' : '***', `at least ${minBytes} bytes when OPS_ENDPOINTS=token`);
  }
  return { access, token: access === OpsAccess.TOKEN ? token : undefined };
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

/** Per-kind consumer counts: JOB_CONSUMERS_<KIND>, 1–16 each (the seed's rule); defaults from the kind's descriptor. */
export const MIN_CONSUMERS = 1;
export const MAX_CONSUMERS = 16;
export const MAX_PREFETCH = 1_000;
/** A job claimed ahead holds its lease while it waits; more than this buys no larger batches. */
export const MAX_CLAIM_AHEAD = 64;

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf<NodeEnv>(env, 'NODE_ENV', ['development', 'production', 'test'], 'development');
  const production = nodeEnv === 'production';
  const kinds = Object.fromEntries(
    ALL_JOB_KINDS.map((kind) => [
      kind,
      {
        consumers: int(env, `JOB_CONSUMERS_${kind}`, JOB_KINDS[kind].defaultConsumers, MIN_CONSUMERS, MAX_CONSUMERS),
        // JOB_PREFETCH_<KIND>: deliveries a worker holds beyond its running jobs of this kind, 0–1000 (0: none; see KindDefaults.prefetch).
        prefetch: int(env, `JOB_PREFETCH_${kind}`, 0, 0, MAX_PREFETCH),
        // JOB_CLAIM_AHEAD_<KIND>: jobs of this kind a worker claims before a slot is free, 0–64 (0: none; short jobs only, see KindDefaults.claimAhead).
        claimAhead: int(env, `JOB_CLAIM_AHEAD_${kind}`, 0, 0, MAX_CLAIM_AHEAD),
        // JOBS_PER_MESSAGE_<KIND>: jobs of this kind the publisher packs into one RabbitMQ message, 1–64 (1: one each; more for short jobs only: a message's jobs all go to one worker).
        jobsPerMessage: int(env, `JOBS_PER_MESSAGE_${kind}`, 1, 1, MAX_JOBS_PER_MESSAGE),
      },
    ]),
  ) as Record<JobKind, KindSettings>;
  const retryBaseMs = int(env, 'JOB_RETRY_BASE_MS', 2_000, 100, 3_600_000);
  const retryMaxMs = int(env, 'JOB_RETRY_MAX_MS', 300_000, 100, 86_400_000);
  if (retryMaxMs < retryBaseMs) throw new ConfigError('JOB_RETRY_MAX_MS', String(retryMaxMs), `at least JOB_RETRY_BASE_MS (${retryBaseMs})`);
  const republishAfterSeconds = int(env, 'OUTBOX_REPUBLISH_AFTER_SECONDS', 300, 5, 86_400 * 7);
  const publishedMaxWaitSeconds = int(env, 'OUTBOX_PUBLISHED_MAX_WAIT_SECONDS', 900, 5, 86_400 * 7);
  if (publishedMaxWaitSeconds < republishAfterSeconds) {
    throw new ConfigError('OUTBOX_PUBLISHED_MAX_WAIT_SECONDS', String(publishedMaxWaitSeconds), `at least OUTBOX_REPUBLISH_AFTER_SECONDS (${republishAfterSeconds})`);
  }

  const config: Config = {
    nodeEnv,
    port: int(env, 'PORT', 4000, 0, 65535),
    // Outside production only this machine can connect unless HOST says otherwise (GraphiQL, a development token).
    host: str(env, 'HOST') ?? (production ? '0.0.0.0' : '127.0.0.1'),
    httpConnections: httpConnections(env),
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
      leaseSeconds: int(env, 'JOB_LEASE_SECONDS', 60, MIN_LEASE_SECONDS, 86_400),
      attemptLimit: int(env, 'JOB_ATTEMPT_LIMIT', 5, 1, 100),
      retryBaseMs,
      retryMaxMs,
      publisherPollMs: int(env, 'OUTBOX_POLL_MS', 5_000, 50, 600_000),
      publisherBatchSize: int(env, 'OUTBOX_BATCH_SIZE', 200, 1, 5_000),
      maintenanceIntervalSeconds: int(env, 'MAINTENANCE_INTERVAL_SECONDS', 60, 1, 86_400),
      republishAfterSeconds,
      publishedMaxWaitSeconds,
      retentionDays: int(env, 'OUTBOX_RETENTION_DAYS', 14, 0, 3650),
      cleanupBatchSize: int(env, 'OUTBOX_CLEANUP_BATCH_SIZE', 500, 1, 100_000),
      // JOB_FAST_START: true | false — a worker starts a job on its enqueue's NOTIFY when it has a free slot, before the broker's copy comes.
      fastStart: bool(env, 'JOB_FAST_START', true),
      // JOB_FAST_START_MAX_RATE: 200, 0–1000000 — jobs heard in one second above which a worker stops listening for 10 s (fast start costs more than it saves under a stream of jobs); 0: never.
      fastStartMaxRate: int(env, 'JOB_FAST_START_MAX_RATE', FAST_START_MAX_RATE_DEFAULT, 0, 1_000_000),
      // JOB_FAST_START_HEAD_START_MS: 2, 0–100 — while fast start is on, how long a process that enqueues holds the job's broker message (and the job events it sends through the broker) back, so that an idle worker's claim does not race the broker for a core; 0: send at once.
      fastStartHeadStartMs: int(env, 'JOB_FAST_START_HEAD_START_MS', FAST_START_HEAD_START_MS_DEFAULT, 0, 100),
      shutdownGraceSeconds: int(env, 'SHUTDOWN_GRACE_SECONDS', 30, 0, 3_600),
      dbPoolSize: int(env, 'DB_POOL_SIZE', 20, 2, 500),
      kinds,
    },
    auth: {
      jwtSecret: str(env, 'JWT_SECRET'),
      jwksUrl: jwksUrl(env, production),
      issuer: str(env, 'JWT_ISSUER'),
      audience: str(env, 'JWT_AUDIENCE'),
      maxLifetimeSeconds: int(env, 'JWT_MAX_LIFETIME_SECONDS', DEFAULT_JWT_MAX_LIFETIME_SECONDS, 60, 2_592_000),
      algorithms: algorithms(env),
    },
    limits: {
      http: {
        perSubject: int(env, 'RATE_LIMIT_PER_SUBJECT', DEFAULT_LIMITS.http.perSubject, 1, 100_000),
        perAddress: int(env, 'RATE_LIMIT_PER_ADDRESS', DEFAULT_LIMITS.http.perAddress, 1, 100_000),
        burst: int(env, 'RATE_LIMIT_BURST', DEFAULT_LIMITS.http.burst, 0, 1_000_000),
        maxInFlightPerCaller: int(env, 'HTTP_MAX_IN_FLIGHT_PER_CALLER', DEFAULT_LIMITS.http.maxInFlightPerCaller, 1, 100_000),
      },
      socket: {
        maxConnectionsPerAddress: int(env, 'WS_MAX_CONNECTIONS_PER_ADDRESS', DEFAULT_LIMITS.socket.maxConnectionsPerAddress, 1, 1_000_000),
        connectsPerSecond: int(env, 'WS_CONNECTS_PER_SECOND', DEFAULT_LIMITS.socket.connectsPerSecond, 1, 100_000),
        connectBurst: int(env, 'WS_CONNECT_BURST', DEFAULT_LIMITS.socket.connectBurst, 0, 1_000_000),
        maxConnectionsPerSubject: int(env, 'WS_MAX_CONNECTIONS_PER_SUBJECT', DEFAULT_LIMITS.socket.maxConnectionsPerSubject, 1, 1_000_000),
        maxSubscriptionsPerSocket: int(env, 'WS_MAX_SUBSCRIPTIONS_PER_SOCKET', DEFAULT_LIMITS.socket.maxSubscriptionsPerSocket, 1, 100_000),
        subscribePerSecond: int(env, 'WS_SUBSCRIBE_PER_SECOND', DEFAULT_LIMITS.socket.subscribePerSecond, 1, 100_000),
        subscribeBurst: int(env, 'WS_SUBSCRIBE_BURST', DEFAULT_LIMITS.socket.subscribeBurst, 0, 1_000_000),
        maxEventCost: int(env, 'WS_MAX_EVENT_COST', DEFAULT_LIMITS.socket.maxEventCost, 1, 1_000_000),
        maxDashboardsPerSubject: int(env, 'WS_MAX_DASHBOARDS_PER_SUBJECT', DEFAULT_LIMITS.socket.maxDashboardsPerSubject, 1, 100_000),
        messagesPerSecond: int(env, 'WS_MESSAGES_PER_SECOND', DEFAULT_LIMITS.socket.messagesPerSecond, 1, 1_000_000),
        messageBurst: int(env, 'WS_MESSAGE_BURST', DEFAULT_LIMITS.socket.messageBurst, 1, 1_000_000),
        maxPendingEvents: int(env, 'WS_MAX_PENDING_EVENTS', DEFAULT_LIMITS.socket.maxPendingEvents, 10, 1_000_000),
      },
      refusalCost: int(env, 'RATE_LIMIT_REFUSAL_COST', DEFAULT_LIMITS.refusalCost, 1, 1_000),
      refusedCallerSeconds: int(env, 'REFUSED_CALLER_SECONDS', DEFAULT_LIMITS.refusedCallerSeconds, 0, 3_600),
    },
    ops: opsAccess(env, production),
    opsRate: {
      perSecond: int(env, 'OPS_RATE_PER_ADDRESS', DEFAULT_OPS_RATE.perSecond, 1, 100_000),
      burst: int(env, 'OPS_RATE_BURST', DEFAULT_OPS_RATE.burst, 0, 1_000_000),
    },
    graphql: {
      introspection: bool(env, 'GRAPHQL_INTROSPECTION', !production),
      graphiql: bool(env, 'GRAPHIQL', !production),
      webRoot: webRoot(env),
      pageRate: {
        perSecond: int(env, 'WEB_RATE_PER_ADDRESS', DEFAULT_PAGE_RATE.perSecond, 1, 100_000),
        burst: int(env, 'WEB_RATE_BURST', DEFAULT_PAGE_RATE.burst, 0, 1_000_000),
      },
      maxDepth: int(env, 'GRAPHQL_MAX_DEPTH', 10, 2, 100),
      maxComplexity: int(env, 'GRAPHQL_MAX_COMPLEXITY', 1_000, 10, 1_000_000),
      maxTokens: int(env, 'GRAPHQL_MAX_TOKENS', 5_000, 100, 1_000_000),
      maxAliases: int(env, 'GRAPHQL_MAX_ALIASES', 30, 1, 10_000),
      maxDirectives: int(env, 'GRAPHQL_MAX_DIRECTIVES', 50, 1, 10_000),
      maxBodyBytes: int(env, 'GRAPHQL_MAX_BODY_BYTES', 1_048_576, 1_024, 104_857_600),
      maxAnonymousBodyBytes: int(env, 'GRAPHQL_MAX_ANONYMOUS_BODY_BYTES', 65_536, 1_024, 104_857_600),
      maxWsPayloadBytes: int(env, 'GRAPHQL_MAX_WS_PAYLOAD_BYTES', 65_536, 1_024, 104_857_600),
      subscriptionResyncIntervalMs: int(env, 'SUBSCRIPTION_RESYNC_INTERVAL_MS', 3_000, 100, 600_000),
      subscriptionResyncBatchSize: int(env, 'SUBSCRIPTION_RESYNC_BATCH_SIZE', 1_000, 1, 10_000),
    },
  };
  if (!config.rabbitmqUrl && !config.roles.has(Role.WORKER)) {
    // The in-memory transport carries a job only to consumers in its own process: an
    // API-only process would send every job it starts where nothing runs it. (Workers on
    // it each send and run what waits in the database.)
    throw new ConfigError('RABBITMQ_URL', '', 'required with ROLE=api: the in-memory transport carries jobs within one process only');
  }
  const { auth } = config;
  if (production && config.roles.has(Role.API) && (auth.jwtSecret || auth.jwksUrl)) {
    // Without them a token minted by the same identity provider for another service would do here.
    if (!auth.issuer) throw new ConfigError('JWT_ISSUER', '', "the issuer (iss) this service's tokens carry: required in production");
    if (!auth.audience) throw new ConfigError('JWT_AUDIENCE', '', "the audience (aud) this service's tokens carry: required in production");
  }
  return config;
}

/** WEB_ROOT: a folder (relative to the working directory), or `off` for no page at `/`. */
function webRoot(env: Env): string | null {
  const raw = str(env, 'WEB_ROOT') ?? 'dist/web';
  return raw === 'off' ? null : path.resolve(raw);
}
