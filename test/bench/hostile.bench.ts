/**
 * Hostile-load benchmark: `npm run bench:hostile [-- --seconds 60]`.
 *
 * - a fresh database with the migrations applied and a generated term of `--courses`
 *   courses whose draft plan has every lecture placed (so lists and plans weigh what
 *   they would on a real term);
 * - an API process (the service's `startApp`, ROLE=api, NODE_ENV=production, JWT with
 *   issuer and audience, RabbitMQ under a unique prefix; test/bench/support/subscriptions-api.ts)
 *   and a worker process (ROLE=worker) running the stand-in of MAKEUP_EXAM_AUTO
 *   (test/support/test-kinds.ts: short jobs of `--job-steps` steps), so job events are
 *   stamped by a process the attack does not stall;
 * - an honest client process (support/hostile-honest.ts, from 127.0.0.2): a viewer with
 *   `--subscriptions` jobProgress subscriptions on its own jobs (a new job each time one
 *   ends) and `--query-rate` queries a second (a jobs page, a terms list), sent at random
 *   moments (`--honest-arrivals poisson`): the attack lanes each fire on a fixed 1/rate
 *   cycle, all from the same start, and queries sent on a fixed cycle of their own
 *   (`--honest-arrivals even`) would meet that cycle at one phase for the whole run —
 *   whether it is the phase of the attack's bursts or the quiet between them is luck;
 * - an attacker process (support/hostile-attacker.ts, attacks in support/hostile-attacks.ts,
 *   from 127.0.0.10 on): anonymous clients, viewers and bad tokens sending the worst
 *   operations they can, each lane paced to `--attack-rate` operations a second.
 *   Attackers are on machines of their own, so their CPU must not be taken from the
 *   service's two cores: their process runs in a CPU cgroup with `cpu.idle` = 1
 *   (support/idle-cgroup.ts), which gets a core only when nothing else wants it, or at
 *   nice 19 where the machine has no such cgroup (nice 19 still takes a weighted turn on
 *   the cores); `--attackers-nice` uses nice 19 alone, to compare. They still get every
 *   idle moment, and the table's `sent` column shows whether each lane kept its pace.
 * - Each of these processes runs in a session of its own (`ownSession` in
 *   support/bench-child.ts): with the kernel's per-session scheduling groups, processes
 *   sharing the benchmark's session would share one group's turn on the cores, and the
 *   attackers' CPU would delay the API behind PostgreSQL and RabbitMQ whatever their nice
 *   value. `--shared-session` keeps them in the benchmark's session, to compare.
 *
 * Phases: warm-up, `--seconds` with only the honest client (idle before), the process's
 * first attack (`--first-attack-seconds`, from callers of its own: see
 * FIRST_ATTACK_SECONDS), `--seconds` under attack, and as long idle again once the
 * attackers are gone (idle after), each beginning `--settle` seconds after a forced gc.
 * Prints the honest client's query latency, event delay and subscribe time in each
 * phase, the API's event-loop delay, heap (peak, and after gc) and CPU, every hostile
 * operation's outcome (refused how, accepted, 5xx, failed), then the bar: the honest
 * p99s under attack within 2× the idle ones (both attacks' samples together against
 * both idle phases', see `pooled`), no 5xx, heap bounded, no stall over 100 ms, no
 * honest operation failing. Exits 1 when a bar fails (not with `--no-bar`) or when the
 * bench itself could not measure.
 */
import 'reflect-metadata';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Authenticator } from '../../src/api/auth/authenticator';
import { BURST_WINDOW_SECONDS } from '../../src/api/rate-limiter';
import { ApiRole } from '../../src/api/auth/viewer';
import { Course, Room } from '../../src/academic/entities';
import { DEFAULT_LIMITS } from '../../src/config';
import { openDatabase } from '../../src/database';
import { silentLogger } from '../../src/engine/logger';
import { ALL_JOB_KINDS, JobKind } from '../../src/job-kinds';
import { createGeneratedTerm, generateTerm } from '../../src/scheduling/demo-data';
import { ScheduleAssignment } from '../../src/scheduling/entities';
import { createTestDatabase, deleteEngineTopology, deleteRabbitObjects, rabbitAvailable, rabbitUrl, redact, uniquePrefix, type TestDatabase } from '../support/services';
import { TEST_KINDS_ENV } from '../support/test-kinds';
import { Child, cpuTimes } from './support/bench-child';
import { benchServiceEnv, newBenchJwt, SERVICE_NODE_FLAGS } from './support/bench-service-env';
import { ATTACKS } from './support/hostile-attacks';
import { DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, p99RatioInterval } from './support/bootstrap-interval';
import { QUERY_ARRIVAL_KINDS, type AttackReport, type FromAttacker, type FromHonest, type HonestPhase, type Percentiles, type QueryArrivals, type SampledPercentiles, type ToAttacker, type ToHonest } from './support/hostile-protocol';
import { percentiles } from './support/hostile-net';
import { joinTimings, splitSlowest, type RequestSplit, type ServerTiming } from './support/request-timings';
import type { FromApi, ToApi } from './support/subscriptions-protocol';

