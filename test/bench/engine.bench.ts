/**
 * Engine benchmark: `nice -n -10 npm run bench:engine [-- --jobs 20000 --transports in-memory,rabbitmq
 * --figures drain1,drain3,enqueue,latency --peers default,batched]` (and `-- --scale`, see scale.ts).
 *
 * For each transport it measures
 *  - drain: no-op jobs/s draining N queued jobs — one kind with 16 consumers, then
 *    three kinds at once (16 consumers each);
 *  - enqueue: single-job enqueues/s (each its own transaction) from 16 concurrent clients,
 *    with the service running;
 *  - latency: enqueue commit → processor start, p50/p95/p99, on an idle service, each
 *    p50 and p99 with its bootstrap interval (support/bootstrap-interval.ts), and the
 *    floor under it: RabbitMQ's own hop (support/broker-hop.ts) plus the runner's claim
 *    statement alone (support/lone-claim.ts);
 * and, in the same run on the same database, the same figures for graphile-worker
 * 0.17.3 with its defaults and batched (see support/graphile-peer.ts), and with plain
 * `pg` the machine's floor: three-commit lifecycles/s (insert, update, update — separate
 * transactions, 16 clients). It prints one table: every figure per system, the engine's
 * ratio to each peer and to the floor (absolute figures are noisy on a shared machine;
 * ratios within one run are not), and the load average before and after.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import * as amqp from 'amqplib';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/database';
import { poolSql } from '../../src/engine/db/sql';
import type { JobEngine } from '../../src/engine/engine';
import { InMemoryEventBus } from '../../src/engine/events/in-memory-event-bus';
import { silentLogger } from '../../src/engine/logger';
import { insertJob } from '../../src/engine/queries/insert-job';
import type { KindRegistration } from '../../src/engine/registry';
import { InMemoryTransport } from '../../src/engine/transport/in-memory-transport';
import { RabbitMqTransport, rabbitMqTopology } from '../../src/engine/transport/rabbitmq-transport';
import { RabbitMqEventBus } from '../../src/engine/events/rabbitmq-event-bus';
import { jobEventsHoldMs } from '../../src/engine/publisher';
import type { JobTransport } from '../../src/engine/transport/transport';
import type { EventBus } from '../../src/engine/events/event-bus';
import { buildEngine, newJobArgs } from '../support/engine-harness';
import { measureBrokerHop } from './support/broker-hop';
import { measureLoneClaim } from './support/lone-claim';
import { cpuSample, cpuSpent, describeCpuPerJob, type CpuSplit } from './support/cpu-split';
import { graphileDrain, graphileEnqueue, graphileLatency, prepareGraphile, type GraphileMode } from './support/graphile-peer';
import { measureScale, printScale, type ScaleOptions } from './support/scale';
import { walMark, walPerJob } from './support/wal';
import { createTestDatabase, rabbitAvailable, rabbitUrl, uniquePrefix } from '../support/services';
import { quantile } from './support/quantile';
import { DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, quantileInterval, type Interval } from './support/bootstrap-interval';

const KINDS = ['BENCH_A', 'BENCH_B', 'BENCH_C'];
const CONSUMERS = 16;
const CLIENTS = 16;

function arg(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && process.argv[index + 1] ? process.argv[index + 1]! : fallback;
}

const JOBS = Number(arg('jobs', '20000'));
const ENQUEUE_SECONDS = Number(arg('enqueue-seconds', '5'));
/** Starts measured per system: a p99 of 1,000 is the tenth-slowest, steadier than of a few hundred. */
const LATENCY_SAMPLES = Number(arg('latency-samples', '1000'));
const FLOOR_SECONDS = Number(arg('floor-seconds', '5'));
/** Deliveries each bench kind holds beyond its running jobs (JOB_PREFETCH_<KIND>): no-op jobs are the short jobs it is for. */
const PREFETCH = Number(arg('prefetch', '48'));
/** Jobs the bench's publisher packs into one RabbitMQ message (JOBS_PER_MESSAGE_<KIND>): no-op jobs are the short jobs it is for. */
const JOBS_PER_MESSAGE = Number(arg('jobs-per-message', '16'));
/** Jobs each bench kind claims before a consumer is free (JOB_CLAIM_AHEAD_<KIND>): no-op jobs are the short jobs it is for. */
const CLAIM_AHEAD = Number(arg('claim-ahead', '32'));
type Figure = 'drain1' | 'drain3' | 'enqueue' | 'latency';
const FIGURES = arg('figures', 'drain1,drain3,enqueue,latency').split(',') as Figure[];
const PEERS = arg('peers', 'default,batched').split(',').filter((p): p is GraphileMode => p === 'default' || p === 'batched');
const LATENCY_WARMUP = 20;

