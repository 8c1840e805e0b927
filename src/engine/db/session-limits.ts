import type pg from 'pg';

/**
 * Time limits every database session of the service runs under, so that no statement,
 * lock wait, forgotten transaction or connection attempt can hold a caller — above all
 * the claim and completion batchers, which run one statement at a time — for longer
 * than it should. Without them a statement on a connection lost in a network partition
 * waits for the kernel's TCP timeout (many minutes).
 *
 * The engine's statements are short (claims, completions, heartbeats: milliseconds;
 * maintenance works in bounded batches), and a long job holds no statement while it
 * runs (the solver computes outside any transaction), so the defaults are generous.
 */
export interface SessionLimits {
  /** `statement_timeout`: the server cancels a statement running longer. 0: no limit. */
  statementTimeoutMs: number;
  /** `lock_timeout`: a statement waiting this long for a lock fails. 0: no limit. */
  lockTimeoutMs: number;
  /** `idle_in_transaction_session_timeout`: a session idle this long inside a transaction is ended. 0: no limit. */
  idleInTransactionTimeoutMs: number;
  /** How long opening a connection (TCP + start-up) may take. */
  connectTimeoutMs: number;
}

export const STATEMENT_TIMEOUT_MS_DEFAULT = 30_000;
export const LOCK_TIMEOUT_MS_DEFAULT = 10_000;
export const IDLE_IN_TRANSACTION_TIMEOUT_MS_DEFAULT = 60_000;
export const CONNECT_TIMEOUT_MS_DEFAULT = 10_000;

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  statementTimeoutMs: STATEMENT_TIMEOUT_MS_DEFAULT,
  lockTimeoutMs: LOCK_TIMEOUT_MS_DEFAULT,
  idleInTransactionTimeoutMs: IDLE_IN_TRANSACTION_TIMEOUT_MS_DEFAULT,
  connectTimeoutMs: CONNECT_TIMEOUT_MS_DEFAULT,
};

/**
 * How much longer than `statement_timeout` the client waits for an answer before it
 * gives the connection up. The server's own cancel normally answers first; when the
 * server cannot be heard at all (a partition), only this client-side limit ends the wait.
 */
export const CLIENT_WAIT_MARGIN_MS = 2_000;

export function validateSessionLimits(limits: Partial<SessionLimits> = {}): SessionLimits {
  const result = { ...DEFAULT_SESSION_LIMITS, ...limits };
  for (const [name, value] of Object.entries(result)) {
    if (!Number.isInteger(value) || value < 0) throw new Error(`session limit ${name} must be an integer ≥ 0 (ms), got ${value}`);
  }
  if (result.connectTimeoutMs < 1) throw new Error(`session limit connectTimeoutMs must be at least 1 ms, got ${result.connectTimeoutMs}`);
  return result;
}

/** The pg client settings for these limits: server-side limits sent at start-up, plus the client-side wait. */
export function sessionLimitSettings(limits: SessionLimits): Partial<pg.ClientConfig> {
  return {
    // pg sends each of these as a start-up parameter (no extra round trip); 0 sends nothing.
    statement_timeout: limits.statementTimeoutMs,
    lock_timeout: limits.lockTimeoutMs,
    idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
    query_timeout: limits.statementTimeoutMs > 0 ? limits.statementTimeoutMs + CLIENT_WAIT_MARGIN_MS : undefined,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    // The kernel probes an idle connection after this long, so one whose peer vanished
    // is found and closed eventually, not only when it is next used.
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
  };
}

/** Idle time before the kernel's first keepalive probe on a database connection. */
export const KEEPALIVE_IDLE_MS = 30_000;

/** pg's message when `query_timeout` passes without an answer. */
export const CLIENT_WAIT_EXPIRED_MESSAGE = 'Query read timeout';

/**
 * When pg's client-side wait expires it rejects the query but keeps the connection,
 * with the unanswered statement still in flight: every later query on it would queue
 * behind one that may never finish. Such a connection is closed instead (the pool then
 * drops it, MikroORM's pool too), so the next statement gets a fresh one.
 */
export function closeConnectionWhenWaitExpires(client: pg.Client): void {
  type Callback = (error: unknown, result: unknown) => void;
  const original = client.query.bind(client) as (...args: unknown[]) => unknown;
  const close = (error: unknown) => {
    if (error instanceof Error && error.message === CLIENT_WAIT_EXPIRED_MESSAGE) {
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    }
  };
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last] as Callback;
      args[last] = (error: unknown, result: unknown) => {
        close(error);
        callback(error, result);
      };
      return original(...args);
    }
    const result = original(...args);
    if (result instanceof Promise) return result.catch((error: unknown) => {
      close(error);
      throw error;
    });
    return result;
  };
}