function arg(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && process.argv[index + 1] ? process.argv[index + 1]! : fallback;
}
function args(name: string): string[] {
  return process.argv.flatMap((value, index) => (value === `--${name}` && process.argv[index + 1] ? [process.argv[index + 1]!] : []));
}
const flag = (name: string) => process.argv.includes(`--${name}`);
function nonNegative(name: string, fallback: number): number {
  const value = Number(arg(name, String(fallback)));
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number ≥ 0`);
  return value;
}
function positive(name: string, fallback: number): number {
  const value = Number(arg(name, String(fallback)));
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

const DEFAULTS = {
  seconds: 60,
  // The honest client's start (200 subscribes at once) spends its subject's burst
  // allowance of subscribes; the allowance refills per BURST_WINDOW_SECONDS, and the
  // steady re-subscribes (a job ends, another starts) must not be measured against an
  // allowance still spent by the start.
  warmup: BURST_WINDOW_SECONDS + 2,
  subscriptions: 200,
  sockets: 4,
  // Half the default RATE_LIMIT_PER_SUBJECT: an office page is well inside the limits
  // (a client at the limit itself is refused whenever its queries bunch up).
  queryRate: DEFAULT_LIMITS.http.perSubject / 2,
  courses: 2000,
  jobSteps: 10,
  jobStepMs: 200,
  consumers: 16,
  attackRate: 10,
  bombFragments: 24,
  floodSockets: 300,
  floodSubscriptions: 1000,
  timeoutMs: 60_000,
};
const SECONDS = positive('seconds', DEFAULTS.seconds);
const WARMUP = positive('warmup', DEFAULTS.warmup);
const SUBSCRIPTIONS = positive('subscriptions', DEFAULTS.subscriptions);
const SOCKETS = positive('sockets', DEFAULTS.sockets);
const QUERY_RATE = positive('query-rate', DEFAULTS.queryRate);
/** When the honest queries are sent (HonestSettings.queryArrivals): `poisson` (the default) or `even`. */
const QUERY_ARRIVALS = arg('honest-arrivals', 'poisson') as QueryArrivals;
if (!QUERY_ARRIVAL_KINDS.includes(QUERY_ARRIVALS)) throw new Error(`--honest-arrivals must be one of ${QUERY_ARRIVAL_KINDS.join(', ')}`);
const COURSES = positive('courses', DEFAULTS.courses);
const JOB_STEPS = positive('job-steps', DEFAULTS.jobSteps);
const JOB_STEP_MS = positive('job-step-ms', DEFAULTS.jobStepMs);
const CONSUMERS = positive('consumers', DEFAULTS.consumers);
const ATTACK_RATE = positive('attack-rate', DEFAULTS.attackRate);
const BOMB_FRAGMENTS = positive('bomb-fragments', DEFAULTS.bombFragments);
const FLOOD_SOCKETS = positive('flood-sockets', DEFAULTS.floodSockets);
const FLOOD_SUBSCRIPTIONS = positive('flood-subscriptions', DEFAULTS.floodSubscriptions);
const TIMEOUT_MS = positive('timeout-ms', DEFAULTS.timeoutMs);
/**
 * The process's first attack, before the second: `--first-attack-seconds` (`--seconds`
 * by default; 0 for one attack only), from callers of its own (FIRST_ATTACK_CALLERS).
 * The p99 bars judge both attacks' samples together, as they judge both idle phases'
 * together: one minute's p99 is its sixth-slowest query, which one slow second moves;
 * two minutes' is the twelfth of 1,200, and luck moves it about √2 less. The two
 * attacks differ as a real service's do: the first meets a process that has never run
 * its refusal paths, the second a warm one, from callers its limits have never seen.
 */
const FIRST_ATTACK_SECONDS = nonNegative('first-attack-seconds', SECONDS);
/** The attackers' nice value: lowest priority (see the header). */
const ATTACKER_NICENESS = 19;
/** The attackers in an idle CPU cgroup where the machine has one (see the header); `--attackers-nice` for nice 19 alone, to compare. */
const ATTACKERS_IDLE_CGROUP = !flag('attackers-nice');
/** `--attackers-cpus 1`: the attackers' process confined to these cores (taskset -c), to compare. */
const ATTACKER_CPUS = arg('attackers-cpus', '') || undefined;
const ATTACK_NAMES = arg('attacks', ATTACKS.map((a) => a.name).join(',')).split(',').filter(Boolean);
/** Extra environment for the API process, e.g. `--api-env GRAPHQL_MAX_COMPLEXITY=500` (repeatable). */
const API_ENV = Object.fromEntries(
  args('api-env').map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--api-env takes NAME=value, not ${JSON.stringify(pair)}`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);
const API_LOG = arg('api-log', '');
/** Extra node flags for the API process, e.g. `--api-node-arg --max-semi-space-size=32` (repeatable; with `--api-log`, `--trace-gc`). */
const API_EXTRA_NODE_ARGS = args('api-node-arg');
const NO_BAR = flag('no-bar');
/** Each child in a session of its own (see the header); `--shared-session` to compare. */
const OWN_SESSION = !flag('shared-session');
/** Print, for each outcome, the first error message or close reason seen with it. */
const EXAMPLES = flag('examples');
/** Write a CPU profile of the API process (the whole run) to test-output/profiles/. */
const PROFILE = flag('profile');
const API_NODE_ARGS = ['--expose-gc', ...SERVICE_NODE_FLAGS];
/**
 * After a forced gc, honest load alone for `--settle` seconds before a phase starts, so
 * that every phase starts from the same heap state. A full gc sets V8's old-generation
 * limit just above what is live, shrinks the young generation and may drop compiled code:
 * the seconds after one run colder than the rest. Start-up's collections leave a far
 * looser limit: an idle phase run on it has no major GC in a minute where the attack phase,
 * after the gc that reads the idle phase's heap, has one every 4–5 s (`--trace-gc`).
 */
const AFTER_GC_SETTLE_MS = positive('settle', 10) * 1000;

/** The bar. The heap bounds are this bench's own: growth an attack may cause at its peak, and what may stay after it (caches). */
const BAR = { p99Factor: 2, loopMaxMs: 100, heapPeakGrowthMiB: positive('heap-peak-mib', 128), heapEndGrowthMiB: positive('heap-end-mib', 64) };
const HONEST_ADDRESS = '127.0.0.2';
const STAND_IN_KIND = JobKind.MAKEUP_EXAM_AUTO;

