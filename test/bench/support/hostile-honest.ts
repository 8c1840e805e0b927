/**
 * The hostile-load benchmark's honest client, a process of its own on a loopback
 * address of its own: a viewer that keeps N `jobProgress` subscriptions (over a few
 * graphql-ws sockets, each on a job it started: when a job ends, it starts another and
 * watches that one) and sends a steady, open-loop stream of typical queries (a `jobs`
 * page and a `terms` list) at a fixed rate. It records, per phase of the run, each
 * query's latency and outcome, each job event's delay (receipt − occurredAt) and each
 * subscription's time to its snapshot.
 *
 * Jobs are inserted as an enqueue inserts them (job + outbox row) and the outbox
 * publisher is woken with one NOTIFY: the stand-in kind the worker runs has no
 * mutation of its own.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createClient, type Client } from 'graphql-ws';
import { Pool } from 'pg';
import { poolSql } from '../../../src/engine/db/sql';
import { OUTBOX_CHANNEL } from '../../../src/engine/publisher';
import { insertJob } from '../../../src/engine/queries/insert-job';
import { ownStallMonitor, percentiles, postGraphQL, webSocketFrom } from './hostile-net';
import type { FromHonest, HonestPhase, HonestSettings, ToHonest } from './hostile-protocol';
import { REQUEST_TAG_HEADER } from './request-timings';

/**
 * The honest client's operations: what the office's page asks for. If the schema
 * changes under them, the bench stops before measuring and names the failing one.
 */
const HONEST_QUERIES = {
  jobsPage: 'query HonestJobs { jobs(first: 20) { edges { cursor node { id kind status currentStep progress message createdAt } } pageInfo { endCursor hasNextPage } } }',
  terms: 'query HonestTerms { terms { id code name daysPerWeek periodsPerDay } }',
};
const PROGRESS = 'subscription HonestProgress($jobId: ID!) { jobProgress(jobId: $jobId) { jobId status currentStep progress sequence reason occurredAt } }';
const SNAPSHOT_TIMEOUT_MS = 30_000;
const MAX_IN_FLIGHT = 500;

const send = (message: FromHonest) => process.send?.(message);

interface PhaseRecord {
  queryMs: number[];
  /** When each query of queryMs was sent, ms since the epoch to a fraction (performance.timeOrigin-based), and its tag. */
  querySentAtMs: number[];
  queryTags: string[];
  queryErrors: Record<string, number>;
  queryServerErrors: number;
  eventMs: number[];
  subscribeMs: number[];
  subscribeErrors: Record<string, number>;
  jobsFinished: number;
  ownStallMs: number;
}

const phases = new Map<string, PhaseRecord>();
const boundaries: { phase: string; atMs: number }[] = [{ phase: 'setup', atMs: 0 }];
const stalls = ownStallMonitor();

function phaseAt(ms: number): PhaseRecord {
  let name = boundaries[0]!.phase;
  for (const b of boundaries) if (b.atMs <= ms) name = b.phase;
  let record = phases.get(name);
  if (!record) phases.set(name, (record = { queryMs: [], querySentAtMs: [], queryTags: [], queryErrors: {}, queryServerErrors: 0, eventMs: [], subscribeMs: [], subscribeErrors: {}, jobsFinished: 0, ownStallMs: 0 }));
  return record;
}

const bump = (counts: Record<string, number>, label: string) => (counts[label] = (counts[label] ?? 0) + 1);

let running = false;
let settings: HonestSettings;
let pool: Pool;
let clients: Client[] = [];
let queryTimer: NodeJS.Timeout | undefined;
const slotLoops: Promise<void>[] = [];

/** One NOTIFY for any number of inserts that commit while one is on its way (as the service's waker). */
let notifying = false;
let notifyAgain = false;
async function wakePublisher(): Promise<void> {
  if (notifying) {
    notifyAgain = true;
    return;
  }
  notifying = true;
  do {
    notifyAgain = false;
    await pool.query(`SELECT pg_notify('${OUTBOX_CHANNEL}', '')`).catch(() => undefined);
  } while (notifyAgain);
  notifying = false;
}

async function startJob(): Promise<string> {
  const row = await insertJob(poolSql(pool), {
    jobId: randomUUID(),
    outboxId: randomUUID(),
    kind: settings.jobKind,
    input: settings.jobInput,
    requestedBy: settings.subject,
    idempotencyKey: null,
    exclusiveKey: null,
  });
  void wakePublisher();
  return row!.id;
}

type ProgressEvent = { reason: string; occurredAt: string };

