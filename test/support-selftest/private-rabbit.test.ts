import { connect } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  privateRabbitSupported,
  reapOrphanedPrivateRabbits,
  startPrivateRabbit,
  type PrivateRabbit,
} from '../support/private-rabbit.js';
import { rabbitAvailable, tcpAnswers } from '../support/services.js';

// Needs Debian's rabbitmq-server and root; under CI both are there, so no skip there.
const supported = privateRabbitSupported() && process.getuid?.() === 0;
if (!supported && process.env.CI === 'true') throw new Error('private RabbitMQ unsupported on a CI machine');

describe.runIf(supported)('private RabbitMQ node', () => {
  let rabbit: PrivateRabbit;
  const sharedWasUp = rabbitAvailable();

  beforeAll(async () => {
    const started = Date.now();
    rabbit = await startPrivateRabbit();
    console.info(`private RabbitMQ ${rabbit.nodeName} on ${rabbit.port} started in ${Date.now() - started} ms`);
  });
  afterAll(async () => {
    await rabbit?.destroy();
  });

  it('accepts AMQP clients, carries messages across a restart, and refuses them while stopped', async () => {
    expect(rabbit.port).not.toBe(5672);
    expect(rabbit.url).toBe(`amqp://guest:guest@127.0.0.1:${rabbit.port}`);

    const first = await connect(rabbit.url);
    const closed = new Promise<void>((resolve) => first.once('close', () => resolve()));
    first.on('error', () => undefined);
    const channel = await first.createConfirmChannel();
    await channel.assertQueue('selftest.durable', { durable: true });
    channel.sendToQueue('selftest.durable', Buffer.from('survives'), { persistent: true });
    await channel.waitForConfirms();

    let started = Date.now();
    await rabbit.stop();
    console.info(`private RabbitMQ stopped in ${Date.now() - started} ms`);
    // A clean stop (SIGTERM is RabbitMQ's own shutdown): the persistent message store was closed, not cut off.
    expect(await rabbit.logTail(40)).toMatch(/SIGTERM received - shutting down[\s\S]*msg_store_persistent' is stopped/);
    await closed; // the broker going away closes the client's connection
    expect(rabbit.running).toBe(false);
    expect(await tcpAnswers('127.0.0.1', rabbit.port, 500)).toBe(false);
    await expect(connect(rabbit.url, { timeout: 2000 })).rejects.toThrow();

    started = Date.now();
    await rabbit.start();
    console.info(`private RabbitMQ restarted in ${Date.now() - started} ms`);
    const second = await connect(rabbit.url);
    try {
      const again = await second.createChannel();
      const message = await again.get('selftest.durable', { noAck: true });
      expect(message && message.content.toString()).toBe('survives');
    } finally {
      await second.close();
    }
  });

  it('can be killed like a crash and started again', async () => {
    const client = await connect(rabbit.url);
    client.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    await rabbit.kill();
    await closed;
    expect(await tcpAnswers('127.0.0.1', rabbit.port, 500)).toBe(false);
    await rabbit.start();
    expect(await rabbitAvailable(rabbit.url)).toBe(true);
  });

  it('left the machine’s shared broker as it was', async () => {
    expect(await rabbitAvailable()).toBe(await sharedWasUp);
  });

  it('is reaped once the process that started it is gone, and only then', async () => {
    expect(reapOrphanedPrivateRabbits()).toBe(0); // we are alive: nothing to reap
    expect(await tcpAnswers('127.0.0.1', rabbit.port, 500)).toBe(true);
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    writeFileSync(path.join(rabbit.baseDir, 'owner'), dead.stdout);
    expect(reapOrphanedPrivateRabbits()).toBe(1);
    expect(existsSync(rabbit.baseDir)).toBe(false);
    const deadline = Date.now() + 10_000;
    while ((await tcpAnswers('127.0.0.1', rabbit.port, 500)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await tcpAnswers('127.0.0.1', rabbit.port, 500)).toBe(false);
  });
});
