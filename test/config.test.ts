import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, Role } from '../src/config';
import { JobKind } from '../src/job-kinds';
import { transpiledMain } from './support/transpiled-service';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('defaults, with nothing set', () => {
    const config = loadConfig({});
    expect(config.nodeEnv).toBe('development');
    expect(config.port).toBe(4000);
    expect(config.host).toBe('127.0.0.1'); // this machine only, outside production
    expect([...config.roles].sort()).toEqual([Role.API, Role.WORKER]);
    expect(config.databaseUrl).toBeUndefined(); // → the embedded PostgreSQL
    expect(config.rabbitmqUrl).toBeUndefined(); // → the in-memory transport
    expect(config.dataDir).toBe(path.resolve('.data'));
    expect(config.logLevel).toBe('info');
    expect(config.logFormat).toBe('pretty');
    expect(config.engine.maintenanceIntervalSeconds).toBe(60);
    expect(config.engine.retentionDays).toBe(14);
    expect(config.engine.cleanupBatchSize).toBe(500);
    expect(config.engine.leaseSeconds).toBe(60);
    expect(config.engine.attemptLimit).toBeGreaterThanOrEqual(1);
    for (const kind of Object.values(JobKind)) {
      const consumers = config.engine.kinds[kind].consumers;
      expect(consumers).toBeGreaterThanOrEqual(1);
      expect(consumers).toBeLessThanOrEqual(16);
    }
  });

  it('production switches to JSON logs and no demo data, GraphiQL or introspection', () => {
    const config = loadConfig({ NODE_ENV: 'production' });
    expect(config.logFormat).toBe('json');
    expect(config.loadDemoData).toBe(false);
    expect(config.graphql.graphiql).toBe(false);
    expect(config.graphql.introspection).toBe(false);
  });

  it('takes good values', () => {
    const config = loadConfig({
      PORT: '8080',
      ROLE: 'worker',
      DATABASE_URL: 'postgresql://u:p@db:5432/jiaowu',
      RABBITMQ_URL: 'amqp://guest:guest@mq:5672',
      LOG_LEVEL: 'debug',
      JOB_CONSUMERS_AUTOMATIC_SCHEDULE: '16',
      JOB_CONSUMERS_SCHEDULE_PUBLISH: '1',
      JOB_CONSUMERS_MAKEUP_EXAM_AUTO: '7',
      JOB_PREFETCH_SCHEDULE_PUBLISH: '32',
      JOB_CLAIM_AHEAD_SCHEDULE_PUBLISH: '24',
      JOBS_PER_MESSAGE_SCHEDULE_PUBLISH: '16',
      MAINTENANCE_INTERVAL_SECONDS: '15',
    });
    expect(config.port).toBe(8080);
    expect([...config.roles]).toEqual([Role.WORKER]);
    expect(config.databaseUrl).toBe('postgresql://u:p@db:5432/jiaowu');
    expect(config.rabbitmqUrl).toBe('amqp://guest:guest@mq:5672');
    expect(config.logLevel).toBe('debug');
    expect(config.engine.kinds[JobKind.AUTOMATIC_SCHEDULE].consumers).toBe(16);
    expect(config.engine.kinds[JobKind.SCHEDULE_PUBLISH].consumers).toBe(1);
    expect(config.engine.kinds[JobKind.MAKEUP_EXAM_AUTO].consumers).toBe(7);
    expect(config.engine.kinds[JobKind.SCHEDULE_PUBLISH].prefetch).toBe(32);
    expect(config.engine.kinds[JobKind.AUTOMATIC_SCHEDULE].prefetch).toBe(0);
    expect(config.engine.kinds[JobKind.SCHEDULE_PUBLISH].claimAhead).toBe(24);
    expect(config.engine.kinds[JobKind.AUTOMATIC_SCHEDULE].claimAhead).toBe(0);
    expect(config.engine.kinds[JobKind.SCHEDULE_PUBLISH].jobsPerMessage).toBe(16);
    expect(config.engine.kinds[JobKind.AUTOMATIC_SCHEDULE].jobsPerMessage).toBe(1);
    expect(config.engine.maintenanceIntervalSeconds).toBe(15);
    expect([...loadConfig({ ROLE: 'api,worker' }).roles].sort()).toEqual([Role.API, Role.WORKER]);
  });

  it('refuses an API-only process without RABBITMQ_URL: the in-memory transport carries its jobs to no worker', () => {
    const error = configError({ ROLE: 'api' });
    expect(error.variable).toBe('RABBITMQ_URL');
    expect(error.message).toMatch(/required with ROLE=api: the in-memory transport carries jobs within one process only/);
    expect([...loadConfig({ ROLE: 'api', RABBITMQ_URL: 'amqp://mq:5672' }).roles]).toEqual([Role.API]);
    // A worker on it sends and runs what waits in the database; so does the default, one process of both roles.
    expect([...loadConfig({ ROLE: 'worker' }).roles]).toEqual([Role.WORKER]);
    expect(loadConfig({}).rabbitmqUrl).toBeUndefined();
  });

  const bad: Array<[string, string, RegExp]> = [
    ['PORT', 'abc', /integer from 0 to 65535/],
    ['JOB_CONSUMERS_AUTOMATIC_SCHEDULE', '0', /integer from 1 to 16/],
    ['JOB_CONSUMERS_AUTOMATIC_SCHEDULE', '17', /integer from 1 to 16/],
    ['JOB_CONSUMERS_MAKEUP_EXAM_AUTO', '2.5', /integer from 1 to 16/],
    ['JOB_PREFETCH_MAKEUP_EXAM_AUTO', '-1', /integer from 0 to 1000/],
    ['JOB_PREFETCH_MAKEUP_EXAM_AUTO', '1001', /integer from 0 to 1000/],
    ['JOB_CLAIM_AHEAD_MAKEUP_EXAM_AUTO', '-1', /integer from 0 to 64/],
    ['JOB_CLAIM_AHEAD_MAKEUP_EXAM_AUTO', '65', /integer from 0 to 64/],
    ['JOBS_PER_MESSAGE_MAKEUP_EXAM_AUTO', '0', /integer from 1 to 64/],
    ['JOBS_PER_MESSAGE_MAKEUP_EXAM_AUTO', '65', /integer from 1 to 64/],
    ['ROLE', 'boss', /api, worker/],
    ['DATABASE_URL', 'mysql://x', /postgres/],
    ['RABBITMQ_URL', 'http://mq', /amqp/],
    ['LOG_LEVEL', 'loud', /info/],
    ['NODE_ENV', 'staging', /production/],
  ];
  it.each(bad)('%s=%s is refused with a message naming the variable, the value and what is allowed', (variable, value, allowed) => {
    const error = configError({ [variable]: value });
    expect(error.variable).toBe(variable);
    expect(error.value).toBe(value);
    expect(error.message).toContain(variable);
    expect(error.message).toContain(value);
    expect(error.message).toMatch(allowed);
    expect(error.message).toMatch(/allowed/);
    expect(error.message).not.toContain('\n');
  });

  it.each([
    ['DATABASE_URL', 'postgres://jiaowu:Pa55-w0rd@db:99999/jiaowu'],
    ['DATABASE_URL', 'mysql://jiaowu:Pa55-w0rd@db/jiaowu'],
    ['DATABASE_URL', 'postgres://jiaowu:Pa55 w0rd@/#@db:5432 /jiaowu'],
    ['DATABASE_URL', 'mysql://db:5432/jiaowu?user=jiaowu&password=Pa55-w0rd&x=1'],
    ['RABBITMQ_URL', 'amqp://jiaowu:Pa55-w0rd@mq:5672:1'],
    ['RABBITMQ_URL', 'http://jiaowu:Pa55-w0rd@mq:5672'],
  ])('%s=%s is refused without its password in the message', (variable, value) => {
    const error = configError({ [variable]: value });
    expect(error.variable).toBe(variable);
    expect(error.message).not.toContain('Pa55');
    expect(error.value).not.toContain('Pa55');
    expect(error.message).toContain('***');
  });

  it('JOB_LEASE_SECONDS: at least 15, three heartbeats (a shorter lease would be renewed only after it ran out)', () => {
    expect(configError({ JOB_LEASE_SECONDS: '14' }).message).toMatch(/^Invalid configuration: JOB_LEASE_SECONDS="14"; allowed: an integer from 15 to 86400/);
    expect(loadConfig({ JOB_LEASE_SECONDS: '15' }).engine.leaseSeconds).toBe(15);
  });

  it('JOB_RETRY_MAX_MS below JOB_RETRY_BASE_MS is refused', () => {
    const error = configError({ JOB_RETRY_BASE_MS: '5000', JOB_RETRY_MAX_MS: '1000' });
    expect(error.variable).toBe('JOB_RETRY_MAX_MS');
  });

  it('OUTBOX_PUBLISHED_MAX_WAIT_SECONDS: 900 by default, refused below OUTBOX_REPUBLISH_AFTER_SECONDS', () => {
    expect(loadConfig({}).engine.publishedMaxWaitSeconds).toBe(900);
    expect(loadConfig({ OUTBOX_PUBLISHED_MAX_WAIT_SECONDS: '3600' }).engine.publishedMaxWaitSeconds).toBe(3600);
    const error = configError({ OUTBOX_REPUBLISH_AFTER_SECONDS: '600', OUTBOX_PUBLISHED_MAX_WAIT_SECONDS: '300' });
    expect(error.variable).toBe('OUTBOX_PUBLISHED_MAX_WAIT_SECONDS');
    expect(error.message).toMatch(/at least OUTBOX_REPUBLISH_AFTER_SECONDS \(600\)/);
  });

  it('HTTP connection bounds: defaults, taken values, a request timeout under the headers timeout refused', () => {
    expect(loadConfig({}).httpConnections).toEqual({
      maxPerAddress: 256,
      maxTotal: 10_000,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 120_000,
      sendTimeoutMs: 60_000,
      trustedProxies: [],
    });
    expect(
      loadConfig({
        HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1000',
        HTTP_MAX_CONNECTIONS: '50000',
        HTTP_HEADERS_TIMEOUT_MS: '5000',
        HTTP_REQUEST_TIMEOUT_MS: '600000',
        HTTP_SEND_TIMEOUT_MS: '30000',
      }).httpConnections,
    ).toEqual({ maxPerAddress: 1000, maxTotal: 50_000, headersTimeoutMs: 5_000, requestTimeoutMs: 600_000, sendTimeoutMs: 30_000, trustedProxies: [] });
    expect(configError({ HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0' }).variable).toBe('HTTP_MAX_CONNECTIONS_PER_ADDRESS');
    expect(configError({ HTTP_SEND_TIMEOUT_MS: '999' }).variable).toBe('HTTP_SEND_TIMEOUT_MS');
    const error = configError({ HTTP_HEADERS_TIMEOUT_MS: '30000', HTTP_REQUEST_TIMEOUT_MS: '20000' });
    expect(error.variable).toBe('HTTP_REQUEST_TIMEOUT_MS');
    expect(error.message).toMatch(/at least HTTP_HEADERS_TIMEOUT_MS \(30000\)/);
  });

  it('OPS_RATE_PER_ADDRESS and OPS_RATE_BURST bound requests to the operator endpoints per address', () => {
    expect(loadConfig({}).opsRate).toEqual({ perSecond: 10, burst: 100 });
    expect(loadConfig({ OPS_RATE_PER_ADDRESS: '50', OPS_RATE_BURST: '0' }).opsRate).toEqual({ perSecond: 50, burst: 0 });
    expect(configError({ OPS_RATE_PER_ADDRESS: '0' }).variable).toBe('OPS_RATE_PER_ADDRESS');
    expect(configError({ OPS_RATE_BURST: '-1' }).variable).toBe('OPS_RATE_BURST');
  });

  it("HTTP_MAX_IN_FLIGHT_PER_CALLER bounds one caller's HTTP operations in flight at once", () => {
    expect(loadConfig({}).limits.http.maxInFlightPerCaller).toBe(64);
    expect(loadConfig({ HTTP_MAX_IN_FLIGHT_PER_CALLER: '8' }).limits.http.maxInFlightPerCaller).toBe(8);
    expect(configError({ HTTP_MAX_IN_FLIGHT_PER_CALLER: '0' }).variable).toBe('HTTP_MAX_IN_FLIGHT_PER_CALLER');
  });

  it('WS_MAX_PENDING_EVENTS bounds what waits for a subscription whose client falls behind', () => {
    expect(loadConfig({}).limits.socket.maxPendingEvents).toBe(10_000);
    expect(loadConfig({ WS_MAX_PENDING_EVENTS: '500' }).limits.socket.maxPendingEvents).toBe(500);
    expect(configError({ WS_MAX_PENDING_EVENTS: '9' }).variable).toBe('WS_MAX_PENDING_EVENTS');
  });

  it('TRUSTED_PROXIES: nobody by default; addresses and CIDR ranges of both families; anything else refused', () => {
    expect(loadConfig({ TRUSTED_PROXIES: ' 10.0.0.5, 10.1.0.0/16 ,fd00::/8,::1 ' }).httpConnections.trustedProxies).toEqual(['10.0.0.5', '10.1.0.0/16', 'fd00::/8', '::1']);
    for (const bad of ['nginx', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/1', '10.0.0.0/', '10.0.0.0/-1', '*']) {
      const error = configError({ TRUSTED_PROXIES: bad });
      expect(error.variable).toBe('TRUSTED_PROXIES');
      expect(error.message).toMatch(/IP addresses or CIDR ranges/);
    }
  });
});

describe('the process with a bad setting', () => {
  function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [transpiledMain()], {
        cwd: path.resolve(__dirname, '..'),
        env: { ...process.env, NODE_ENV: 'development', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.stdout.on('data', (chunk) => (stdout += chunk));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`main did not exit; stderr: ${stderr}`));
      }, 45_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr, stdout });
      });
    });
  }

  it('exits with code 2 and one line on stderr naming the variable', async () => {
    const result = await runMain({ PORT: 'abc' });
    expect(result.code).toBe(2);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe('Invalid configuration: PORT="abc"; allowed: an integer from 0 to 65535');
    expect(result.stdout).toBe('');
  }, 60_000);

  it('never prints the password of an invalid DATABASE_URL', async () => {
    const result = await runMain({ DATABASE_URL: 'postgres://jiaowu:Pa55-w0rd@db:99999/jiaowu' });
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd()).toBe(
      'Invalid configuration: DATABASE_URL="postgres://jiaowu:***@db:99999/jiaowu"; allowed: a URL starting with postgres: or postgresql:',
    );
    expect(result.stdout).toBe('');
  }, 60_000);

  it('refuses a production start without JWT_ISSUER in one line', async () => {
    // Nothing listens on port 1: were the setting accepted, the start would fail at once on the database instead.
    const result = await runMain({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), JWT_AUDIENCE: 'jiaowu', JWT_ISSUER: '', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', RABBITMQ_URL: '' });
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      `Invalid configuration: JWT_ISSUER=""; allowed: the issuer (iss) this service's tokens carry: required in production`,
    ]);
  }, 60_000);
});