const DIST = path.resolve(__dirname);
const ROOT = path.resolve(__dirname, '../../..');
const started = Date.now();
const log = (text: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const ms = (value: number) => (Number.isFinite(value) ? `${Math.round(value)}` : '–');

function reproduceCommand(): string {
  const given = process.argv.slice(2).join(' ');
  return `npm run bench:hostile${given ? ` -- ${given}` : ''}`;
}

/** Places every lecture of the term's courses somewhere (clashes included): the plan then weighs what a real one does. */
async function placeEveryLecture(db: Awaited<ReturnType<typeof openDatabase>>, termId: string, planId: string, days: number, periods: number): Promise<number> {
  const em = db.orm.em.fork();
  const courses = await em.find(Course, { term: termId });
  const rooms = await em.find(Room, { term: termId });
  let placed = 0;
  let seed = 12345;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  for (const course of courses) {
    for (let lecture = 0; lecture < course.lecturesPerWeek; lecture++) {
      em.create(ScheduleAssignment, { plan: planId, course, lectureIndex: lecture, day: next(days), period: next(periods), room: rooms[next(rooms.length)]! });
      placed++;
    }
  }
  await em.flush();
  return placed;
}

/** GET /health/live; resolves with the ms it took to answer (bounded). */
function healthLive(url: string, timeoutMs: number): Promise<number | null> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const request = http.get(`${url}/health/live`, { timeout: timeoutMs }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode === 200 ? performance.now() - t0 : null));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(null));
  });
}

type Stats = Extract<FromApi, { type: 'stats' }>;
type Cpu = ReturnType<typeof cpuTimes>;

interface PhaseFigures {
  honest: HonestPhase;
  api: Stats;
  cpu: Record<string, number>;
  machineOther: number;
  seconds: number;
}

/** The honest client's name for the first attack's phase (see FIRST_ATTACK_SECONDS). */
const FIRST_ATTACK_PHASE = 'first attack';
/** The first attack's callers: addresses 127.0.1.x and subjects of their own (AttackSettings.callers). */
const FIRST_ATTACK_CALLERS = 1;
/** The second attack's callers: addresses 127.0.0.10 on (AttackSettings.callers). */
const ATTACK_CALLERS = 0;
interface FirstAttack extends Omit<PhaseFigures, 'honest'> {
  /** Its hostile operations, per attack. */
  attacks: AttackReport[];
  exit: string;
}

function cpuDelta(before: Cpu, after: Cpu, seconds: number): { byName: Record<string, number>; other: number } {
  if (!before || !after) return { byName: {}, other: NaN };
  const byName: Record<string, number> = {};
  let ours = 0;
  for (const name of Object.keys(after.byName)) {
    const used = after.byName[name]! - (before.byName[name] ?? 0);
    byName[name] = used / seconds;
    ours += used;
  }
  return { byName, other: (after.machine - before.machine - ours) / seconds };
}

