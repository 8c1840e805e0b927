/**
 * The subscription benchmark's load generator, a process of its own: N graphql-ws
 * clients (one socket each, the token in connection_init), each subscribed to
 * `jobProgress(jobId)` of its own job, plus one dashboard client on `jobEvents`. It
 * records every event's receipt time and sequence and, when the bench sends the
 * emitter's account, reports delivered events, latency (receipt − occurredAt, same
 * machine clock), lost, duplicated and out-of-order events.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { FromLoad, LatencySummary, LoadClient, LoadReport, ToLoad } from './subscriptions-protocol';
import { quantile } from './quantile';

const PROGRESS = 'subscription BenchProgress($jobId: ID!) { jobProgress(jobId: $jobId) { sequence reason occurredAt } }';
const DASHBOARD = 'subscription BenchDashboard { jobEvents { jobId sequence occurredAt } }';

type ProgressEvent = { sequence: number; reason: string; occurredAt: string };
type DashboardEvent = { jobId: string; sequence: number; occurredAt: string };

const send = (message: FromLoad) => process.send?.(message);

/** Growable pairs (sent at, latency), without one object per event. */
class Samples {
  sentAt = new Float64Array(1 << 16);
  latency = new Float64Array(1 << 16);
  length = 0;
  add(sentAt: number, latency: number): void {
    if (this.length === this.sentAt.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.sentAt = grow(this.sentAt);
      this.latency = grow(this.latency);
    }
    this.sentAt[this.length] = sentAt;
    this.latency[this.length++] = latency;
  }
  summary(fromMs: number): LatencySummary {
    const values: number[] = [];
    const bySecond: number[][] = [];
    const origin = this.length ? this.sentAt[0]! : 0;
    for (let i = 0; i < this.length; i++) {
      const second = Math.floor((this.sentAt[i]! - origin) / 1000);
      (bySecond[second] ??= []).push(this.latency[i]!);
      if (this.sentAt[i]! >= fromMs) values.push(this.latency[i]!);
    }
    const seconds = Array.from(bySecond, (list): [number, number, number] => {
      if (!list) return [0, NaN, NaN];
      list.sort((a, b) => a - b);
      return [list.length, quantile(list, 0.99), list[list.length - 1]!];
    });
    values.sort((a, b) => a - b);
    const at = (q: number) => quantile(values, q);
    return { count: values.length, seconds, p50: at(0.5), p90: at(0.9), p99: at(0.99), p999: at(0.999), max: values.length ? values[values.length - 1]! : NaN };
  }
}

interface Watcher {
  jobId: string;
  client: Client;
  snapshotSequence: number | null;
  /** Sequences received after the snapshot, in arrival order. */
  sequences: number[];
  ended: boolean;
  error: string | null;
}

// Stalls of this process (a 5 ms timer ≥ 50 ms late): its receipt times are late by as much.
const stalls: { atMs: number; gapMs: number; cpuMs: number }[] = [];
let lastTick = performance.now();
let lastCpu = process.cpuUsage();
setInterval(() => {
  const now = performance.now();
  const cpu = process.cpuUsage();
  const gap = now - lastTick;
  if (gap >= 50 && stalls.length < 500) {
    stalls.push({ atMs: Date.now(), gapMs: Math.round(gap), cpuMs: Math.round((cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000) });
  }
  lastTick = now;
  lastCpu = cpu;
}, 5).unref();

const watchers: Watcher[] = [];
const samples = new Samples();
const dashboardSamples = new Samples();
const dashboardSeen = new Map<string, number[]>();
let dashboardClient: Client | null = null;
let received = 0;
let dashboardReceived = 0;
let firstReceiptMs = 0;
let lastReceiptMs = 0;

function client(wsUrl: string, token: string): Client {
  return createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: true,
    retryAttempts: 0,
    keepAlive: 0,
  });
}

function watch(wsUrl: string, spec: LoadClient, onSnapshot: (error?: string) => void): Watcher {
  const watcher: Watcher = { jobId: spec.jobId, client: client(wsUrl, spec.token), snapshotSequence: null, sequences: [], ended: false, error: null };
  let settled = false;
  const settle = (error?: string) => {
    if (settled) return;
    settled = true;
    onSnapshot(error);
  };
  watcher.client.subscribe<{ jobProgress: ProgressEvent }>(
    { query: PROGRESS, variables: { jobId: spec.jobId } },
    {
      next: (result) => {
        const now = Date.now();
        const event = result.data?.jobProgress;
        if (!event) {
          watcher.error = JSON.stringify(result.errors ?? result).slice(0, 300);
          settle(watcher.error);
          return;
        }
        if (event.reason === 'SNAPSHOT' && watcher.snapshotSequence === null) {
          watcher.snapshotSequence = event.sequence;
          settle();
          return;
        }
        const sentAt = Date.parse(event.occurredAt);
        samples.add(sentAt, now - sentAt);
        watcher.sequences.push(event.sequence);
        received++;
        if (!firstReceiptMs) firstReceiptMs = now;
        lastReceiptMs = now;
      },
      error: (error) => {
        watcher.ended = true;
        watcher.error = describe(error);
        settle(watcher.error);
      },
      complete: () => {
        watcher.ended = true;
        settle('completed before its snapshot');
      },
    },
  );
  return watcher;
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error && typeof error === 'object' && 'code' in error) return `socket closed ${(error as { code: number }).code} ${(error as { reason?: string }).reason ?? ''}`;
  return JSON.stringify(error).slice(0, 300);
}

