/**
 * One chaos run (`npm run bench:chaos`, and its small version in the suite):
 *
 * 1. a private PostgreSQL and a private RabbitMQ node (never the machine's shared ones),
 *    the migrations, and the effect and transition tables (chaos-kinds.ts);
 * 2. API and worker processes of the real service, with the chaos stand-ins for the
 *    three kinds (chaos-fleet.ts), production auth with a secret of the run's own;
 * 3. N jobs enqueued: most short, some flaky (the retry path), some slow, of which some
 *    are cancelled through the API (chaos-cancels.ts);
 * 4. while they drain: a worker SIGKILLed every 2–5 s and replaced, the broker and the
 *    database restarted at set points of the drain, and `jobProgress` subscriptions
 *    kept open on unfinished jobs across the API processes (chaos-subscriptions.ts);
 * 5. after the last fault, a wait until every job has finished — or until nothing has
 *    finished for a while (the jobs left are lost) — then the census from the
 *    database (chaos-census.ts) and the verdict (chaos-report.ts).
 *
 * Every loop is bounded in count and time; all traffic stays on 127.0.0.1; every
 * process and server started is registered with `Cleanup` as soon as it exists.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Authenticator } from '../../../src/api/auth/authenticator';
import { ApiRole, READ_ALL_JOBS_GRANT } from '../../../src/api/auth/viewer';
import { openDatabase } from '../../../src/database';
import { inTransaction } from '../../../src/engine/db/sql';
import { enqueueWith, type EnqueueRequest } from '../../../src/engine/enqueue';
import { silentLogger } from '../../../src/engine/logger';
import { OUTBOX_CHANNEL } from '../../../src/engine/publisher';
import { KindRegistry } from '../../../src/engine/registry';
import { CHAOS_KIND, CHAOS_KINDS_ENV, CHAOS_SCHEMA_SQL, chaosRegistrations } from '../../support/chaos-kinds';
import { startPrivatePostgres } from '../../support/private-postgres';
import { startPrivateRabbit } from '../../support/private-rabbit';
import { Canceller } from './chaos-cancels';
import { finalStatuses, takeCensus } from './chaos-census';
import { ChaosFleet, type FleetRole } from './chaos-fleet';
import { reproduceCommand, type ChaosOptions } from './chaos-options';
import { SeededRandom } from './seeded-random';
import { formatReport, judge, type ChaosRunData, type ChaosVerdict, type FaultRecord } from './chaos-report';
import { SubscriptionKeeper, watcherAddress } from './chaos-subscriptions';

/** Things to stop and remove, newest first; a step added after `run()` runs at once. */
export class Cleanup {
  private readonly steps: { name: string; step: () => Promise<unknown> }[] = [];
  private running: Promise<void> | null = null;

  add(name: string, step: () => Promise<unknown>): void {
    if (this.running) void step().catch(() => undefined);
    else this.steps.push({ name, step });
  }

  run(log: (line: string) => void = () => undefined): Promise<void> {
    return (this.running ??= (async () => {
      for (const { name, step } of this.steps.reverse()) {
        await step().catch((error: unknown) => log(`cleanup of ${name} failed: ${error instanceof Error ? error.message : String(error)}`));
      }
    })());
  }
}

export interface ChaosResult {
  verdict: ChaosVerdict;
  report: string;
  data: ChaosRunData;
}

export interface ChaosIo {
  log: (line: string) => void;
  cleanup: Cleanup;
  /** Aborts the run (SIGINT, a watchdog): every wait rejects, the caller cleans up. */
  signal?: AbortSignal;
  /** A compiled service-process.js for the service processes (see test/support/transpiled-service.ts). */
  serviceEntry?: string;
}

const ENQUEUE_CHUNK = 200;
const ENQUEUE_CONNECTIONS = 4;
const POLL_MS = 250;
/** Big faults fall at these shares of the drain (spread evenly between them). */
const FIRST_MILESTONE = 0.15;
const LAST_MILESTONE = 0.75;
/** The system gets this long to recover from one big fault before the next. */
const BIG_FAULT_GAP_MS = 5_000;
/** Continuous kills stop once this share of the jobs has finished. */
const KILLS_UNTIL = 0.95;
/** Cancels timed "at a random moment" fall within this long after their job's enqueue (mostly while it is queued). */
const CANCEL_AT_WITHIN_MS = 10_000;

