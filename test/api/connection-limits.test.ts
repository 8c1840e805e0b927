import http from 'node:http';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { rawSocket, startTestApiServer, waitUntil, type TestApiServer } from './support/api-server';

/**
 * The HTTP server's own bounds (src/api/connection-limits.ts): connections per address
 * and how long a request may take to arrive. Without them one address held 3,000
 * connections that each sent half a request, for a minute each (Node's defaults).
 */

/** Generous: Node checks the timeouts once a second, and CI runs two files at once. */
const CLOSE_BOUND_MS = 10_000;
const MAX_PER_ADDRESS = 3;
const HEADERS_TIMEOUT_MS = 1_000;

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;
let port: number;
const opened: net.Socket[] = [];

beforeAll(async () => {
  ctx = await createTestDb('api_connection_limits');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
  server = await startTestApiServer({
    engine,
    settings: { production: true },
    connections: { maxPerAddress: MAX_PER_ADDRESS, headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: HEADERS_TIMEOUT_MS },
  });
  port = Number(new URL(server.url).port);
});
afterEach(async () => {
  for (const socket of opened.splice(0)) socket.destroy();
  // The server counts a connection off once it sees it close.
  await waitUntil(() => serverConnections() === 0, CLOSE_BOUND_MS, 'the test’s connections closed on the server');
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

let connectionCount = 0;
const serverConnections = (): number => {
  server.http.server.getConnections((_error, count) => (connectionCount = count));
  return connectionCount;
};

/** A TCP connection from `localAddress`, with what it received and whether it closed. */
function connect(localAddress: string, send?: string): Promise<{ socket: net.Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress });
    opened.push(socket);
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    const closed = new Promise<void>((resolveClose) => socket.once('close', () => resolveClose()));
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      if (send !== undefined) socket.write(send);
      resolve({ socket, received: () => data, closed });
    });
    socket.once('error', reject);
  });
}

/** GET /health/live from `localAddress`: its status. */
function healthFrom(localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/health/live', localAddress, agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
  });
}

const withinBound = <T>(promise: Promise<T>, what: string): Promise<T> =>
  Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} not within ${CLOSE_BOUND_MS} ms`)), CLOSE_BOUND_MS))]);

describe('connections per address', () => {
  it('beyond the cap a connection is answered 429 with Retry-After and closed; other addresses are served; a freed place is taken again', async () => {
    const held = [];
    for (let i = 0; i < MAX_PER_ADDRESS; i++) held.push(await connect('127.0.0.21', 'POST /graphql HTTP/1.1\r\nHost: x\r\n'));
    await waitUntil(() => serverConnections() === MAX_PER_ADDRESS, CLOSE_BOUND_MS, 'the held connections seen by the server');

    const over = await connect('127.0.0.21');
    await withinBound(over.closed, 'the connection over the cap closed');
    const answer = over.received();
    expect(answer).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    expect(answer).toMatch(/\r\nRetry-After: 10\r\n/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]).toMatchObject({ message: `Too many connections from this address (at most ${MAX_PER_ADDRESS}); try again in 10 s`, extensions: { code: 'RATE_LIMITED' } });

    expect(await healthFrom('127.0.0.22')).toBe(200);

    held[0]!.socket.destroy();
    await waitUntil(() => serverConnections() === MAX_PER_ADDRESS - 1, CLOSE_BOUND_MS, 'the freed connection seen closed by the server');
    expect(await healthFrom('127.0.0.21')).toBe(200);
  });
});

describe('timeouts', () => {
  it('a request whose headers do not arrive in time is answered 408 and closed', async () => {
    const slow = await connect('127.0.0.23', 'GET /health/live HTTP/1.1\r\nHost: x\r\n');
    await withinBound(slow.closed, 'the connection with half its headers closed');
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('a request whose body does not arrive in time is answered 408 and closed', async () => {
    const slow = await connect('127.0.0.24', 'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"query"');
    await withinBound(slow.closed, 'the connection with half its body closed');
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('a graphql-ws socket outlives the request timeout', async () => {
    const socket = await rawSocket(server);
    try {
      socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${server.tokens.viewer}` } });
      await waitUntil(() => socket.messages.length >= 1, CLOSE_BOUND_MS, 'connection_ack');
      // Three checks of the server's timeouts pass meanwhile.
      await new Promise((resolve) => setTimeout(resolve, HEADERS_TIMEOUT_MS * 3));
      socket.send({ type: 'ping' });
      await waitUntil(() => socket.messages.length >= 2, CLOSE_BOUND_MS, 'pong');
      expect(socket.messages).toEqual([{ type: 'connection_ack' }, { type: 'pong' }]);
    } finally {
      socket.socket.close();
    }
  });
});