type TransportName = 'in-memory' | 'rabbitmq';
/** The engine on RabbitMQ with JOB_FAST_START=false: a start waits for the job's message (latency rows only). */
const NO_FAST_START = 'engine rabbitmq, no fast start';

interface Messaging {
  transport: JobTransport;
  bus: EventBus;
  cleanup(): Promise<void>;
}

/** Messaging not closed yet: a figure that fails midway leaves its own to `main`, which removes it from the broker. */
const openMessaging = new Set<Messaging>();

/** `fastStart`: as the engine it serves is set; the bus then holds its events back as the service's does. */
async function messaging(name: TransportName, fastStart = true): Promise<Messaging> {
  if (name === 'in-memory') return { transport: new InMemoryTransport(), bus: new InMemoryEventBus(), cleanup: async () => undefined };
  const prefix = uniquePrefix('bench');
  const url = rabbitUrl();
  const m: Messaging = {
    transport: new RabbitMqTransport({ url, prefix, logger: silentLogger, jobsPerMessage: Object.fromEntries(KINDS.map((k) => [k, JOBS_PER_MESSAGE])) }),
    // The benchmark process plays a worker (no GraphQL subscribers): it binds only cancel requests.
    // It enqueues too, so it holds its events as an API process does.
    bus: new RabbitMqEventBus({ url, prefix, logger: silentLogger, receive: 'control', holdMs: jobEventsHoldMs({ fastStart }, true) }),
    cleanup: async () => {
      const topology = rabbitMqTopology(prefix);
      const connection = await amqp.connect(url);
      const channel = await connection.createChannel();
      for (const kind of KINDS) await channel.deleteQueue(topology.workQueue(kind));
      await channel.deleteQueue(topology.parked);
      for (const ms of topology.delayBucketsMs) {
        await channel.deleteQueue(topology.delay(ms));
        await channel.deleteExchange(topology.delay(ms));
      }
      await channel.deleteExchange(topology.workExchange);
      await channel.deleteExchange(`${prefix}.job-events`);
      await connection.close().catch(() => undefined);
    },
  };
  openMessaging.add(m);
  return m;
}

async function closeMessaging(m: Messaging): Promise<void> {
  openMessaging.delete(m);
  await m.bus.close();
  await m.transport.close();
  await m.cleanup();
}

/** Plain pg: insert, update, update, each its own transaction, from CLIENTS clients. */
async function measureFloor(url: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: CLIENTS });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_floor (id uuid PRIMARY KEY, state text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())');
  const deadline = Date.now() + FLOOR_SECONDS * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < deadline) {
        const id = randomUUID();
        await pool.query("INSERT INTO bench_floor (id, state) VALUES ($1, 'PENDING')", [id]);
        await pool.query("UPDATE bench_floor SET state = 'PROCESSING', updated_at = now() WHERE id = $1", [id]);
        await pool.query("UPDATE bench_floor SET state = 'COMPLETED', updated_at = now() WHERE id = $1", [id]);
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - started) / 1000);
  await pool.query('DROP TABLE bench_floor');
  await pool.end();
  return rate;
}

async function resetJobs(db: Database): Promise<void> {
  await db.pool.query('TRUNCATE jobs, job_outbox');
  await db.pool.query('VACUUM ANALYZE jobs');
  await db.pool.query('VACUUM ANALYZE job_outbox');
}

