import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CACHED_QUERY_LENGTH } from '../../src/api/graphql/document-cache';
import type { JobEngine } from '../../src/engine/engine';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { rawSocket, startTestApiServer, waitUntil, type TestApiServer } from './support/api-server';

/**
 * Fragment F(i) spreads F(i+1) twice: 2ⁿ paths through a document of n short lines. A
 * check that walks each path (rather than each fragment once) holds the process for
 * seconds at n = 24 and doubles with every extra fragment.
 */
function fragmentBomb(n: number, leaf = '__typename'): string {
  const fragments = [...Array(n)].map((_, i) => `fragment F${i} on Query { ${leaf} ${i + 1 < n ? `...F${i + 1} ...F${i + 1}` : ''} }`);
  return `{ ...F0 } ${fragments.join(' ')}`;
}

/** How long a refusal may take here at most, on a loaded machine (a linear check takes milliseconds). */
const REFUSAL_BOUND_MS = 5_000;

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;

beforeAll(async () => {
  ctx = await createTestDb('api_hostile_queries');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
  server = await startTestApiServer({ engine, settings: { production: true, introspection: false, graphiql: false, maxBodyBytes: 256 * 1024, maxWsPayloadBytes: 256 * 1024 } });
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

type Body = { data?: unknown; errors?: { message: string; extensions: { code: string } & Record<string, unknown> }[] };

async function post(query: string, token?: string): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(REFUSAL_BOUND_MS),
  });
  return { status: response.status, body: (await response.json()) as Body };
}

