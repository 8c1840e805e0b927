/**
 * Behind a reverse proxy (`TRUSTED_PROXIES`): the per-address limits key the client the
 * proxy forwards in X-Forwarded-For, not the proxy, so one client at the anonymous rate
 * does not refuse everyone behind it; a client that is not a trusted proxy, or that
 * writes its own X-Forwarded-For entries, gains nothing by it.
 *
 * Every client here is on this machine's loopback network: 127.0.0.30 plays the proxy,
 * other 127.0.0.x addresses play clients that connect directly.
 */
import http, { type IncomingMessage } from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ClientAddresses } from '../../src/api/client-address';
import type { JobEngine } from '../../src/engine/engine';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { startTestApiServer, waitUntil, type TestApiServer } from './support/api-server';
import { withinOneWindow } from './support/one-window';

const PROXY = '127.0.0.30';
const PER_SECOND = 3;
const MAX_CONNECTIONS_PER_ADDRESS = 3;
const MAX_SOCKETS_PER_ADDRESS = 2;

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;
let port: number;

beforeAll(async () => {
  ctx = await createTestDb('api_trusted_proxies');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
  server = await startTestApiServer({
    engine,
    // No burst allowance: exactly PER_SECOND anonymous operations a second per address.
    limits: { http: { perAddress: PER_SECOND, burst: 0 }, socket: { maxConnectionsPerAddress: MAX_SOCKETS_PER_ADDRESS } },
    connections: { maxPerAddress: MAX_CONNECTIONS_PER_ADDRESS, trustedProxies: [PROXY, '10.0.0.0/8'] },
  });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

/** An anonymous operation sent from `from`, with `forwardedFor` as its X-Forwarded-For: the status. */
function ask(from: string, forwardedFor?: string): Promise<number> {
  const body = JSON.stringify({ query: '{ __typename }' });
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/graphql',
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: { 'content-type': 'application/json', ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
      },
      (response) => {
        response.resume();
        response.once('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

/** PER_SECOND operations in turn and then one more, all from `from` with what `forwardedFor(i)` gives: their statuses. */
async function spendAllowance(from: string, forwardedFor: (i: number) => string | undefined): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i <= PER_SECOND; i++) statuses.push(await ask(from, forwardedFor(i)));
  return statuses;
}

/** Fresh documentation addresses (RFC 5737) for each run, so that no run spends another's allowance. */
let nextClient = 1;
const freshClients = (count: number): string[][] =>
  Array.from({ length: 5 }, () => Array.from({ length: count }, () => `203.0.113.${nextClient++}`));

describe('HTTP rate limit behind a trusted proxy', () => {
  it('keys each forwarded client by its own address: one over its allowance does not refuse another behind the same proxy', async () => {
    const { first, second } = await withinOneWindow(freshClients(2), async ([a, b]) => ({
      first: await spendAllowance(PROXY, () => a),
      second: await ask(PROXY, b),
    }));
    expect(first).toEqual([...Array<number>(PER_SECOND).fill(200), 429]);
    // Keyed by the proxy's address, this would be the fifth operation of one allowance: 429.
    expect(second).toBe(200);
  });

  it('believes only the right end of the header: entries a client writes itself do not give it a fresh allowance', async () => {
    const statuses = await withinOneWindow(freshClients(1), ([client]) => spendAllowance(PROXY, (i) => `198.51.100.${i + 1}, ${client}`));
    expect(statuses).toEqual([...Array<number>(PER_SECOND).fill(200), 429]);
  });

  it('ignores X-Forwarded-For from a client that is not a trusted proxy', async () => {
    const froms = ['127.0.0.31', '127.0.0.32', '127.0.0.33', '127.0.0.34', '127.0.0.35'].map((from) => [from]);
    const statuses = await withinOneWindow(froms, ([from]) => spendAllowance(from!, (i) => `203.0.113.${200 + i}`));
    expect(statuses).toEqual([...Array<number>(PER_SECOND).fill(200), 429]);
  });
});

describe('connections and sockets behind a trusted proxy', () => {
  /** A TCP connection from `from` that sends half a request and stays open. */
  function hold(from: string): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
      socket.on('error', () => undefined);
      socket.once('connect', () => {
        socket.write('POST /graphql HTTP/1.1\r\nHost: x\r\n');
        resolve(socket);
      });
      socket.once('error', reject);
    });
  }

  it('the proxy’s connections are not capped per address (each carries many clients); a direct client’s are', async () => {
    const held = [];
    try {
      for (let i = 0; i < MAX_CONNECTIONS_PER_ADDRESS + 2; i++) held.push(await hold(PROXY));
      for (let i = 0; i < MAX_CONNECTIONS_PER_ADDRESS; i++) held.push(await hold('127.0.0.36'));
      let seen = 0;
      await waitUntil(
        () => {
          server.http.server.getConnections((_error, count) => (seen = count));
          return seen === held.length;
        },
        10_000,
        'the held connections seen by the server',
      );
      expect(await ask(PROXY, '203.0.113.250')).toBe(200);
      // Answered 429 and closed before it is read: a client that sent its request already may see the reset instead.
      const direct = await ask('127.0.0.36').then(String, (error: NodeJS.ErrnoException) => error.code);
      expect(direct).toMatch(/^(429|ECONNRESET|EPIPE)$/);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });

  /** A graphql-ws upgrade from the proxy forwarding `client`: 'open', or the status it was refused with. */
  function upgrade(client: string): Promise<{ outcome: 'open' | number; socket: WebSocket }> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws', { localAddress: PROXY, headers: { 'x-forwarded-for': client } });
      socket.once('open', () => resolve({ outcome: 'open', socket }));
      socket.once('unexpected-response', (_req, res) => {
        res.resume();
        resolve({ outcome: res.statusCode ?? 0, socket });
      });
      socket.once('error', reject);
      socket.on('error', () => undefined);
    });
  }

  it('caps sockets per forwarded client, not per proxy', async () => {
    const opened: WebSocket[] = [];
    try {
      for (let i = 0; i < MAX_SOCKETS_PER_ADDRESS; i++) {
        const { outcome, socket } = await upgrade('203.0.113.240');
        opened.push(socket);
        expect(outcome).toBe('open');
      }
      expect((await upgrade('203.0.113.240')).outcome).toBe(429);
      const other = await upgrade('203.0.113.241');
      opened.push(other.socket);
      expect(other.outcome).toBe('open');
    } finally {
      for (const socket of opened) socket.close();
    }
  });
});