function counterRegistrations(onDone: () => void, onStart?: (jobId: string) => void): KindRegistration[] {
  return KINDS.map((kind) => ({
    kind,
    defaults: { consumers: CONSUMERS, prefetch: PREFETCH, claimAhead: CLAIM_AHEAD },
    processor: async ({ job }) => {
      onStart?.(job.id);
      onDone();
      return null;
    },
  }));
}

interface Drain {
  rate: number;
  /** CPU spent while it drained (see cpu-split.ts). */
  cpu: CpuSplit;
  seconds: number;
  /** Attempts beyond one per job: retries after a transient error (e.g. the database refused a connection). */
  retried: number;
  /** Write-ahead log written while it drained (see wal.ts). */
  walBytes: number;
}

async function measureDrain(db: Database, transportName: TransportName, kinds: string[]): Promise<Drain> {
  await resetJobs(db);
  // Queue the jobs first (with no service running), as after an outage or a burst.
  const sql = poolSql(db.pool);
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < JOBS) {
        const i = next++;
        await insertJob(sql, newJobArgs(kinds[i % kinds.length]!, { i }));
      }
    }),
  );
  const m = await messaging(transportName);
  let completed = 0;
  let resolveAll!: () => void;
  const all = new Promise<void>((resolve) => (resolveAll = resolve));
  const engine = buildEngine({
    db,
    transport: m.transport,
    bus: m.bus,
    registrations: counterRegistrations(() => {
      if (++completed === JOBS) resolveAll();
    }),
    settings: { consumers: Object.fromEntries(KINDS.map((k) => [k, CONSUMERS])), publisherBatchSize: 500 },
  });
  const wal = await walMark((text) => db.pool.query(text));
  const cpu0 = cpuSample();
  const started = performance.now();
  const windowStart = process.hrtime.bigint() / 1000n;
  await engine.start();
  await all;
  // Completion is written after the processor returns: wait for the last writes.
  for (;;) {
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM jobs WHERE status = 'SUCCEEDED'");
    if (rows[0].n >= JOBS) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSpent(cpu0, cpuSample());
  const walBytes = await wal();
  // For `node --cpu-prof`: the drain's window on the profile's clock (µs, monotonic).
  if (process.argv.includes('--profile-window')) console.log(`profile window: ${windowStart} ${process.hrtime.bigint() / 1000n}`);
  await stopEngine(engine, m);
  const { rows } = await db.pool.query("SELECT count(*)::int AS n, sum(attempts)::int AS attempts FROM jobs WHERE status = 'SUCCEEDED'");
  if (rows[0].n !== JOBS) throw new Error(`drain check failed: ${JSON.stringify(rows[0])}`);
  return { rate: JOBS / seconds, retried: rows[0].attempts - JOBS, cpu, seconds, walBytes };
}

async function stopEngine(engine: JobEngine, m: Messaging): Promise<void> {
  await engine.stop(5_000);
  await closeMessaging(m);
}

async function measureEnqueue(db: Database, transportName: TransportName): Promise<number> {
  await resetJobs(db);
  const m = await messaging(transportName);
  const engine = buildEngine({ db, transport: m.transport, bus: m.bus, registrations: counterRegistrations(() => undefined) });
  await engine.start();
  const deadline = Date.now() + ENQUEUE_SECONDS * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      while (Date.now() < deadline) {
        await engine.enqueue({ kind: KINDS[client % KINDS.length]!, input: { client } });
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - started) / 1000);
  await stopEngine(engine, m);
  return rate;
}