/** The longest a run may take with these options (for a watchdog): start-up and teardown, faults, drain, grace. */
export function chaosBudgetMs(options: ChaosOptions): number {
  return 300_000 + options.faultWindowSeconds * 1_000 + drainCapMs(options) + options.subscriptionGraceSeconds * 1_000;
}

/** However long jobs keep finishing after the last fault, the wait ends by then (at ≥ 10 jobs/s). */
function drainCapMs(options: ChaosOptions): number {
  return options.drainQuietSeconds * 1_000 + options.jobs * 100;
}

interface JobSpec {
  request: EnqueueRequest;
  cancel: 'running' | 'at' | null;
  /** For `at`: how long after its enqueue the cancel is sent. */
  cancelDelayMs: number;
}

function planJobs(options: ChaosOptions, random: SeededRandom): JobSpec[] {
  const specs: JobSpec[] = [];
  const between = ([min, max]: [number, number]) => random.int(min, max);
  for (let i = 0; i < options.jobs; i++) {
    const roll = random.next();
    if (roll < options.flakyShare) {
      specs.push({ request: { kind: CHAOS_KIND.flaky, input: { ms: between(options.flakyMs), failAttempts: random.chance(0.7) ? 1 : 2 } }, cancel: null, cancelDelayMs: 0 });
    } else if (roll < options.flakyShare + options.slowShare) {
      const cancel = random.chance(options.cancelShare) ? (random.chance(0.5) ? 'running' : 'at') : null;
      const cancelDelayMs = cancel === 'at' ? random.int(0, CANCEL_AT_WITHIN_MS) : 0;
      specs.push({ request: { kind: CHAOS_KIND.slow, input: { steps: between(options.slowSteps), stepMs: options.slowStepMs } }, cancel, cancelDelayMs });
    } else {
      specs.push({ request: { kind: CHAOS_KIND.short, input: { ms: between(options.shortMs) } }, cancel: null, cancelDelayMs: 0 });
    }
  }
  return specs;
}

/** The big faults in order: broker and database restarts interleaved, the broker first. */
function bigFaultPlan(options: ChaosOptions): ('broker' | 'postgres')[] {
  const plan: ('broker' | 'postgres')[] = [];
  let broker = options.brokerRestarts;
  let postgres = options.postgresRestarts;
  while (broker + postgres > 0) {
    if (broker > 0 && (postgres === 0 || plan.at(-1) !== 'broker')) {
      plan.push('broker');
      broker--;
    } else {
      plan.push('postgres');
      postgres--;
    }
  }
  return plan;
}