describe('ClientAddresses', () => {
  const addresses = new ClientAddresses(['127.0.0.30', '10.0.0.0/8', 'fd00::/8']);
  const request = (remoteAddress: string, forwardedFor?: string | string[]) =>
    ({ socket: { remoteAddress }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

  it('reads X-Forwarded-For from the right, past trusted proxies, to the first address that is not one', () => {
    expect(addresses.addressOf(request('::ffff:127.0.0.30', '198.51.100.7, 203.0.113.9, 10.2.3.4'))).toBe('203.0.113.9');
    expect(addresses.addressOf(request('fd00::1', '2001:db8::5'))).toBe('2001:db8::5');
    // Repeated headers (Node joins X-Forwarded-For's) and ports some proxies add.
    expect(addresses.addressOf(request('127.0.0.30', ['198.51.100.7', '203.0.113.9:5100']))).toBe('203.0.113.9');
    expect(addresses.addressOf(request('127.0.0.30', '[2001:db8::6]:443'))).toBe('2001:db8::6');
    expect(addresses.keyOf(request('127.0.0.30', '2001:db8:1:2:3:4:5:6'))).toBe('2001:db8:1:2::/64');
  });

  it('ends the walk at the last trusted hop when the header is missing or holds what no proxy writes', () => {
    expect(addresses.addressOf(request('127.0.0.30'))).toBe('127.0.0.30');
    expect(addresses.addressOf(request('127.0.0.30', 'unknown'))).toBe('127.0.0.30');
    expect(addresses.addressOf(request('127.0.0.30', '203.0.113.9, 10.0.0.1, garbage, 10.0.0.2'))).toBe('10.0.0.2');
  });

  it('believes nobody else’s header, and nobody’s by default', () => {
    expect(addresses.addressOf(request('127.0.0.31', '203.0.113.9'))).toBe('127.0.0.31');
    expect(new ClientAddresses([]).addressOf(request('127.0.0.30', '203.0.113.9'))).toBe('127.0.0.30');
    expect(addresses.isTrustedProxy('10.255.0.1')).toBe(true);
    expect(addresses.isTrustedProxy('11.0.0.1')).toBe(false);
  });
});