/** `fastStart` false: every start waits for the job's message to cross the transport (JOB_FAST_START=false). */
async function measureLatency(db: Database, transportName: TransportName, fastStart = true): Promise<number[]> {
  await resetJobs(db);
  const m = await messaging(transportName, fastStart);
  const startedAt = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  const engine = buildEngine({
    db,
    transport: m.transport,
    bus: m.bus,
    settings: { fastStart },
    registrations: counterRegistrations(
      () => undefined,
      (jobId) => {
        startedAt.set(jobId, performance.now());
        waiting.get(jobId)?.();
      },
    ),
  });
  await engine.start();
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES + LATENCY_WARMUP; i++) {
    let started!: () => void;
    const run = new Promise<void>((resolve) => (started = resolve));
    const { job } = await engine.enqueue({ kind: KINDS[0]!, input: { i } });
    const committedAt = performance.now();
    if (!startedAt.has(job.id)) {
      waiting.set(job.id, started);
      await run;
    }
    // The first samples warm connections and JIT; they are not counted.
    if (i >= LATENCY_WARMUP) samples.push(startedAt.get(job.id)! - committedAt);
    await new Promise((r) => setTimeout(r, 10));
  }
  await stopEngine(engine, m);
  return samples;
}

/**
 * A sample is taken from when the enqueue's promise resolves, the first instant the
 * caller knows of the commit; a processor can start before it (rarely, and often when
 * the process shares a core with PostgreSQL), and such a start counts below zero.
 * Printed so a run where many did is read as the lower bound it is.
 */
function startsBeforeResolved(samples: readonly number[]): string {
  const early = samples.filter((ms) => ms < 0).length;
  return early === 0 ? '' : `; ${early} of ${samples.length.toLocaleString('en-US')} started before the enqueue resolved (counted below zero, so the figures are a lower bound)`;
}

/** One figure of the table: a rate (higher is better) or a latency (lower is better), per system. */
interface Row {
  figure: string;
  unit: 'jobs/s' | 'ms';
  values: Record<string, number | undefined>;
}

const ratio = (mine: number | undefined, theirs: number | undefined, unit: Row['unit']) =>
  mine === undefined || theirs === undefined || !theirs ? '–' : unit === 'ms' ? `${(theirs / mine).toFixed(2)}×` : `${(mine / theirs).toFixed(2)}×`;

interface LatencyStats {
  p50: number;
  p95: number;
  p99: number;
}

function latencyStats(samples: number[]): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), p99: quantile(sorted, 0.99) };
}

const describeStats = (s: LatencyStats) => `p50 ${s.p50.toFixed(2)} ms, p95 ${s.p95.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms`;

/** How far the engine's median start is above the floor under it (the engine's own work: handing the message over, the processor's call). */
function aboveFloor(engineP50: number, floor: number): string {
  const gap = engineP50 - floor;
  const where = gap >= 0 ? `${gap.toFixed(2)} ms above it` : `${(-gap).toFixed(2)} ms below it (the floor's parts are measured apart from the engine, so they differ by their noise)`;
  return `the engine's start, p50 ${engineP50.toFixed(2)} ms, is ${where}`;
}

const describeInterval = (i: Interval | null) => (i ? `${i.value.toFixed(2)} ms (${i.low.toFixed(2)}–${i.high.toFixed(2)})` : '–');

/** The speed bars the engine on RabbitMQ is held to: its one-kind drain against Graphile's default, its start. */
const DRAIN_BAR = 1.5;
const START_P50_BAR_MS = 1;
const START_P99_BAR_MS = 3;

/** A system's start p50 and p99, each with its bootstrap interval. */
interface StartIntervals {
  p50: Interval | null;
  p99: Interval | null;
}

/** A bar whose figures this run did not take (`--figures`, `--transports`, `--peers` left them out). */
const NOT_MEASURED = 'not measured in this run';

/** Each bar, with whether this run met it (a latency's with what its interval says). */
function targetVerdicts(rows: Row[], rabbitStarts: StartIntervals | undefined): string[] {
  const drain = rows.find((r) => r.figure.startsWith('drain, 1 kind'));
  const mine = drain?.values['engine rabbitmq'];
  const theirs = drain?.values['graphile default'];
  const drainVerdict = mine !== undefined && theirs ? `${mine / theirs >= DRAIN_BAR ? 'MET' : 'MISSED'} (${(mine / theirs).toFixed(2)}×)` : NOT_MEASURED;
  const latencyBar = (i: Interval | null | undefined, label: string, barMs: number) =>
    `start latency ${label} ≤ ${barMs} ms — ${i ? latencyVerdict(i, barMs) : NOT_MEASURED}`;
  return [
    `drain 1 kind ≥ ${DRAIN_BAR}× graphile default — ${drainVerdict}`,
    latencyBar(rabbitStarts?.p50, 'p50', START_P50_BAR_MS),
    latencyBar(rabbitStarts?.p99, 'p99', START_P99_BAR_MS),
  ];
}

