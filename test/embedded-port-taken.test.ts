/**
 * The embedded default when its PostgreSQL port is taken (a second checkout, a stale
 * server): the service must stop at once with a message that names the port and says
 * how to pick another — not hang, and not "failed to start: undefined".
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { transpiledMain } from './support/transpiled-service';

const ROOT = path.resolve(__dirname, '..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jiaowu-port-taken-'));
const holders: net.Server[] = [];
afterAll(async () => {
  await Promise.all(holders.map((server) => new Promise((resolve) => server.close(resolve))));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Listens on every address of a free port, as another PostgreSQL would. */
async function occupyPort(): Promise<number> {
  const listen = (host: string, port: number) =>
    new Promise<net.Server>((resolve, reject) => {
      const server = net.createServer((socket) => socket.destroy());
      server.once('error', reject);
      server.listen({ port, host }, () => resolve(server));
    });
  // '::' also takes IPv4 on a dual-stack host; without IPv6, 0.0.0.0.
  const server = await listen('::', 0).catch(() => listen('0.0.0.0', 0));
  holders.push(server);
  return (server.address() as net.AddressInfo).port;
}

it('names the port and how to pick another, and exits 1', async () => {
  const port = await occupyPort();
  const child = spawn(process.execPath, [transpiledMain()], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: '',
      RABBITMQ_URL: '',
      NODE_ENV: 'development',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'warn',
      JIAOWU_DATA_DIR: dataDir,
      EMBEDDED_POSTGRES_PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => {
    // A start that hangs instead of failing is the fault too.
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  expect(code, stderr).toBe(1);
  expect(stderr).toContain(`jiaowu-jobs failed to start: The embedded PostgreSQL cannot start: port ${port} is already in use.`);
  expect(stderr).toContain('EMBEDDED_POSTGRES_PORT=<port>');
  expect(stderr).toContain('DATABASE_URL');
  expect(stderr).not.toMatch(/undefined|\n\s+at /);
}, 120_000);
