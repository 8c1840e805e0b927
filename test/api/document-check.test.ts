import 'reflect-metadata';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiSchema } from '../../src/api/graphql/build-schema';
import { DocumentCache, MAX_CACHED_QUERY_LENGTH, PersistedQueryCache } from '../../src/api/graphql/document-cache';
import { documentCheck, type DocumentCheck } from '../../src/api/graphql/document-check';
import { createErrorFormatter } from '../../src/api/graphql/errors';
import { httpDocumentCheck } from '../../src/api/graphql/http-document-check';
import { operationCost, parseOptions, shapeRules } from '../../src/api/graphql/limits';
import { TEST_GRAPHQL_SETTINGS } from './support/api-server';

/**
 * The check in front of Apollo Server: a refused document is answered there, after one
 * parse, and never reaches what is behind it (Apollo would parse, validate, price and
 * store it again); an accepted one goes on, and a repeated text is not parsed again.
 */
let schema: GraphQLSchema;
let check: DocumentCheck;
let server: http.Server;
let url: string;
/** Requests that got past the check. */
let reached = 0;

beforeAll(async () => {
  schema = await buildApiSchema();
  check = documentCheck({ schema, parseOptions: parseOptions(TEST_GRAPHQL_SETTINGS), shapeRules: shapeRules(TEST_GRAPHQL_SETTINGS), extraRules: [] });
  const app = express();
  app.use(
    '/graphql',
    express.json(),
    httpDocumentCheck({ check, schema, maxComplexity: TEST_GRAPHQL_SETTINGS.maxComplexity, formatError: createErrorFormatter({ production: true }) }),
    (_req, res) => {
      reached++;
      res.json({ data: { passed: true } });
    },
  );
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

type Answer = { status: number; body: { data?: unknown; errors?: { message: string; locations?: unknown[]; extensions: { code: string } & Record<string, unknown> }[] } };

async function post(query: string, extra: Record<string, unknown> = {}): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, ...extra }), signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

/** Refused, and nothing behind the check ran. */
async function refused(answer: Promise<Answer>): Promise<Answer['body']['errors']> {
  const before = reached;
  const { status, body } = await answer;
  expect(status).toBe(400);
  expect(reached).toBe(before);
  return body.errors;
}

