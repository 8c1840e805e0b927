import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator, createApiAuth } from '../../src/api/auth/authenticator';
import { ApiRole } from '../../src/api/auth/viewer';
import { ConfigError, loadConfig } from '../../src/config';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { testKindRegistrations } from '../support/test-kinds';
import { transpiledMain } from '../support/transpiled-service';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { JobsDocument, MessagingHealthDocument } from './generated/graphql';
import { collect, gql, startTestApiServer, wsClient } from './support/api-server';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;

beforeAll(async () => {
  ctx = await createTestDb('api_graphiql');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
});
afterAll(async () => {
  await engine?.stop(2_000);
  await ctx?.close();
});

describe('GraphiQL', () => {
  it('serves a self-contained page with graphql-ws subscriptions and the development token filled in', async () => {
    const server = await startTestApiServer({ engine, devAdminToken: 'DEV.TOKEN.VALUE' });
    try {
      const response = await fetch(`${server.url}/graphiql`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/text\/html/);
      const html = await response.text();
      expect(html).not.toMatch(/<script[^>]+src=["']https?:/i);
      expect(html).not.toMatch(/<link[^>]+href=["']https?:/i);
      expect(html).toContain('"subscriptionsProtocol":"WS"');
      expect(html).toContain('"connectionParams":{"authorization":"Bearer DEV.TOKEN.VALUE"}');
      expect(html).toContain('Bearer DEV.TOKEN.VALUE');
      // Apollo's own landing page is off.
      const landing = await fetch(`${server.url}/graphql`, { headers: { accept: 'text/html', 'apollo-require-preflight': '1' } });
      expect(landing.headers.get('content-type')).not.toMatch(/text\/html/);
    } finally {
      await server.close();
    }
  });

  it('is loaded only where it is switched on: a process without it does not carry its inlined bundle (~14 MiB of heap)', () => {
    // The service's whole import graph at start-up (what every API process loads), in a
    // process of its own: this test file's own module cache has GraphiQL loaded.
    const src = path.dirname(transpiledMain());
    const loaded = "Object.keys(require.cache).some((file) => file.includes('render-graphiql'))";
    const probe = [
      `require(${JSON.stringify(path.join(src, 'app.js'))});`,
      `const atStart = ${loaded};`,
      `require(${JSON.stringify(path.join(src, 'api', 'graphiql.js'))}).renderGraphiQLPage({ endpoint: '/graphql', devToken: null });`,
      `process.stdout.write(JSON.stringify({ atStart, onceServed: ${loaded} }));`,
    ].join('\n');
    expect(JSON.parse(execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8' }))).toEqual({ atStart: false, onceServed: true });
  });

  it('never pre-fills a token in production, and can be switched off', async () => {
    const prod = await startTestApiServer({ engine, devAdminToken: 'DEV.TOKEN.VALUE', settings: { production: true, graphiql: true } });
    const off = await startTestApiServer({ engine, settings: { graphiql: false } });
    try {
      expect(await (await fetch(`${prod.url}/graphiql`)).text()).not.toContain('DEV.TOKEN.VALUE');
      expect((await fetch(`${off.url}/graphiql`)).status).toBe(404);
    } finally {
      await prod.close();
      await off.close();
    }
  });
});

describe('errors in production and development', () => {
  it('sends stack traces only in development, and every error carries a code', async () => {
    const dev = await startTestApiServer({ engine });
    const prod = await startTestApiServer({ engine, settings: { production: true } });
    try {
      const devResult = await gql(dev, JobsDocument, { first: 1, after: '!!!' }, dev.tokens.admin);
      expect(devResult.body.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
      expect(devResult.body.errors![0]!.extensions!.stacktrace).toBeDefined();
      const prodResult = await gql(prod, JobsDocument, { first: 1, after: '!!!' }, prod.tokens.admin);
      expect(prodResult.body.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT' });
      const client = wsClient(prod, prod.tokens.admin);
      const sub = collect(client, JobsDocument, { first: 1, after: '!!!' });
      await sub.done;
      expect(sub.results[0]!.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT' });
      await client.dispose();
      const anonymous = await gql(prod, MessagingHealthDocument, {}, null);
      expect(anonymous.body.errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
    } finally {
      await dev.close();
      await prod.close();
    }
  });
});

describe('auth configuration', () => {
  it('refuses to start in production without JWT_SECRET or JWT_JWKS_URL', async () => {
    const config = loadConfig({ NODE_ENV: 'production' });
    await expect(createApiAuth(config, silentLogger)).rejects.toBeInstanceOf(ConfigError);
    await expect(createApiAuth(config, silentLogger)).rejects.toThrow(/JWT_SECRET/);
    const short = loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'short', JWT_ISSUER: 'i', JWT_AUDIENCE: 'a' });
    await expect(createApiAuth(short, silentLogger)).rejects.toBeInstanceOf(ConfigError);
  });

  it('generates a development secret and an admin token when nothing is configured', async () => {
    const auth = await createApiAuth(loadConfig({ NODE_ENV: 'development' }), silentLogger);
    expect(auth.devAdminToken).toBeTruthy();
    const viewer = await auth.authenticator.verify(auth.devAdminToken!);
    expect([...viewer.roles]).toEqual([ApiRole.ADMIN]);
    const configured = await createApiAuth(loadConfig({ NODE_ENV: 'development', JWT_SECRET: 'x'.repeat(40) }), silentLogger);
    expect(configured.devAdminToken).toBeNull();
  });

  it('verifies tokens against a JWKS URL with issuer and audience checks', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    const jwks = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
      const authenticator = new Authenticator({ jwksUrl: url, issuer: 'https://idp.example', audience: 'jiaowu' });
      const sign = (aud: string) =>
        new SignJWT({ roles: ['scheduler'] })
          .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
          .setSubject('alice')
          .setIssuer('https://idp.example')
          .setAudience(aud)
          .setExpirationTime('5m')
          .sign(privateKey);
      const viewer = await authenticator.verify(await sign('jiaowu'));
      expect(viewer.subject).toBe('alice');
      expect([...viewer.roles]).toEqual([ApiRole.SCHEDULER]);
      await expect(authenticator.verify(await sign('other'))).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    } finally {
      jwks.close();
    }
  });
});
