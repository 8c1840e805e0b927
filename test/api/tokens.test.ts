/**
 * What a token must be: with `exp`, not valid for longer than the configured lifetime
 * (HTTP and socket), from the pinned algorithms of an https JWKS, with issuer and
 * audience in production; and a socket closes when its token expires.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator, createApiAuth } from '../../src/api/auth/authenticator';
import { ConfigError, loadConfig } from '../../src/config';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { MessagingHealthDocument } from './generated/graphql';
import { gql, rawSocket, startTestApiServer, TEST_JWT, waitUntil, type TestApiServer } from './support/api-server';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;

beforeAll(async () => {
  ctx = await createTestDb('api_tokens');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
  server = await startTestApiServer({ engine });
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

const now = () => Math.floor(Date.now() / 1000);
const key = new TextEncoder().encode(TEST_JWT.secret);

/** An HS256 admin token from TEST_JWT's issuer, with exactly the times given. */
function token(times: { iat?: number; exp?: number }, sub = 'token-tester'): Promise<string> {
  const jwt = new SignJWT({ roles: ['admin'] }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuer(TEST_JWT.issuer).setAudience(TEST_JWT.audience);
  if (times.iat !== undefined) jwt.setIssuedAt(times.iat);
  if (times.exp !== undefined) jwt.setExpirationTime(times.exp);
  return jwt.sign(key);
}

async function httpOutcome(value: string): Promise<{ status: number; code: string; message?: string }> {
  const result = await gql(server, MessagingHealthDocument, {}, value);
  const error = result.body.errors?.[0];
  return { status: result.status, code: error ? String(error.extensions!.code) : 'ok', message: error?.message };
}

/** connection_init with the token: 'ack', or the close code. */
async function socketOutcome(value: string): Promise<'ack' | number> {
  const socket = await rawSocket(server);
  socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${value}` } });
  const outcome = await Promise.race([
    socket.closed.then((c) => c.code),
    waitUntil(() => socket.messages.length > 0).then(() => 'ack' as const),
  ]);
  socket.socket.close();
  return outcome;
}

describe('token lifetime', () => {
  it('refuses a token without exp on HTTP (401) and the socket (4401)', async () => {
    const noExp = await token({ iat: now() });
    expect(await httpOutcome(noExp)).toMatchObject({ status: 401, code: 'UNAUTHENTICATED', message: expect.stringMatching(/no exp claim/) });
    expect(await socketOutcome(noExp)).toBe(4401);
  });

  it('refuses a token valid for ten years, with or without iat; accepts one for 23 hours', async () => {
    const tenYears = 10 * 365 * 86_400;
    for (const long of [await token({ iat: now(), exp: now() + tenYears }), await token({ exp: now() + tenYears })]) {
      expect(await httpOutcome(long)).toMatchObject({ status: 401, code: 'UNAUTHENTICATED', message: expect.stringMatching(/longer than 86400 s/) });
      expect(await socketOutcome(long)).toBe(4401);
    }
    // Issued long ago with a short remaining validity still counts its whole lifetime.
    expect((await httpOutcome(await token({ iat: now() - tenYears, exp: now() + 60 }))).code).toBe('UNAUTHENTICATED');
    const day = await token({ iat: now(), exp: now() + 23 * 3_600 });
    expect(await httpOutcome(day)).toEqual({ status: 200, code: 'ok', message: undefined });
    expect(await socketOutcome(day)).toBe('ack');
  });

  it('takes the maximum lifetime from JWT_MAX_LIFETIME_SECONDS', async () => {
    const config = loadConfig({ NODE_ENV: 'development', JWT_SECRET: TEST_JWT.secret, JWT_MAX_LIFETIME_SECONDS: '3600' });
    expect(config.auth.maxLifetimeSeconds).toBe(3_600);
    const { authenticator } = await createApiAuth(config, silentLogger);
    const sign = (seconds: number) => new SignJWT({ roles: ['viewer'] }).setProtectedHeader({ alg: 'HS256' }).setSubject('x').setIssuedAt().setExpirationTime(now() + seconds).sign(key);
    await expect(authenticator.verify(await sign(2 * 3_600))).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(authenticator.verify(await sign(1_800))).resolves.toMatchObject({ subject: 'x' });
    expect(() => loadConfig({ JWT_MAX_LIFETIME_SECONDS: '10' })).toThrow(ConfigError);
  });

  it('closes a socket with 4403 when its token expires, not before', async () => {
    const expiresAt = now() + 2;
    const socket = await rawSocket(server);
    socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${await token({ iat: now(), exp: expiresAt }, 'short-lived')}` } });
    await waitUntil(() => socket.messages.length > 0);
    expect(socket.messages[0]).toEqual({ type: 'connection_ack' });
    socket.send({ id: 'events', type: 'subscribe', payload: { query: 'subscription { jobEvents { jobId } }' } });
    const closed = await Promise.race([socket.closed, new Promise<null>((r) => setTimeout(() => r(null), 15_000))]);
    expect(closed).toEqual({ code: 4403, reason: expect.stringMatching(/expired/) });
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt * 1000);
  });
});

