/**
 * Whether a database error says "not now" rather than "never": the connection broke or
 * was refused, the server is shutting down or starting, out of connections, or the
 * statement lost a serialization race. Repeating the same statement later can succeed.
 * Anything else (bad data, a violated constraint) fails the same way every time.
 */
export function isTransientDbError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') {
    // pg reports a dropped socket without a code.
    return /connection|terminated|timeout|ended unexpectedly/i.test(error.message);
  }
  // Node's own socket errors: ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPIPE …
  if (/^E[A-Z]+$/.test(code)) return true;
  // SQLSTATE classes: 08 connection exception, 53 insufficient resources,
  // 57 operator intervention (admin shutdown, cannot connect now), 40 transaction rollback.
  return /^(08|53|57|40)/.test(code);
}
