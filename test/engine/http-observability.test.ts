/** /health/* and /metrics over real HTTP, after real jobs ran. */
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import nodeHttp from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../../src/api/server';
import type { JobEngine } from '../../src/engine/engine';
import { HEALTH_RESULT_REUSE_MS } from '../../src/engine/health';
import { silentLogger } from '../../src/engine/logger';
import { EngineMetrics, METER_NAME } from '../../src/engine/metrics';
import { PermanentJobError } from '../../src/engine/registry';
import { withinOneWindow } from '../api/support/one-window';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let http: RunningHttpServer;
let meterProvider: MeterProvider;
let releaseHeld: () => void = () => undefined;
const held = new Promise<void>((resolve) => (releaseHeld = resolve));

beforeAll(async () => {
  ctx = await createTestDb('http_observability');
  const exporter = new PrometheusExporter({ preventServerStart: true });
  meterProvider = new MeterProvider({ readers: [exporter] });
  engine = buildEngine({
    db: ctx.db,
    registrations: [
      { kind: 'OK', defaults: { consumers: 2 }, processor: async () => 'fine' },
      { kind: 'BAD', defaults: { consumers: 1 }, processor: async () => Promise.reject(new PermanentJobError('bad data')) },
      { kind: 'HELD', defaults: { consumers: 3 }, processor: async () => held },
    ],
    metrics: new EngineMetrics(meterProvider.getMeter(METER_NAME)),
  });
  await engine.start();
  // A lavish rate for the operator endpoints: these tests poll them (their limit has its own test below).
  http = await startHttpServer({ port: 0, host: '127.0.0.1', logger: silentLogger, engine, metricsExporter: exporter, opsRate: { perSecond: 100_000, burst: 0 } });
});

afterAll(async () => {
  releaseHeld();
  await http?.close();
  await engine?.stop(1_000);
  await meterProvider?.shutdown();
  await ctx?.close();
});

/** The /metrics text once it matches `pattern` (polled; fails after 10 s). */
async function metricsOnce(pattern: RegExp): Promise<string> {
  let text = '';
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
    text = await (await fetch(`${http.url}/metrics`)).text();
    if (pattern.test(text)) break;
  }
  expect(text).toMatch(pattern);
  return text;
}