/** The first answer to one operation over a fresh socket. */
async function overSocket(query: string): Promise<{ type: string; payload: Body['errors'] }> {
  const socket = await rawSocket(server);
  try {
    socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${server.tokens.viewer}` } });
    await waitUntil(() => socket.messages.length >= 1, REFUSAL_BOUND_MS, 'connection_ack');
    socket.send({ type: 'subscribe', id: 'op', payload: { query } });
    await waitUntil(() => socket.messages.length >= 2, REFUSAL_BOUND_MS, 'an answer to the operation');
    return socket.messages[1] as { type: string; payload: Body['errors'] };
  } finally {
    socket.socket.close();
  }
}

describe('a document of nested fragment spreads (the fragment bomb)', () => {
  it('is refused over HTTP, with no token, while the process keeps answering', async () => {
    const bomb = post(fragmentBomb(26));
    // Sent after the bomb: answered only when the event loop is free again.
    const live = fetch(`${server.url}/health/live`, { signal: AbortSignal.timeout(REFUSAL_BOUND_MS) });
    const [{ status, body }, health] = await Promise.all([bomb, live]);
    expect(health.status).toBe(200);
    expect(status).toBe(400);
    expect(body.errors![0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(body.errors![0]!.message).toBe('The query selects more than 1000 fields once its fragments are expanded');
  });

  it('is refused over the socket', async () => {
    const answer = await overSocket(fragmentBomb(26, 'messagingHealth { status }'));
    expect(answer.type).toBe('error');
    expect(answer.payload![0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('is refused as too deep when each spread also nests deeper: depth is counted once per fragment', async () => {
    // T(i) = plans { term { ...T(i+1) ...T(i+1) } }: 2n levels, 2ⁿ paths.
    const n = 26;
    const fragments = [...Array(n)].map((_, i) => `fragment T${i} on AcademicTerm { code ${i + 1 < n ? `plans { term { ...T${i + 1} ...T${i + 1} } }` : ''} }`);
    const { status, body } = await post(`{ terms { ...T0 } } ${fragments.join(' ')}`);
    expect(status).toBe(400);
    expect(body.errors![0]).toMatchObject({ message: `The query is ${2 * (n - 1) + 2} levels deep; the limit is 10`, extensions: { code: 'QUERY_TOO_DEEP' } });
  });
});

describe("a document that would load graphql-js's own checks (same-named fields are compared in pairs)", () => {
  it('refuses one response path repeated beyond the limit (10), before those checks, on both paths', async () => {
    const repeated = `{ ${'messagingHealth { status } '.repeat(400)}}`;
    const { status, body } = await post(repeated);
    expect(status).toBe(400);
    expect(body.errors![0]).toMatchObject({ message: 'The query selects messagingHealth 400 times; the limit is 10', extensions: { code: 'QUERY_TOO_COMPLEX' } });
    const answer = await overSocket(repeated);
    expect(answer.payload![0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('refuses more than 1000 fields once fragments are expanded', async () => {
    // Ten fragments of 11 fields, each spread ten times: 1,101 fields from a short document.
    const fields = 'status checkedAt expiredLeases problems oldestPendingMessageAgeSeconds oldestQueuedJobAgeSeconds backlog { byKind { kind } byState { state } }';
    const fragments = [...Array(10)].map((_, i) => `fragment M${i} on MessagingHealth { ${fields} }`);
    const spreads = [...Array(10)].map((_, i) => `...M${i} `.repeat(10)).join('');
    const { status, body } = await post(`{ messagingHealth { ${spreads} } } ${fragments.join(' ')}`);
    expect(status).toBe(400);
    expect(body.errors![0]!.message).toBe('The query selects more than 1000 fields once its fragments are expanded');
  });
});

describe('the parser stops at the token limit on HTTP as on the socket', () => {
  const tooManyTokens = `{ ${'__typename '.repeat(6_000)}}`;

  it('over HTTP', async () => {
    const { status, body } = await post(tooManyTokens, server.tokens.viewer);
    expect(status).toBe(400);
    expect(body.errors![0]!.extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(body.errors![0]!.message).toMatch(/5000 tokens/);
  });

  it('over the socket', async () => {
    const answer = await overSocket(tooManyTokens);
    expect(answer.type).toBe('error');
    expect(answer.payload![0]!.extensions.code).toBe('GRAPHQL_PARSE_FAILED');
  });
});

describe('aliases are bounded', () => {
  const aliased = (count: number) => `{ ${[...Array(count)].map((_, i) => `h${i}: messagingHealth { status }`).join(' ')} }`;

  it('refuses more aliases than the limit (30) on both paths, and lets the limit through', async () => {
    const { status, body } = await post(aliased(31), server.tokens.viewer);
    expect(status).toBe(400);
    expect(body.errors![0]).toMatchObject({ message: 'The query has 31 aliases; the limit is 30', extensions: { code: 'QUERY_TOO_COMPLEX' } });
    const answer = await overSocket(aliased(31));
    expect(answer.payload![0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
    const fine = await post(aliased(30), server.tokens.viewer);
    expect(fine.body.errors).toBeUndefined();
  });
});

describe('persisted queries (APQ) are kept within bounds', () => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  async function postApq(hash: string, query?: string): Promise<Body> {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...(query === undefined ? {} : { query }), extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }),
      signal: AbortSignal.timeout(REFUSAL_BOUND_MS),
    });
    return (await response.json()) as Body;
  }

  it('a short query registered with its hash is answered by the hash alone', async () => {
    const query = `{ __typename } # ${randomUUID()}`;
    expect((await postApq(sha256(query), query)).data).toEqual({ __typename: 'Query' });
    expect((await postApq(sha256(query))).data).toEqual({ __typename: 'Query' });
  });

  it('a registration longer than the store keeps is answered but not kept: an anonymous client cannot pin megabytes of text', async () => {
    const query = `{ __typename } # ${randomUUID()} ${'x'.repeat(MAX_CACHED_QUERY_LENGTH)}`;
    expect((await postApq(sha256(query), query)).data).toEqual({ __typename: 'Query' });
    const byHash = await postApq(sha256(query));
    expect(byHash.errors![0]!.extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});

describe('a fragment no operation spreads', () => {
  // graphql-js compares the fields inside every fragment definition, used or not; the shape rules measure operations.
  const unused = `{ __typename } fragment F on Query { ${'__typename '.repeat(2_000)}}`;

  it('is refused as unused before graphql-js validates, over HTTP with no token and over the socket', async () => {
    const { status, body } = await post(unused);
    expect(status).toBe(400);
    expect(body.errors).toEqual([expect.objectContaining({ message: 'Fragment "F" is never used.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })]);
    const answer = await overSocket(unused);
    expect(answer.type).toBe('error');
    expect(answer.payload![0]!.message).toBe('Fragment "F" is never used.');
  });
});

describe('GET reads its parameters as Apollo Server does', () => {
  // Express's query parser stops after 1,000 parameters; Apollo reads them all.
  const filler = [...Array(1_000)].map((_, i) => `f${i}=1`).join('&');
  async function get(search: string, token?: string): Promise<{ status: number; body: Body }> {
    const response = await fetch(`${server.url}/graphql?${search}`, {
      headers: { 'apollo-require-preflight': '1', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: AbortSignal.timeout(REFUSAL_BOUND_MS),
    });
    return { status: response.status, body: (await response.json()) as Body };
  }
  const pages = encodeURIComponent('query($n: Int!) { a: jobs(first: $n) { edges { node { id kind status } } } b: jobs(first: $n) { edges { node { id } } } }');

  it('prices the variables given after 1,000 other parameters: two pages of 500 jobs are refused as too costly', async () => {
    const { status, body } = await get(`query=${pages}&${filler}&variables=${encodeURIComponent('{"n":500}')}`, server.tokens.viewer);
    expect(status).toBe(400);
    expect(body.errors![0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(body.errors![0]!.message).toMatch(/^The query costs \d+; the limit is 1000$/);
    // The same pages, small, run: the check lets through what it priced.
    const small = await get(`query=${pages}&${filler}&variables=${encodeURIComponent('{"n":1}')}`, server.tokens.viewer);
    expect(small.status).toBe(200);
    expect(small.body.errors).toBeUndefined();
  });

  it('checks the shape of a document given after 1,000 other parameters', async () => {
    const repeated = encodeURIComponent(`{ ${'messagingHealth { status } '.repeat(40)}}`);
    const { status, body } = await get(`${filler}&query=${repeated}`);
    expect(status).toBe(400);
    expect(body.errors![0]).toMatchObject({ message: 'The query selects messagingHealth 40 times; the limit is 10', extensions: { code: 'QUERY_TOO_COMPLEX' } });
  });

  it('leaves a parameter given twice to Apollo, which refuses it without running either', async () => {
    const { status, body } = await get(`query=${encodeURIComponent('{ __typename }')}&query=${encodeURIComponent('{ __typename }')}`);
    expect(status).toBe(400);
    expect(body.errors![0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(body.data).toBeUndefined();
  });
});

describe('methods other than GET and POST', () => {
  it('are answered 405 before the body is read or anything behind the endpoint runs: a refused document meets no check', async () => {
    for (const method of ['OPTIONS', 'PUT', 'DELETE', 'PATCH']) {
      const response = await fetch(`${server.url}/graphql`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename __typename(' }),
        signal: AbortSignal.timeout(REFUSAL_BOUND_MS),
      });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, POST');
      const body = (await response.json()) as Body;
      expect(body.errors).toEqual([{ message: `The GraphQL endpoint takes GET and POST, not ${method}`, extensions: { code: 'BAD_USER_INPUT' } }]);
    }
  });
});
