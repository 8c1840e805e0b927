/**
 * The HTTP rate limit over real HTTP: a token's subject has its own allowance wherever
 * it calls from, callers without a valid token share their address's; beyond either,
 * 429 with Retry-After and a RATE_LIMITED error, and the next window lets them in again.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { MessagingHealthDocument } from './generated/graphql';
import { gql, startTestApiServer, TEST_JWT, type TestApiServer } from './support/api-server';
import { withinOneWindow } from './support/one-window';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;
const PER_SECOND = 3;

beforeAll(async () => {
  ctx = await createTestDb('api_rate_limits');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
  // No burst allowance: exactly PER_SECOND operations a second per subject and per address.
  server = await startTestApiServer({ engine, limits: { http: { perSubject: PER_SECOND, perAddress: PER_SECOND, burst: 0 } } });
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

interface Answer {
  status: number;
  code: string;
  retryAfter: string | null;
}

async function ask(token: string | null): Promise<Answer> {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query: '{ messagingHealth { status } }' }),
  });
  const body = (await response.json()) as { errors?: { extensions: { code: string } }[] };
  return { status: response.status, code: body.errors?.[0]?.extensions.code ?? 'ok', retryAfter: response.headers.get('retry-after') };
}

/** `count` requests at once; with how many one-second windows they may have spanned. */
async function flood(token: string | null, count = 20): Promise<{ answers: Answer[]; windows: number }> {
  const started = Date.now();
  const answers = await Promise.all(Array.from({ length: count }, () => ask(token)));
  return { answers, windows: Math.ceil((Date.now() - started) / 1000) + 1 };
}

describe('HTTP rate limit', () => {
  it('answers a subject beyond its allowance with 429, Retry-After and RATE_LIMITED; then lets it in again', async () => {
    const { answers, windows } = await flood(server.tokens.viewer);
    const ok = answers.filter((a) => a.status === 200);
    const limited = answers.filter((a) => a.status === 429);
    expect(ok.length + limited.length).toBe(answers.length);
    expect(ok.length).toBeLessThanOrEqual(PER_SECOND * windows);
    expect(limited.length).toBeGreaterThan(0);
    for (const a of limited) {
      expect(a.code).toBe('RATE_LIMITED');
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    await new Promise((r) => setTimeout(r, Number(limited[0]!.retryAfter) * 1000));
    expect(await ask(server.tokens.viewer)).toMatchObject({ status: 200, code: 'ok' });
  });

  it('keys a token by its subject: another subject from the same address is not slowed', async () => {
    const flooding = flood(server.tokens.otherViewer, 30);
    const others = await Promise.all([ask(server.tokens.admin), ask(server.tokens.scheduler), ask(server.tokens.readAllViewer)]);
    expect(others.map((a) => a.status)).toEqual([200, 200, 200]);
    expect((await flooding).answers.some((a) => a.status === 429)).toBe(true);
  });

  it('keys callers without a valid token by address, apart from subjects; a forged token spends no one else’s allowance', async () => {
    const forged = await new SignJWT({ roles: ['admin'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('scheduler-1')
      .setIssuer(TEST_JWT.issuer)
      .setAudience(TEST_JWT.audience)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('not-the-secret-but-thirty-two-bytes-long'));
    const [anonymous, forgedFlood] = await Promise.all([flood(null), flood(forged)]);
    // Both share 127.0.0.1's allowance: everything beyond it is 429 before any GraphQL work.
    const all = [...anonymous.answers, ...forgedFlood.answers];
    expect(all.filter((a) => a.status !== 429).length).toBeLessThanOrEqual(PER_SECOND * Math.max(anonymous.windows, forgedFlood.windows));
    expect(all.filter((a) => a.status !== 429).every((a) => a.code === 'UNAUTHENTICATED')).toBe(true);
    // The subject the forged token names was not charged.
    expect(await ask(server.tokens.scheduler)).toMatchObject({ status: 200, code: 'ok' });
  });

  it('a refused operation spends RATE_LIMIT_REFUSAL_COST of the allowance, an accepted one 1', async () => {
    // 3 a second, no burst; a refusal spends all 3. Within one second, the refused
    // subject's next operation is 429 while a subject whose operations were accepted
    // still has room.
    const strict = await startTestApiServer({ engine, limits: { http: { perSubject: 3, perAddress: 3, burst: 0 }, refusalCost: 3 } });
    const refuse = (token: string) =>
      fetch(`${strict.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: '{ noSuchField }' }),
      });
    const askStrict = async (token: string) => {
      const response = await fetch(`${strict.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: '{ messagingHealth { status } }' }),
      });
      const body = (await response.json()) as { errors?: { extensions: { code: string } }[] };
      return { status: response.status, code: body.errors?.[0]?.extensions.code ?? 'ok' };
    };
    try {
      const subjects = [
        [strict.tokens.scheduler, strict.tokens.admin],
        [strict.tokens.otherViewer, strict.tokens.readAllViewer],
      ] as const;
      const { refusal, afterRefusal, acceptedTwice } = await withinOneWindow(subjects, async ([refused, accepted]) => ({
        refusal: (await refuse(refused)).status,
        afterRefusal: await askStrict(refused),
        acceptedTwice: [await askStrict(accepted), await askStrict(accepted)],
      }));
      expect(refusal).toBe(400);
      expect(afterRefusal).toEqual({ status: 429, code: 'RATE_LIMITED' });
      expect(acceptedTwice).toEqual([
        { status: 200, code: 'ok' },
        { status: 200, code: 'ok' },
      ]);
    } finally {
      await strict.close();
    }
  });

  it('the default limits let a page-load of queries through (sized for an office, not for these tests)', async () => {
    const roomy = await startTestApiServer({ engine });
    try {
      const answers = await Promise.all(Array.from({ length: 60 }, () => gql(roomy, MessagingHealthDocument, {}, roomy.tokens.viewer)));
      expect(answers.every((a) => a.status === 200)).toBe(true);
    } finally {
      await roomy.close();
    }
  });
});
