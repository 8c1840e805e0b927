/**
 * Where a slow HTTP request's time went, split at the API process's edge: the client
 * tags each request (`x-bench-request: <n>`), the API process records how long it held
 * it — from its headers parsed (`http.server.request.start`) to the last byte of the
 * answer handed to the kernel (`http.server.response.finish`) — and how that time
 * divides on its main thread's clock (running, GC pauses among it, waiting for a core,
 * asleep on I/O). The rest of the client's figure is outside the API:
 * the request waiting in the socket to be read, the answer on its way back, the client.
 * Bench-only (the service's own code records nothing per request).
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import { threadClock, type ThreadTimes } from './thread-clock';

export const REQUEST_TAG_HEADER = 'x-bench-request';

/**
 * One tagged request as the API process saw it: [tag, ms held, and of those: ms its main
 * thread ran (any work, not only this request's), ms it waited for a core, ms of GC pauses;
 * then when it read the request's headers, in ms since the epoch (`performance.timeOrigin`
 * based, so a client on the same machine can tell how long its request waited unread)].
 * What is left of `held` the thread slept: waiting for PostgreSQL, the broker.
 */
export type ServerTiming = [tag: string, heldMs: number, runMs: number, waitMs: number, gcMs: number, readAtMs: number];

/** Kept at most; a bench phase tags far fewer. */
const MAX_KEPT = 100_000;
/** GC pauses remembered: enough to cover the longest request held. */
const GC_WINDOW = 512;

/** In the API process: starts recording; `take()` returns what was recorded and forgets it. */
export function recordServerTimings(): { take(): ServerTiming[] } {
  const gcs: Array<[start: number, end: number]> = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcs.push([entry.startTime, entry.startTime + entry.duration]);
    if (gcs.length > GC_WINDOW) gcs.splice(0, gcs.length - GC_WINDOW);
  }).observe({ entryTypes: ['gc'] });
  const clock = threadClock();
  const started = new WeakMap<IncomingMessage, { at: number; times: ThreadTimes }>();
  let kept: ServerTiming[] = [];
  diagnosticsChannel.subscribe('http.server.request.start', (message) => {
    const { request } = message as { request: IncomingMessage };
    if (request.headers[REQUEST_TAG_HEADER] !== undefined) started.set(request, { at: performance.now(), times: clock() });
  });
  diagnosticsChannel.subscribe('http.server.response.finish', (message) => {
    const { request } = message as { request: IncomingMessage };
    const start = started.get(request);
    if (start === undefined || kept.length >= MAX_KEPT) return;
    const to = performance.now();
    const times = clock();
    const from = start.at;
    let gcMs = 0;
    for (const [gcStart, gcEnd] of gcs) gcMs += Math.max(0, Math.min(gcEnd, to) - Math.max(gcStart, from));
    kept.push([String(request.headers[REQUEST_TAG_HEADER]), to - from, times.cpuMs - start.times.cpuMs, times.waitMs - start.times.waitMs, gcMs, performance.timeOrigin + from]);
  });
  return {
    take() {
      const taken = kept;
      kept = [];
      return taken;
    },
  };
}

/** One client request joined to the API's timing of it (ms). */
export interface RequestSplit {
  /** The client's latency: the parts below add up to it. */
  totalMs: number;
  /** The API held it, and meanwhile its main thread ran, waited for a core, paused for GC. */
  heldMs: number;
  runMs: number;
  waitMs: number;
  gcMs: number;
  /** Outside the API: all of it, and of that from the client's send to the API reading the headers (NaN when the client gave no send time). */
  outsideMs: number;
  beforeReadMs: number;
}

/**
 * A client's request: its tag, its latency and, optionally, when it was sent in ms since
 * the epoch (`performance.timeOrigin + performance.now()`, comparable with the API's
 * `readAtMs` on the same machine).
 */
export type ClientTiming = readonly [tag: string, totalMs: number, sentAtMs?: number];

/** The client's requests the API timed, split (in the client's order; untimed ones left out). */
export function joinTimings(client: readonly ClientTiming[], server: readonly ServerTiming[]): Array<RequestSplit & { tag: string }> {
  const byTag = new Map(server.map((s) => [s[0], s]));
  return client.flatMap(([tag, totalMs, sentAtMs]) => {
    const s = byTag.get(tag);
    if (!s) return [];
    return [{ tag, totalMs, heldMs: s[1], runMs: s[2], waitMs: s[3], gcMs: s[4], outsideMs: totalMs - s[1], beforeReadMs: sentAtMs === undefined ? NaN : s[5] - sentAtMs }];
  });
}

export interface SlowestSplit extends RequestSplit {
  /** Requests in the slowest share (each figure is their mean). */
  count: number;
}

const mean = (values: number[]) => (values.length === 0 ? NaN : values.reduce((sum, v) => sum + v, 0) / values.length);

/** The slowest `share` of the client's requests (by its latency), split by the API's timings. */
export function splitSlowest(client: readonly ClientTiming[], server: readonly ServerTiming[], share: number): SlowestSplit {
  const joined = joinTimings(client, server);
  joined.sort((a, b) => b.totalMs - a.totalMs);
  const slowest = joined.slice(0, Math.max(1, Math.ceil(joined.length * share)));
  const of = (key: keyof RequestSplit) => mean(slowest.map((r) => r[key]));
  return {
    count: slowest.length,
    totalMs: of('totalMs'),
    heldMs: of('heldMs'),
    runMs: of('runMs'),
    waitMs: of('waitMs'),
    gcMs: of('gcMs'),
    outsideMs: of('outsideMs'),
    beforeReadMs: of('beforeReadMs'),
  };
}
