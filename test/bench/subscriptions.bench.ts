/**
 * Subscription benchmark: `npm run bench:subscriptions [-- --clients 2000 --rate 2000 --seconds 20]`.
 *
 * - a fresh database with the migrations applied and one job per client (plus a few
 *   that only the dashboard watches);
 * - an API process of its own (the service's `startApp`, ROLE=api, RabbitMQ under a
 *   unique prefix, NODE_ENV=production with JWT auth; test/bench/support/subscriptions-api.ts);
 * - a load generator process of its own (test/bench/support/subscriptions-load.ts):
 *   N graphql-ws clients, each on `jobProgress` of its own job (a viewer token per
 *   client, its own jobs), plus one admin dashboard on `jobEvents`;
 * - an emitter (this process) publishing JobEvents onto the `${prefix}.job-events`
 *   topic exchange through `RabbitMqEventBus`, exactly as a worker does, at a steady
 *   total rate (token bucket, a slice every 10 ms), round-robin over the jobs, each
 *   event with the job's next `sequence` and `occurredAt` = send time.
 *
 * Prints delivered events/s, latency p50/p99 (receipt − occurredAt, one machine's
 * clock), lost / duplicated / out-of-order events, and the API's heap per connection
 * ((heapUsed with all N subscribed − heapUsed before any) / N, both after gc).
 * `--profile` writes a CPU profile of the API process to test-output/profiles/.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Authenticator } from '../../src/api/auth/authenticator';
import { ApiRole } from '../../src/api/auth/viewer';
import { openDatabase } from '../../src/database';
import { poolSql } from '../../src/engine/db/sql';
import { RabbitMqEventBus } from '../../src/engine/events/rabbitmq-event-bus';
import { silentLogger } from '../../src/engine/logger';
import { insertJob } from '../../src/engine/queries/insert-job';
import { rabbitMqTopology } from '../../src/engine/transport/rabbitmq-transport';
import { JobEventReason, JobStatus, type JobEvent, type JobId, type JobSnapshot } from '../../src/engine/types';
import { ALL_JOB_KINDS, JobKind } from '../../src/job-kinds';
import { createTestDatabase, deleteRabbitObjects, rabbitAvailable, rabbitUrl, redact, uniquePrefix, type TestDatabase } from '../support/services';
import { Child, cpuTimes } from './support/bench-child';
import { benchServiceEnv, newBenchJwt, SERVICE_NODE_FLAGS } from './support/bench-service-env';
import type { FromApi, FromLoad, LoadClient, LoadReport, ToApi, ToLoad } from './support/subscriptions-protocol';

function arg(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && process.argv[index + 1] ? process.argv[index + 1]! : fallback;
}
const flag = (name: string) => process.argv.includes(`--${name}`);

const CLIENTS = Number(arg('clients', '2000'));
const RATE = Number(arg('rate', '2000'));
const SECONDS = Number(arg('seconds', '20'));
const WARMUP_SECONDS = Number(arg('warmup', '2'));
const CONNECT_CONCURRENCY = Number(arg('connect-concurrency', '200'));
const EXTRA_JOBS = 5;
const PROFILE = flag('profile');
/**
 * Node flags for the API process. By default the ones `npm start` and the Docker image
 * use; `--api-node-args " "` runs it without them; `"--trace-gc …"` replaces them.
 */
const API_NODE_ARGS = arg('api-node-args', SERVICE_NODE_FLAGS.join(' ')).split(/\s+/).filter(Boolean);
/** A file for the API process's whole output (stdout and stderr). */
const API_LOG = arg('api-log', '');
const KIND = JobKind.AUTOMATIC_SCHEDULE;

const TARGETS = { clients: 10_000, rate: 2_000, lost: 0, duplicates: 0, p99Ms: 60, heapKiB: 21 };