async function main(): Promise<void> {
  const unknown = ATTACK_NAMES.filter((name) => !ATTACKS.some((a) => a.name === name));
  if (unknown.length) throw new Error(`unknown attack(s) ${unknown.join(', ')}; known: ${ATTACKS.map((a) => a.name).join(', ')}`);
  log(`hostile-load benchmark: ${SECONDS} s idle, ${FIRST_ATTACK_SECONDS > 0 ? `${FIRST_ATTACK_SECONDS} s of a first attack from callers of its own, ` : ''}${SECONDS} s under attack (${ATTACK_NAMES.length} attacks), ${SECONDS} s idle again; honest client: ${SUBSCRIPTIONS} jobProgress subscriptions, ${QUERY_RATE} queries/s (${QUERY_ARRIVALS} arrivals)`);
  if (!(await rabbitAvailable())) throw new Error(`RabbitMQ does not answer at ${redact(rabbitUrl())}; start it with \`rabbitmq-server -detached\``);

  // A whole-run watchdog: everything is bounded in time.
  const budgetMs = 600_000 + (2 * SECONDS + WARMUP + FIRST_ATTACK_SECONDS) * 1000 + 6 * TIMEOUT_MS;
  const children: Child<never, { type: string }>[] = [];
  const watchdog = setTimeout(() => {
    log(`watchdog: the run took longer than ${budgetMs} ms; killing the child processes`);
    for (const child of children) child.process.kill('SIGKILL');
    process.exit(1);
  }, budgetMs);
  watchdog.unref();

  const prefix = uniquePrefix('bench_hostile');
  let testDb: TestDatabase | undefined;
  let api: Child<ToApi, FromApi> | undefined;
  let worker: Child<ToApi, FromApi> | undefined;
  let honest: Child<ToHonest, FromHonest> | undefined;
  let attacker: Child<ToAttacker, FromAttacker> | undefined;
  try {
    // --- database: migrations, a term of COURSES courses with a full draft plan ----------
    testDb = await createTestDatabase('bench_hostile');
    const db = await openDatabase({ url: testDb.url, poolSize: 4, logger: silentLogger });
    const size = {
      courses: COURSES,
      // Room for every lecture (about 3 a course in 30 periods), or the plan's evaluation refuses the term.
      rooms: Math.max(4, Math.ceil(COURSES / 5)),
      curricula: Math.max(2, Math.ceil(COURSES / 4)),
      teachers: Math.max(4, Math.ceil(COURSES / 2.5)),
      days: 5,
      periodsPerDay: 6,
    };
    const { term, plan } = await createGeneratedTerm(db.orm.em.fork(), generateTerm(size, 7, 'HOSTILE-BENCH'), 'Bench draft');
    const placed = await placeEveryLecture(db, term.id, plan.id, size.days, size.periodsPerDay);
    await db.close();
    log(`database ${testDb.name}: a term of ${COURSES} courses, ${size.teachers} teachers, ${size.rooms} rooms; its draft plan has ${placed} lectures placed`);

    // --- the API and worker processes ---------------------------------------------------
    const jwt = newBenchJwt();
    const common = {
      ...benchServiceEnv({ databaseUrl: testDb.url, prefix, jwt, logLevel: 'warn' }),
      SHUTDOWN_GRACE_SECONDS: '5',
    };
    worker = new Child<ToApi, FromApi>(
      'worker process',
      path.join(DIST, 'support', 'subscriptions-api.js'),
      API_NODE_ARGS,
      { ...common, ROLE: 'worker', [TEST_KINDS_ENV]: STAND_IN_KIND, [`JOB_CONSUMERS_${STAND_IN_KIND}`]: String(CONSUMERS), DB_POOL_SIZE: '20' },
      { log, ownSession: OWN_SESSION },
    );
    children.push(worker as never);
    const workerReady = worker.wait('ready', 60_000);
    const profileDir = path.join(ROOT, 'test-output', 'profiles');
    if (PROFILE) fs.mkdirSync(profileDir, { recursive: true });
    const apiNodeArgs = [...API_NODE_ARGS, ...API_EXTRA_NODE_ARGS, ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])];
    api = new Child<ToApi, FromApi>('API process', path.join(DIST, 'support', 'subscriptions-api.js'), apiNodeArgs, { ...common, ROLE: 'api', DB_POOL_SIZE: '20', BENCH_REQUEST_TIMINGS: '1', ...API_ENV }, { log, ownSession: OWN_SESSION });
    children.push(api as never);
    if (API_LOG) {
      const file = fs.createWriteStream(API_LOG);
      api.process.stdout!.pipe(file);
      api.process.stderr!.pipe(file);
    }
    // Both start at once; the worker must consume before the first job is inserted.
    const [ready] = await Promise.all([api.wait('ready', 60_000), workerReady]);
    const wsUrl = `${ready.url.replace(/^http/, 'ws')}/graphql`;
    log(`API process ${ready.pid} serving ${ready.url}; worker process ${worker.process.pid} running ${STAND_IN_KIND} stand-ins (${CONSUMERS} consumers, ${JOB_STEPS} steps × ${JOB_STEP_MS} ms)`);
    let requestId = 0;
    const stats = () => api!.request({ type: 'stats', id: ++requestId }, 'stats', TIMEOUT_MS * 3);
    const heap = () => api!.request({ type: 'heap', id: ++requestId }, 'heap', TIMEOUT_MS * 3);

    // --- the honest client ---------------------------------------------------------------
    const authenticator = new Authenticator(jwt);
    const subject = 'bench-honest';
    honest = new Child<ToHonest, FromHonest>('honest client', path.join(DIST, 'support', 'hostile-honest.js'), [], {}, { log, ownSession: OWN_SESSION });
    children.push(honest as never);
    const honestStarted = honest.wait('started', 120_000);
    honest.send({
      type: 'start',
      settings: {
        httpUrl: ready.url,
        wsUrl,
        token: await authenticator.sign({ sub: subject, roles: [ApiRole.VIEWER] }, '2h'),
        subject,
        databaseUrl: testDb.url,
        jobKind: STAND_IN_KIND,
        jobInput: { steps: JOB_STEPS, stepMs: JOB_STEP_MS },
        subscriptions: SUBSCRIPTIONS,
        sockets: SOCKETS,
        queryRate: QUERY_RATE,
        queryArrivals: QUERY_ARRIVALS,
        localAddress: HONEST_ADDRESS,
        timeoutMs: TIMEOUT_MS,
      },
    });
    const honestFailed = honest.wait('failed', 120_000).then(
      (m) => Promise.reject(new Error(`honest client: ${m.error}`)),
      () => new Promise<never>(() => undefined), // no failure reported: the race is decided by 'started'
    );
    const honestReady = await Promise.race([honestStarted, honestFailed]);
    log(`honest client: ${honestReady.subscribed} of ${SUBSCRIPTIONS} subscriptions started in ${honestReady.ms} ms${honestReady.errors.length ? ` (errors: ${honestReady.errors.join('; ')})` : ''}`);
    if (honestReady.subscribed < SUBSCRIPTIONS) throw new Error(`only ${honestReady.subscribed} of ${SUBSCRIPTIONS} honest subscriptions started`);
    await sleep(WARMUP * 1000);

    // The attackers' process of the phase counts while it runs (it is gone in the idle phase after the attack).
    let attacking: Child<ToAttacker, FromAttacker> | undefined;
    const pids = () => ({ api: api!.process.pid, worker: worker!.process.pid, honest: honest!.process.pid, attacker: attacking?.running ? attacking.process.pid : undefined });
    /**
     * The honest client's figures and the CPU count for `during`; the API's loop delay
     * and heap peak also for `drain` after it (an attack's consequences last until its
     * last operation is answered).
     */
    const phase = async (name: string, during: () => Promise<void>, drain?: () => Promise<void>): Promise<Omit<PhaseFigures, 'honest'>> => {
      await stats(); // resets the API's loop-delay histogram and heap peak
      const cpuBefore = cpuTimes(pids());
      const t0 = Date.now();
      honest!.send({ type: 'phase', phase: name, atMs: t0 });
      await during();
      const endsAt = Date.now();
      honest!.send({ type: 'phase', phase: `after ${name}`, atMs: endsAt });
      const seconds = (endsAt - t0) / 1000;
      const cpu = cpuDelta(cpuBefore, cpuTimes(pids()), seconds);
      await drain?.();
      const apiStats = await stats();
      return { api: apiStats, cpu: cpu.byName, machineOther: cpu.other, seconds };
    };
    /** The honest client alone for `--seconds`. */
    const idlePhase = (name: string) =>
      phase(name, async () => {
        await sleep(SECONDS * 1000);
      });

    // Every phase starts from the same heap state: a forced gc (idle before's heap after gc
    // is read by one, just before the attack), then AFTER_GC_SETTLE_MS of honest load.
    await heap();
    await sleep(AFTER_GC_SETTLE_MS);

    // --- idle before: the honest client alone -------------------------------------------------
    log(`idle before: ${SECONDS} s of the honest client alone`);
    const idleBefore = await idlePhase('idle before');
    const idleBeforeHeap = await heap();
    await sleep(AFTER_GC_SETTLE_MS);

    const attackSettings = (seconds: number, callers: number) => ({
      httpUrl: ready.url,
      wsUrl,
      seconds,
      attacks: ATTACK_NAMES,
      jwt,
      rate: ATTACK_RATE,
      bombFragments: BOMB_FRAGMENTS,
      floodSockets: FLOOD_SOCKETS,
      floodSubscriptions: FLOOD_SUBSCRIPTIONS,
      maxBodyBytes: Number(API_ENV.GRAPHQL_MAX_BODY_BYTES ?? 1_048_576),
      maxWsPayloadBytes: Number(API_ENV.GRAPHQL_MAX_WS_PAYLOAD_BYTES ?? 65_536),
      timeoutMs: TIMEOUT_MS,
      callers,
    });
    const startAttackers = async (label: string): Promise<Child<ToAttacker, FromAttacker>> => {
      const child = new Child<ToAttacker, FromAttacker>(label, path.join(DIST, 'support', 'hostile-attacker.js'), [], {}, { log, niceness: ATTACKER_NICENESS, ownSession: OWN_SESSION, cpus: ATTACKER_CPUS, idleCgroup: ATTACKERS_IDLE_CGROUP });
      children.push(child as never);
      await sleep(300);
      return child;
    };

    // --- the first attack, on the fresh process ------------------------------------------------
    let firstAttack: FirstAttack | undefined;
    if (FIRST_ATTACK_SECONDS > 0) {
      const first = await startAttackers('first attackers');
      attacking = first;
      log(`first attack: ${FIRST_ATTACK_SECONDS} s of the same attacks on the fresh process`);
      const report = first.wait('report', FIRST_ATTACK_SECONDS * 1000 + TIMEOUT_MS * 2 + 60_000);
      report.catch(() => undefined); // awaited in the drain
      let attacks: AttackReport[] = [];
      const figures = await phase(FIRST_ATTACK_PHASE, async () => {
        first.send({ type: 'start', settings: attackSettings(FIRST_ATTACK_SECONDS, FIRST_ATTACK_CALLERS) });
        await sleep(FIRST_ATTACK_SECONDS * 1000);
      }, async () => {
        attacks = (await report).attacks;
      });
      first.send({ type: 'stop' });
      firstAttack = { ...figures, attacks, exit: await first.finish(30_000) };
      await heap();
      await sleep(AFTER_GC_SETTLE_MS);
    }

    // --- under attack (the second attack, when there was a first) -----------------------------
    attacker = await startAttackers('attackers');
    attacking = attacker;
    log(`attackers' process scheduled in: ${attacker.placement}`);
    log(`under attack: ${SECONDS} s of ${ATTACK_NAMES.join(', ')}`);
    let attackReport: Extract<FromAttacker, { type: 'report' }> | undefined;
    const attackDone = attacker.wait('report', SECONDS * 1000 + TIMEOUT_MS * 2 + 60_000).then((r) => (attackReport = r));
    attackDone.catch(() => undefined); // awaited below; a failure before then must not go unhandled
    let recoveredMs: number | null = null;
    let drainSeconds = 0;
    const attack = await phase('attack', async () => {
      attacker!.send({ type: 'start', settings: attackSettings(SECONDS, ATTACK_CALLERS) });
      await sleep(SECONDS * 1000);
    }, async () => {
      // The attackers finish what they sent (each bounded by the timeout) and close their sockets.
      const drainStart = Date.now();
      await attackDone;
      recoveredMs = await healthLive(ready.url, TIMEOUT_MS * 2);
      drainSeconds = (Date.now() - drainStart) / 1000;
    });
    const recovery = drainSeconds;
    log(`attackers done and the API answering /health/live ${recovery.toFixed(1)} s after the attack phase (/health/live: ${recoveredMs === null ? 'NO ANSWER' : `${Math.round(recoveredMs)} ms`})`);
    await sleep(2_000);
    attacker.send({ type: 'stop' });
    const attackersExit = await attacker.finish(30_000);
    const endHeap = await heap();
    await sleep(AFTER_GC_SETTLE_MS);

    // --- idle again: the honest client alone, from the same heap state ----------------------------
    log(`idle after: ${SECONDS} s of the honest client alone`);
    const idleAfter = await idlePhase('idle after');
    const reportReply = await honest.request({ type: 'report', id: ++requestId }, 'report', 30_000);
    // How long the API held each honest query (only the honest client tags its requests).
    const { timings: serverTimings } = await api.request({ type: 'requestTimings', id: ++requestId }, 'requestTimings', 30_000);

    // --- stop everything ----------------------------------------------------------------------------
    honest.send({ type: 'stop' });
    const exits = {
      ...(firstAttack ? { 'first attackers': firstAttack.exit } : {}),
      attackers: attackersExit,
      honest: await honest.finish(30_000),
      api: (api.send({ type: 'stop' }), await api.finish(60_000)),
      worker: (worker.send({ type: 'stop' }), await worker.finish(60_000)),
    };

    const phases = reportReply.phases;
    const figures: Figures = {
      before: { ...idleBefore, honest: phases['idle before']! },
      ...(firstAttack ? { first: { ...firstAttack, honest: phases[FIRST_ATTACK_PHASE]! } } : {}),
      attack: { ...attack, honest: phases.attack! },
      after: { ...idleAfter, honest: phases['idle after']! },
    };
    const failedToMeasure = [
      ...phasesOf(figures).flatMap((p) => [
        ...(figures[p]!.honest ? [] : [`no honest figures in the ${PHASE_LABELS[p]} phase`]),
        ...(figures[p]!.honest && figures[p]!.honest.queries.count === 0 ? [`no honest query in the ${PHASE_LABELS[p]} phase`] : []),
        ...(figures[p]!.honest && figures[p]!.honest.events.count === 0 ? [`no job event reached the honest client in the ${PHASE_LABELS[p]} phase`] : []),
      ]),
      ...(attackReport?.attacks ?? []).filter((a) => a.sent === 0).map((a) => `attack ${a.name} completed no operation`),
      ...Object.entries(exits)
        .filter(([, how]) => !how.startsWith('clean'))
        .map(([name, how]) => `${name}: ${how.split('\n')[0]}`),
    ];
    const passed = printReport({
      figures,
      idleBeforeHeap: idleBeforeHeap.heapUsed,
      endHeap: endHeap.heapUsed,
      attacks: attackReport!.attacks,
      recoveredMs,
      recovery,
      otherPhases: phases,
      serverTimings,
      attackersPlacement: attacker.placement,
      firstAttacks: firstAttack?.attacks,
    });
    if (failedToMeasure.length) {
      process.stdout.write(`The bench could not measure properly: ${failedToMeasure.join('; ')}\n`);
      process.exitCode = 1;
    } else if (!passed && !NO_BAR) process.exitCode = 1;
  } finally {
    for (const child of children) {
      if (child.running) {
        child.process.kill('SIGTERM');
        await child.finish(15_000);
      }
    }
    const removed = await deleteEngineTopology(prefix, ALL_JOB_KINDS);
    const events = await deleteRabbitObjects(prefix, { exchanges: [`${prefix}.job-events`] });
    log(`broker cleaned: ${removed.exchanges.length + events.exchanges.length} exchanges, ${removed.queues.length} queues under ${prefix}`);
    await testDb?.drop().catch((error) => log(`database drop failed: ${String(error)}`));
    if (testDb) log(`database ${testDb.name} dropped`);
    clearTimeout(watchdog);
  }
}