/** MET or MISSED by the run's own figure, and whether the whole interval agrees or it spans the bar (within the noise of the run). */
function latencyVerdict(i: Interval, barMs: number): string {
  const met = i.value <= barMs;
  const agrees = met ? i.high <= barMs : i.low > barMs;
  return `${met ? 'MET' : 'MISSED'}, ${describeInterval(i)}: ${agrees ? `the whole interval ${met ? 'within' : 'past'} the bar` : 'it spans the bar, within the noise of the run'}`;
}

async function mainScale(): Promise<void> {
  if (!(await rabbitAvailable())) throw new Error('--scale needs RabbitMQ');
  const options: ScaleOptions = {
    jobs: JOBS,
    consumers: CONSUMERS,
    prefetch: PREFETCH,
    claimAhead: CLAIM_AHEAD,
    jobsPerMessage: JOBS_PER_MESSAGE,
    steadySeconds: Number(arg('steady-seconds', '10')),
    workerCounts: arg('workers', '1,2,4').split(',').map(Number),
  };
  console.log(`jiaowu-jobs engine benchmark, scale — load before: ${loadAverage()}`);
  const rows = await measureScale(options);
  printScale(rows, options);
  console.log(`load after: ${loadAverage()}`);
  console.log(
    `reproduce: npm run bench:engine -- --scale --jobs ${JOBS} --prefetch ${PREFETCH} --claim-ahead ${CLAIM_AHEAD} --jobs-per-message ${JOBS_PER_MESSAGE} --steady-seconds ${options.steadySeconds} --workers ${options.workerCounts.join(',')}`,
  );
}

