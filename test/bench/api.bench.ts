/**
 * API enqueue benchmark: `npm run bench:api [-- --seconds 5 --plans 40000 --profile --shared-session]`.
 *
 * - a fresh database with the migrations applied, the demo term (the size a first start
 *   loads) and enough DRAFT plans of it that every start has a plan of its own (one
 *   active job per plan);
 * - an API process started as the service starts (`startApp`, ROLE=api, RabbitMQ under a
 *   unique prefix, NODE_ENV=production with JWT auth; test/bench/support/subscriptions-api.ts);
 * - 1 then 16 clients, each with its own SCHEDULER token and keep-alive socket, calling
 *   `startAutomaticSchedule` over HTTP in a closed loop; every answer must be a QUEUED job;
 * - in this process and the same run, on the same database: the engine's own `enqueue`
 *   (16 and 1 callers) and graphile-worker's `addJob` (16 and 1 callers, its own schema).
 *
 * Prints jobs/s, latency p50/p99 for each, the ratio of the mutation to `addJob`, and the
 * machine's load. `--profile` writes a CPU profile of the API process to
 * test-output/profiles/ and prints where its time went.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeWorkerUtils, runMigrations } from 'graphile-worker';
import { Authenticator } from '../../src/api/auth/authenticator';
import { ApiRole } from '../../src/api/auth/viewer';
import { openDatabase, type Database } from '../../src/database';
import { RabbitMqEventBus } from '../../src/engine/events/rabbitmq-event-bus';
import { jobEventsHoldMs } from '../../src/engine/publisher';
import { silentLogger } from '../../src/engine/logger';
import { RabbitMqTransport, rabbitMqTopology } from '../../src/engine/transport/rabbitmq-transport';
import { ALL_JOB_KINDS } from '../../src/job-kinds';
import { loadDemoData } from '../../src/scheduling/demo-data';
import { buildEngine } from '../support/engine-harness';
import { createTestDatabase, deleteRabbitObjects, rabbitAvailable, rabbitUrl, redact, uniquePrefix, type TestDatabase } from '../support/services';
import { Child, cpuTimes } from './support/bench-child';
import { benchServiceEnv, newBenchJwt, SERVICE_NODE_FLAGS } from './support/bench-service-env';
import { formatProfileSummary, summariseCpuProfile } from './support/cpu-profile-summary';
import { splitSlowest } from './support/request-timings';
import { runHttpLoad, type LoadResult } from './support/http-load';
import { quantile } from './support/quantile';
import type { FromApi, ToApi } from './support/subscriptions-protocol';

function arg(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && process.argv[index + 1] ? process.argv[index + 1]! : fallback;
}
const flag = (name: string) => process.argv.includes(`--${name}`);
function args(name: string): string[] {
  return process.argv.flatMap((value, index) => (value === `--${name}` && process.argv[index + 1] ? [process.argv[index + 1]!] : []));
}

const SECONDS = Number(arg('seconds', '5'));
const PLANS = Number(arg('plans', '40000'));
const PROFILE = flag('profile');
/** Where the API process's output goes (with `--api-node-arg --trace-gc`, its collections). */
const API_LOG = arg('api-log', '');
const CLIENTS = 16;
const ENGINE_KIND = 'BENCH_API';
/** The service's node flags, then any `--api-node-arg` (repeatable; a later flag wins, e.g. `--max-semi-space-size=16` to compare). */
const API_NODE_ARGS = [...SERVICE_NODE_FLAGS, ...args('api-node-arg')];
const TARGETS = { p99OneClientMs: 5 };

