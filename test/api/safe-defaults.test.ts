/**
 * Safe defaults: a development start listens on this machine only and says so; the
 * GraphiQL page carries the development admin token only for a client on this machine;
 * /health/messaging and /metrics can be restricted and never show a database error's
 * text; docker-compose keeps RabbitMQ on loopback and asks for passwords.
 */
import fs from 'node:fs';
import http_ from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startHttpServer, type RunningHttpServer } from '../../src/api/server';
import { loadConfig, OpsAccess } from '../../src/config';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { startTestApiServer } from './support/api-server';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;

beforeAll(async () => {
  ctx = await createTestDb('api_safe_defaults');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
});
afterAll(async () => {
  await engine?.stop(2_000);
  await ctx?.close();
});

/** A non-loopback IPv4 address of this machine: requests to it come from "another" client. */
const externalAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
const fromElsewhere = (url: string) => url.replace('127.0.0.1', externalAddress!);

function lines(): { logger: pino.Logger; records: () => Record<string, unknown>[] } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  });
  return {
    logger: pino({ level: 'info' }, stream),
    records: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('where a development start listens', () => {
  it('on 127.0.0.1 unless HOST says otherwise (everywhere in production), and it says so', async () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ NODE_ENV: 'test' }).host).toBe('127.0.0.1');
    expect(loadConfig({ NODE_ENV: 'production' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    const log = lines();
    const http = await startHttpServer({
      port: 0,
      host: loadConfig({}).host,
      logger: log.logger,
      engine,
      metricsExporter: new PrometheusExporter({ preventServerStart: true }),
    });
    try {
      expect(log.records().map((r) => r.msg)).toContain('only this machine can connect: set HOST=0.0.0.0 (or an interface address) to accept others');
      if (externalAddress) {
        // Nothing answers on the machine's other address.
        await expect(fetch(`${fromElsewhere(http.url)}/health/live`)).rejects.toThrow();
      }
    } finally {
      await http.close();
    }
  });
});

describe('GraphiQL', () => {
  it('embeds the development token only for a client on this machine talking to it directly', async () => {
    const server = await startTestApiServer({ engine, host: '0.0.0.0', devAdminToken: 'DEV.TOKEN.VALUE' });
    try {
      expect(await (await fetch(`${server.url}/graphiql`)).text()).toContain('Bearer DEV.TOKEN.VALUE');
      // Through a proxy (which may sit on this machine and forward anyone): no token.
      for (const header of [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }] as Record<string, string>[]) {
        const page = await (await fetch(`${server.url}/graphiql`, { headers: header })).text();
        expect(page).not.toContain('DEV.TOKEN.VALUE');
        expect(page).toContain('Bearer <token>');
      }
      if (externalAddress) {
        const page = await fetch(`${fromElsewhere(server.url)}/graphiql`);
        expect(page.status).toBe(200);
        expect(await page.text()).not.toContain('DEV.TOKEN.VALUE');
      }
    } finally {
      await server.close();
    }
  });
});