describe('health and metrics endpoints', () => {
  it('live, ready and messaging answer with the documented shapes', async () => {
    const live = await fetch(`${http.url}/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'UP' });
    const ready = await fetch(`${http.url}/health/ready`);
    expect(ready.status).toBe(200);
    // Which dependency is down, and no more (it answers anyone): no parked count.
    expect(await ready.json()).toEqual({ status: 'READY', database: { reachable: true }, transport: { name: 'in-memory', connection: 'connected' } });
    const messaging = await (await fetch(`${http.url}/health/messaging`)).json();
    expect(messaging).toMatchObject({
      status: 'HEALTHY',
      backlog: { byState: { PENDING: 0, PUBLISHING: 0, PUBLISHED: 0, PROCESSING: 0 } },
      expiredLeases: 0,
      transport: { name: 'in-memory', durable: false },
    });
  });

  it('a flood of /health/ready and /health/messaging runs one check at a time, its result reused for HEALTH_RESULT_REUSE_MS', async () => {
    const messaging = async () => ((await (await fetch(`${http.url}/health/messaging`)).json()) as { checkedAt: string }).checkedAt;
    const started = Date.now();
    const [checkedAts, readies] = await Promise.all([
      Promise.all(Array.from({ length: 100 }, messaging)),
      Promise.all(Array.from({ length: 100 }, () => fetch(`${http.url}/health/ready`).then((r) => r.status))),
    ]);
    const elapsedMs = Date.now() - started;
    expect(readies.every((status) => status === 200)).toBe(true);
    // One check, and one more per HEALTH_RESULT_REUSE_MS the flood lasted: not one per request.
    expect(new Set(checkedAts).size).toBeLessThanOrEqual(1 + Math.floor(elapsedMs / HEALTH_RESULT_REUSE_MS));

    // An older result is not reused: the next request checks again.
    const last = await messaging();
    await new Promise((resolve) => setTimeout(resolve, HEALTH_RESULT_REUSE_MS + 100));
    expect(Date.parse(await messaging())).toBeGreaterThan(Date.parse(last));
  });

  it('the operator endpoints answer an address beyond its rate 429 with Retry-After; another address is served', async () => {
    const PER_SECOND = 3;
    const limited = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
      engine,
      metricsExporter: new PrometheusExporter({ preventServerStart: true }),
      opsRate: { perSecond: PER_SECOND, burst: 0 },
    });
    const port = Number(new URL(limited.url).port);
    const get = (path: string, localAddress: string) =>
      new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
        const request = nodeHttp.get({ host: '127.0.0.1', port, path, localAddress, agent: false }, (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] as string | undefined, body }));
        });
        request.on('error', reject);
      });
    try {
      const addresses = ['127.0.0.41', '127.0.0.42', '127.0.0.43', '127.0.0.44', '127.0.0.45'].map((a) => [a]);
      // Live, ready and metrics share one allowance: PER_SECOND of them in a second, the next refused.
      const answers = await withinOneWindow(addresses, async ([from]) => [
        await get('/health/live', from!),
        await get('/health/ready', from!),
        await get('/metrics', from!),
        await get('/health/live', from!),
      ]);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
      expect(Number(answers[3]!.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(answers[3]!.body)).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
      expect((await get('/health/live', '127.0.0.46')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('exports the jiaowu.background_jobs meter for Prometheus', async () => {
    const ok = await engine.enqueue({ kind: 'OK', input: {} });
    const bad = await engine.enqueue({ kind: 'BAD', input: {} });
    await waitForJob(engine, ok.job.id);
    await waitForJob(engine, bad.job.id);
    await engine.retentionCleaner.runOnce();
    const text = await (await fetch(`${http.url}/metrics`)).text();
    expect(text).toMatch(/jiaowu_background_jobs_published_total(\{[^}]*\})? [1-9]/);
    expect(text).toMatch(/jiaowu_background_jobs_processed_total\{[^}]*kind="OK"[^}]*outcome="completed"[^}]*\} 1/);
    expect(text).toMatch(/jiaowu_background_jobs_processed_total\{[^}]*kind="BAD"[^}]*outcome="failed"[^}]*\} 1/);
    expect(text).toMatch(/jiaowu_background_jobs_publish_duration(_seconds)?_count/);
    expect(text).toMatch(/jiaowu_background_jobs_processing_duration(_seconds)?_count\{[^}]*kind="OK"/);
  });

  it('gauges what runs in this process now', async () => {
    const jobs = await Promise.all([0, 1].map(() => engine.enqueue({ kind: 'HELD', input: {} })));
    await Promise.all(jobs.map(({ job }) => waitForJob(engine, job.id, (j) => j.status === 'RUNNING')));
    const during = await (await fetch(`${http.url}/metrics`)).text();
    expect(during).toMatch(/jiaowu_background_jobs_running\{[^}]*kind="HELD"[^}]*\} 2\b/);
    expect(during).toMatch(/jiaowu_background_jobs_running\{[^}]*kind="OK"[^}]*\} 0\b/);
    expect(during).toMatch(/jiaowu_background_jobs_completions_pending(\{[^}]*\})? 0\b/);
    // Hold the job rows, so that once the processors return their commits must wait.
    const blocker = await ctx.db.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM jobs WHERE id = ANY($1::uuid[]) FOR UPDATE', [jobs.map(({ job }) => job.id)]);
    releaseHeld();
    const committing = await metricsOnce(/jiaowu_background_jobs_completions_pending(\{[^}]*\})? 2\b/);
    expect(committing).toMatch(/jiaowu_background_jobs_running\{[^}]*kind="HELD"[^}]*\} 0\b/);
    await blocker.query('COMMIT');
    blocker.release();
    await Promise.all(jobs.map(({ job }) => waitForJob(engine, job.id)));
    // (The count drops just after the SUCCEEDED event goes out.)
    await metricsOnce(/jiaowu_background_jobs_completions_pending(\{[^}]*\})? 0\b/);
  });
});
