/**
 * IPC messages between the subscription benchmark (test/bench/subscriptions.bench.ts),
 * its API process (subscriptions-api.ts) and its load generator (subscriptions-load.ts).
 */

import type { ServerTiming } from './request-timings';

// --- bench ⇄ API process --------------------------------------------------------
export type ToApi = { type: 'heap'; id: number } | { type: 'stats'; id: number } | { type: 'requestTimings'; id: number } | { type: 'stop' };

export type FromApi =
  | { type: 'ready'; url: string; pid: number }
  | { type: 'heap'; id: number; heapUsed: number; rss: number; external: number; arrayBuffers: number }
  | { type: 'stats'; id: number; loopDelayP50Ms: number; loopDelayP99Ms: number; loopDelayMaxMs: number; cpuUserMs: number; cpuSystemMs: number; stalls: { atMs: number; gapMs: number; cpuMs: number; waitMs: number }[]; gcs: { minor: number; minorMs: number; major: number; majorMs: number; longestMajorMs: number }; heapUsed: number; heapUsedPeak: number }
  /** Tagged HTTP requests held since the last ask (with BENCH_REQUEST_TIMINGS=1; see request-timings.ts). */
  | { type: 'requestTimings'; id: number; timings: ServerTiming[] }
  | { type: 'stopped' }
  | { type: 'failed'; error: string };

// --- bench ⇄ load generator --------------------------------------------------------
export interface LoadClient {
  jobId: string;
  token: string;
}

export type ToLoad =
  | { type: 'connect'; wsUrl: string; clients: LoadClient[]; dashboardToken: string; concurrency: number; timeoutMs: number }
  /** How many events the generator holds so far (for the drain wait). */
  | { type: 'progress'; id: number }
  /**
   * The emitter's account: for each job, the sequences it sent (first..last, every one),
   * and from when latencies count (the warm-up is left out of the percentiles only).
   */
  | { type: 'report'; sent: Record<string, [number, number]>; measureFromMs: number; totalSent: number }
  | { type: 'close' };

export type FromLoad =
  | { type: 'subscribed'; subscribed: number; failed: number; errors: string[]; ms: number }
  | { type: 'progress'; id: number; received: number; dashboardReceived: number }
  | { type: 'report'; report: LoadReport }
  | { type: 'closed' }
  | { type: 'failed'; error: string };

export interface LatencySummary {
  count: number;
  /** Per second of send time (from the first sample): [events, p99, max]. */
  seconds?: [number, number, number][];
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export interface LoadReport {
  clients: number;
  /** Events received by the per-job subscribers (snapshots not counted). */
  received: number;
  expected: number;
  lost: number;
  duplicates: number;
  outOfOrder: number;
  /** Events with a sequence nobody sent (should be 0). */
  unexpected: number;
  /** Subscriptions that ended or failed before the end. */
  endedEarly: number;
  errors: string[];
  /** This process's stalls while events flowed (wall ms late, CPU ms it used meanwhile). */
  stalls: { gapMs: number; cpuMs: number }[];
  firstReceiptMs: number;
  lastReceiptMs: number;
  latency: LatencySummary;
  dashboard: {
    received: number;
    expected: number;
    lost: number;
    duplicates: number;
    outOfOrder: number;
    latency: LatencySummary;
  };
}
