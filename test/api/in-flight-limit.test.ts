/**
 * HTTP_MAX_IN_FLIGHT_PER_CALLER over real HTTP: a caller with that many operations in
 * flight (here bodies sent a byte short of their end, as a hostile client would hold
 * them) gets 429 with Retry-After and RATE_LIMITED for the next, before its body is read;
 * another caller is served meanwhile; once one of its operations ends, it is served again.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { startTestApiServer, type TestApiServer } from './support/api-server';

const MAX_IN_FLIGHT = 2;

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;
let port: number;

beforeAll(async () => {
  ctx = await createTestDb('api_in_flight_limit');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
  // A refused caller waits at the back for a few loop turns, no longer: not what this test is about.
  server = await startTestApiServer({ engine, limits: { http: { maxInFlightPerCaller: MAX_IN_FLIGHT }, refusedCallerSeconds: 0 } });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

const BODY = JSON.stringify({ query: '{ __typename }' });

/** An operation whose body stops one byte short of its Content-Length: in flight until `finish`. */
async function held(token: string | null): Promise<{ finish(): Promise<number>; leave(): void }> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString()));
  const answered = new Promise<number>((resolve) => {
    const check = () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (status && received.includes('\r\n\r\n')) resolve(Number(status[1]));
    };
    socket.on('data', check);
    socket.on('close', check);
  });
  const headers = [`POST /graphql HTTP/1.1`, `Host: x`, `Content-Type: application/json`, `Content-Length: ${Buffer.byteLength(BODY)}`];
  if (token) headers.push(`Authorization: Bearer ${token}`);
  socket.write(`${headers.join('\r\n')}\r\n\r\n${BODY.slice(0, -1)}`);
  return {
    leave: () => socket.destroy(),
    async finish() {
      socket.write(BODY.slice(-1));
      const status = await answered;
      socket.destroy();
      return status;
    },
  };
}

async function ask(token: string | null): Promise<{ status: number; code: string; message: string; retryAfter: string | null }> {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: BODY,
  });
  const body = (await response.json()) as { errors?: { message: string; extensions: { code: string } }[] };
  const error = body.errors?.[0];
  return { status: response.status, code: error?.extensions.code ?? 'ok', message: error?.message ?? '', retryAfter: response.headers.get('retry-after') };
}

/**
 * Asks until the answer has `status` (the held operations reach the cap, or free a slot, a
 * few loop turns after their sockets were written or closed), within a bound a loaded
 * machine meets; returns that answer.
 */
async function askUntil(token: string | null, status: number): Promise<Awaited<ReturnType<typeof ask>>> {
  const started = Date.now();
  for (;;) {
    const answer = await ask(token);
    if (answer.status === status) return answer;
    if (Date.now() - started > 10_000) throw new Error(`no ${status} within 10 s (last: ${answer.status} ${answer.code})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const inFlightRefusal = { status: 429, code: 'RATE_LIMITED', retryAfter: '1', message: expect.stringMatching(/in flight at once \(at most 2\)/) };

describe('operations of one caller in flight at once', () => {
  it('a token subject: the one beyond the cap is refused 429 before its body is read; another subject is served; a slot freed lets it in', async () => {
    const first = await held(server.tokens.viewer);
    const second = await held(server.tokens.viewer);
    expect(await askUntil(server.tokens.viewer, 429)).toEqual(inFlightRefusal);
    expect((await ask(server.tokens.otherViewer)).status).toBe(200);
    expect(await first.finish()).toBe(200);
    await askUntil(server.tokens.viewer, 200);
    expect(await second.finish()).toBe(200);
  });

  it('callers without a token: per address', async () => {
    const held1 = await held(null);
    const held2 = await held(null);
    expect(await askUntil(null, 429)).toEqual(inFlightRefusal);
    expect((await ask(server.tokens.viewer)).status).toBe(200);
    await Promise.all([held1.finish(), held2.finish()]);
    await askUntil(null, 200);
  });

  it('a client that leaves mid-body frees its slot', async () => {
    const leaving = await held(server.tokens.scheduler);
    const staying = await held(server.tokens.scheduler);
    expect(await askUntil(server.tokens.scheduler, 429)).toEqual(inFlightRefusal);
    leaving.leave();
    await askUntil(server.tokens.scheduler, 200);
    expect(await staying.finish()).toBe(200);
  });
});
