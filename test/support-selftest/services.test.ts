import { connect } from 'amqplib';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import {
  createTestDatabase,
  deleteRabbitObjects,
  dropStaleTestDatabases,
  postgresAvailable,
  rabbitAvailable,
  rabbitUrl,
  requireRabbit,
  testDatabaseUrl,
  trackExchange,
  trackQueue,
  uniquePrefix,
} from '../support/services.js';

describe('services', () => {
  it('the global setup told the workers whether RabbitMQ answers', async () => {
    expect(['0', '1']).toContain(process.env.JIAOWU_TEST_RABBIT);
    expect(inject('rabbitAvailable')).toBe(process.env.JIAOWU_TEST_RABBIT === '1');
    expect(await rabbitAvailable()).toBe(inject('rabbitAvailable'));
  });

  it('rabbitAvailable() and postgresAvailable() say no for a closed port, quickly', async () => {
    const started = Date.now();
    expect(await rabbitAvailable('amqp://guest:guest@127.0.0.1:1')).toBe(false);
    expect(await postgresAvailable('postgres://postgres@127.0.0.1:1/postgres')).toBe(false);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await postgresAvailable()).toBe(true);
  });

  it('rabbitAvailable() says no for a port that speaks something other than AMQP', async () => {
    const port = Number(new URL(testDatabaseUrl()).port || 5432);
    expect(await rabbitAvailable(`amqp://guest:guest@127.0.0.1:${port}`)).toBe(false);
  });

  it('requireRabbit() fails under CI=true and warns otherwise when the broker is missing', () => {
    const saved = { flag: process.env.JIAOWU_TEST_RABBIT, ci: process.env.CI };
    try {
      process.env.JIAOWU_TEST_RABBIT = '0';
      process.env.CI = 'true';
      expect(() => requireRabbit('some.test.ts')).toThrow(/some\.test\.ts.*CI=true/);
      process.env.CI = 'false';
      expect(requireRabbit()).toBe(false);
      process.env.JIAOWU_TEST_RABBIT = '1';
      expect(requireRabbit()).toBe(true);
      // without the global setup's answer it probes the broker itself
      delete process.env.JIAOWU_TEST_RABBIT;
      process.env.CI = 'false';
      expect(requireRabbit()).toBe(inject('rabbitAvailable'));
    } finally {
      process.env.JIAOWU_TEST_RABBIT = saved.flag;
      if (saved.ci === undefined) delete process.env.CI;
      else process.env.CI = saved.ci;
    }
  });

  it('createTestDatabase() makes a fresh database and drop() removes it even with open sessions', async () => {
    const db = await createTestDatabase('selftest services');
    expect(db.name).toMatch(/^t_selftest_services_/);
    const client = new pg.Client({ connectionString: db.url });
    client.on('error', () => undefined);
    await client.connect();
    expect((await client.query('SELECT current_database() AS name')).rows[0].name).toBe(db.name);
    await db.drop();
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    const left = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db.name]);
    await admin.end();
    expect(left.rowCount).toBe(0);
    await client.end().catch(() => undefined);
  });

  it('dropStaleTestDatabases() drops only test databases older than the limit', async () => {
    const fresh = await createTestDatabase('selftest fresh');
    const oldName = `t_selftest_old_${(Date.now() - 7 * 3600_000).toString(36)}_0123abcd`;
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${oldName}"`);
      const dropped = await dropStaleTestDatabases();
      expect(dropped).toContain(oldName);
      expect(dropped).not.toContain(fresh.name);
      const left = await admin.query('SELECT datname FROM pg_database WHERE datname = ANY($1)', [[oldName, fresh.name]]);
      expect(left.rows.map((row) => row.datname)).toEqual([fresh.name]);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${oldName}"`);
      await admin.end();
      await fresh.drop();
    }
  });

  it.runIf(inject('rabbitAvailable'))('deleteRabbitObjects() removes the tracked queues and exchanges of a prefix', async () => {
    const prefix = uniquePrefix('services selftest');
    expect(prefix).toMatch(/^t_services_selftest_[0-9a-f]{8}$/);
    expect(uniquePrefix('x')).not.toBe(uniquePrefix('x'));
    const model = await connect(rabbitUrl());
    model.on('error', () => undefined);
    try {
      const channel = await model.createChannel();
      const queue = trackQueue(`${prefix}.work`);
      const exchange = trackExchange(`${prefix}.events`);
      await channel.assertQueue(queue, { durable: false });
      await channel.assertExchange(exchange, 'topic', { durable: false });
      const other = trackQueue(`${uniquePrefix('other')}.work`);
      await channel.assertQueue(other, { durable: false, autoDelete: false });

      const deleted = await deleteRabbitObjects(prefix);
      expect(deleted).toEqual({ queues: [queue], exchanges: [exchange] });
      const probe = await model.createChannel();
      probe.on('error', () => undefined);
      await expect(probe.checkQueue(queue)).rejects.toThrow(/404|NOT_FOUND/);
      const probe2 = await model.createChannel();
      probe2.on('error', () => undefined);
      await expect(probe2.checkExchange(exchange)).rejects.toThrow(/404|NOT_FOUND/);
      const probe3 = await model.createChannel();
      expect((await probe3.checkQueue(other)).queue).toBe(other);
      await probe3.deleteQueue(other);
    } finally {
      await model.close().catch(() => undefined);
    }
  });
});