async function main(): Promise<void> {
  if (process.argv.includes('--scale')) return mainScale();
  const requested = arg('transports', 'in-memory,rabbitmq').split(',') as TransportName[];
  const transports: TransportName[] = [];
  for (const name of requested) {
    if (name === 'rabbitmq' && !(await rabbitAvailable())) {
      console.log('RabbitMQ does not answer: skipping the rabbitmq transport');
      continue;
    }
    transports.push(name);
  }
  const testDb = await createTestDatabase('bench_engine');
  const db = await openDatabase({ url: testDb.url, poolSize: 24, logger: silentLogger });
  try {
    console.log(`jiaowu-jobs engine benchmark — ${JOBS} jobs, ${CONSUMERS} consumers per kind, ${CLIENTS} clients`);
    console.log(`load before: ${loadAverage()}`);
    const floor = await measureFloor(testDb.url);
    const systems = [
      ...transports.map((t) => `engine ${t}`),
      ...(transports.includes('rabbitmq') && FIGURES.includes('latency') ? [NO_FAST_START] : []),
      ...PEERS.map((mode) => `graphile ${mode}`),
    ];
    const rows: Row[] = [];
    const row = (figure: string, unit: Row['unit']): Row => {
      const r: Row = { figure, unit, values: {} };
      rows.push(r);
      return r;
    };
    const retriedNotes: string[] = [];
    const cpuNotes: string[] = [];
    const hopNotes: string[] = [];
    const floorNotes: string[] = [];
    /** Each system's start latencies, for their intervals and the bars. */
    const starts = new Map<string, number[]>();
    if (PEERS.length > 0) await prepareGraphile(testDb.url);
    for (const figure of FIGURES) {
      switch (figure) {
        case 'drain1':
        case 'drain3': {
          const kinds = figure === 'drain1' ? [KINDS[0]!] : KINDS;
          const r = row(`drain, ${kinds.length} kind${kinds.length > 1 ? 's' : ''} × ${CONSUMERS} consumers`, 'jobs/s');
          for (const transport of transports) {
            const drain = await measureDrain(db, transport, kinds);
            r.values[`engine ${transport}`] = drain.rate;
            cpuNotes.push(`  ${r.figure}, engine ${transport}: ${describeCpuPerJob(drain.cpu, JOBS, drain.seconds)}; ${walPerJob(drain.walBytes, JOBS)}`);
            if (drain.retried > 0) retriedNotes.push(`engine ${transport}, ${r.figure}: ${drain.retried} attempts retried`);
          }
          // Graphile runs one pool for all its task names: the same 16 consumers per kind.
          for (const mode of PEERS) {
            const drain = await graphileDrain(testDb.url, mode, JOBS, kinds, CONSUMERS * kinds.length);
            r.values[`graphile ${mode}`] = drain.rate;
            cpuNotes.push(`  ${r.figure}, graphile ${mode}: ${describeCpuPerJob(drain.cpu, JOBS, drain.seconds)}; ${walPerJob(drain.walBytes, JOBS)}`);
          }
          break;
        }
        case 'enqueue': {
          const r = row(`enqueue, ${CLIENTS} clients (engine.enqueue, addJob)`, 'jobs/s');
          for (const transport of transports) r.values[`engine ${transport}`] = await measureEnqueue(db, transport);
          if (PEERS.length > 0) r.values['graphile default'] = await graphileEnqueue(testDb.url, ENQUEUE_SECONDS, CLIENTS, KINDS);
          break;
        }
        case 'latency': {
          const p50 = row('enqueue commit → processor start, p50', 'ms');
          const p95 = row('enqueue commit → processor start, p95', 'ms');
          const p99 = row('enqueue commit → processor start, p99', 'ms');
          const put = (system: string, samples: number[]) => {
            starts.set(system, samples);
            const stats = latencyStats(samples);
            p50.values[system] = stats.p50;
            p95.values[system] = stats.p95;
            p99.values[system] = stats.p99;
          };
          for (const transport of transports) put(`engine ${transport}`, await measureLatency(db, transport));
          // The same start without the enqueue's NOTIFY taken up: the job's message crosses the broker first.
          if (transports.includes('rabbitmq')) put(NO_FAST_START, await measureLatency(db, 'rabbitmq', false));
          await resetJobs(db);
          const claim = latencyStats(await measureLoneClaim(db, KINDS[0]!, LATENCY_SAMPLES, LATENCY_WARMUP));
          floorNotes.push(`  lone claim (the runner's claim statement alone, one at a time): ${describeStats(claim)}`);
          if (transports.includes('in-memory')) floorNotes.push(`  in memory: the claim alone, ${claim.p50.toFixed(2)} ms; ${aboveFloor(p50.values['engine in-memory']!, claim.p50)}`);
          if (transports.includes('rabbitmq')) {
            for (const type of ['quorum', 'classic'] as const) {
              const hop = latencyStats(await measureBrokerHop(rabbitUrl(), `${uniquePrefix('bench_hop')}.${type}`, type, LATENCY_SAMPLES, LATENCY_WARMUP));
              hopNotes.push(`  ${type} queue: ${describeStats(hop)}`);
              const sum = hop.p50 + claim.p50;
              const engineNote = type === 'quorum' ? `; ${aboveFloor(p50.values['engine rabbitmq']!, sum)}` : ' (the engine declares quorum queues)';
              floorNotes.push(`  rabbitmq, ${type} queue: hop ${hop.p50.toFixed(2)} + claim ${claim.p50.toFixed(2)} = ${sum.toFixed(2)} ms${engineNote}`);
            }
          }
          for (const mode of PEERS) put(`graphile ${mode}`, await graphileLatency(testDb.url, mode, LATENCY_SAMPLES, LATENCY_WARMUP));
          break;
        }
      }
    }
    printTable(rows, systems, floor);
    for (const note of retriedNotes) console.log(note);
    if (cpuNotes.length > 0) console.log(`CPU while draining (this process is the engine's worker, or Graphile's):\n${cpuNotes.join('\n')}`);
    if (hopNotes.length > 0) {
      console.log(`RabbitMQ's own hop, publish → delivery of one persistent message (plain amqplib, the floor under the start latency on RabbitMQ; the engine's queues are quorum queues):\n${hopNotes.join('\n')}`);
    }
    if (floorNotes.length > 0) {
      console.log(`the floor under a start, p50s added (a runner must receive the job's message, then win its claim, before the processor starts):\n${floorNotes.join('\n')}`);
    }
    const intervals = new Map<string, StartIntervals>(
      [...starts].map(([system, samples]) => [system, { p50: quantileInterval(samples, 0.5), p99: quantileInterval(samples, 0.99) }]),
    );
    if (intervals.size > 0) {
      console.log(
        `start latency, each figure with its ${DEFAULT_CONFIDENCE * 100} % interval from a bootstrap of its ${LATENCY_SAMPLES.toLocaleString('en-US')} samples ` +
          `(${DEFAULT_RESAMPLES.toLocaleString('en-US')} resamples; test/bench/support/bootstrap-interval.ts): how far one run's figure moves by luck alone`,
      );
      for (const [system, i] of intervals) console.log(`  ${system}: p50 ${describeInterval(i.p50)}, p99 ${describeInterval(i.p99)}${startsBeforeResolved(starts.get(system)!)}`);
    }
    console.log(`load after: ${loadAverage()}`);
    console.log(`targets (engine rabbitmq): ${targetVerdicts(rows, intervals.get('engine rabbitmq')).join('; ')}`);
    console.log('on a shared machine run it at raised priority (as root: nice -n -10 npm run bench:engine …)');
    console.log(
      `reproduce: npm run bench:engine -- --jobs ${JOBS} --transports ${transports.join(',')} --prefetch ${PREFETCH} --claim-ahead ${CLAIM_AHEAD} --jobs-per-message ${JOBS_PER_MESSAGE} --latency-samples ${LATENCY_SAMPLES} --figures ${FIGURES.join(',')} --peers ${PEERS.join(',') || 'none'}`,
    );
  } finally {
    // The shared broker keeps no queue or exchange of a run that failed.
    for (const m of [...openMessaging]) await closeMessaging(m).catch((error: unknown) => console.error('broker objects not removed:', error));
    await db.close();
    await testDb.drop();
  }
}

