/**
 * The job list under a stream of events: `npm run bench:web [-- --rate 50 --seconds 20]`.
 *
 * - builds the page (`npm run build:web`, into dist/web) and serves it from a real API
 *   server (the service's mount) over an engine on a fresh database, with the engine's
 *   test kinds (test/support/test-kinds.ts): jobs that name a new step every `stepMs`;
 * - keeps enough of them running that the engine emits about `--rate` events a second
 *   (each job: a STEP event per step, a PROGRESS event a second), all three kinds;
 * - opens the job list in headless Chromium (1280 × 860, signed in with the development
 *   token) and, for `--seconds`, records the page's long tasks (PerformanceObserver
 *   'longtask': main-thread work over 50 ms, what a person notices as a stall), its
 *   frames (requestAnimationFrame) and the `jobEvents` messages its socket received.
 *
 * `--rate 0` runs no job: the idle page's figures, to compare with on a busy machine.
 * Prints the events/s the engine emitted and the page received, long-task count, max and
 * total, frames/s and the worst frame gap, and the page's first load (DOMContentLoaded,
 * load, first contentful paint). Under load, compare within a run and note `uptime`.
 */
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { Authenticator } from '../../src/api/auth/authenticator';
import { ApiRole } from '../../src/api/auth/viewer';
import type { JobEngine } from '../../src/engine/engine';
import { JobStatus } from '../../src/engine/types';
import { ALL_JOB_KINDS } from '../../src/job-kinds';
import { startTestApiServer, TEST_JWT } from '../api/support/api-server';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../api/support/browser';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { repositoryRoot } from './support/bench-child';

function arg(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && process.argv[index + 1] ? process.argv[index + 1]! : fallback;
}

const RATE = Number(arg('rate', '50'));
const SECONDS = Number(arg('seconds', '20'));
const WARMUP_SECONDS = Number(arg('warmup', '3'));
/** Where the page is built and served from (a folder of its own for the benchmarks' smoke test). */
const WEB_OUT = arg('web-out', 'dist/web');
const STEP_MS = 100;
/** Per running job: a STEP event per step and about one PROGRESS event a second. */
const EVENTS_PER_JOB_SECOND = 1000 / STEP_MS + 1;
/** `--rate 0`: no jobs at all, the page idle (a baseline for the same machine and load). */
const CONCURRENT = RATE > 0 ? Math.max(1, Math.round(RATE / EVENTS_PER_JOB_SECOND)) : 0;
/** Each job runs about this long, so new jobs keep coming into the list too. */
const JOB_SECONDS = 8;

const ROOT = repositoryRoot();
const started = Date.now();
const log = (text: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs in the page before its scripts: long tasks, frames and socket messages, counted from the start. */
const PAGE_PROBE = () => {
  const probe = { longTasks: [] as number[], frames: [] as number[], messages: 0, recording: false };
  (window as unknown as { probe: typeof probe }).probe = probe;
  new PerformanceObserver((list) => {
    if (probe.recording) for (const entry of list.getEntries()) probe.longTasks.push(entry.duration);
  }).observe({ type: 'longtask', buffered: false });
  const frame = (at: number) => {
    if (probe.recording) probe.frames.push(at);
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      this.addEventListener('message', (event) => {
        if (probe.recording && typeof event.data === 'string' && event.data.includes('"jobEvents"')) probe.messages++;
      });
    }
  } as typeof WebSocket;
};

