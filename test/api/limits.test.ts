import net from 'node:net';
import { getIntrospectionQuery, print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { testKindRegistrations } from '../support/test-kinds';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { CostlyJobsDocument, DeepEventsDocument, DeepHealthDocument, JobsDocument, MessagingHealthDocument } from './generated/graphql';
import { collect, gql, rawSocket, startTestApiServer, waitUntil, wsClient, type TestApiServer } from './support/api-server';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;
/** maxDepth 2 here: the generated DeepHealth (4) and DeepEvents (3) documents are too deep. */
let shallow: TestApiServer;

beforeAll(async () => {
  ctx = await createTestDb('api_limits');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
  server = await startTestApiServer({ engine, settings: { maxBodyBytes: 4 * 1024, maxWsPayloadBytes: 4 * 1024 } });
  shallow = await startTestApiServer({ engine, settings: { maxDepth: 2 } });
});
afterAll(async () => {
  await server?.close();
  await shallow?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

describe('depth and complexity limits', () => {
  it('refuses a too-deep query over HTTP', async () => {
    const result = await gql(shallow, DeepHealthDocument, {}, shallow.tokens.admin);
    expect(result.status).toBe(400);
    expect(result.body.errors![0]!.extensions!.code).toBe('QUERY_TOO_DEEP');
    expect(result.body.errors![0]!.message).toMatch(/limit is 2/);
  });

  it('refuses a too-costly query over HTTP', async () => {
    const result = await gql(server, CostlyJobsDocument, {}, server.tokens.admin);
    expect(result.body.errors![0]!.extensions!.code).toBe('QUERY_TOO_COMPLEX');
    expect(result.body.data ?? null).toBeNull();
    // A single page of 200 full jobs stays within the limit.
    const fine = await gql(server, JobsDocument, { first: 200 }, server.tokens.admin);
    expect(fine.body.errors).toBeUndefined();
  });

  it('refuses too-deep and too-costly operations over the socket', async () => {
    const deep = wsClient(shallow, shallow.tokens.admin);
    const client = wsClient(server, server.tokens.admin);
    try {
      for (const [c, doc, code] of [
        [deep, DeepEventsDocument, 'QUERY_TOO_DEEP'],
        [deep, DeepHealthDocument, 'QUERY_TOO_DEEP'],
        [client, CostlyJobsDocument, 'QUERY_TOO_COMPLEX'],
      ] as const) {
        const sub = collect(c, doc as typeof DeepHealthDocument, {});
        const error = (await sub.done.then(
          () => null,
          (e: unknown) => e,
        )) as { extensions?: { code?: string } }[] | null;
        expect(Array.isArray(error) ? error[0]!.extensions!.code : error).toBe(code);
      }
    } finally {
      await deep.dispose();
      await client.dispose();
    }
  });

  it("lets GraphiQL's introspection query through (introspection has its own switch)", async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.tokens.admin}` },
      body: JSON.stringify({ query: getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true }) }),
    });
    const body = (await response.json()) as { data?: { __schema: unknown }; errors?: unknown[] };
    expect(body.errors).toBeUndefined();
    expect(body.data!.__schema).toBeTruthy();
  });

  it('turns introspection off when asked, over HTTP and the socket', async () => {
    const closed = await startTestApiServer({ engine, settings: { introspection: false, production: true, graphiql: false } });
    try {
      const response = await fetch(`${closed.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${closed.tokens.admin}` },
        body: JSON.stringify({ query: '{ __schema { types { name } } }' }),
      });
      const body = (await response.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
      expect(body.errors[0]!.message).toMatch(/introspection/i);
      expect(body.errors[0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(body.errors[0]!.extensions.stacktrace).toBeUndefined();
      const socket = await rawSocket(closed);
      socket.send({ type: 'connection_init', payload: { token: closed.tokens.admin } });
      await waitUntil(() => socket.messages.length >= 1);
      socket.send({ type: 'subscribe', id: '1', payload: { query: '{ __schema { types { name } } }' } });
      await waitUntil(() => socket.messages.length >= 2);
      const refusal = socket.messages[1] as { type: string; payload: { message: string; extensions: { code: string } }[] };
      expect(refusal.type).toBe('error');
      expect(refusal.payload[0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(refusal.payload[0]!.message).toMatch(/introspection/i);
      socket.socket.close();
      expect((await fetch(`${closed.url}/graphiql`)).status).toBe(404);
    } finally {
      await closed.close();
    }
  });
});

describe('sizes and malformed input', () => {
  it('refuses an oversized body with 413 and a JSON error', async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.tokens.admin}` },
      body: JSON.stringify({ query: print(MessagingHealthDocument), variables: { padding: 'x'.repeat(8 * 1024) } }),
    });
    expect(response.status).toBe(413);
    const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers a body declared over the limit with 413 before reading it, and closes the connection', async () => {
    // Headers and a first few bytes of a declared 1 MB body; the rest never comes. A
    // server that reads a refused body to its end before answering never answers this.
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(
      'POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{"query":"{ __typename }","padding":"xxxx',
    );
    await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error('no answer to a body declared over the limit')), 10_000))]);
    const answer = Buffer.concat(received).toString('utf8');
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/connection: close/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers a chunked body at the chunk that crosses the limit with 413, and closes the connection', async () => {
    // Chunks past any limit, and no last chunk: a server that reads a refused body to its
    // end before answering answers this only at its request timeout (minutes).
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
    const chunk = 'x'.repeat(1024);
    const first = `{"query":"{ __typename }","padding":"${chunk}`;
    socket.write(`${first.length.toString(16)}\r\n${first}\r\n`);
    for (let i = 0; i < 200 && !socket.destroyed; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error('no answer to a chunked body over the limit')), 10_000))]);
    const answer = Buffer.concat(received).toString('utf8');
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/connection: close/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('gives a caller without a verified token a smaller body: 413 before reading, declared or chunked; a verified caller the full limit', async () => {
    const small = await startTestApiServer({ engine, settings: { maxBodyBytes: 16 * 1024, maxAnonymousBodyBytes: 1024 } });
    try {
      const body = JSON.stringify({ query: '{ __typename }', variables: { padding: 'x'.repeat(4 * 1024) } });
      const post = (authorization: string | undefined, payload: BodyInit = body) =>
        fetch(`${small.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          body: payload,
          ...(typeof payload === 'string' ? {} : { duplex: 'half' }),
        } as RequestInit);
      for (const authorization of [undefined, 'Bearer not-a-token']) {
        const refused = await post(authorization);
        expect(refused.status).toBe(413);
        expect(await refused.json()).toMatchObject({ errors: [{ message: 'The request body is larger than 1024 bytes', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
      }
      // Chunked (no Content-Length): body-parser stops at the same limit.
      const chunked = await post(undefined, new Blob([body]).stream());
      expect(chunked.status).toBe(413);
      expect(await chunked.json()).toMatchObject({ errors: [{ message: 'The request body is larger than 1024 bytes' }] });
      const verified = await post(`Bearer ${small.tokens.admin}`);
      expect(verified.status).toBe(200);
      expect(await verified.json()).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await small.close();
    }
  });

  it('refuses requests without a CSRF-safe content type', async () => {
    const response = await fetch(`${server.url}/graphql?query=${encodeURIComponent('{ messagingHealth { status } }')}`, {
      headers: { authorization: `Bearer ${server.tokens.admin}` },
    });
    expect(response.status).toBe(400);
  });

  it('closes a socket that sends an oversized frame (1009, the client\'s fault: nothing on stderr); others keep working', async () => {
    const bystander = wsClient(server, server.tokens.admin);
    const consoleError = vi.spyOn(console, 'error');
    const big = await rawSocket(server);
    big.send({ type: 'connection_init', payload: { token: server.tokens.admin, padding: 'x'.repeat(8 * 1024) } });
    try {
      expect((await big.closed).code).toBe(1009);
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
    }
    const sub = collect(bystander, MessagingHealthDocument, {});
    await sub.done;
    expect(sub.results[0]!.data!.messagingHealth.status).toBeTruthy();
    await bystander.dispose();
  });

  it('closes a socket that sends malformed messages, and keeps serving the others', async () => {
    const bystander = wsClient(server, server.tokens.admin);
    const warm = collect(bystander, MessagingHealthDocument, {});
    await warm.done;
    const cases: unknown[] = [
      'this is not json',
      { type: 'no-such-type' },
      { type: 'subscribe', id: '1', payload: { query: '{ messagingHealth { status } }' } }, // before connection_init
      { nothing: true },
    ];
    for (const message of cases) {
      const socket = await rawSocket(server);
      socket.send(message);
      const { code } = await socket.closed;
      expect([4400, 4401]).toContain(code);
    }
    // After acknowledgement: a subscribe message without an id.
    const socket = await rawSocket(server);
    socket.send({ type: 'connection_init', payload: { token: server.tokens.admin } });
    await waitUntil(() => socket.messages.length > 0);
    socket.send({ type: 'subscribe', payload: { query: '{ messagingHealth { status } }' } });
    expect((await socket.closed).code).toBe(4400);
    // A syntax error is an operation error, not a socket error.
    const ok = await rawSocket(server);
    ok.send({ type: 'connection_init', payload: { token: server.tokens.admin } });
    await waitUntil(() => ok.messages.length >= 1);
    ok.send({ type: 'subscribe', id: 'x', payload: { query: '{ messagingHealth { status ' } });
    await waitUntil(() => ok.messages.length >= 2);
    expect(ok.messages[1]).toMatchObject({ type: 'error', id: 'x', payload: [{ extensions: { code: 'GRAPHQL_PARSE_FAILED' } }] });
    ok.socket.close();

    const after = collect(bystander, MessagingHealthDocument, {});
    await after.done;
    expect(after.results[0]!.data!.messagingHealth.status).toBeTruthy();
    await bystander.dispose();
  });
});