const ROOT = path.resolve(__dirname, '../../..');
const DIST = path.resolve(__dirname);
const started = Date.now();
const log = (text: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Figure {
  rate: number;
  p50: number;
  p99: number;
  count: number;
}

const figure = (r: LoadResult): Figure => ({ rate: r.requests / r.seconds, p50: quantile(r.latencies, 0.5), p99: quantile(r.latencies, 0.99), count: r.requests });

/** `callers` loops calling `work` for SECONDS seconds; latency of each call. */
async function closedLoop(callers: number, work: (caller: number) => Promise<void>): Promise<Figure> {
  const latencies: number[] = [];
  const deadline = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      while (performance.now() < deadline) {
        const s = performance.now();
        await work(caller);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { rate: latencies.length / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), count: latencies.length };
}

async function measureEngineEnqueue(db: Database): Promise<{ sixteen: Figure; one: Figure }> {
  const prefix = uniquePrefix('bench_api_engine');
  const url = rabbitUrl();
  const transport = new RabbitMqTransport({ url, prefix, logger: silentLogger });
  // Events held back as an API process's bus holds them (fast start on, its default head start).
  const bus = new RabbitMqEventBus({ url, prefix, logger: silentLogger, receive: 'control', holdMs: jobEventsHoldMs({}, true) });
  // Publisher on, no worker: as in an API process, every enqueue is published to the broker.
  const engine = buildEngine({ db, transport, bus, registrations: [{ kind: ENGINE_KIND, defaults: { consumers: 1 }, processor: async () => undefined }], roles: { worker: false } });
  await engine.start();
  try {
    await closedLoop(CLIENTS, async () => void (await engine.enqueue({ kind: ENGINE_KIND, input: { warm: true } }))); // warm-up (same length)
    const sixteen = await closedLoop(CLIENTS, async (caller) => void (await engine.enqueue({ kind: ENGINE_KIND, input: { caller } })));
    const one = await closedLoop(1, async () => void (await engine.enqueue({ kind: ENGINE_KIND, input: { caller: 0 } })));
    return { sixteen, one };
  } finally {
    await engine.stop(5_000);
    await bus.close();
    await transport.close();
    const topology = rabbitMqTopology(prefix);
    await deleteRabbitObjects(prefix, {
      exchanges: [`${prefix}.job-events`, topology.workExchange, ...topology.delayBucketsMs.map((ms) => topology.delay(ms))],
      queues: [topology.workQueue(ENGINE_KIND), ...topology.delayBucketsMs.map((ms) => topology.delay(ms)), topology.parked],
    });
  }
}

async function measureGraphileAddJob(url: string): Promise<{ sixteen: Figure; one: Figure }> {
  await runMigrations({ connectionString: url, logger: undefined });
  const utils = await makeWorkerUtils({ connectionString: url, maxPoolSize: CLIENTS });
  try {
    await closedLoop(CLIENTS, async () => void (await utils.addJob('noop', { warm: true })));
    const sixteen = await closedLoop(CLIENTS, async (caller) => void (await utils.addJob('noop', { caller })));
    const one = await closedLoop(1, async () => void (await utils.addJob('noop', { caller: 0 })));
    return { sixteen, one };
  } finally {
    await utils.release();
  }
}

async function main(): Promise<void> {
  const command = `npm run bench:api -- --seconds ${SECONDS} --plans ${PLANS}${PROFILE ? ' --profile' : ''}${args('api-node-arg').map((a) => ` --api-node-arg ${a}`).join('')}`;
  log(`API enqueue benchmark: startAutomaticSchedule over HTTP, 1 and ${CLIENTS} clients, ${SECONDS} s each`);
  if (!(await rabbitAvailable())) throw new Error(`RabbitMQ does not answer at ${redact(rabbitUrl())}; start it with \`rabbitmq-server -detached\``);
  const budgetMs = 300_000 + SECONDS * 12_000;
  const children: Child<unknown, { type: string }>[] = [];
  const watchdog = setTimeout(() => {
    log(`watchdog: the run took longer than ${budgetMs} ms; killing the child processes`);
    for (const child of children) child.process.kill('SIGKILL');
    process.exit(1);
  }, budgetMs);
  watchdog.unref();

  const prefix = uniquePrefix('bench_api');
  let testDb: TestDatabase | undefined;
  let db: Database | undefined;
  let api: Child<ToApi, FromApi> | undefined;
  const profileDir = path.join(ROOT, 'test-output', 'profiles');
  try {
    // --- database: migrations, the demo term, one DRAFT plan per start -------------------
    testDb = await createTestDatabase('bench_api');
    db = await openDatabase({ url: testDb.url, poolSize: CLIENTS + 4, logger: silentLogger });
    const term = await loadDemoData(db.orm.em.fork());
    if (!term) throw new Error('the demo term was not created');
    const inserted = await db.pool.query(
      `INSERT INTO schedule_plans (id, term_id, name, status)
       SELECT gen_random_uuid(), $1, 'bench plan ' || i, 'DRAFT' FROM generate_series(1, $2::int) AS i RETURNING id`,
      [term.id, PLANS],
    );
    const plans: string[] = inserted.rows.map((r: { id: string }) => r.id);
    await db.pool.query('VACUUM ANALYZE');
    const counts = await db.pool.query(
      `SELECT (SELECT count(*) FROM academic_courses WHERE term_id = $1) AS courses, (SELECT count(*) FROM academic_rooms WHERE term_id = $1) AS rooms`,
      [term.id],
    );
    log(`database ${testDb.name}: demo term ${term.code} (${counts.rows[0].courses} courses, ${counts.rows[0].rooms} rooms), ${plans.length} DRAFT plans`);

    // --- the API process -------------------------------------------------------------
    const jwt = newBenchJwt();
    if (PROFILE) fs.mkdirSync(profileDir, { recursive: true });
    api = new Child<ToApi, FromApi>(
      'API process',
      path.join(DIST, 'support', 'subscriptions-api.js'),
      ['--expose-gc', ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...API_NODE_ARGS],
      {
        ROLE: 'api',
        ...benchServiceEnv({ databaseUrl: testDb.url, prefix, jwt, logLevel: 'info' }),
        DB_POOL_SIZE: '20',
        // The per-token allowance is for people; the bench's clients are machines.
        RATE_LIMIT_PER_SUBJECT: '100000',
        // The one-client figure's split: how long the API held each request (request-timings.ts).
        BENCH_REQUEST_TIMINGS: '1',
      },
      // As on a machine of its own, apart from the clients in this process (see
      // `ownSession`); `--shared-session` keeps it in the benchmark's session, to compare.
      { log, ownSession: !flag('shared-session') },
    );
    children.push(api as never);
    if (API_LOG) {
      const file = fs.createWriteStream(API_LOG);
      api.process.stdout!.pipe(file);
      api.process.stderr!.pipe(file);
    }
    const ready = await api.wait('ready', 60_000);
    log(`API process ${ready.pid} serving ${ready.url}`);
    await sleep(300);

    const authenticator = new Authenticator(jwt);
    const tokens: string[] = [];
    for (let i = 0; i < CLIENTS; i++) tokens.push(await authenticator.sign({ sub: `bench-scheduler-${i}`, roles: [ApiRole.SCHEDULER] }, '2h'));
    let next = 0;
    const query = 'mutation Start($input: StartAutomaticScheduleInput!) { startAutomaticSchedule(input: $input) { id status } }';
    const load = (clients: number, seconds: number, tag = false) =>
      runHttpLoad({
        url: `${ready.url}/graphql`,
        clients,
        seconds,
        tag,
        token: (client) => tokens[client]!,
        body: () => (next < plans.length ? JSON.stringify({ query, variables: { input: { planId: plans[next++], timeLimitSeconds: 5 } } }) : null),
        check: (answer) => {
          const job = (answer.data as { startAutomaticSchedule?: { id: string; status: string } } | undefined)?.startAutomaticSchedule;
          if (!job || job.status !== 'QUEUED') throw new Error(`not a QUEUED job: ${JSON.stringify(answer).slice(0, 300)}`);
        },
      });

    // The fixed cost of any GraphQL request over HTTP with the same auth: the floor of a start.
    const trivial = (clients: number, seconds: number) =>
      runHttpLoad({
        url: `${ready.url}/graphql`,
        clients,
        seconds,
        token: (client) => tokens[client]!,
        body: () => '{"query":"{ __typename }"}',
        check: (answer) => {
          if ((answer.data as { __typename?: string } | undefined)?.__typename !== 'Query') throw new Error(`not the query's answer: ${JSON.stringify(answer).slice(0, 300)}`);
        },
      });

    const pids = { api: api.process.pid, bench: process.pid };
    await load(CLIENTS, Math.min(2, SECONDS)); // warm-up: JIT, pools, caches
    await trivial(CLIENTS, Math.min(1, SECONDS));
    const apiCpuPerRequest = async (run: () => Promise<LoadResult>) => {
      const before = cpuTimes(pids);
      const result = await run();
      const after = cpuTimes(pids);
      return { result, cpuMs: before && after ? ((after.byName.api! - before.byName.api!) * 1000) / Math.max(1, result.requests) : NaN };
    };
    const floor = await apiCpuPerRequest(() => trivial(CLIENTS, SECONDS));
    /** Waits until the API's publisher has sent every job enqueued so far; how long that took. */
    const published = async () => {
      const t = Date.now();
      for (;;) {
        const { rows } = await db!.pool.query(`SELECT count(*)::int AS n FROM job_outbox WHERE state IN ('PENDING', 'PUBLISHING')`);
        if (rows[0].n === 0) return Date.now() - t;
        if (Date.now() - t > 120_000) throw new Error(`the publisher left ${rows[0].n} jobs unpublished for 120 s`);
        await sleep(20);
      }
    };
    await published();
    /** The API's collections since the last ask (its `stats`). */
    let statsId = 0;
    const collections = async () => (await api!.request({ type: 'stats', id: ++statsId }, 'stats', 30_000)).gcs;
    await collections();
    const cpu0 = cpuTimes(pids);
    const t0 = Date.now();
    const sixteen = await load(CLIENTS, SECONDS);
    // A start's work ends when its job is published: the CPU and time up to then count.
    const publishLagMs = await published();
    const cpu1 = cpuTimes(pids);
    const sixteenMs = Date.now() - t0;
    const sixteenGcs = await collections();
    const one = await load(1, SECONDS, true);
    const oneGcs = await collections();
    const { timings } = await api.request({ type: 'requestTimings', id: 1 }, 'requestTimings', 30_000);
    const slowest = splitSlowest(one.tagged, timings, 0.01);
    const typical = splitSlowest(one.tagged, timings, 1);
    const failures = sixteen.failures + one.failures + floor.result.failures;
    if (failures) log(`FAILED requests: ${failures}: ${[...sixteen.errors, ...one.errors, ...floor.result.errors].join(' | ')}`);
    if (next >= plans.length) log(`WARNING: the ${plans.length} plans ran out; run with a larger --plans`);
    let cpu = '';
    if (cpu0 && cpu1) {
      const cores = (name: string) => ((cpu1.byName[name]! - cpu0.byName[name]!) / (sixteenMs / 1000)).toFixed(2);
      const ours = cpu1.byName.api! - cpu0.byName.api! + cpu1.byName.bench! - cpu0.byName.bench!;
      const perStart = ((cpu1.byName.api! - cpu0.byName.api!) * 1000) / Math.max(1, sixteen.requests);
      cpu = `API ${cores('api')} (${perStart.toFixed(2)} ms of CPU per start), clients ${cores('bench')}, everything else (PostgreSQL, broker, other processes) ${((cpu1.machine - cpu0.machine - ours) / (sixteenMs / 1000)).toFixed(2)} — of ${os.cpus().length} cores`;
    }
    cpu += `; the publisher sent the last of these jobs ${publishLagMs} ms after the last start (included)`;
    const jobs = await db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'AUTOMATIC_SCHEDULE' AND status = 'QUEUED'`);
    log(`API: ${sixteen.requests + one.requests} starts answered QUEUED; ${jobs.rows[0].n} QUEUED jobs in the database (the warm-up's included)`);

    api.send({ type: 'stop' });
    const apiExit = await api.finish(60_000);

    // --- the engine's own enqueue and graphile-worker's addJob, same database ----------
    log('engine enqueue…');
    const engine = await measureEngineEnqueue(db);
    log('graphile-worker addJob…');
    const graphile = await measureGraphileAddJob(testDb.url);

    const rows: [string, Figure][] = [
      [`startAutomaticSchedule over HTTP, ${CLIENTS} clients`, figure(sixteen)],
      ['startAutomaticSchedule over HTTP, 1 client', figure(one)],
      [`{ __typename } over HTTP, ${CLIENTS} clients`, figure(floor.result)],
      ['', { rate: NaN, p50: NaN, p99: NaN, count: 0 }],
      [`engine.enqueue, ${CLIENTS} callers`, engine.sixteen],
      ['engine.enqueue, 1 caller', engine.one],
      [`graphile-worker addJob, ${CLIENTS} callers`, graphile.sixteen],
      ['graphile-worker addJob, 1 caller', graphile.one],
    ];
    const w0 = Math.max(...rows.map((r) => r[0].length));
    const num = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
    const lines = [
      '',
      `API enqueue benchmark — demo term, ${SECONDS} s per figure, after a warm-up`,
      `${'figure'.padEnd(w0)}  ${'jobs/s'.padStart(7)}  ${'p50 ms'.padStart(7)}  ${'p99 ms'.padStart(7)}  ${'× addJob'.padStart(8)}`,
      `${'-'.repeat(w0)}  -------  -------  -------  --------`,
      ...rows.filter(([name]) => name).map(([name, f]) => {
        const peer = name.includes(`${CLIENTS} c`) ? graphile.sixteen : graphile.one;
        return `${name.padEnd(w0)}  ${num(f.rate).padStart(7)}  ${num(f.p50, 2).padStart(7)}  ${num(f.p99, 2).padStart(7)}  ${(f.rate / peer.rate).toFixed(2).padStart(8)}`;
      }),
      '',
      `Targets (issue 11): startAutomaticSchedule with ${CLIENTS} clients ≥ addJob with ${CLIENTS} (${(sixteen.requests / sixteen.seconds / graphile.sixteen.rate).toFixed(2)}×: ${sixteen.requests / sixteen.seconds >= graphile.sixteen.rate ? 'MET' : 'MISSED'}); one client p99 < ${TARGETS.p99OneClientMs} ms (${num(figure(one).p99, 2)} ms: ${figure(one).p99 < TARGETS.p99OneClientMs ? 'MET' : 'MISSED'}).`,
      `One client, where the time went (means; "held" is from the request's headers read by the API to its answer handed to the kernel; see request-timings.ts):`,
      ...([
        [`all ${typical.count} starts`, typical],
        [`slowest 1 % (${slowest.count})`, slowest],
      ] as const).map(
        ([name, s]) =>
          `  ${name}: ${num(s.totalMs, 2)} ms = ${num(s.heldMs, 2)} held by the API (its main thread ran ${num(s.runMs, 2)} — GC pauses ${num(s.gcMs, 2)} of it —, waited for a core ${num(s.waitMs, 2)}, slept ${num(s.heldMs - s.runMs - s.waitMs, 2)} on PostgreSQL and the broker) + ${num(s.outsideMs, 2)} outside it (waiting to be read, the way back, the client)`,
      ),
      ...([
        [`${CLIENTS} clients`, sixteenGcs, sixteen.requests],
        ['one client', oneGcs, one.requests],
      ] as const).map(
        ([name, g, requests]) =>
          `API collections, ${name}: ${g.minor} young-generation (one per ${num(requests / Math.max(1, g.minor))} starts, mean pause ${num(g.minorMs / Math.max(1, g.minor), 2)} ms), ${g.major} full (longest ${num(g.longestMajorMs, 1)} ms)`,
      ),
      `Failed requests: ${failures}. API process: ${apiExit}.`,
      cpu ? `CPU while ${CLIENTS} clients ran: ${cpu}.` : '',
      `API CPU per request, ${CLIENTS} clients: { __typename } ${floor.cpuMs.toFixed(2)} ms (the fixed cost of a GraphQL request over HTTP with auth).`,
      `Load: ${fs.readFileSync('/proc/loadavg', 'utf8').trim()} (1, 5, 15 min; ${os.cpus().length} cores)`,
      `Reproduce: ${command}`,
    ];
    if (PROFILE) {
      const file = fs
        .readdirSync(profileDir)
        .filter((f) => f.endsWith('.cpuprofile') && f.includes(`.${ready.pid}.`))
        .map((f) => path.join(profileDir, f))[0];
      if (file) {
        lines.push(`CPU profile of the API process (warm-up and both loads): ${path.relative(ROOT, file)}`);
        lines.push(formatProfileSummary(summariseCpuProfile(file, ['startAutomaticSchedule', 'loadTermData', 'compileModel', 'buildCttModel', 'checkScheduleStart', 'enqueue', 'transactional', 'flush', 'execute', 'verify', 'processGraphQLRequest', 'requestDidStart'])));
      } else lines.push(`no CPU profile of process ${ready.pid} in ${profileDir}`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    if (failures) process.exitCode = 1;
  } finally {
    if (api?.running) {
      api.process.kill('SIGTERM');
      await api.finish(15_000);
    }
    const topology = rabbitMqTopology(prefix);
    const removed = await deleteRabbitObjects(prefix, {
      exchanges: [`${prefix}.job-events`, topology.workExchange, ...topology.delayBucketsMs.map((ms) => topology.delay(ms))],
      queues: [...ALL_JOB_KINDS.map((kind) => topology.workQueue(kind)), ...topology.delayBucketsMs.map((ms) => topology.delay(ms)), topology.parked],
    });
    log(`broker cleaned: ${removed.exchanges.length} exchanges, ${removed.queues.length} queues under ${prefix}`);
    await db?.close().catch(() => undefined);
    await testDb?.drop().catch((error) => log(`database drop failed: ${String(error)}`));
    if (testDb) log(`database ${testDb.name} dropped`);
    clearTimeout(watchdog);
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error) => {
    process.stderr.write(`API benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);

