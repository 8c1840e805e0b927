/**
 * The chaos benchmark's watchers: keeps N `jobProgress` subscriptions open over
 * graphql-ws, each on a job not yet finished, spread round-robin over the API
 * processes; when one ends, another starts on a fresh job. Records what each saw, so
 * the end of the run can check that every one ended with its job's final status.
 *
 * Each open subscription is one person's: a token of its own subject and a socket from
 * an address of its own (a loopback address of this machine), so the API's per-subject
 * and per-address caps see what they would in an office: one socket per person.
 *
 * A subscription that could not start (its snapshot read failed while the database
 * was down) is started again after a pause, as a client would; once it has its
 * snapshot, anything but a completion after a terminal event counts against the run.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

const PROGRESS = 'subscription ChaosProgress($jobId: ID!) { jobProgress(jobId: $jobId) { status sequence reason } }';
const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);
/** Starts of one subscription that may fail before it is given up (each waits START_RETRY_MS). */
const START_ATTEMPTS = 60;
const START_RETRY_MS = 500;
/** At most this many subscriptions start per tick (every 100 ms). */
const STARTS_PER_TICK = 50;

/** Who watches: a subject's token and the local address its sockets come from. */
export interface Watcher {
  token: string;
  localAddress: string;
}

/** Loopback address `i` of the watchers (127.0.0.1 stays the run's own). */
export function watcherAddress(i: number): string {
  return `127.0.${1 + Math.floor(i / 250)}.${2 + (i % 250)}`;
}

export interface WatchRecord {
  jobId: string;
  api: number;
  /** The index of its watcher (see `SubscriptionKeeper`'s `watchers`). */
  watcher: number;
  openedAtMs: number;
  /** Failed starts before the one that got its snapshot. */
  startFailures: number;
  snapshotStatus: string | null;
  lastStatus: string | null;
  lastSequence: number;
  events: number;
  /** Events whose sequence was not above the one before (duplicates or steps back). */
  outOfOrder: number;
  /** Wall clock (ms since epoch) when the terminal event arrived. */
  terminalAtMs: number | null;
  state: 'starting' | 'open' | 'completed' | 'errored' | 'gave-up';
  error: string | null;
}

export class SubscriptionKeeper {
  readonly records: WatchRecord[] = [];
  private readonly clients = new Map<WatchRecord, Client>();
  private timer: NodeJS.Timeout | null = null;
  private opening = true;
  private nextApi = 0;
  private closed = false;
  /** Watchers holding no subscription now. */
  private readonly idle: number[];

  constructor(
    private readonly deps: {
      wsUrls: string[];
      /** At least `target` of them: each holds one subscription at a time. */
      watchers: Watcher[];
      target: number;
      /** A job to watch next (not finished as far as the caller knows), or undefined for none now. */
      pickJob: () => string | undefined;
      startedAt: number;
    },
  ) {
    if (deps.watchers.length < deps.target) throw new Error(`${deps.target} subscriptions need as many watchers, not ${deps.watchers.length}`);
    this.idle = deps.watchers.map((_, i) => i).reverse();
  }

  start(): void {
    if (this.deps.target === 0) return;
    this.timer = setInterval(() => this.topUp(), 100);
  }

  /** Subscriptions still open or starting. */
  get active(): number {
    return this.records.filter((r) => r.state === 'open' || r.state === 'starting').length;
  }

  /** No new subscriptions from now on; the open ones continue. */
  stopOpening(): void {
    this.opening = false;
  }