describe('operator endpoints', () => {
  const serve = (opsAccess: { access: OpsAccess; token?: string }, host = '127.0.0.1', over = engine) =>
    startHttpServer({ port: 0, host, logger: silentLogger, engine: over, metricsExporter: new PrometheusExporter({ preventServerStart: true }), opsAccess });
  const status = async (url: string, headers: Record<string, string> = {}) => (await fetch(url, { headers })).status;

  it('OPS_ENDPOINTS=token: /health/messaging and /metrics need the operator token; live and ready stay public', async () => {
    const config = loadConfig({ OPS_ENDPOINTS: 'token', OPS_TOKEN: 'an-operator-token-of-enough-length' });
    expect(config.ops).toEqual({ access: OpsAccess.TOKEN, token: 'an-operator-token-of-enough-length' });
    expect(() => loadConfig({ OPS_ENDPOINTS: 'token' })).toThrow(/OPS_TOKEN/);
    const http = await serve(config.ops);
    try {
      for (const p of ['/health/messaging', '/metrics']) {
        expect(await status(`${http.url}${p}`)).toBe(401);
        expect(await status(`${http.url}${p}`, { authorization: 'Bearer wrong-token-of-the-same-length-xx' })).toBe(401);
        expect(await status(`${http.url}${p}`, { authorization: `Bearer ${config.ops.token}` })).toBe(200);
      }
      expect(await status(`${http.url}/health/live`)).toBe(200);
      expect(await status(`${http.url}/health/ready`)).toBe(200);
    } finally {
      await http.close();
    }
  });

  it('OPS_ENDPOINTS=loopback: only clients on this machine, not through a proxy', async () => {
    const http = await serve({ access: OpsAccess.LOOPBACK }, '0.0.0.0');
    try {
      expect(await status(`${http.url}/metrics`)).toBe(200);
      expect(await status(`${http.url}/health/messaging`)).toBe(200);
      expect(await status(`${http.url}/metrics`, { 'x-forwarded-for': '203.0.113.9' })).toBe(403);
      // From this machine under another site's name (a page whose name was re-pointed at 127.0.0.1): refused.
      const hostStatus = (host: string) =>
        new Promise<number>((resolve, reject) => http_.get(`${http.url}/metrics`, { headers: { host } }, (res) => (res.resume(), resolve(res.statusCode!))).on('error', reject));
      expect(await hostStatus('rebound.example:8080')).toBe(403);
      expect(await hostStatus('localhost:9464')).toBe(200);
      if (externalAddress) {
        expect(await status(`${fromElsewhere(http.url)}/metrics`)).toBe(403);
        expect(await status(`${fromElsewhere(http.url)}/health/messaging`)).toBe(403);
        expect(await status(`${fromElsewhere(http.url)}/health/live`)).toBe(200);
      }
    } finally {
      await http.close();
    }
  });

  it('/health/messaging and /health/ready show no database error text when the database is unreachable', async () => {
    const port = await closedPort();
    const deadPool = new pg.Pool({ connectionString: `postgres://nobody:hunter2-secret@127.0.0.1:${port}/nothing`, connectionTimeoutMillis: 2_000 });
    deadPool.on('error', () => undefined);
    const dead = buildEngine({ db: { ...ctx.db, pool: deadPool }, registrations: [] });
    const http = await serve({ access: OpsAccess.PUBLIC }, '127.0.0.1', dead);
    try {
      const messaging = await fetch(`${http.url}/health/messaging`);
      expect(messaging.status).toBe(503);
      const body = (await messaging.json()) as { status: string; problems: string[] };
      expect(body.status).toBe('UNHEALTHY');
      expect(body.problems).toContain('database unreachable (ECONNREFUSED)');
      const ready = await fetch(`${http.url}/health/ready`);
      expect(ready.status).toBe(503);
      for (const text of [JSON.stringify(body), await ready.text()]) {
        expect(text).not.toContain(String(port));
        expect(text).not.toMatch(/127\.0\.0\.1|hunter2/);
      }
      // The GraphQL messagingHealth reads the same report.
      expect((await dead.health()).problems.join(' ')).not.toContain(String(port));
    } finally {
      await http.close();
      await deadPool.end();
    }
  });
});

describe('docker-compose.yml', () => {
  const compose = parseYaml(fs.readFileSync(path.resolve(__dirname, '../../docker-compose.yml'), 'utf8')) as {
    services: Record<string, { ports?: string[]; environment?: Record<string, string> }>;
    'x-app-environment': Record<string, string>;
  };

  it('publishes RabbitMQ only on loopback and has no default passwords', () => {
    const rabbit = compose.services.rabbitmq!;
    expect(rabbit.ports!.length).toBeGreaterThan(0);
    for (const port of rabbit.ports!) expect(port).toMatch(/^127\.0\.0\.1:/);
    // `${VAR:?message}` makes compose refuse to start without it; `${VAR:-default}` would not.
    expect(rabbit.environment!.RABBITMQ_DEFAULT_PASS).toMatch(/^\$\{RABBITMQ_PASSWORD:\?/);
    expect(compose.services.postgres!.environment!.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    const text = fs.readFileSync(path.resolve(__dirname, '../../docker-compose.yml'), 'utf8');
    expect(text).not.toMatch(/PASSWORD:-/);
    expect(compose['x-app-environment'].JWT_ISSUER).toMatch(/^\$\{JWT_ISSUER:\?/);
    expect(compose['x-app-environment'].JWT_AUDIENCE).toMatch(/^\$\{JWT_AUDIENCE:\?/);
  });
});
