/**
 * How the service serves the web page (src/api/web-app.ts), over HTTP: index.html at /
 * and at every page path (the SPA fallback), never cached; hashed assets cached for a
 * year; a CSP of this origin and its WebSocket only; the development token in the page
 * for a browser on this machine only (not through a proxy, never in production); the
 * API, GraphiQL and health still answering beside it; 503 when the page is not built.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { testKindRegistrations } from '../support/test-kinds';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { MessagingHealthDocument } from './generated/graphql';
import { gql, startTestApiServer, type TestApiServer } from './support/api-server';

const DEV_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZXYifQ.c2lnbmF0dXJl';
const INDEX = '<!doctype html><html><head><title>page</title><script type="module" src="/assets/index-AbC123.js"></script></head><body><div id="app"></div></body></html>';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let root: string;
let server: TestApiServer;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'jiaowu-web-root-'));
  fs.mkdirSync(path.join(root, 'assets'));
  fs.writeFileSync(path.join(root, 'index.html'), INDEX);
  fs.writeFileSync(path.join(root, 'assets/index-AbC123.js'), 'console.log("page")');
  fs.writeFileSync(path.join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  ctx = await createTestDb('api_web_app');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
  server = await startTestApiServer({ engine, devAdminToken: DEV_TOKEN, settings: { webRoot: root } });
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** A GET with headers fetch will not send (Host). */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      })
      .on('error', reject);
  });
}

describe('the web page, served by the API', () => {
  it('answers / and every page path with index.html, uncached, with the CSP', async () => {
    for (const pagePath of ['/', '/index.html', '/jobs', '/jobs/3f1c2a9e-0000-4000-8000-000000000000', '/timetabling/plans/x?y=1']) {
      const response = await get(`${server.url}${pagePath}`);
      expect(response.status, pagePath).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.body).toContain('<div id="app"></div>');
      const csp = response.headers['content-security-policy'] as string;
      const port = new URL(server.url).port;
      expect(csp.split('; ')).toEqual([
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        `connect-src 'self' ws://127.0.0.1:${port} wss://127.0.0.1:${port}`,
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
      ]);
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('caches hashed assets for a year; a missing asset or file is a 404, not the page', async () => {
    const asset = await get(`${server.url}/assets/index-AbC123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-security-policy']).toContain("default-src 'self'");
    expect((await get(`${server.url}/favicon.svg`)).status).toBe(200);
    for (const missing of ['/assets/index-Gone00.js', '/assets/', '/nothing.png', '/jobs/x.js']) {
      const response = await get(`${server.url}${missing}`);
      expect(response.status, missing).toBe(404);
      expect(response.body).not.toContain('<div id="app">');
    }
  });

  it('answers a missing or malformed file with its status alone: no stack, no server path (outside production too)', async () => {
    for (const [file, status] of [['/assets/index-Gone00.js', 404], ['/assets/%E0%A4%A', 400]] as const) {
      const response = await get(`${server.url}${file}`);
      expect(response.status, file).toBe(status);
      expect(response.body, file).toBe(`${http.STATUS_CODES[status]}\n`);
    }
  });

  it('limits the page\'s requests per address: 429 beyond the allowance, while health answers on its own allowance', async () => {
    const limited = await startTestApiServer({ engine, settings: { webRoot: root, pageRate: { perSecond: 1, burst: 5 } } });
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => get(`${limited.url}${i % 2 ? '/' : '/assets/index-AbC123.js'}`)));
      const refused = answers.filter((answer) => answer.status === 429);
      // The allowance (1/s + a burst of 5) admits a handful of 20 sent at once.
      expect(refused.length).toBeGreaterThanOrEqual(10);
      expect(refused[0]!.headers['retry-after']).toMatch(/^\d+$/);
      expect(JSON.parse(refused[0]!.body)).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
      expect(JSON.parse(refused[0]!.body).errors[0].message).toMatch(/^Too many requests to the web page from this address/);
      expect((await get(`${limited.url}/health/live`)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('puts the development token in the page (and GraphiQL) only for a browser on this machine talking to it directly by a loopback name', async () => {
    expect((await get(`${server.url}/`)).body).toContain(`<meta name="jiaowu-dev-token" content="${DEV_TOKEN}"></head>`);
    expect((await get(`${server.url}/jobs`)).body).toContain(DEV_TOKEN);
    const proxies: Record<string, string>[] = [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }, { 'x-real-ip': '203.0.113.9' }];
    for (const proxied of proxies) {
      expect((await get(`${server.url}/`, proxied)).body).not.toContain(DEV_TOKEN);
    }
    // From loopback, but for another name: a site re-pointed at 127.0.0.1 (DNS rebinding) must not read it.
    for (const host of ['localhost', `localhost:${new URL(server.url).port}`, '[::1]:80', 'app.localhost']) {
      expect((await get(`${server.url}/`, { host })).body, host).toContain(DEV_TOKEN);
    }
    for (const host of ['attacker.example', `attacker.example:${new URL(server.url).port}`, '127.0.0.1.attacker.example', 'localhost.attacker.example']) {
      expect((await get(`${server.url}/`, { host })).body, host).not.toContain(DEV_TOKEN);
      expect((await get(`${server.url}/graphiql`, { host })).body, host).not.toContain(DEV_TOKEN);
    }
    expect((await get(`${server.url}/graphiql`)).body).toContain(DEV_TOKEN);
    const production = await startTestApiServer({ engine, devAdminToken: DEV_TOKEN, settings: { webRoot: root, production: true } });
    try {
      const page = await get(`${production.url}/`);
      expect(page.status).toBe(200);
      expect(page.body).not.toContain(DEV_TOKEN);
    } finally {
      await production.close();
    }
  });

  it('names no WebSocket source for a Host that is not a plain host:port', async () => {
    const response = await get(`${server.url}/`, { host: 'evil.example:80 ws://x' });
    expect(response.status).toBe(200);
    expect(response.headers['content-security-policy']).toContain("connect-src 'self';");
    expect((await get(`${server.url}/`, { host: 'office.example.edu.cn' })).headers['content-security-policy']).toContain(
      "connect-src 'self' ws://office.example.edu.cn wss://office.example.edu.cn;",
    );
  });

  it('leaves the API, GraphiQL and health where they were', async () => {
    const health = await gql(server, MessagingHealthDocument, {}, server.tokens.admin);
    expect(health.status).toBe(200);
    expect(health.body.data?.messagingHealth.status).toEqual(expect.any(String));
    const graphiql = await get(`${server.url}/graphiql`);
    expect(graphiql.status).toBe(200);
    expect(graphiql.body).toContain('"subscriptionsProtocol":"WS"');
    expect(graphiql.body).not.toContain('<div id="app"></div>');
    expect((await get(`${server.url}/health/live`)).status).toBe(200);
    expect((await get(`${server.url}/graphql/anything`)).body).not.toContain('<div id="app">');
  });

  it('answers 503 at / when the page is not built, and nothing when switched off', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'jiaowu-web-empty-'));
    const unbuilt = await startTestApiServer({ engine, settings: { webRoot: empty } });
    const off = await startTestApiServer({ engine, settings: { webRoot: null } });
    try {
      const response = await get(`${unbuilt.url}/`);
      expect(response.status).toBe(503);
      expect(response.body).toContain('npm run build');
      expect((await get(`${off.url}/`)).status).toBe(404);
      expect((await get(`${off.url}/jobs`)).status).toBe(404);
    } finally {
      await unbuilt.close();
      await off.close();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
