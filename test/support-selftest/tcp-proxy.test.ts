import net from 'node:net';
import { connect } from 'amqplib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { rabbitAvailable, rabbitUrl, testDatabaseUrl } from '../support/services.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

// An echo server stands in for a real one in the byte-level checks; the last test uses
// the shared PostgreSQL.
let echo: net.Server;
let echoPort: number;

beforeAll(async () => {
  echo = net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

function open(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

function roundTrip(socket: net.Socket, text: string, timeoutMs = 1000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.off('data', onData);
      resolve(undefined);
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      clearTimeout(timer);
      socket.off('data', onData);
      resolve(chunk.toString());
    };
    socket.on('data', onData);
    socket.write(text);
  });
}

describe('tcp proxy', () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await startTcpProxy(echoPort);
  });
  afterAll(async () => {
    await proxy.close();
  });

  it('forwards bytes and cut() drops live connections', async () => {
    const socket = await open(proxy.port);
    socket.on('error', () => undefined);
    expect(await roundTrip(socket, 'ping')).toBe('ping');
    expect(proxy.liveConnections).toBe(1);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    expect(proxy.cut()).toBe(1);
    await closed;
    expect(proxy.liveConnections).toBe(0);
    // and new connections still work
    const next = await open(proxy.port);
    expect(await roundTrip(next, 'again')).toBe('again');
    next.destroy();
  });

  it('pause("refuse") refuses new connections until resume()', async () => {
    await proxy.pause('refuse');
    await expect(open(proxy.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await proxy.resume();
    const socket = await open(proxy.port);
    expect(await roundTrip(socket, 'back')).toBe('back');
    socket.destroy();
  });

  it('pause("hold") stalls new connections, resume() connects them', async () => {
    await proxy.pause('hold');
    const socket = await open(proxy.port);
    expect(await roundTrip(socket, 'held', 300)).toBeUndefined();
    const reply = new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(chunk.toString())));
    await proxy.resume();
    expect(await reply).toBe('held');
    socket.destroy();
  });

  it('freeze() stalls live connections without closing them, thaw() resumes', async () => {
    const socket = await open(proxy.port);
    expect(await roundTrip(socket, 'a')).toBe('a');
    proxy.freeze();
    expect(await roundTrip(socket, 'b', 300)).toBeUndefined();
    const reply = new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(chunk.toString())));
    proxy.thaw();
    expect(await reply).toBe('b');
    socket.destroy();
  });

  it('severs a real PostgreSQL session without touching the server', async () => {
    const target = new URL(testDatabaseUrl());
    const pgProxy = await startTcpProxy(Number(target.port || 5432), target.hostname);
    try {
      const client = new pg.Client({ connectionString: pgProxy.urlFor(testDatabaseUrl()) });
      const failed = new Promise<Error>((resolve) => client.once('error', resolve));
      await client.connect();
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      pgProxy.cut();
      expect(await failed).toBeInstanceOf(Error);
      await expect(client.query('SELECT 1')).rejects.toThrow();
      // the server itself is fine
      const direct = new pg.Client({ connectionString: testDatabaseUrl() });
      await direct.connect();
      expect((await direct.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
      await direct.end();
    } finally {
      await pgProxy.close();
    }
  });

  it.runIf(inject('rabbitAvailable'))('severs an AMQP connection to the shared broker and refuses reconnects while paused', async () => {
    const target = new URL(rabbitUrl());
    const amqpProxy = await startTcpProxy(Number(target.port || 5672), target.hostname);
    try {
      const url = amqpProxy.urlFor(rabbitUrl());
      const model = await connect(url);
      model.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => model.once('close', () => resolve()));
      await model.createChannel();
      await amqpProxy.pause('refuse');
      expect(amqpProxy.cut()).toBe(1);
      await closed;
      expect(await rabbitAvailable(url)).toBe(false);
      await amqpProxy.resume();
      expect(await rabbitAvailable(url)).toBe(true);
      expect(await rabbitAvailable()).toBe(true); // the broker never noticed
    } finally {
      await amqpProxy.close();
    }
  });
});