function printTable(rows: Row[], systems: string[], floor: number): void {
  const engines = systems.filter((s) => s.startsWith('engine '));
  const peers = systems.filter((s) => s.startsWith('graphile '));
  const header = ['figure', ...systems, ...engines.flatMap((e) => peers.map((p) => `${e.slice(7)} ÷ ${p}`)), ...engines.map((e) => `${e.slice(7)} ÷ floor`)];
  const cells = rows.map((r) => {
    const show = (v: number | undefined) => (v === undefined ? '–' : r.unit === 'ms' ? `${v.toFixed(2)} ms` : `${v.toFixed(0)} jobs/s`);
    return [
      r.figure,
      ...systems.map((s) => show(r.values[s])),
      ...engines.flatMap((e) => peers.map((p) => ratio(r.values[e], r.values[p], r.unit))),
      ...engines.map((e) => (r.unit === 'jobs/s' && r.values[e] !== undefined ? `${(r.values[e]! / floor).toFixed(2)}×` : '–')),
    ];
  });
  console.log(`floor (plain pg, insert+update+update in 3 transactions, ${CLIENTS} clients): ${floor.toFixed(0)} lifecycles/s`);
  console.log('ratios: engine ÷ peer for rates, peer ÷ engine for latencies (above 1× the engine is better)');
  console.log(`| ${header.join(' | ')} |`);
  console.log(`| ${header.map((_, i) => (i === 0 ? '---' : '--:')).join(' | ')} |`);
  for (const c of cells) console.log(`| ${c.join(' | ')} |`);
}

function loadAverage(): string {
  return `load average ${loadavg().map((l) => l.toFixed(2)).join(', ')} on ${cpus().length} cores`;
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
