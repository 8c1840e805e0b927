/**
 * Whether a database error says "not now" rather than "never": the connection broke or
 * was refused, the server is shutting down, starting or read-only during a failover, out
 * of connections, the statement lost a serialization race or a deadlock, or it ran into
 * a session limit (statement, lock or client-side wait). Repeating the
 * same statement later can succeed. Anything else (bad data, a violated constraint)
 * fails the same way every time.
 */
export function isTransientDbError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return PG_CONNECTION_MESSAGES.test(error.message);
  // Node's own socket errors (and no other system error: a processor's ENOENT is not the database's).
  if (SOCKET_ERRNOS.has(code)) return true;
  // SQLSTATE: class 08 connection exception, class 53 insufficient resources.
  return code.startsWith('08') || code.startsWith('53') || TRANSIENT_SQLSTATES.has(code);
}

const SOCKET_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTCONN',
  'EADDRNOTAVAIL',
  'EAI_AGAIN',
]);

const TRANSIENT_SQLSTATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, or in recovery)
  '25006', // read_only_sql_transaction (a standby during failover)
  '57014', // query_canceled: statement_timeout (slow now, e.g. behind a lock)
  '55P03', // lock_not_available: lock_timeout
  '25P03', // idle_in_transaction_session_timeout (the session was ended)
]);

/**
 * What pg, pg-pool and knex say, without a code, when a connection is gone or cannot be
 * had, or no answer came within the client-side wait (see session-limits.ts).
 */
const PG_CONNECTION_MESSAGES =
  // knex puts the statement before the driver's message ("select 1 - Connection terminated …").
  /(^|\s-\s)(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable|Connection ended unexpectedly|Query read timeout|Knex: Timeout acquiring a connection)/;