export async function runChaos(options: ChaosOptions, io: ChaosIo): Promise<ChaosResult> {
  const { log, cleanup, signal } = io;
  const startedAtEpochMs = Date.now();
  const since = () => Date.now() - startedAtEpochMs;
  const sleep = (ms: number) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(new Error('chaos run aborted'));
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(new Error('chaos run aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  const random = new SeededRandom(options.seed);
  const command = reproduceCommand(options);
  log(`chaos run: ${options.jobs} jobs, ${options.apis} API + ${options.workers} worker processes, ${options.subscriptions} subscriptions, seed ${options.seed}`);

  // --- private servers ----------------------------------------------------------------
  const [postgres, rabbit] = await Promise.all([
    startPrivatePostgres({ database: 'chaos' }).then((server) => {
      cleanup.add('private PostgreSQL', () => server.destroy());
      return server;
    }),
    startPrivateRabbit().then((node) => {
      cleanup.add('private RabbitMQ', () => node.destroy());
      return node;
    }),
  ]);
  log(`private PostgreSQL on 127.0.0.1:${postgres.port}, private RabbitMQ on 127.0.0.1:${rabbit.port} (node ${rabbit.nodeName})`);
  const migrated = await openDatabase({ url: postgres.url, poolSize: 2, logger: silentLogger });
  await migrated.pool.query(CHAOS_SCHEMA_SQL);
  await migrated.close();
  // The run's own connections: short timeouts, and an idle connection lost to a restart is no crash.
  const pool = new pg.Pool({ connectionString: postgres.url, max: ENQUEUE_CONNECTIONS + 2, connectionTimeoutMillis: 5_000, statement_timeout: 60_000 });
  pool.on('error', () => undefined);
  cleanup.add('database pool', () => pool.end());

  // --- service processes -------------------------------------------------------------
  const jwt = { secret: randomBytes(48).toString('base64url'), issuer: 'jiaowu-chaos', audience: 'jiaowu-api' };
  const signer = new Authenticator(jwt);
  // The operator who cancels; the watchers have tokens of their own (below).
  const token = await signer.sign({ sub: 'chaos-operator', roles: [ApiRole.ADMIN] }, '12h');
  const envFor = (_role: FleetRole): Record<string, string> => ({
    NODE_ENV: 'production',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'warn',
    DATABASE_URL: postgres.url,
    RABBITMQ_URL: rabbit.url,
    RABBITMQ_PREFIX: 'chaos',
    JWT_SECRET: jwt.secret,
    JWT_ISSUER: jwt.issuer,
    JWT_AUDIENCE: jwt.audience,
    [CHAOS_KINDS_ENV]: '1',
    // 5 processes × (8 + 4 + up to 10 ORM + LISTEN) stay below the private server's 200 connections.
    DB_POOL_SIZE: '8',
    JOB_LEASE_SECONDS: String(options.leaseSeconds),
    JOB_ATTEMPT_LIMIT: String(options.attemptLimit),
    JOB_RETRY_BASE_MS: String(options.retryBaseMs),
    JOB_RETRY_MAX_MS: String(options.retryMaxMs),
    MAINTENANCE_INTERVAL_SECONDS: String(options.maintenanceSeconds),
    OUTBOX_REPUBLISH_AFTER_SECONDS: String(options.republishAfterSeconds),
    OUTBOX_POLL_MS: '1000',
    SHUTDOWN_GRACE_SECONDS: '2',
    [`JOB_CONSUMERS_${CHAOS_KIND.short}`]: String(options.consumers.short),
    [`JOB_CONSUMERS_${CHAOS_KIND.flaky}`]: String(options.consumers.flaky),
    [`JOB_CONSUMERS_${CHAOS_KIND.slow}`]: String(options.consumers.slow),
  });
  const fleet = new ChaosFleet({ envFor, log, startedAt: startedAtEpochMs, entry: io.serviceEntry });
  cleanup.add('service processes', () => fleet.stopAll());
  await fleet.startApis(options.apis);
  const apiUrls = fleet.apis.map((m) => m.process.url);
  log(`${options.apis} API processes ready (${apiUrls.join(', ')})`);

  // --- the jobs, planned -------------------------------------------------------------
  const registry = new KindRegistry();
  for (const registration of chaosRegistrations()) registry.register(registration);
  const specs = planJobs(options, random);
  const ids: string[] = new Array(specs.length);

  // --- watchers, cancels and the progress poll (watching from the first enqueue on) ---
  const canceller = new Canceller({ httpUrls: apiUrls, token, random });
  const progress = { finished: 0, byStatus: {} as Record<string, number>, lastChangeMs: since() };
  let candidates: string[] = [];
  const watched = new Set<string>();
  const keeper = new SubscriptionKeeper({
    wsUrls: apiUrls.map((url) => `${url.replace(/^http/, 'ws')}/graphql`),
    // One person a subscription, each with a token and an address of their own: the
    // API's default per-subject and per-address caps hold.
    watchers: await Promise.all(
      Array.from({ length: options.subscriptions }, async (_, i) => ({
        token: await signer.sign({ sub: `chaos-watcher-${i}`, roles: [ApiRole.VIEWER], scope: READ_ALL_JOBS_GRANT }, '12h'),
        localAddress: watcherAddress(i),
      })),
    ),
    target: options.subscriptions,
    startedAt: startedAtEpochMs,
    pickJob: () => {
      while (candidates.length > 0) {
        const id = candidates.pop()!;
        if (!watched.has(id)) {
          watched.add(id);
          return id;
        }
      }
      return undefined;
    },
  });
  cleanup.add('subscriptions', async () => keeper.close());
  let polling = true;
  let lastSampleMs = -Infinity;
  const poll = async () => {
    try {
      const { rows } = await pool.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM jobs GROUP BY 1');
      const byStatus = Object.fromEntries(rows.map((r) => [r.status, r.n]));
      const finished = (byStatus.SUCCEEDED ?? 0) + (byStatus.FAILED ?? 0) + (byStatus.CANCELLED ?? 0);
      if (finished !== progress.finished) progress.lastChangeMs = since();
      progress.finished = finished;
      progress.byStatus = byStatus;
      if (candidates.length < options.subscriptions && since() - lastSampleMs > 1_000) {
        lastSampleMs = since();
        const sample = await pool.query<{ id: string }>(
          "SELECT id FROM jobs WHERE status IN ('QUEUED', 'RUNNING') ORDER BY random() LIMIT $1",
          [Math.max(50, options.subscriptions * 2)],
        );
        candidates = sample.rows.map((r) => r.id).filter((id) => !watched.has(id));
      }
      const waiting = canceller.waitingForRunning();
      const running = waiting.length
        ? (await pool.query<{ id: string }>("SELECT id FROM jobs WHERE status = 'RUNNING' AND id = ANY($1::uuid[])", [waiting])).rows.map((r) => r.id)
        : [];
      canceller.tick(running);
    } catch {
      // The database is restarting: keep the last figures, cancel what is due by time.
      canceller.tick();
    }
  };
  const poller = (async () => {
    while (polling) {
      await poll();
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  })();
  cleanup.add('progress poll', async () => {
    polling = false;
    await poller;
  });
  await poll();
  keeper.start();
  canceller.begin();

  // --- enqueue -----------------------------------------------------------------------
  const enqueueStartMs = since();
  let nextChunk = 0;
  await Promise.all(
    Array.from({ length: ENQUEUE_CONNECTIONS }, async () => {
      while (nextChunk * ENQUEUE_CHUNK < specs.length) {
        const from = nextChunk++ * ENQUEUE_CHUNK;
        await inTransaction(pool, async (sql) => {
          for (let i = from; i < Math.min(from + ENQUEUE_CHUNK, specs.length); i++) {
            ids[i] = (await enqueueWith(sql, registry, { ...specs[i]!.request, requestedBy: 'chaos-bench' })).job.id;
          }
          // Delivered at commit: wakes the publishers of the service processes.
          await sql('SELECT pg_notify($1, $2)', [OUTBOX_CHANNEL, '']);
        });
        for (let i = from; i < Math.min(from + ENQUEUE_CHUNK, specs.length); i++) {
          const { cancel, cancelDelayMs } = specs[i]!;
          if (cancel) canceller.plan(ids[i]!, cancel, canceller.elapsedMs() + cancelDelayMs);
        }
      }
    }),
  );
  const enqueueEndMs = since();
  log(`enqueued ${specs.length} jobs in ${((enqueueEndMs - enqueueStartMs) / 1000).toFixed(1)} s; the API processes publish them`);
  // The workers start on the whole backlog, so the faults below fall on a drain of all N jobs.
  await fleet.startWorkers(options.workers);
  const drainStartMs = since();
  log(`${options.workers} workers ready: the drain begins`);

  const reporter = setInterval(() => {
    const s = progress.byStatus;
    log(
      `${progress.finished}/${options.jobs} finished (QUEUED ${s.QUEUED ?? 0}, RUNNING ${s.RUNNING ?? 0}); ` +
        `${keeper.active} subscriptions open, ${keeper.records.length} opened; workers up ${fleet.workers.length}${fleet.starting ? ` (+${fleet.starting} starting)` : ''}`,
    );
  }, 5_000);
  cleanup.add('progress log', async () => clearInterval(reporter));

  // --- faults --------------------------------------------------------------------------
  const faults: FaultRecord[] = [];
  const drainStart = startedAtEpochMs + drainStartMs;
  const windowMs = options.faultWindowSeconds * 1_000;
  const fraction = () => progress.finished / options.jobs;
  const unfinished = () => options.jobs - progress.finished;
  const killLoop = async () => {
    let kills = 0;
    for (;;) {
      await sleep(random.int(options.killEveryMs[0], options.killEveryMs[1]));
      if (Date.now() - drainStart > windowMs) return;
      if (options.kills !== null ? kills >= options.kills : fraction() >= KILLS_UNTIL) return;
      // One worker at least keeps consuming: with fewer up, wait for a replacement.
      if (fleet.workers.length < Math.min(2, options.workers)) continue;
      const startedAtMs = since();
      const before = unfinished();
      const victim = await fleet.killRandomWorker(random);
      if (!victim) continue;
      kills++;
      faults.push({ what: 'worker kill', detail: `kill -9 ${victim.name} (pid ${victim.process.pid}); a replacement starts`, startedAtMs, endedAtMs: since(), unfinishedJobs: before });
      log(`fault: kill -9 ${victim.name} (pid ${victim.process.pid})`);
    }
  };
  const bigFaultLoop = async () => {
    const plan = bigFaultPlan(options);
    // Milestones of what was left when the enqueue ended (jobs run from the first chunk on).
    const finishedAtStart = fraction();
    let lastEnd = 0;
    for (let i = 0; i < plan.length; i++) {
      const share = plan.length === 1 ? (FIRST_MILESTONE + LAST_MILESTONE) / 2 : FIRST_MILESTONE + ((LAST_MILESTONE - FIRST_MILESTONE) * i) / (plan.length - 1);
      const milestone = finishedAtStart + (1 - finishedAtStart) * share;
      const latestMs = (windowMs * (i + 1)) / (plan.length + 1);
      while ((fraction() < milestone || Date.now() - lastEnd < BIG_FAULT_GAP_MS) && Date.now() - drainStart < latestMs) await sleep(100);
      const startedAtMs = since();
      const before = unfinished();
      if (plan[i] === 'broker') {
        const mode = options.brokerMode;
        log(`fault: broker ${mode === 'stop' ? 'stop' : 'crash (SIGKILL)'}, down ${options.downMs} ms, then start`);
        await (mode === 'stop' ? rabbit.stop() : rabbit.kill());
        await sleep(options.downMs);
        await rabbit.start();
        faults.push({ what: 'broker restart', detail: `${mode === 'stop' ? 'rabbitmqctl stop' : 'SIGKILL'}; started again`, startedAtMs, endedAtMs: since(), unfinishedJobs: before });
      } else {
        const mode = options.postgresMode;
        log(`fault: PostgreSQL ${mode === 'stop' ? 'fast shutdown' : 'crash (SIGKILL)'}, down ${options.downMs} ms, then start`);
        await (mode === 'stop' ? postgres.stop() : postgres.kill());
        await sleep(options.downMs);
        await postgres.start();
        faults.push({ what: 'PostgreSQL restart', detail: `${mode === 'stop' ? 'fast shutdown' : 'SIGKILL of the postmaster'}; started again`, startedAtMs, endedAtMs: since(), unfinishedJobs: before });
      }
      lastEnd = Date.now();
      log(`fault over: ${faults.at(-1)!.what} took ${((faults.at(-1)!.endedAtMs - startedAtMs) / 1000).toFixed(1)} s`);
    }
  };
  await Promise.all([killLoop(), bigFaultLoop()]);
  faults.sort((a, b) => a.startedAtMs - b.startedAtMs);
  const lastFaultEndMs = faults.reduce((latest, f) => Math.max(latest, f.endedAtMs), since());
  log(`faults over (${faults.length}); waiting for every job to finish`);

  // --- drain ---------------------------------------------------------------------------
  const capMs = drainCapMs(options);
  for (;;) {
    await sleep(POLL_MS);
    if (progress.finished >= options.jobs) break;
    const quietSinceMs = Math.max(lastFaultEndMs, progress.lastChangeMs);
    if (since() - quietSinceMs > options.drainQuietSeconds * 1_000) {
      log(`nothing finished for ${options.drainQuietSeconds} s after the last fault: ${unfinished()} job(s) counted lost`);
      break;
    }
    if (since() - lastFaultEndMs > capMs) {
      log(`the drain is still going ${Math.round(capMs / 1000)} s after the last fault: ${unfinished()} job(s) counted lost`);
      break;
    }
  }
  const drainEndMs = since();
  keeper.stopOpening();
  await keeper.settle(options.subscriptionGraceSeconds * 1_000, signal);
  await canceller.stop();
  polling = false;
  await poller;
  clearInterval(reporter);

  // --- census ----------------------------------------------------------------------------
  const census = await takeCensus(pool);
  const finals = await finalStatuses(pool, [...new Set([...keeper.records.map((r) => r.jobId), ...canceller.plans.map((p) => p.jobId)])]);
  const subscriptions = keeper.records.map((r) => ({ ...r }));
  const terminal = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);
  const hung = subscriptions.filter((r) => r.state === 'open' && terminal.has(finals.get(r.jobId)?.status ?? '')).slice(0, 20);
  const probes = await Promise.all(hung.map(async (r) => ({ jobId: r.jobId, status: await keeper.probe(r) })));
  keeper.close();
  const data: ChaosRunData = {
    options,
    command,
    startedAtEpochMs,
    enqueueStartMs,
    enqueueEndMs,
    drainStartMs,
    lastFaultEndMs,
    drainEndMs,
    faults,
    census,
    finals,
    subscriptions,
    probes,
    cancels: canceller.plans,
    fleet: {
      replacementsStarted: fleet.replacementsStarted,
      failedStarts: fleet.failedStarts,
      unexpectedExits: fleet.unexpectedExits,
      recentOutput: fleet.recentOutput(),
    },
  };
  const verdict = judge(data);
  return { verdict, report: formatReport(data, verdict), data };
}