  /** Resolves once every subscription has ended, or after `timeoutMs`. */
  async settle(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.active > 0 && Date.now() < deadline && !signal?.aborted) await new Promise((r) => setTimeout(r, 100));
  }

  /**
   * A fresh subscription's first event for a record's job, by its watcher on the same API
   * process: tells an event lost on the way (the fresh one gets the final status at once)
   * from a dead socket. Resolves with its status, or null if none came within `timeoutMs`.
   */
  probe(record: WatchRecord, timeoutMs = 5_000): Promise<string | null> {
    const jobId = record.jobId;
    return new Promise((resolve) => {
      const client = this.clientFor(record, { keepAlive: 0 });
      let done = false;
      const finish = (status: string | null) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        void client.dispose();
        resolve(status);
      };
      const timer = setTimeout(() => finish(null), timeoutMs);
      client.subscribe<{ jobProgress: { status: string } }>(
        { query: PROGRESS, variables: { jobId } },
        { next: (result) => finish(result.data?.jobProgress?.status ?? null), error: () => finish(null), complete: () => finish(null) },
      );
    });
  }

  close(): void {
    this.closed = true;
    this.opening = false;
    if (this.timer) clearInterval(this.timer);
    for (const client of this.clients.values()) void client.dispose();
    this.clients.clear();
  }

  /** A graphql-ws client of the record's watcher (its token, its address) to the record's API process. */
  private clientFor(record: WatchRecord, options: { keepAlive: number }): Client {
    const watcher = this.deps.watchers[record.watcher]!;
    class WatcherSocket extends WebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols, { localAddress: watcher.localAddress });
      }
    }
    return createClient({
      url: this.deps.wsUrls[record.api]!,
      webSocketImpl: WatcherSocket,
      connectionParams: { authorization: `Bearer ${watcher.token}` },
      lazy: true,
      retryAttempts: 0,
      keepAlive: options.keepAlive,
    });
  }

  private topUp(): void {
    if (!this.opening || this.closed) return;
    let room = Math.min(STARTS_PER_TICK, this.deps.target - this.active);
    while (room-- > 0 && this.idle.length > 0) {
      const jobId = this.deps.pickJob();
      if (!jobId) return;
      const watcher = this.idle.pop()!;
      const record: WatchRecord = {
        jobId,
        api: this.nextApi++ % this.deps.wsUrls.length,
        watcher,
        openedAtMs: Date.now() - this.deps.startedAt,
        startFailures: 0,
        snapshotStatus: null,
        lastStatus: null,
        lastSequence: -1,
        events: 0,
        outOfOrder: 0,
        terminalAtMs: null,
        state: 'starting',
        error: null,
      };
      this.records.push(record);
      this.subscribe(record);
    }
  }

  private subscribe(record: WatchRecord): void {
    if (this.closed) return;
    const client = this.clientFor(record, { keepAlive: 10_000 });
    this.clients.set(record, client);
    // Disposing a client can still call this attempt's sink (complete, or error for the
    // closed socket): once the attempt has ended, its callbacks change nothing.
    let over = false;
    const end = () => {
      over = true;
      if (this.clients.get(record) === client) this.clients.delete(record);
      void client.dispose();
    };
    const failedStart = (why: string) => {
      end();
      record.startFailures++;
      record.error = why;
      if (record.startFailures >= START_ATTEMPTS || this.closed) {
        record.state = 'gave-up';
        this.idle.push(record.watcher);
        return;
      }
      setTimeout(() => this.subscribe(record), START_RETRY_MS);
    };
    client.subscribe<{ jobProgress: { status: string; sequence: number; reason: string } }>(
      { query: PROGRESS, variables: { jobId: record.jobId } },
      {
        next: (result) => {
          if (over) return;
          const event = result.data?.jobProgress;
          if (!event) {
            const why = JSON.stringify(result.errors ?? result).slice(0, 300);
            if (record.state === 'starting') failedStart(why);
            else {
              record.state = 'errored';
              record.error = why;
              end();
              this.idle.push(record.watcher);
            }
            return;
          }
          if (record.state === 'starting') {
            record.state = 'open';
            record.snapshotStatus = event.status;
          } else if (event.sequence <= record.lastSequence) record.outOfOrder++;
          record.events++;
          record.lastSequence = Math.max(record.lastSequence, event.sequence);
          record.lastStatus = event.status;
          if (TERMINAL.has(event.status) && record.terminalAtMs === null) record.terminalAtMs = Date.now();
        },
        error: (error) => {
          if (over) return;
          const why = describe(error);
          if (record.state === 'starting') failedStart(why);
          else if (record.state === 'open') {
            record.state = 'errored';
            record.error = why;
            end();
            this.idle.push(record.watcher);
          }
        },
        complete: () => {
          if (over) return;
          if (record.state === 'starting') return failedStart('completed before its snapshot');
          if (record.state === 'open') record.state = 'completed';
          end();
          this.idle.push(record.watcher);
        },
      },
    );
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (Array.isArray(error)) return JSON.stringify(error).slice(0, 300);
  if (error && typeof error === 'object' && 'code' in error) return `socket closed ${(error as { code: number }).code} ${(error as { reason?: string }).reason ?? ''}`.trim();
  return JSON.stringify(error).slice(0, 300);
}
