/**
 * The embedded default, as `npm start` runs it: no DATABASE_URL, no RABBITMQ_URL. A
 * real process with its own embedded PostgreSQL in a data folder, the demo term, a
 * development admin token; SIGHUP and SIGTERM stop it cleanly, and a second start finds the data.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { transpiledMain } from './support/transpiled-service';

const ROOT = path.resolve(__dirname, '..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jiaowu-embedded-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Started {
  url: string;
  token: string;
  lines: () => Array<Record<string, unknown>>;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** From the sources (transpiled once for the test run: quick), or exactly as a person runs it: `npm start` (build, then exec node). */
async function startService(pgPort: number, how: 'sources' | 'npm start' = 'sources'): Promise<Started> {
  const [command, args] = how === 'npm start' ? ['npm', ['start']] : [process.execPath, [transpiledMain()]];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: '',
      RABBITMQ_URL: '',
      NODE_ENV: 'development',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
      JIAOWU_DATA_DIR: dataDir,
      EMBEDDED_POSTGRES_PORT: String(pgPort),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // npm start gets its own process group, so the signal can go to the whole group.
    detached: how === 'npm start',
  });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const deadline = Date.now() + 90_000;
  let url: string | undefined;
  while (!url) {
    if (Date.now() > deadline) throw new Error(`service did not start:\n${out}`);
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}:\n${out}`);
    url = lines().find((l) => l.msg === 'HTTP server listening')?.url as string | undefined;
    await new Promise((r) => setTimeout(r, 100));
  }
  const token = lines().find((l) => typeof l.token === 'string')?.token as string;
  return {
    url,
    token,
    lines,
    stop: async (name: NodeJS.Signals = 'SIGTERM') => {
      // `npm start` is stopped as timeout(1) or systemd stop it: SIGTERM to the whole
      // group, so node gets it twice (directly, and forwarded by npm).
      const signal = (name: NodeJS.Signals) => (how === 'npm start' ? process.kill(-child.pid!, name) : child.kill(name));
      signal(name);
      const timer = setTimeout(() => signal('SIGKILL'), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

async function terms(service: Started): Promise<Array<{ code: string; plans: Array<{ status: string }> }>> {
  const response = await fetch(`${service.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${service.token}` },
    body: JSON.stringify({ query: '{ terms { code plans { status } } }' }),
  });
  const body = (await response.json()) as { data: { terms: Array<{ code: string; plans: Array<{ status: string }> }> } };
  return body.data.terms;
}

describe('the embedded default (npm start)', () => {
  it('starts with its own PostgreSQL and demo data, stops cleanly on SIGHUP (its terminal closed) and SIGTERM, and keeps its data', async () => {
    const pgPort = await freePort();
    const first = await startService(pgPort);
    expect(first.token).toMatch(/^eyJ/);
    expect((await fetch(`${first.url}/health/ready`)).status).toBe(200);
    const health = (await (await fetch(`${first.url}/health/messaging`)).json()) as { transport: { name: string } };
    expect(health.transport.name).toBe('in-memory');
    const before = await terms(first);
    expect(before).toHaveLength(1);
    expect(before[0]!.plans.map((p) => p.status)).toEqual(['DRAFT']);
    expect(await first.stop('SIGHUP')).toBe(0);
    expect(first.lines().map((l) => l.msg)).toContain('stopped');
    expect(fs.existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    // The embedded PostgreSQL stopped with the service.
    expect(fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    // The second start is `npm start` itself, stopped by a SIGTERM to its process group:
    // the service must get it (the script execs node) and take the copy npm forwards as
    // the same request, not as a second "exit now".
    const second = await startService(pgPort, 'npm start');
    try {
      expect(second.lines().map((l) => l.msg)).not.toContain('initialising the embedded PostgreSQL');
      expect(await terms(second)).toEqual(before);
    } finally {
      expect(await second.stop()).toBe(0);
    }
    expect(second.lines().map((l) => l.msg)).toContain('stopped');
    expect(second.lines().map((l) => l.msg)).not.toContain('second signal: exiting now');
    expect(fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 180_000);
});
