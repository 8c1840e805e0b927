/**
 * The subscription benchmark's API process: the service's own `startApp` (configured
 * from the environment the bench sets: ROLE=api, RabbitMQ, production auth), plus an
 * IPC channel for the bench — heap after `global.gc()`, event-loop delay, heap peak, stop.
 * With ROLE=worker and JIAOWU_TEST_KINDS it is a worker running the test stand-ins of
 * those kinds (test/support/test-kinds.ts), as test/support/service-process.ts does.
 * Start with `node --expose-gc` and `stdio: [..., 'ipc']`.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import inspector from 'node:inspector';
import v8 from 'node:v8';
import { constants as perfConstants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { startApp, type App } from '../../../src/app';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/engine/logger';
import { threadClock } from './thread-clock';
import { recordServerTimings } from './request-timings';
import { TEST_KINDS_ENV, testKindRegistrations } from '../../support/test-kinds';
import type { FromApi, ToApi } from './subscriptions-protocol';

const send = (message: FromApi) => process.send?.(message);

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('start the API process with --expose-gc');
  // Several passes: weak references and finalizers free more on the later ones.
  for (let i = 0; i < 4; i++) gc();
}

async function main(): Promise<void> {
  if (!process.send) throw new Error('subscriptions-api needs an IPC channel');
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, format: 'json', name: 'bench-api' });
  const standIns = new Set((process.env[TEST_KINDS_ENV] ?? '').split(',').filter(Boolean));
  const app: App = await startApp(config, logger, { extraKinds: testKindRegistrations().filter((r) => standIns.has(r.kind)) });
  const requestTimings = process.env.BENCH_REQUEST_TIMINGS === '1' ? recordServerTimings() : null;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  // Stalls: a 5 ms timer that fired ≥ 50 ms late, with the main thread's time meanwhile
  // on a core (work, GC pauses) and waiting for one (other load on the machine); a stall
  // neither explains is time the thread was not even runnable (see threadClock).
  let stalls: { atMs: number; gapMs: number; cpuMs: number; waitMs: number }[] = [];
  // Garbage collections by kind: count and main-thread pause (ms), the longest major one.
  let gcs = { minor: 0, minorMs: 0, major: 0, majorMs: 0, longestMajorMs: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      if (kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) {
        gcs.major++;
        gcs.majorMs += entry.duration;
        gcs.longestMajorMs = Math.max(gcs.longestMajorMs, entry.duration);
      } else {
        gcs.minor++;
        gcs.minorMs += entry.duration;
      }
    }
  }).observe({ entryTypes: ['gc'] });
  // The largest heap in use seen since the last stats (sampled every 50 ms, no gc forced).
  let heapUsedPeak = 0;
  let ticks = 0;
  let lastTick = performance.now();
  const clock = threadClock();
  let lastTimes = clock();
  setInterval(() => {
    if (ticks++ % 10 === 0) heapUsedPeak = Math.max(heapUsedPeak, v8.getHeapStatistics().used_heap_size);
    const now = performance.now();
    const times = clock();
    const gap = now - lastTick;
    const cpuMs = Math.round(times.cpuMs - lastTimes.cpuMs);
    const waitMs = Math.round(times.waitMs - lastTimes.waitMs);
    if (gap >= 50 && process.env.BENCH_API_MARKS === '1') {
      process.stderr.write(`bench-stall at ${now.toFixed(0)} ms: ${gap.toFixed(0)} ms late, ${cpuMs} ms CPU, ${waitMs} ms waiting for a core\n`);
    }
    if (gap >= 50 && stalls.length < 200) stalls.push({ atMs: Math.round(now), gapMs: Math.round(gap), cpuMs, waitMs });
    lastTick = now;
    lastTimes = times;
  }, 5).unref();
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    try {
      await app.stop();
    } catch (error) {
      code = 1;
      process.stderr.write(`bench API process: stop failed: ${String(error)}\n`);
    }
    const exit = () => {
      if (process.connected) process.disconnect();
      process.exit(code);
    };
    if (process.connected) process.send!({ type: 'stopped' } satisfies FromApi, () => exit());
    else exit();
  };
  // BENCH_API_HEAP_SAMPLES=<file>: a sampling heap profile of what is allocated while
  // events flow and outlives a scavenge (objects a major GC collects included).
  const samplesFile = process.env.BENCH_API_HEAP_SAMPLES;
  const session = samplesFile ? new inspector.Session() : null;
  session?.connect();
  let sampling = false;
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session!.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))));
  process.on('message', (message: ToApi) => {
    if (session && message.type === 'stats') {
      if (!sampling) {
        sampling = true;
        void post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true });
      } else {
        void post('HeapProfiler.stopSampling').then((result) => fs.writeFileSync(samplesFile!, JSON.stringify((result as { profile: unknown }).profile)));
      }
    }
    switch (message.type) {
      case 'requestTimings':
        send({ type: 'requestTimings', id: message.id, timings: requestTimings?.take() ?? [] });
        break;
      case 'heap': {
        collectGarbage();
        const usage = process.memoryUsage();
        send({ type: 'heap', id: message.id, heapUsed: usage.heapUsed, rss: usage.rss, external: usage.external, arrayBuffers: usage.arrayBuffers });
        break;
      }
      case 'stats': {
        if (process.env.BENCH_API_MARKS === '1') process.stderr.write(`bench-mark stats at ${performance.now().toFixed(0)} ms\n`);
        const cpu = process.cpuUsage();
        const heapUsed = v8.getHeapStatistics().used_heap_size;
        send({
          type: 'stats',
          id: message.id,
          loopDelayP50Ms: loop.percentile(50) / 1e6,
          loopDelayP99Ms: loop.percentile(99) / 1e6,
          loopDelayMaxMs: loop.max / 1e6,
          cpuUserMs: cpu.user / 1000,
          cpuSystemMs: cpu.system / 1000,
          stalls,
          gcs,
          heapUsed,
          heapUsedPeak: Math.max(heapUsedPeak, heapUsed),
        });
        loop.reset();
        heapUsedPeak = 0;
        stalls = [];
        gcs = { minor: 0, minorMs: 0, major: 0, majorMs: 0, longestMajorMs: 0 };
        break;
      }
      case 'stop':
        void stop(0);
        break;
    }
  });
  // The bench went away: stop too.
  process.on('disconnect', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  send({ type: 'ready', url: app.http.url, pid: process.pid });
}

main().catch((error) => {
  send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.stderr.write(`bench API process failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