/** Watches one job to its end; resolves once the stream completes or fails. */
function watch(client: Client, jobId: string, onSnapshot: (error?: string) => void): Promise<void> {
  return new Promise((resolve) => {
    const subscribedAt = Date.now();
    let snapshot = false;
    const timer = setTimeout(() => {
      if (!snapshot) {
        snapshot = true;
        bump(phaseAt(subscribedAt).subscribeErrors, `no snapshot within ${SNAPSHOT_TIMEOUT_MS / 1000} s`);
        onSnapshot('timeout');
        dispose();
        resolve();
      }
    }, SNAPSHOT_TIMEOUT_MS);
    const dispose = client.subscribe<{ jobProgress: ProgressEvent }>(
      { query: PROGRESS, variables: { jobId } },
      {
        next: (result) => {
          const now = Date.now();
          const event = result.data?.jobProgress;
          if (!event) {
            const code = (result.errors?.[0]?.extensions as { code?: string } | undefined)?.code ?? 'no data';
            bump(phaseAt(subscribedAt).subscribeErrors, `next with error ${code}`);
            return;
          }
          if (!snapshot) {
            snapshot = true;
            clearTimeout(timer);
            phaseAt(subscribedAt).subscribeMs.push(now - subscribedAt);
            onSnapshot();
            if (event.reason === 'SNAPSHOT') return;
          }
          const occurredAt = Date.parse(event.occurredAt);
          phaseAt(occurredAt).eventMs.push(now - occurredAt);
        },
        error: (error) => {
          clearTimeout(timer);
          const label = describe(error);
          bump(phaseAt(Date.now()).subscribeErrors, label);
          if (!snapshot) {
            snapshot = true;
            onSnapshot(label);
          }
          resolve();
        },
        complete: () => {
          clearTimeout(timer);
          phaseAt(Date.now()).jobsFinished++;
          if (!snapshot) {
            snapshot = true;
            onSnapshot('completed before its snapshot');
          }
          resolve();
        },
      },
    );
  });
}

function describe(error: unknown): string {
  if (Array.isArray(error)) return `error ${(error[0] as { extensions?: { code?: string } } | undefined)?.extensions?.code ?? '(no code)'}`;
  if (error && typeof error === 'object' && 'code' in error && typeof (error as { code: unknown }).code === 'number') return `socket closed ${(error as { code: number }).code}`;
  if (error instanceof Error) return error.message.slice(0, 80);
  return JSON.stringify(error).slice(0, 80);
}

/** A slot: start a job, watch it to its end, again, while running. Errors wait a second (bounded retries). */
async function slot(index: number, firstSnapshot: (error?: string) => void): Promise<void> {
  let first = true;
  while (running) {
    let jobId: string;
    try {
      jobId = await startJob();
    } catch (error) {
      if (first) firstSnapshot(`insert failed: ${String(error)}`);
      first = false;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      continue;
    }
    let failed = false;
    await watch(clients[index % clients.length]!, jobId, (error) => {
      failed = !!error;
      if (first) firstSnapshot(error);
      first = false;
    });
    if (failed && running) await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/** The wait before the next honest query (see HonestSettings.queryArrivals). */
function nextGapMs(): number {
  const meanMs = 1000 / settings.queryRate;
  return settings.queryArrivals === 'poisson' ? -Math.log(1 - Math.random()) * meanMs : meanMs;
}

function startQueries(): void {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const url = `${settings.httpUrl}/graphql`;
  const bodies = [JSON.stringify({ query: HONEST_QUERIES.jobsPage }), JSON.stringify({ query: HONEST_QUERIES.terms })];
  let inFlight = 0;
  let sent = 0;
  // Each send is due at its own moment; a late timer sends what is due at once, so the
  // rate holds however the client's own loop is delayed.
  let dueAt = performance.now() + nextGapMs();
  const schedule = () => (queryTimer = setTimeout(tick, Math.max(0, dueAt - performance.now())));
  const tick = () => {
    if (!running) return;
    const now = performance.now();
    while (dueAt <= now) {
      dueAt += nextGapMs();
      const sentAt = Date.now();
      const record = phaseAt(sentAt);
      if (inFlight >= MAX_IN_FLIGHT) {
        bump(record.queryErrors, `not sent: ${MAX_IN_FLIGHT} in flight`);
        continue;
      }
      inFlight++;
      // Tagged, so the API process times how long it held each query (request-timings.ts).
      const tag = `honest-${sent}`;
      const sentAtMs = performance.timeOrigin + performance.now();
      void postGraphQL(url, bodies[sent++ % bodies.length]!, { token: settings.token, localAddress: settings.localAddress, timeoutMs: settings.timeoutMs, agent, retryResetReusedConnection: true, headers: { [REQUEST_TAG_HEADER]: tag } }).then((outcome) => {
        inFlight--;
        // The latency of a query counts in the phase it was sent in, whatever became of it.
        record.queryMs.push(outcome.ms);
        record.querySentAtMs.push(sentAtMs);
        record.queryTags.push(tag);
        if (outcome.verdict === 'server-error') record.queryServerErrors++;
        if (outcome.verdict !== 'accepted') bump(record.queryErrors, outcome.label);
      });
    }
    schedule();
  };
  schedule();
}

async function start(s: HonestSettings): Promise<void> {
  settings = s;
  running = true;
  pool = new Pool({ connectionString: s.databaseUrl, max: 4 });
  // Every honest operation must work before anything is measured.
  for (const [name, query] of Object.entries(HONEST_QUERIES)) {
    const outcome = await postGraphQL(`${s.httpUrl}/graphql`, JSON.stringify({ query }), { token: s.token, localAddress: s.localAddress, timeoutMs: s.timeoutMs });
    if (outcome.verdict !== 'accepted') throw new Error(`the honest query ${name} fails (${outcome.label}); update HONEST_QUERIES in test/bench/support/hostile-honest.ts to the schema`);
  }
  const WebSocketImpl = webSocketFrom(s.localAddress);
  clients = Array.from({ length: Math.max(1, s.sockets) }, () =>
    createClient({ url: s.wsUrl, webSocketImpl: WebSocketImpl, connectionParams: { authorization: `Bearer ${s.token}` }, lazy: true, retryAttempts: 0, keepAlive: 0 }),
  );
  const startedAt = Date.now();
  const errors: string[] = [];
  let subscribed = 0;
  let pending = s.subscriptions;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, SNAPSHOT_TIMEOUT_MS + 10_000);
    for (let i = 0; i < s.subscriptions; i++) {
      slotLoops.push(
        slot(i, (error) => {
          if (error) {
            if (errors.length < 5) errors.push(error);
          } else subscribed++;
          if (--pending === 0) {
            clearTimeout(timer);
            resolve();
          }
        }),
      );
    }
  });
  startQueries();
  send({ type: 'started', subscribed, ms: Date.now() - startedAt, errors });
}