describe('JWKS', () => {
  let jwks: http.Server;
  let jwksUrl: string;
  /** The RSA private key, imported per algorithm (a CryptoKey is bound to one). */
  let privateJwk: JWK;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256', { extractable: true });
    privateJwk = await exportJWK(pair.privateKey);
    // A key without `alg`, as many identity providers publish: only our allow-list pins the algorithm.
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', use: 'sig' };
    jwks = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
  });
  afterAll(() => jwks?.close());

  const sign = async (alg: string) =>
    new SignJWT({ roles: ['viewer'] }).setProtectedHeader({ alg, kid: 'k1' }).setSubject('alice').setIssuer('https://idp.example').setAudience('jiaowu').setIssuedAt().setExpirationTime('5m').sign(await importJWK(privateJwk, alg));

  it('accepts only the allowed algorithms (RS256, ES256, EdDSA unless JWT_ALGORITHMS says otherwise)', async () => {
    const defaults = new Authenticator({ jwksUrl, issuer: 'https://idp.example', audience: 'jiaowu' });
    await expect(defaults.verify(await sign('RS256'))).resolves.toMatchObject({ subject: 'alice' });
    await expect(defaults.verify(await sign('RS512'))).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/algorithm/) });
    await expect(defaults.verify(await sign('PS256'))).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const config = loadConfig({ NODE_ENV: 'development', JWT_JWKS_URL: jwksUrl, JWT_ALGORITHMS: 'PS256', JWT_ISSUER: 'https://idp.example', JWT_AUDIENCE: 'jiaowu' });
    const { authenticator: psOnly } = await createApiAuth(config, silentLogger);
    await expect(psOnly.verify(await sign('PS256'))).resolves.toMatchObject({ subject: 'alice' });
    await expect(psOnly.verify(await sign('RS256'))).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    for (const bad of ['HS256', 'none', 'RS256,foo']) expect(() => loadConfig({ JWT_ALGORITHMS: bad })).toThrow(/JWT_ALGORITHMS/);
  });

  it('takes keys only over https (plain http only from this machine, outside production)', () => {
    expect(() => loadConfig({ JWT_JWKS_URL: 'http://idp.example/jwks.json' })).toThrow(/JWT_JWKS_URL.*https/);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_JWKS_URL: jwksUrl })).toThrow(/JWT_JWKS_URL.*https/);
    const idp = { JWT_ISSUER: 'https://idp.example', JWT_AUDIENCE: 'jiaowu' };
    expect(loadConfig({ NODE_ENV: 'production', JWT_JWKS_URL: 'https://idp.example/jwks.json', ...idp }).auth.jwksUrl).toBe('https://idp.example/jwks.json');
    expect(loadConfig({ JWT_JWKS_URL: jwksUrl }).auth.jwksUrl).toBe(jwksUrl);
    expect(() => new Authenticator({ jwksUrl: 'http://idp.example/jwks.json' })).toThrow(/https/);
  });
});

describe('production', () => {
  it('refuses to start without JWT_ISSUER or JWT_AUDIENCE, naming the missing one', async () => {
    const secret = 'x'.repeat(40);
    const missing = (env: Record<string, string>) => {
      try {
        loadConfig({ NODE_ENV: 'production', ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).variable;
      }
      return null;
    };
    expect(missing({ JWT_SECRET: secret, JWT_AUDIENCE: 'jiaowu' })).toBe('JWT_ISSUER');
    expect(missing({ JWT_SECRET: secret, JWT_ISSUER: 'https://idp.example' })).toBe('JWT_AUDIENCE');
    expect(missing({ JWT_JWKS_URL: 'https://idp.example/jwks.json', JWT_ISSUER: 'https://idp.example' })).toBe('JWT_AUDIENCE');
    // A worker verifies no tokens.
    expect(missing({ ROLE: 'worker', JWT_SECRET: secret })).toBeNull();
    const ok = await createApiAuth(loadConfig({ NODE_ENV: 'production', JWT_SECRET: secret, JWT_ISSUER: 'i', JWT_AUDIENCE: 'a' }), silentLogger);
    expect(ok.devAdminToken).toBeNull();
  });
});