/** The longest stall and how much of it the API itself computed (the rest it waited for a core). */
function longestStall(stats: Stats): string {
  const longest = stats.stalls.reduce<Stats['stalls'][number] | null>((a, x) => (!a || x.gapMs > a.gapMs ? x : a), null);
  return longest ? `; longest stall ${longest.gapMs} ms: ${longest.cpuMs} ms the API's own work, ${longest.waitMs} ms waiting for a core` : '';
}

/** A query's (or a mean's) parts, ms: unread, held (ran, GC, waited for a core, slept), back. */
function partsOf(x: RequestSplit): string {
  const n = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '–');
  return `unread ${n(x.beforeReadMs)}, held ${n(x.heldMs)}: ran ${n(x.runMs)} (GC ${n(x.gcMs)}), core ${n(x.waitMs)}, slept ${n(x.heldMs - x.runMs - x.waitMs)}; back ${n(x.outsideMs - x.beforeReadMs)}`;
}

function counts(record: Record<string, number>): string {
  const entries = Object.entries(record).sort((a, b) => b[1] - a[1]);
  return entries.length ? entries.map(([label, n]) => `${label} ×${n}`).join(', ') : 'none';
}

function printReport(r: {
  figures: Figures;
  idleBeforeHeap: number;
  endHeap: number;
  attacks: AttackReport[];
  recoveredMs: number | null;
  recovery: number;
  otherPhases: Record<string, HonestPhase>;
  serverTimings: ServerTiming[];
  attackersPlacement: string;
  /** The first attack's hostile operations, when there was one. */
  firstAttacks?: AttackReport[];
}): boolean {
  const { before: b, first, attack: a, after: c } = r.figures;
  const present = phasesOf(r.figures);
  const attackPhases: Phase[] = first ? ['first', 'attack'] : ['attack'];
  const attacks = attackPhases.map((phase) => r.figures[phase]!);
  // The figures the p99 bars compare: both idle phases' samples together, and both attacks'.
  const idle = { queries: pooled(b.honest.queries, c.honest.queries), events: pooled(b.honest.events, c.honest.events) };
  const attacked = first ? { queries: pooled(first.honest.queries, a.honest.queries), events: pooled(first.honest.events, a.honest.events) } : a.honest;
  const honestServerErrors = Object.values(r.otherPhases).reduce((n, p) => n + p.queries.serverErrors, 0);
  const hostileServerErrors = [...r.attacks, ...(r.firstAttacks ?? [])].reduce((n, x) => n + x.verdicts['server-error'], 0);
  const honestErrors = (p: HonestPhase) => Object.values(p.queries.errors).reduce((n, x) => n + x, 0) + Object.values(p.subscribes.errors).reduce((n, x) => n + x, 0);
  const cores = (f: Pick<PhaseFigures, 'cpu'>, name: string) => (Number.isFinite(f.cpu[name]) ? f.cpu[name]!.toFixed(2) : '–');

  const percentilesOf = (x: Percentiles) => `${ms(x.p50)} / ${ms(x.p99)} / ${ms(x.max)}`;
  const row = (label: string, of: (f: PhaseFigures) => string): string[] => [label, ...present.map((phase) => of(r.figures[phase]!))];
  /** A row with a figure under one phase's column. */
  const under = (label: string, phase: Phase, value: string): string[] => [label, ...present.map((p) => (p === phase ? value : ''))];
  const rows: string[][] = [
    row('honest queries sent / job events received / jobs finished', (f) => `${f.honest.queries.count} / ${f.honest.events.count} / ${f.honest.jobsFinished}`),
    row('honest query latency p50 / p99 / max (ms)', (f) => percentilesOf(f.honest.queries)),
    under('  both idle phases together', 'before', percentilesOf(idle.queries)),
    ...(first ? [under('  both attacks together', 'attack', percentilesOf(attacked.queries))] : []),
    row('honest event delay p50 / p99 / max (ms)', (f) => percentilesOf(f.honest.events)),
    under('  both idle phases together', 'before', percentilesOf(idle.events)),
    ...(first ? [under('  both attacks together', 'attack', percentilesOf(attacked.events))] : []),
    row('honest subscribe → snapshot p50 / p99 (ms)', (f) => `${ms(f.honest.subscribes.p50)} / ${ms(f.honest.subscribes.p99)}`),
    row('honest operations failed', (f) => String(honestErrors(f.honest))),
    row('API event-loop delay p99 / max (ms; attack: to its last answer)', (f) => `${f.api.loopDelayP99Ms.toFixed(1)} / ${f.api.loopDelayMaxMs.toFixed(1)}`),
    row('API heap peak / at the end (attack: to its last answer)', (f) => `${mib(f.api.heapUsedPeak)} / ${mib(f.api.heapUsed)}`),
    ['API heap after gc (after the phase)', ...present.map((p) => (p === 'before' ? mib(r.idleBeforeHeap) : p === 'attack' ? `${mib(r.endHeap)} (attackers gone)` : ''))],
    row('API major GCs (count / longest ms)', (f) => `${f.api.gcs.major} / ${f.api.gcs.longestMajorMs.toFixed(0)}`),
    row('CPU cores: API / worker', (f) => `${cores(f, 'api')} / ${cores(f, 'worker')}`),
    row('CPU cores: honest client / attackers / rest of machine', (f) => `${cores(f, 'honest')} / ${attacks.includes(f) ? cores(f, 'attacker') : '–'} / ${f.machineOther.toFixed(2)}`),
    row('honest client own longest stall (ms)', (f) => String(f.honest.ownStallMs)),
  ];
  const headings = ['figure', ...present.map((phase) => PHASE_LABELS[phase])];
  const widths = headings.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd();
  const lines = [
    '',
    `Hostile-load benchmark — ${SECONDS} s idle, ${first ? `${FIRST_ATTACK_SECONDS} s of a first attack, ` : ''}${SECONDS} s under attack, ${SECONDS} s idle again; ${SUBSCRIPTIONS} honest subscriptions, ${QUERY_RATE} honest queries/s (${QUERY_ARRIVALS} arrivals); a term of ${COURSES} courses; ${os.cpus().length} cores; attackers' process in: ${r.attackersPlacement}`,
    line(headings),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
  ];
  // Each phase's slowest queries: when each was sent (spread over the minute, or bunched at
  // the attack's opening or one stall), and where its time went by the API's own timing.
  const slowestSplit = (p: HonestPhase) => {
    const client = p.queries.slowest.map((q) => [q.tag, q.ms, q.sentAtMs] as const);
    const splits = new Map(joinTimings(client, r.serverTimings).map((x) => [x.tag, x]));
    const mean = splitSlowest(client, r.serverTimings, 1);
    const each = p.queries.slowest.map((q) => {
      const x = splits.get(q.tag);
      return `${Math.round(q.ms)} ms at ${q.atS.toFixed(1)} s${x ? ` (${partsOf(x)})` : ' (not timed by the API)'}`;
    });
    return [`mean ${mean.totalMs.toFixed(1)} ms (${partsOf(mean)})`, ...each];
  };
  lines.push(
    `honest queries' slowest 1 %, each with when it was sent (s into the phase) and its parts in ms: unread = sent → the API read its headers; held = the API held it — its main thread ran (GC pauses of it), waited for a core, slept on PostgreSQL; back = its answer's way back and the client:`,
    ...present.flatMap((phase) =>
      slowestSplit(r.figures[phase]!.honest).map((text, i) => `  ${i === 0 ? `${PHASE_LABELS[phase]}:`.padEnd(14) : ''.padEnd(14)}${text}`),
    ),
    '',
  );
  for (const phase of present) {
    const { honest } = r.figures[phase]!;
    if (honestErrors(honest)) lines.push(`honest failures, ${PHASE_LABELS[phase]}: ${counts({ ...honest.queries.errors, ...honest.subscribes.errors })}`);
  }
  for (const phase of attackPhases) {
    const { stalls } = r.figures[phase]!.api;
    if (stalls.length) lines.push(`API stalls, ${PHASE_LABELS[phase]} (timer ≥ 50 ms late: wall ms / ms its main thread worked / ms it waited for a core): ${stalls.slice(0, 30).map((x) => `${x.gapMs}/${x.cpuMs}/${x.waitMs}`).join(', ')}${stalls.length > 30 ? ` … (${stalls.length})` : ''}`);
  }
  lines.push(
    `After the attack: its last operation answered (or timed out) and /health/live answering ${r.recovery.toFixed(1)} s after the phase ended (/health/live took ${r.recoveredMs === null ? 'NO ANSWER' : `${Math.round(r.recoveredMs)} ms`}).`,
    '',
    `Hostile operations (each lane paced to ${ATTACK_RATE}/s, answers awaited, timeout ${TIMEOUT_MS / 1000} s):`,
  );
  const aw = Math.max(...r.attacks.map((x) => x.name.length), 'attack'.length);
  lines.push(`${'attack'.padEnd(aw)}  ${'sent'.padStart(6)}  ${'refused'.padStart(7)}  ${'accepted'.padStart(8)}  ${'5xx'.padStart(5)}  ${'failed'.padStart(6)}  ${'slowest'.padStart(9)}  how they ended`);
  for (const x of r.attacks) {
    lines.push(
      `${x.name.padEnd(aw)}  ${String(x.sent).padStart(6)}  ${String(x.verdicts.refused).padStart(7)}  ${String(x.verdicts.accepted).padStart(8)}  ${String(x.verdicts['server-error']).padStart(5)}  ${String(x.verdicts.failed).padStart(6)}  ${`${x.slowestMs} ms`.padStart(9)}  ${counts(x.outcomes)}`,
    );
  }
  lines.push(...r.attacks.map((x) => `  ${x.name}: ${x.who} — ${x.what}`));
  if (r.firstAttacks) {
    const sum = (of: (x: AttackReport) => number) => r.firstAttacks!.reduce((n, x) => n + of(x), 0);
    lines.push(
      `The first attack (the same attacks from callers of their own, 127.0.${FIRST_ATTACK_CALLERS}.x): ${sum((x) => x.sent)} sent, ${sum((x) => x.verdicts.refused)} refused, ` +
        `${sum((x) => x.verdicts.accepted)} accepted, ${sum((x) => x.verdicts['server-error'])} 5xx, ${sum((x) => x.verdicts.failed)} failed.`,
    );
  }
  lines.push('');
  if (EXAMPLES) {
    lines.push('First message or close reason per outcome:');
    for (const x of r.attacks) for (const [label, detail] of Object.entries(x.examples)) lines.push(`  ${x.name} | ${label} | ${detail}`);
    lines.push('');
  }

  /** The p99 under attack (both attacks' samples together) within BAR.p99Factor × the idle one, with the ratio of each phase alone. */
  const p99Bar = (what: string, of: 'queries' | 'events'): [string, boolean, string] => {
    const eachAttack = first ? `${attackPhases.map((phase) => `${PHASE_LABELS[phase]} alone ${p99Ratio(r.figures[phase]!.honest[of], idle[of])}`).join(', ')}; ` : '';
    const eachIdle = `before alone ${p99Ratio(attacked[of], b.honest[of])}, after alone ${p99Ratio(attacked[of], c.honest[of])}`;
    return [
      `honest ${what} p99 ≤ ${BAR.p99Factor}× idle`,
      attacked[of].p99 <= BAR.p99Factor * idle[of].p99,
      `${ms(attacked[of].p99)} ms vs ${ms(idle[of].p99)} ms (${ratioWithInterval(attacked[of], idle[of])}); ${eachAttack}${eachIdle}`,
    ];
  };
  const peak = Math.max(...attacks.map((f) => f.api.heapUsedPeak));
  const mostDelayed = attacks.reduce((x, y) => (y.api.loopDelayMaxMs > x.api.loopDelayMaxMs ? y : x));
  const loopMax = mostDelayed.api.loopDelayMaxMs;
  const failed = present.map((phase) => `${honestErrors(r.figures[phase]!.honest)} ${PHASE_LABELS[phase]}`);
  const bars: [string, boolean, string][] = [
    p99Bar('query', 'queries'),
    p99Bar('event delay', 'events'),
    ['no 5xx or INTERNAL_SERVER_ERROR answer', honestServerErrors + hostileServerErrors === 0, `${honestServerErrors} honest, ${hostileServerErrors} hostile`],
    [
      `heap bounded: peak ≤ idle before's + ${BAR.heapPeakGrowthMiB} MiB, after gc ≤ idle before's + ${BAR.heapEndGrowthMiB} MiB`,
      peak <= b.api.heapUsedPeak + BAR.heapPeakGrowthMiB * 1024 * 1024 && r.endHeap <= r.idleBeforeHeap + BAR.heapEndGrowthMiB * 1024 * 1024,
      `peak ${mib(peak)} vs ${mib(b.api.heapUsedPeak)}; after gc ${mib(r.endHeap)} vs ${mib(r.idleBeforeHeap)}`,
    ],
    [`API event loop never stalls > ${BAR.loopMaxMs} ms`, loopMax <= BAR.loopMaxMs, `max ${loopMax.toFixed(1)} ms (idle ${b.api.loopDelayMaxMs.toFixed(1)} / ${c.api.loopDelayMaxMs.toFixed(1)} ms)${longestStall(mostDelayed.api)}`],
    ['every honest operation succeeds', present.every((phase) => honestErrors(r.figures[phase]!.honest) === 0), `failed: ${failed.join(', ')}`],
  ];
  const bw = Math.max(...bars.map(([name]) => name.length));
  lines.push('The bar:');
  for (const [name, ok, detail] of bars) lines.push(`  ${ok ? 'PASS' : 'FAIL'}  ${name.padEnd(bw)}  ${detail}`);
  const passed = bars.every(([, ok]) => ok);
  lines.push(`${passed ? 'ALL BARS PASS' : `BARS FAILED: ${bars.filter(([, ok]) => !ok).length} of ${bars.length}`}${NO_BAR ? ' (--no-bar: not judged)' : ''}.`);
  const othersMost = Math.max(...present.map((phase) => r.figures[phase]!.machineOther));
  if (othersMost > 0.5) {
    lines.push(`WARNING: other processes used ${othersMost.toFixed(2)} cores meanwhile; latency and loop figures are not representative — run again on a quiet machine.`);
  }
  lines.push(
    `(In brackets: the ratio, then its ${DEFAULT_CONFIDENCE * 100} % interval from a bootstrap of each phase's samples, ${DEFAULT_RESAMPLES.toLocaleString('en-US')} resamples: how far the`,
    ' p99 of one minute moves by luck alone. A bar missed with the interval spanning it is within the noise of the run.',
    ' After it, the ratio to each idle phase alone.)',
  );
  lines.push(`Reproduce: ${reproduceCommand()}`, '');
  process.stdout.write(lines.join('\n'));
  return passed;
}