/** The slowest 1 % of a phase's queries (at least one), slowest first, with when each was sent. */
function slowestQueries(phase: string, r: PhaseRecord): HonestPhase['queries']['slowest'] {
  const phaseStart = boundaries.find((b) => b.phase === phase)?.atMs ?? 0;
  const order = r.queryMs.map((_, i) => i).sort((a, b) => r.queryMs[b]! - r.queryMs[a]!);
  return order.slice(0, Math.max(1, Math.ceil(order.length / 100))).map((i) => ({ atS: (r.querySentAtMs[i]! - phaseStart) / 1000, ms: r.queryMs[i]!, tag: r.queryTags[i]!, sentAtMs: r.querySentAtMs[i]! }));
}

function report(): Record<string, HonestPhase> {
  const out: Record<string, HonestPhase> = {};
  for (const [name, r] of phases) {
    out[name] = {
      queries: { ...percentiles(r.queryMs), samples: r.queryMs, slowest: slowestQueries(name, r), errors: r.queryErrors, serverErrors: r.queryServerErrors },
      events: { ...percentiles(r.eventMs), samples: r.eventMs },
      subscribes: { ...percentiles(r.subscribeMs), errors: r.subscribeErrors },
      jobsFinished: r.jobsFinished,
      ownStallMs: Math.round(r.ownStallMs),
    };
  }
  return out;
}

async function stop(): Promise<void> {
  running = false;
  clearTimeout(queryTimer);
  await Promise.all(clients.map((c) => Promise.resolve(c.dispose()).catch(() => undefined)));
  // The slots end once their streams did (disposing the clients ends them); bounded anyway.
  await Promise.race([Promise.all(slotLoops), new Promise((resolve) => setTimeout(resolve, 10_000))]);
  await pool?.end().catch(() => undefined);
}

process.on('message', (message: ToHonest) => {
  switch (message.type) {
    case 'start':
      start(message.settings).catch((error) => send({ type: 'failed', error: error instanceof Error ? error.message : String(error) }));
      break;
    case 'phase': {
      // The stall figure belongs to the phase that is ending.
      phaseAt(message.atMs - 1).ownStallMs = Math.max(phaseAt(message.atMs - 1).ownStallMs, stalls.takeMaxMs());
      boundaries.push({ phase: message.phase, atMs: message.atMs });
      break;
    }
    case 'report':
      send({ type: 'report', id: message.id, phases: report() });
      break;
    case 'stop':
      stop().then(
        () => {
          if (process.connected) process.send!({ type: 'stopped' } satisfies FromHonest, () => process.exit(0));
          else process.exit(0);
        },
        () => process.exit(1),
      );
      break;
  }
});
// The bench went away: leave too.
process.on('disconnect', () => process.exit(0));
