import type http from 'node:http';
import type { Socket } from 'node:net';
import type { HttpConnectionSettings } from '../config';
import { addressKey, type ClientAddresses } from './client-address';
import { OpenCounts } from './open-counts';
import { rateLimitedBody } from './graphql/errors';

/**
 * How often Node checks its open requests against the timeouts (its default is 30 s,
 * which would let a 10 s headers timeout run to 40 s).
 */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

const RETRY_AFTER_SECONDS = 10;

/**
 * Applies the bounds to `server` (created with `connectionsCheckingInterval`
 * CONNECTIONS_CHECKING_INTERVAL_MS). A connection beyond its address's cap is answered
 * 429 with `Retry-After` and closed before any of it is read: no request on it runs.
 * An upgraded (graphql-ws) connection stays counted until it closes; the request
 * timeouts stop applying to it once upgraded. A trusted proxy's connections carry many
 * clients and count only towards the total: the limits per request and per socket key
 * each client by the address the proxy forwards.
 */
export function limitConnections(server: http.Server, settings: HttpConnectionSettings, addresses: ClientAddresses): void {
  server.headersTimeout = settings.headersTimeoutMs;
  server.requestTimeout = settings.requestTimeoutMs;
  server.maxConnections = settings.maxTotal;
  const open = new OpenCounts();
  const refusal = tooManyConnections(settings.maxPerAddress);
  // Before Node's own listener, so that a refused socket is closed before a parser is given it.
  server.prependListener('connection', (socket: Socket) => {
    if (addresses.isTrustedProxy(socket.remoteAddress)) return;
    const key = addressKey(socket.remoteAddress);
    if (open.get(key) >= settings.maxPerAddress) {
      // A fresh socket's send buffer is empty: the answer is in the kernel before the
      // close. Closed now rather than after a graceful end, which would leave the socket
      // to Node's parser meanwhile and run a request that arrived on it; a client that
      // sent one already may see a reset instead of the 429.
      socket.write(refusal);
      socket.destroy();
      return;
    }
    open.opened(key);
    socket.once('close', () => open.closed(key));
  });
}

/** The raw answer to a connection over its address's cap, in GraphQL's error shape. */
function tooManyConnections(maxPerAddress: number): string {
  const body = JSON.stringify(
    rateLimitedBody(`Too many connections from this address (at most ${maxPerAddress}); try again in ${RETRY_AFTER_SECONDS} s`, RETRY_AFTER_SECONDS),
  );
  return [
    'HTTP/1.1 429 Too Many Requests',
    'Content-Type: application/json; charset=utf-8',
    `Retry-After: ${RETRY_AFTER_SECONDS}`,
    'Connection: close',
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}
