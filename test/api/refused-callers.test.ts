/**
 * Callers refused lately wait behind everyone else: the policy on its own (a fake clock,
 * the real event loop), then over real HTTP and a real socket — a caller in good
 * standing is answered while a refused caller's burst, sent in the same instant, is
 * still waiting its turns, and the refused caller's operations are all answered still.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressCaller, MAX_REMEMBERED_CALLERS, MAX_WAITING_OPERATIONS, RefusedCallers, subjectCaller } from '../../src/api/refused-callers';
import type { JobEngine } from '../../src/engine/engine';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { startTestApiServer, wsClient, type TestApiServer } from './support/api-server';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('RefusedCallers', () => {
  it('runs a caller in good standing at once, a refused one in a later turn of the loop, in order', async () => {
    let now = 1_000_000;
    const callers = new RefusedCallers(30, () => now);
    const ran: string[] = [];
    callers.refused(subjectCaller('mallory'));
    expect(callers.schedule(subjectCaller('mallory'), () => ran.push('mallory 1'))).toBe(true);
    expect(callers.schedule(subjectCaller('mallory'), () => ran.push('mallory 2'))).toBe(true);
    expect(callers.schedule(subjectCaller('alice'), () => ran.push('alice'))).toBe(true);
    expect(ran).toEqual(['alice']);
    expect(callers.waitingCount).toBe(2);
    await nextTurn();
    expect(ran).toEqual(['alice', 'mallory 1']); // one per turn
    await nextTurn();
    expect(ran).toEqual(['alice', 'mallory 1', 'mallory 2']);
    expect(callers.waitingCount).toBe(0);
    // 30 s after its last refusal the caller is in good standing again.
    now += 29_999;
    expect(callers.isBehind(subjectCaller('mallory'))).toBe(true);
    now += 1;
    expect(callers.isBehind(subjectCaller('mallory'))).toBe(false);
    callers.schedule(subjectCaller('mallory'), () => ran.push('mallory 3'));
    expect(ran.at(-1)).toBe('mallory 3');
  });

  it('keys subjects and addresses apart, and with 0 seconds sends nobody to the back', () => {
    const callers = new RefusedCallers(30);
    callers.refused(addressCaller('127.0.0.10'));
    expect(callers.isBehind(addressCaller('127.0.0.10'))).toBe(true);
    expect(callers.isBehind(subjectCaller('127.0.0.10'))).toBe(false);
    const off = new RefusedCallers(0);
    off.refused(subjectCaller('mallory'));
    expect(off.isBehind(subjectCaller('mallory'))).toBe(false);
  });

  it('remembers at most MAX_REMEMBERED_CALLERS callers, forgetting the longest-standing first', () => {
    let now = 0;
    const callers = new RefusedCallers(3_600, () => now);
    for (let i = 0; i <= MAX_REMEMBERED_CALLERS; i++) {
      now += 1;
      callers.refused(addressCaller(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`));
    }
    expect(callers.isBehind(addressCaller('10.0.0.0'))).toBe(false);
    expect(callers.isBehind(addressCaller('10.0.0.1'))).toBe(true);
    // A caller refused again moves to the end: it is not the next one forgotten.
    callers.refused(addressCaller('10.0.0.1'));
    callers.refused(addressCaller('10.200.0.0'));
    expect(callers.isBehind(addressCaller('10.0.0.1'))).toBe(true);
    expect(callers.isBehind(addressCaller('10.0.0.2'))).toBe(false);
  });

  it('refuses (false, nothing run) past MAX_WAITING_OPERATIONS waiting', async () => {
    const callers = new RefusedCallers(30);
    const key = subjectCaller('mallory');
    callers.refused(key);
    let ran = 0;
    for (let i = 0; i < MAX_WAITING_OPERATIONS; i++) expect(callers.schedule(key, () => ran++)).toBe(true);
    expect(callers.schedule(key, () => ran++)).toBe(false);
    await expect(callers.turn(key)).resolves.toBe(false);
    while (callers.waitingCount > 0) await nextTurn();
    expect(ran).toBe(MAX_WAITING_OPERATIONS);
    await expect(callers.turn(key)).resolves.toBe(true);
  });
});

describe('over HTTP and the socket', () => {
  let ctx: Awaited<ReturnType<typeof createTestDb>>;
  let engine: JobEngine;
  let server: TestApiServer;

  beforeAll(async () => {
    ctx = await createTestDb('api_refused_callers');
    engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
    await engine.start();
    server = await startTestApiServer({ engine });
  });
  afterAll(async () => {
    await server?.close();
    await engine?.stop(2_000);
    await ctx?.close();
  });

  /** A connected socket to the server, for writing a whole request in one synchronous call. */
  function connect(): Promise<net.Socket> {
    const { port } = new URL(server.url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => resolve(socket));
      socket.once('error', reject);
    });
  }

  function request(query: string, token: string): string {
    const body = JSON.stringify({ query });
    return [
      'POST /graphql HTTP/1.1',
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      `Authorization: Bearer ${token}`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n');
  }

  /** The whole answer, once the server closes the connection. */
  const answer = (socket: net.Socket): Promise<string> =>
    new Promise((resolve, reject) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      socket.once('end', () => resolve(text));
      socket.once('error', reject);
    });

  it('answers a caller in good standing before a refused caller’s burst sent with it; the burst is answered in full after', async () => {
    const refused = server.tokens.viewer;
    const good = server.tokens.otherViewer;
    const send = async (query: string, token: string) => {
      const socket = await connect();
      const text = answer(socket);
      socket.write(request(query, token));
      return text;
    };
    // Both tokens once, so each is verified (on the thread pool) and cached before the race.
    expect(await send('{ __typename }', good)).toMatch(/^HTTP\/1\.1 200/);
    expect(await send('{ __typename }', refused)).toMatch(/^HTTP\/1\.1 200/);
    // One refusal (a field that does not exist: 400) sends viewer-1 to the back.
    expect(await send('{ noSuchField }', refused)).toMatch(/^HTTP\/1\.1 400/);

    const BURST = 40;
    const burst = await Promise.all(Array.from({ length: BURST }, connect));
    const honest = await connect();
    const order: string[] = [];
    const burstAnswers = burst.map((socket, i) => answer(socket).then((text) => (order.push(`burst ${i}`), text)));
    const honestAnswer = answer(honest).then((text) => (order.push('honest'), text));
    // The server has accepted every connection (in a turn of this same loop) before the race.
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Every request written in this one synchronous block: the server reads them all in
    // its next poll of the sockets, the burst's first, the honest one last.
    for (const socket of burst) socket.write(request('{ __typename }', refused));
    honest.write(request('{ __typename }', good));
    const until = performance.now() + 50;
    while (performance.now() < until); // every request is in the server's socket buffers before its next poll

    expect(await honestAnswer).toMatch(/^HTTP\/1\.1 200[\s\S]*\{"data":\{"__typename":"Query"\}\}/);
    const answeredBefore = order.indexOf('honest');
    const texts = await Promise.all(burstAnswers);
    for (const text of texts) expect(text).toMatch(/^HTTP\/1\.1 200[\s\S]*\{"data":\{"__typename":"Query"\}\}/);
    // The burst goes one per turn of the loop, the honest request in the first: at most a
    // few of the burst's answers can be read before the honest one.
    expect(answeredBefore, order.join(', ')).toBeLessThan(BURST / 4);
  });

  it('a subject refused on the socket still subscribes and gets its data, in its turn', async () => {
    const client = wsClient(server, server.tokens.readAllViewer);
    try {
      type Result = { data?: unknown; errors?: readonly { message: string; extensions?: Record<string, unknown> }[] };
      const run = (query: string) =>
        new Promise<Result>((resolve) => {
          let result: Result = {};
          client.subscribe(
            { query },
            { next: (value) => (result = value as Result), error: (error) => resolve({ errors: Array.isArray(error) ? (error as Result['errors']) : [] }), complete: () => resolve(result) },
          );
        });
      const bad = await run('{ noSuchField }');
      expect(bad.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      const answers = await Promise.all(Array.from({ length: 5 }, () => run('{ __typename }')));
      for (const good of answers) expect(good.data).toEqual({ __typename: 'Query' });
    } finally {
      await client.dispose();
    }
  });
});