describe('the HTTP document check in front of Apollo Server', () => {
  it('refuses an operation over the cost limit (400 QUERY_TOO_COMPLEX) before anything behind it runs', async () => {
    const tenTimesEveryCourse = `{ ${[...Array(10)].map((_, i) => `a${i}: terms { courses { code teacher { code } } teachers { code } }`).join(' ')} }`;
    const errors = await refused(post(tenTimesEveryCourse));
    expect(errors![0]).toMatchObject({ extensions: { code: 'QUERY_TOO_COMPLEX', maxComplexity: 1_000 } });
    expect(errors![0]!.message).toMatch(/^The query costs \d+; the limit is 1000$/);
  });

  it('prices the operation with its variables and operation name', async () => {
    const page = 'query Page($n: Int!) { jobs(first: $n) { edges { node { id } } } } query Other { __typename }';
    const errors = await refused(post(page, { operationName: 'Page', variables: { n: 5000 } }));
    expect(errors![0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
    const fine = await post(page, { operationName: 'Other' });
    expect(fine.status).toBe(200);
  });

  it("refuses text that does not parse and a document that does not validate, with Apollo's codes and locations", async () => {
    const parseErrors = await refused(post('{ jobs(first: 5) { edges { node { id } } '));
    expect(parseErrors![0]).toMatchObject({ extensions: { code: 'GRAPHQL_PARSE_FAILED' }, locations: [{ line: 1, column: expect.any(Number) }] });
    const tooManyTokens = await refused(post(`{ ${'__typename '.repeat(6_000)}}`));
    expect(tooManyTokens![0]!.message).toMatch(/5000 tokens/);
    const invalid = await refused(post('{ noSuchField }'));
    expect(invalid![0]).toMatchObject({ message: 'Cannot query field "noSuchField" on type "Query".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });

  it('prices a document before graphql-js validates it, safely: a fragment cycle is still refused as invalid', async () => {
    const cycle = await refused(post('{ terms { ...A } } fragment A on AcademicTerm { plans { term { ...A } } }'));
    expect(cycle![0]).toMatchObject({ message: 'Cannot spread fragment "A" within itself.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    const twoWay = await refused(post('{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }'));
    expect(twoWay![0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('lets an accepted operation through, over POST and GET', async () => {
    const before = reached;
    expect((await post('{ terms { code } }')).status).toBe(200);
    const get = await fetch(`${url}?query=${encodeURIComponent('query ($n: Int!) { jobs(first: $n) { edges { node { id } } } }')}&variables=${encodeURIComponent('{"n":5}')}`);
    expect(get.status).toBe(200);
    expect(reached).toBe(before + 2);
  });
});

describe('the document check', () => {
  it('parses and validates a repeated short text once: the same document comes back', () => {
    const query = 'query Honest { terms { id code } }';
    const first = check(query);
    expect(Array.isArray(first)).toBe(false);
    expect(check(query)).toBe(first);
  });

  it('prices a kept document again on every call (the price depends on the variables)', () => {
    const query = 'query Page($n: Int!) { jobs(first: $n) { edges { node { id } } } }';
    const price = (n: number) => (document: DocumentNode) => operationCost(schema, document, undefined, { n }, TEST_GRAPHQL_SETTINGS.maxComplexity).error;
    const small = check(query, price(5));
    expect(Array.isArray(small)).toBe(false);
    const big = check(query, price(5000));
    expect(Array.isArray(big) && big[0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(check(query, price(5))).toBe(small);
  });

  it('keeps no refused document, and no document longer than the cache takes', () => {
    const invalid = '{ noSuchField }';
    const a = check(invalid);
    expect(Array.isArray(a)).toBe(true);
    expect(check(invalid)).not.toBe(a);
    const long = `{ terms { code } } ${'#'.repeat(MAX_CACHED_QUERY_LENGTH)}`;
    expect(check(long)).not.toBe(check(long));
  });
});

describe('DocumentCache (also Apollo Server’s document store)', () => {
  it('holds at most its limit, dropping the least recently used first', async () => {
    const cache = new DocumentCache(3);
    const docs = ['a', 'b', 'c', 'd'].map((name) => parse(`{ ${name}: __typename }`));
    await cache.set('a', docs[0]!);
    await cache.set('b', docs[1]!);
    await cache.set('c', docs[2]!);
    expect(await cache.get('a')).toBe(docs[0]); // now the most recently used
    await cache.set('d', docs[3]!);
    expect(cache.size).toBe(3);
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toBe(docs[0]);
    expect(await cache.get('d')).toBe(docs[3]);
  });

  it('does not keep a document whose text is longer than its limit, nor one without a location', async () => {
    const cache = new DocumentCache(10, 100);
    await cache.set('long', parse(`{ __typename } ${'#'.repeat(200)}`));
    await cache.set('unlocated', parse('{ __typename }', { noLocation: true }));
    await cache.set('short', parse('{ __typename }'));
    expect(cache.size).toBe(1);
    expect(await cache.get('short')).toBeDefined();
  });
});

describe('PersistedQueryCache (Apollo Server’s persisted-query texts)', () => {
  it('holds at most its limit, least recently used dropped first, and no text longer than its limit', async () => {
    const cache = new PersistedQueryCache(2, 20);
    await cache.set('a', '{ a: __typename }');
    await cache.set('b', '{ b: __typename }');
    expect(await cache.get('a')).toBe('{ a: __typename }'); // now the most recently used
    await cache.set('c', '{ c: __typename }');
    await cache.set('long', `{ __typename } ${'#'.repeat(20)}`);
    expect(cache.size).toBe(2);
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('long')).toBeUndefined();
    expect(await cache.get('a')).toBeDefined();
    expect(await cache.get('c')).toBeDefined();
  });
});