async function main(): Promise<void> {
  log(`building the page: npm run build:web (into ${WEB_OUT})`);
  const build = execFileSync('npm', ['run', 'build:web', '--silent'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, WEB_OUT_DIR: path.resolve(ROOT, WEB_OUT) } });
  const firstLoadLine = build.split('\n').find((line) => line.trim().startsWith('first load')) ?? '';

  const ctx = await createTestDb('bench_web');
  const engine: JobEngine = buildEngine({
    db: ctx.db,
    registrations: testKindRegistrations().map((r) => ({ ...r, defaults: { consumers: CONCURRENT } })),
  });
  await engine.start();
  const devToken = await new Authenticator({ ...TEST_JWT }).sign({ sub: 'dev-admin', roles: [ApiRole.ADMIN] }, '1h');
  const server = await startTestApiServer({ engine, devAdminToken: devToken, settings: { webRoot: path.resolve(ROOT, WEB_OUT) } });
  let emitted = 0;
  let counting = false;
  const unsubscribe = engine.subscribe(() => {
    if (counting) emitted++;
  });

  // Keep CONCURRENT jobs running, of every kind in turn, each with its steps STEP_MS apart.
  let running = 0;
  let enqueued = 0;
  let stopping = false;
  const steps = Math.round((JOB_SECONDS * 1000) / STEP_MS);
  const feed = async () => {
    while (!stopping) {
      while (running < CONCURRENT && !stopping) {
        running++;
        const kind = ALL_JOB_KINDS[enqueued++ % ALL_JOB_KINDS.length]!;
        void engine
          .enqueue({ kind, input: { steps, stepMs: STEP_MS }, requestedBy: `bench-${enqueued % 7}` })
          .then(({ job }) => waitEnded(engine, job.id))
          .finally(() => running--);
      }
      await sleep(50);
    }
  };
  const feeding = feed();

  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, '--lang=zh-CN', '--accept-lang=zh-CN'], timeout: 20_000 });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.addInitScript(PAGE_PROBE);
    await page.goto(`${server.url}/jobs`, { waitUntil: 'load' });
    const load = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      const fcp = performance.getEntriesByName('first-contentful-paint')[0];
      return { domContentLoaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, fcp: fcp?.startTime ?? NaN };
    });
    await page.locator(CONCURRENT > 0 ? 'tr[data-job-id]' : 'text=没有符合条件的作业。').first().waitFor({ timeout: 30_000 });
    log(`${CONCURRENT} jobs running (${steps} steps of ${STEP_MS} ms each); warming up ${WARMUP_SECONDS} s`);
    await sleep(WARMUP_SECONDS * 1000);

    await page.evaluate(() => ((window as unknown as { probe: { recording: boolean } }).probe.recording = true));
    counting = true;
    const from = Date.now();
    await sleep(SECONDS * 1000);
    counting = false;
    const seconds = (Date.now() - from) / 1000;
    const probe = await page.evaluate(() => {
      const p = (window as unknown as { probe: { longTasks: number[]; frames: number[]; messages: number; recording: boolean } }).probe;
      p.recording = false;
      return p;
    });
    const rows = await page.locator('tr[data-job-id]').count();

    const gaps = probe.frames.slice(1).map((at, i) => at - probe.frames[i]!);
    const longest = probe.longTasks.length ? Math.max(...probe.longTasks) : 0;
    const total = probe.longTasks.reduce((a, b) => a + b, 0);
    const [l1, l5, l15] = os.loadavg().map((v) => v.toFixed(2));
    const out = [
      '',
      `web job list under ${RATE} events/s for ${SECONDS} s (load average ${l1} ${l5} ${l15}, ${os.cpus().length} cores)`,
      `  events emitted by the engine   ${(emitted / seconds).toFixed(1)} /s (${emitted} in ${seconds.toFixed(1)} s, ${CONCURRENT} jobs running, ${rows} rows shown)`,
      `  jobEvents received by the page ${(probe.messages / seconds).toFixed(1)} /s`,
      `  long tasks (> 50 ms)           ${probe.longTasks.length} (max ${longest.toFixed(0)} ms, total ${total.toFixed(0)} ms = ${((total / (seconds * 1000)) * 100).toFixed(2)} % of the time)`,
      `  frames                         ${(probe.frames.length / seconds).toFixed(1)} /s (worst gap ${gaps.length ? Math.max(...gaps).toFixed(0) : '—'} ms)`,
      `  first load                     DOMContentLoaded ${load.domContentLoaded.toFixed(0)} ms, load ${load.load.toFixed(0)} ms, first contentful paint ${load.fcp.toFixed(0)} ms (loopback)`,
      `  bundle                         ${firstLoadLine.trim()}`,
      `reproduce: npm run bench:web${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
      '',
    ];
    process.stdout.write(out.join('\n'));
  } finally {
    stopping = true;
    await feeding;
    unsubscribe();
    await browser.close();
    await server.close();
    for (const { job } of (await engine.listJobs({ first: 200, statuses: [JobStatus.QUEUED, JobStatus.RUNNING] })).jobs) await engine.cancel(job.id).catch(() => undefined);
    await engine.stop(5_000);
    await ctx.close();
  }
}

function waitEnded(engine: JobEngine, jobId: string): Promise<void> {
  return new Promise((resolve) => {
    const stop = engine.subscribe((event) => {
      if (event.jobId === jobId && [JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED].includes(event.status)) {
        stop();
        resolve();
      }
    });
  });
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