const ROOT = path.resolve(__dirname, '../../..');
const DIST = path.resolve(__dirname);
const started = Date.now();
const log = (text: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface JobPlan {
  id: string;
  requestedBy: string;
  createdAt: Date;
  /** The sequence in the database; the emitter sends base+1, base+2, … */
  base: number;
  next: number;
}

function snapshot(plan: JobPlan, sequence: number, now: Date, progress: number): JobSnapshot {
  return {
    id: plan.id as JobId,
    kind: KIND,
    status: JobStatus.RUNNING,
    currentStep: `step ${sequence - plan.base}`,
    currentStepCode: null,
    progress,
    message: `bench event ${sequence - plan.base}`,
    messageCode: null,
    messageParams: null,
    sequence,
    attempts: 1,
    errorMessage: null,
    errorCode: null,
    errorParams: null,
    requestedBy: plan.requestedBy,
    exclusiveKey: null,
    input: {},
    result: null,
    cancelRequested: false,
    createdAt: plan.createdAt,
    updatedAt: now,
    startedAt: plan.createdAt,
    completedAt: null,
  };
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

async function main(): Promise<void> {
  const command = `npm run bench:subscriptions -- --clients ${CLIENTS} --rate ${RATE} --seconds ${SECONDS}${WARMUP_SECONDS !== 2 ? ` --warmup ${WARMUP_SECONDS}` : ''}`;
  log(`subscription benchmark: ${CLIENTS} clients + 1 dashboard, ${RATE} events/s for ${SECONDS} s (first ${WARMUP_SECONDS} s warm-up, left out of the latency figures)`);
  if (!(await rabbitAvailable())) throw new Error(`RabbitMQ does not answer at ${redact(rabbitUrl())}; start it with \`rabbitmq-server -detached\``);

  // A whole-run watchdog: everything is bounded in time.
  const budgetMs = 240_000 + SECONDS * 1000 + CLIENTS * 20;
  const children: Child<unknown, { type: string }>[] = [];
  const watchdog = setTimeout(() => {
    log(`watchdog: the run took longer than ${budgetMs} ms; killing the child processes`);
    for (const child of children) child.process.kill('SIGKILL');
    process.exitCode = 1;
  }, budgetMs);
  watchdog.unref();

  const prefix = uniquePrefix('bench_subs');
  let testDb: TestDatabase | undefined;
  let bus: RabbitMqEventBus | undefined;
  let api: Child<ToApi, FromApi> | undefined;
  let load: Child<ToLoad, FromLoad> | undefined;
  const exits: Record<string, string> = {};
  try {
    // --- database: migrations and the jobs ------------------------------------------
    testDb = await createTestDatabase('bench_subs');
    const db = await openDatabase({ url: testDb.url, poolSize: 16, logger: silentLogger });
    const plans: JobPlan[] = [];
    const sql = poolSql(db.pool);
    const total = CLIENTS + EXTRA_JOBS;
    let nextJob = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (nextJob < total) {
          const i = nextJob++;
          const requestedBy = i < CLIENTS ? `bench-viewer-${i}` : `bench-other-${i}`;
          const row = await insertJob(sql, { jobId: randomUUID(), outboxId: randomUUID(), kind: KIND, input: {}, requestedBy, idempotencyKey: null, exclusiveKey: null });
          plans[i] = { id: row!.id, requestedBy, createdAt: new Date(row!.created_at as unknown as string), base: Number(row!.sequence), next: Number(row!.sequence) + 1 };
        }
      }),
    );
    // No work messages: the jobs stay QUEUED in the database; only their events move.
    await db.pool.query('DELETE FROM job_outbox');
    await db.close();
    log(`database ${testDb.name}: ${total} jobs`);

    // --- the API process ------------------------------------------------------------
    const jwt = newBenchJwt();
    const profileDir = path.join(ROOT, 'test-output', 'profiles');
    if (PROFILE) fs.mkdirSync(profileDir, { recursive: true });
    api = new Child<ToApi, FromApi>(
      'API process',
      path.join(DIST, 'support', 'subscriptions-api.js'),
      ['--expose-gc', ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...API_NODE_ARGS],
      {
        ROLE: 'api',
        ...benchServiceEnv({ databaseUrl: testDb.url, prefix, jwt, logLevel: 'warn' }),
        DB_POOL_SIZE: '20',
        // Every simulated client connects from this machine: one address holds them all.
        WS_MAX_CONNECTIONS_PER_ADDRESS: String(CLIENTS + 10),
        HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(CLIENTS + 10),
        WS_CONNECT_BURST: String(CLIENTS + 10),
      },
      { log },
    );
    children.push(api as never);
    if (API_LOG) {
      const file = fs.createWriteStream(API_LOG);
      api.process.stdout!.pipe(file);
      api.process.stderr!.pipe(file);
    }
    const ready = await api.wait('ready', 60_000);
    const wsUrl = `${ready.url.replace(/^http/, 'ws')}/graphql`;
    log(`API process ${ready.pid} serving ${ready.url}`);
    let requestId = 0;
    await sleep(500);
    const heapBefore = await api.request({ type: 'heap', id: ++requestId }, 'heap', 30_000);
    log(`API heap before any connection: ${kib(heapBefore.heapUsed)} (after gc)`);

    // --- the emitter's bus (declares the exchange, as a worker's does) -----------------
    bus = new RabbitMqEventBus({ url: rabbitUrl(), prefix, logger: silentLogger, receive: 'control', connectionName: 'bench emitter' });
    await bus.start();

    // --- the load generator -----------------------------------------------------------
    const authenticator = new Authenticator(jwt);
    const clients: LoadClient[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      clients.push({ jobId: plans[i]!.id, token: await authenticator.sign({ sub: plans[i]!.requestedBy, roles: [ApiRole.VIEWER] }, '2h') });
    }
    const dashboardToken = await authenticator.sign({ sub: 'bench-dashboard', roles: [ApiRole.ADMIN] }, '2h');
    load = new Child<ToLoad, FromLoad>('load generator', path.join(DIST, 'support', 'subscriptions-load.js'), [], {}, { log });
    children.push(load as never);
    const connectTimeoutMs = 60_000 + CLIENTS * 20;
    const subscribedReply = load.wait('subscribed', connectTimeoutMs);
    load.send({ type: 'connect', wsUrl, clients, dashboardToken, concurrency: CONNECT_CONCURRENCY, timeoutMs: 30_000 });
    const subscribed = await subscribedReply;
    log(`${subscribed.subscribed} of ${CLIENTS} clients subscribed in ${subscribed.ms} ms (${subscribed.failed} failed${subscribed.errors.length ? `: ${subscribed.errors.join('; ')}` : ''})`);
    if (subscribed.subscribed < CLIENTS) throw new Error(`only ${subscribed.subscribed} of ${CLIENTS} clients subscribed`);
    await sleep(1_000);
    const heapAfter = await api.request({ type: 'heap', id: ++requestId }, 'heap', 60_000);
    const heapPerConnection = (heapAfter.heapUsed - heapBefore.heapUsed) / CLIENTS;
    log(`API heap with ${CLIENTS} subscribed: ${kib(heapAfter.heapUsed)} → ${kib(heapPerConnection)} per connection (rss ${kib(heapAfter.rss)})`);
    await sleep(300); // the gc's own pause must not count as loop delay while emitting
    await api.request({ type: 'stats', id: ++requestId }, 'stats', 10_000); // resets the loop-delay histogram

    // --- emit at a steady rate ---------------------------------------------------------
    const totalEvents = Math.round(RATE * SECONDS);
    let sent = 0;
    const pids = { api: api.process.pid, generator: load.process.pid, emitter: process.pid };
    const cpuBefore = cpuTimes(pids);
    const emitStart = Date.now();
    const measureFromMs = emitStart + WARMUP_SECONDS * 1000;
    await new Promise<void>((resolve) => {
      let credit = 0;
      let last = performance.now();
      let cursor = 0;
      const timer = setInterval(() => {
        const now = performance.now();
        credit += ((now - last) / 1000) * RATE;
        last = now;
        let slice = Math.floor(credit);
        credit -= slice;
        const at = new Date();
        while (slice-- > 0 && sent < totalEvents) {
          const plan = plans[cursor]!;
          cursor = (cursor + 1) % plans.length;
          const sequence = plan.next++;
          const job = snapshot(plan, sequence, at, Math.min(0.99, (sequence - plan.base) / 1000));
          const event: JobEvent = {
            jobId: job.id,
            kind: job.kind,
            status: job.status,
            currentStep: job.currentStep,
            currentStepCode: job.currentStepCode,
            progress: job.progress,
            message: job.message,
            messageCode: job.messageCode,
            messageParams: job.messageParams,
            sequence,
            reason: JobEventReason.PROGRESS,
            occurredAt: at,
            job,
          };
          bus!.publish(event);
          sent++;
        }
        if (sent >= totalEvents) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    const emitMs = Date.now() - emitStart;
    const cpuAfter = cpuTimes(pids);
    let cpu = '';
    if (cpuBefore && cpuAfter) {
      const cores = (a: number, b: number) => ((b - a) / (emitMs / 1000)).toFixed(2);
      const ours = Object.keys(cpuAfter.byName).map((name) => `${name} ${cores(cpuBefore.byName[name]!, cpuAfter.byName[name]!)}`);
      const oursTotal = Object.keys(cpuAfter.byName).reduce((n, name) => n + cpuAfter.byName[name]! - cpuBefore.byName[name]!, 0);
      const rest = (cpuAfter.machine - cpuBefore.machine - oursTotal) / (emitMs / 1000);
      cpu = `${ours.join(', ')}; everything else (broker, other processes) ${rest.toFixed(2)} — of ${os.cpus().length} cores`;
      // The broker takes about 0.1–0.2 of a core at 2,000 events/s; much more is someone else's work.
      if (rest > 0.5) cpu += `. WARNING: other processes used ${rest.toFixed(2)} cores meanwhile; latency figures are not representative — run again on a quiet machine`;
    }
    log(`emitted ${sent} events in ${(emitMs / 1000).toFixed(2)} s (${(sent / (emitMs / 1000)).toFixed(0)}/s)`);
    const apiStats = await api.request({ type: 'stats', id: ++requestId }, 'stats', 10_000);

    // --- drain: until everything expected arrived, or nothing more comes --------------
    const expectedPerJob = plans.slice(0, CLIENTS).reduce((n, p) => n + (p.next - p.base - 1), 0);
    let lastCount = -1;
    let still = 0;
    const drainDeadline = Date.now() + 20_000;
    while (Date.now() < drainDeadline) {
      const progress = await load.request({ type: 'progress', id: ++requestId }, 'progress', 10_000);
      if (progress.received >= expectedPerJob && progress.dashboardReceived >= sent) break;
      if (progress.received + progress.dashboardReceived === lastCount) {
        if (++still >= 10) break; // 2 s without a new event
      } else still = 0;
      lastCount = progress.received + progress.dashboardReceived;
      await sleep(200);
    }
    const sentRanges: Record<string, [number, number]> = {};
    for (const plan of plans) if (plan.next - 1 > plan.base) sentRanges[plan.id] = [plan.base + 1, plan.next - 1];
    const reportReply = load.wait('report', 60_000);
    load.send({ type: 'report', sent: sentRanges, measureFromMs, totalSent: sent });
    const { report } = await reportReply;

    // --- stop everything ----------------------------------------------------------------
    load.send({ type: 'close' });
    exits.generator = await load.finish(60_000);
    api.send({ type: 'stop' });
    exits.api = await api.finish(60_000);
    printReport({ command, report, sent, emitMs, heapBefore: heapBefore.heapUsed, heapAfter: heapAfter.heapUsed, heapPerConnection, apiStats, exits, subscribeMs: subscribed.ms, cpu });
  } finally {
    for (const child of [load, api]) {
      if (child && child.process.exitCode === null && child.process.signalCode === null) {
        child.process.kill('SIGTERM');
        await child.finish(15_000);
      }
    }
    await bus?.close().catch(() => undefined);
    const topology = rabbitMqTopology(prefix);
    const removed = await deleteRabbitObjects(prefix, {
      exchanges: [`${prefix}.job-events`, topology.workExchange, ...topology.delayBucketsMs.map((ms) => topology.delay(ms))],
      queues: [...ALL_JOB_KINDS.map((kind) => topology.workQueue(kind)), ...topology.delayBucketsMs.map((ms) => topology.delay(ms)), topology.parked],
    });
    log(`broker cleaned: ${removed.exchanges.length} exchanges, ${removed.queues.length} queues under ${prefix}`);
    await testDb?.drop().catch((error) => log(`database drop failed: ${String(error)}`));
    if (testDb) log(`database ${testDb.name} dropped`);
    clearTimeout(watchdog);
  }
}

function printReport(r: {
  command: string;
  report: LoadReport;
  sent: number;
  emitMs: number;
  heapBefore: number;
  heapAfter: number;
  heapPerConnection: number;
  apiStats: Extract<FromApi, { type: 'stats' }>;
  exits: Record<string, string>;
  subscribeMs: number;
  cpu: string;
}): void {
  const { report } = r;
  const deliverySeconds = Math.max(0.001, (report.lastReceiptMs - report.firstReceiptMs) / 1000);
  const rows: [string, string, string][] = [
    ['clients subscribed (jobProgress) + dashboard', `${report.clients} + 1`, ''],
    ['time to connect and subscribe all', `${(r.subscribeMs / 1000).toFixed(1)} s`, ''],
    ['events emitted', `${r.sent} in ${(r.emitMs / 1000).toFixed(1)} s (${(r.sent / (r.emitMs / 1000)).toFixed(0)}/s)`, ''],
    ['delivered to job subscribers', `${report.received} of ${report.expected} (${(report.received / deliverySeconds).toFixed(0)}/s)`, ''],
    ['delivered to the dashboard', `${report.dashboard.received} of ${report.dashboard.expected}`, ''],
    ['lost (job subscribers / dashboard)', `${report.lost} / ${report.dashboard.lost}`, '0'],
    ['duplicated (job subscribers / dashboard)', `${report.duplicates} / ${report.dashboard.duplicates}`, '0'],
    ['out of order (job subscribers / dashboard)', `${report.outOfOrder} / ${report.dashboard.outOfOrder}`, '0'],
    ['latency p50 / p90 (job subscribers)', `${report.latency.p50} / ${report.latency.p90} ms`, ''],
    ['latency p99 (job subscribers)', `${report.latency.p99} ms`, `≤ ${TARGETS.p99Ms} ms`],
    ['latency p99.9 / max (job subscribers)', `${report.latency.p999} / ${report.latency.max} ms`, ''],
    ['latency p50 / p99 (dashboard)', `${report.dashboard.latency.p50} / ${report.dashboard.latency.p99} ms`, ''],
    ['API heap before / with all subscribed', `${kib(r.heapBefore)} / ${kib(r.heapAfter)}`, ''],
    ['API heap per connection', kib(r.heapPerConnection), `≤ ${TARGETS.heapKiB} KiB`],
    ['API event-loop delay p50 / p99 / max while emitting', `${r.apiStats.loopDelayP50Ms.toFixed(1)} / ${r.apiStats.loopDelayP99Ms.toFixed(1)} / ${r.apiStats.loopDelayMaxMs.toFixed(1)} ms`, ''],
    ['subscriptions ended early / unexpected sequences', `${report.endedEarly} / ${report.unexpected}`, '0 / 0'],
    ['load generator', r.exits.generator ?? '?', 'clean exit'],
    ['API process', r.exits.api ?? '?', 'clean exit'],
  ];
  const w0 = Math.max(...rows.map((row) => row[0].length));
  const w1 = Math.max(...rows.map((row) => row[1].length));
  const lines = [
    '',
    `Subscription benchmark — ${CLIENTS} clients, ${RATE} events/s, ${SECONDS} s (latency after a ${WARMUP_SECONDS} s warm-up)`,
    `${'figure'.padEnd(w0)}  ${'measured'.padEnd(w1)}  target`,
    `${'-'.repeat(w0)}  ${'-'.repeat(w1)}  ------`,
    ...rows.map(([a, b, c]) => `${a.padEnd(w0)}  ${b.padEnd(w1)}  ${c}`),
    '',
    `Targets (issue 3) at --clients ${TARGETS.clients} --rate ${TARGETS.rate}, one API process: 0 lost or duplicated, p99 ≤ ${TARGETS.p99Ms} ms, heap ≤ ${TARGETS.heapKiB} KiB per connection.`,
  ];
  const g = r.apiStats.gcs;
  lines.push(
    `API garbage collection while emitting: ${g.minor} minor (${g.minorMs.toFixed(0)} ms in all), ${g.major} major (${g.majorMs.toFixed(0)} ms in all, longest ${g.longestMajorMs.toFixed(0)} ms)`,
  );
  if (r.apiStats.stalls.length) {
    lines.push(`API stalls while emitting (timer ≥ 50 ms late: wall ms / ms its main thread worked / ms it waited for a core): ${r.apiStats.stalls.map((x) => `${x.gapMs}/${x.cpuMs}/${x.waitMs}`).join(', ')}`);
  } else lines.push('API stalls while emitting: none ≥ 50 ms');
  lines.push(
    report.stalls.length
      ? `Load generator stalls (wall ms / CPU ms): ${report.stalls.map((x) => `${x.gapMs}/${x.cpuMs}`).join(', ')}`
      : 'Load generator stalls: none ≥ 50 ms',
  );
  if (r.cpu) lines.push(`CPU cores used while emitting: ${r.cpu}. Latency here is sensitive to other load on the machine.`);
  if (report.latency.seconds?.length) {
    lines.push(`latency p99/max by second of the run (job subscribers), ms: ${report.latency.seconds.map(([, p99, max], i) => `${i}s ${p99}/${max}`).join(', ')}`);
  }
  if (report.errors.length) lines.push(`subscriber errors: ${report.errors.join('; ')}`);
  if (CLIENTS === TARGETS.clients && RATE === TARGETS.rate) {
    const met = report.lost === 0 && report.duplicates === 0 && report.dashboard.lost === 0 && report.dashboard.duplicates === 0 && report.latency.p99 <= TARGETS.p99Ms && r.heapPerConnection / 1024 <= TARGETS.heapKiB;
    lines.push(`At the target load: ${met ? 'ALL TARGETS MET' : 'TARGETS MISSED'}.`);
  }
  lines.push(`Reproduce: ${r.command}`, '');
  process.stdout.write(lines.join('\n'));
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error) => {
    process.stderr.write(`subscription benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