const PHASES = ['before', 'first', 'attack', 'after'] as const;
type Phase = (typeof PHASES)[number];
const PHASE_LABELS: Record<Phase, string> = { before: 'idle before', first: 'first attack', attack: 'under attack', after: 'idle after' };
/** Every phase's figures; the first attack's only when there was one (FIRST_ATTACK_SECONDS). */
type Figures = Record<Exclude<Phase, 'first'>, PhaseFigures> & { first?: PhaseFigures };
/** The phases a run had, in their order. */
const phasesOf = (figures: Figures): Phase[] => PHASES.filter((phase) => figures[phase] !== undefined);

/**
 * The idle figure the bar compares with: the samples of the idle minutes before and after
 * the attack together. One minute's p99 is its sixth-slowest query (of 600), so one slow
 * moment more or less in it moves the bar; two minutes on either side of the attack also
 * share whatever the machine did meanwhile (other tenants, autovacuum, a broker's flush).
 */
function pooled(before: SampledPercentiles, after: SampledPercentiles): SampledPercentiles {
  const samples = [...before.samples, ...after.samples];
  return { ...percentiles(samples), samples };
}

/** `2.10×`: one p99 over an idle one's ('–' over an idle p99 of 0). */
function p99Ratio(over: Percentiles, idle: Percentiles): string {
  return idle.p99 > 0 ? `${(over.p99 / idle.p99).toFixed(2)}×` : '–';
}

/** `2.06×; 1.6–2.7×`: the p99 ratio and its bootstrap interval (test/bench/support/bootstrap-interval.ts). */
function ratioWithInterval(attack: SampledPercentiles, idle: SampledPercentiles): string {
  const interval = p99RatioInterval(attack.samples, idle.samples);
  if (!interval) return '–';
  // An event delay is whole milliseconds: a draw whose p99 is 0 makes a ratio of ∞ (or of 0/0: –).
  const x = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : Number.isNaN(value) ? '–' : '∞');
  return `${x(interval.ratio, 2)}×; ${x(interval.low, 1)}–${x(interval.high, 1)}×`;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error) => {
    process.stderr.write(`hostile-load benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