async function connectAll(message: Extract<ToLoad, { type: 'connect' }>): Promise<void> {
  const started = Date.now();
  // The dashboard first, so it is listening before any job's event.
  dashboardClient = client(message.wsUrl, message.dashboardToken);
  dashboardClient.subscribe<{ jobEvents: DashboardEvent }>(
    { query: DASHBOARD },
    {
      next: (result) => {
        const now = Date.now();
        const event = result.data?.jobEvents;
        if (!event) return;
        const sentAt = Date.parse(event.occurredAt);
        dashboardSamples.add(sentAt, now - sentAt);
        let list = dashboardSeen.get(event.jobId);
        if (!list) dashboardSeen.set(event.jobId, (list = []));
        list.push(event.sequence);
        dashboardReceived++;
      },
      error: (error) => process.stderr.write(`dashboard subscription failed: ${describe(error)}\n`),
      complete: () => undefined,
    },
  );
  let next = 0;
  let failed = 0;
  const errors: string[] = [];
  await Promise.all(
    Array.from({ length: Math.max(1, message.concurrency) }, async () => {
      while (next < message.clients.length) {
        const spec = message.clients[next++]!;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            failed++;
            if (errors.length < 5) errors.push(`${spec.jobId}: no snapshot within ${message.timeoutMs} ms`);
            resolve();
          }, message.timeoutMs);
          watchers.push(
            watch(message.wsUrl, spec, (error) => {
              clearTimeout(timer);
              if (error) {
                failed++;
                if (errors.length < 5) errors.push(`${spec.jobId}: ${error}`);
              }
              resolve();
            }),
          );
        });
      }
    }),
  );
  send({ type: 'subscribed', subscribed: watchers.filter((w) => w.snapshotSequence !== null).length, failed, errors, ms: Date.now() - started });
}

/** Compares what arrived with what was sent: [first, last] sequences per job, every one sent. */
function account(
  sequencesOf: (jobId: string) => number[],
  sent: Record<string, [number, number]>,
  jobIds: Iterable<string>,
): { expected: number; lost: number; duplicates: number; outOfOrder: number; unexpected: number } {
  let expected = 0;
  let lost = 0;
  let duplicates = 0;
  let outOfOrder = 0;
  let unexpected = 0;
  for (const jobId of jobIds) {
    const range = sent[jobId];
    const sequences = sequencesOf(jobId);
    const count = range ? range[1] - range[0] + 1 : 0;
    expected += count;
    const seen = new Set<number>();
    let last = -Infinity;
    for (const sequence of sequences) {
      if (seen.has(sequence)) duplicates++;
      else if (!range || sequence < range[0] || sequence > range[1]) unexpected++;
      seen.add(sequence);
      if (sequence < last) outOfOrder++;
      last = Math.max(last, sequence);
    }
    let inRange = 0;
    if (range) for (const sequence of seen) if (sequence >= range[0] && sequence <= range[1]) inRange++;
    lost += count - inRange;
  }
  return { expected, lost, duplicates, outOfOrder, unexpected };
}

function report(message: Extract<ToLoad, { type: 'report' }>): LoadReport {
  const byJob = new Map(watchers.map((w) => [w.jobId, w]));
  const perJob = account((jobId) => byJob.get(jobId)?.sequences ?? [], message.sent, byJob.keys());
  const dashboard = account((jobId) => dashboardSeen.get(jobId) ?? [], message.sent, new Set([...Object.keys(message.sent), ...dashboardSeen.keys()]));
  const errors = watchers.filter((w) => w.error).slice(0, 5).map((w) => `${w.jobId}: ${w.error}`);
  return {
    clients: watchers.length,
    received,
    expected: perJob.expected,
    lost: perJob.lost,
    duplicates: perJob.duplicates,
    outOfOrder: perJob.outOfOrder,
    unexpected: perJob.unexpected,
    endedEarly: watchers.filter((w) => w.ended).length,
    errors,
    stalls: stalls.filter((x) => x.atMs >= message.measureFromMs - 2_000).map(({ gapMs, cpuMs }) => ({ gapMs, cpuMs })),
    firstReceiptMs,
    lastReceiptMs,
    latency: samples.summary(message.measureFromMs),
    dashboard: {
      received: dashboardReceived,
      expected: dashboard.expected,
      lost: dashboard.lost,
      duplicates: dashboard.duplicates,
      outOfOrder: dashboard.outOfOrder,
      latency: dashboardSamples.summary(message.measureFromMs),
    },
  };
}

async function closeAll(): Promise<void> {
  const all = [...watchers.map((w) => w.client), ...(dashboardClient ? [dashboardClient] : [])];
  for (let i = 0; i < all.length; i += 500) {
    await Promise.all(all.slice(i, i + 500).map((c) => Promise.resolve(c.dispose()).catch(() => undefined)));
  }
}

function exitAfter(message: FromLoad, code: number): void {
  if (process.connected) {
    process.send!(message, () => {
      process.disconnect();
      process.exit(code);
    });
  } else process.exit(code);
}

process.on('message', (message: ToLoad) => {
  switch (message.type) {
    case 'connect':
      connectAll(message).catch((error) => send({ type: 'failed', error: describe(error) }));
      break;
    case 'progress':
      send({ type: 'progress', id: message.id, received, dashboardReceived });
      break;
    case 'report':
      send({ type: 'report', report: report(message) });
      break;
    case 'close':
      closeAll().then(
        () => exitAfter({ type: 'closed' }, 0),
        (error) => exitAfter({ type: 'failed', error: describe(error) }, 1),
      );
      break;
  }
});
// The bench went away: leave too.
process.on('disconnect', () => process.exit(0));