describe('subscription re-read settings', () => {
  it('default to a 3 s sweep of at most 1000 jobs per query, take good values and refuse others naming the variable', () => {
    expect(loadConfig({}).graphql).toMatchObject({ subscriptionResyncIntervalMs: 3_000, subscriptionResyncBatchSize: 1_000 });
    expect(loadConfig({ SUBSCRIPTION_RESYNC_INTERVAL_MS: '250', SUBSCRIPTION_RESYNC_BATCH_SIZE: '50' }).graphql).toMatchObject({
      subscriptionResyncIntervalMs: 250,
      subscriptionResyncBatchSize: 50,
    });
    const interval = configError({ SUBSCRIPTION_RESYNC_INTERVAL_MS: '0' });
    expect(interval.variable).toBe('SUBSCRIPTION_RESYNC_INTERVAL_MS');
    expect(interval.message).toMatch(/from 100 to 600000/);
    const batch = configError({ SUBSCRIPTION_RESYNC_BATCH_SIZE: '10001' });
    expect(batch.variable).toBe('SUBSCRIPTION_RESYNC_BATCH_SIZE');
    expect(batch.message).toMatch(/from 1 to 10000/);
  });
});

describe("the README's configuration table", () => {
  it('names every variable src/config.ts reads, and the per-kind ones for every kind', () => {
    const source = fs.readFileSync(path.resolve(__dirname, '../src/config.ts'), 'utf8');
    const readme = fs.readFileSync(path.resolve(__dirname, '../README.md'), 'utf8');
    const documented = new Set([...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]));
    const read = [...source.matchAll(/\(env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]!);
    expect(read.length).toBeGreaterThan(50);
    const perKind = Object.values(JobKind).map((kind) => `JOB_CONSUMERS_${kind}`);
    expect([...new Set([...read, ...perKind])].filter((name) => !documented.has(name))).toEqual([]);
  });
});
