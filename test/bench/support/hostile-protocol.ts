/**
 * IPC messages between the hostile-load benchmark (test/bench/hostile.bench.ts), its
 * honest client (hostile-honest.ts) and its attackers (hostile-attacker.ts). The API
 * and worker processes speak subscriptions-protocol.ts.
 */

/** How an operation ended, in the words of the wire: `HTTP 400 QUERY_TOO_DEEP`, `close 4401`, `timeout`. */
export type Verdict = 'accepted' | 'refused' | 'server-error' | 'failed';

export interface Percentiles {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

// --- bench ⇄ honest client ---------------------------------------------------------
export type QueryArrivals = 'poisson' | 'even';
export const QUERY_ARRIVAL_KINDS: readonly QueryArrivals[] = ['poisson', 'even'];

export interface HonestSettings {
  httpUrl: string;
  wsUrl: string;
  /** A viewer token of the subject that requested the honest client's jobs. */
  token: string;
  subject: string;
  /** Where the honest client inserts its jobs (as an enqueue does) and wakes the publisher. */
  databaseUrl: string;
  jobKind: string;
  jobInput: Record<string, unknown>;
  subscriptions: number;
  sockets: number;
  queryRate: number;
  /**
   * When the honest queries are sent: `poisson`, at random moments (exponential gaps of
   * mean 1/queryRate), so they meet every phase of the attack lanes' fixed-rate cycle
   * alike; `even`, every 1/queryRate s, a fixed phase against that cycle for the whole run.
   */
  queryArrivals: QueryArrivals;
  /** The honest client's own loopback address (the attackers have others). */
  localAddress: string;
  timeoutMs: number;
}

export type ToHonest =
  | { type: 'start'; settings: HonestSettings }
  /** From `atMs` on, what the honest client records belongs to `phase`. */
  | { type: 'phase'; phase: string; atMs: number }
  | { type: 'report'; id: number }
  | { type: 'stop' };

/** Percentiles and the samples they were taken from (ms), for the bench's interval of the p99 ratio. */
export type SampledPercentiles = Percentiles & { samples: number[] };

export interface HonestPhase {
  queries: SampledPercentiles & {
    /**
     * The slowest 1 %, slowest first: when each was sent (seconds into the phase), its
     * latency, and its tag and send time (ms since the epoch) to join the API's timing of it
     * (test/bench/support/request-timings.ts).
     */
    slowest: { atS: number; ms: number; tag: string; sentAtMs: number }[];
    errors: Record<string, number>;
    serverErrors: number;
  };
  /** Delay of each job event: receipt − the event's occurredAt (one machine's clock). */
  events: SampledPercentiles;
  /** Subscribe → the job's SNAPSHOT. */
  subscribes: Percentiles & { errors: Record<string, number> };
  jobsFinished: number;
  /** The honest process's own longest timer lag: its figures are late by as much. */
  ownStallMs: number;
}

export type FromHonest =
  | { type: 'started'; subscribed: number; ms: number; errors: string[] }
  | { type: 'report'; id: number; phases: Record<string, HonestPhase> }
  | { type: 'stopped' }
  | { type: 'failed'; error: string };

// --- bench ⇄ attackers ---------------------------------------------------------------
export interface AttackSettings {
  httpUrl: string;
  wsUrl: string;
  seconds: number;
  /** Which attacks to run (names from hostile-attacks.ts). */
  attacks: string[];
  /** To mint the tokens a real client could hold: valid, expired, expiring, without exp, … */
  jwt: { secret: string; issuer: string; audience: string };
  /** Operations per second per lane at most (each lane waits for its answer before the next). */
  rate: number;
  bombFragments: number;
  floodSockets: number;
  floodSubscriptions: number;
  maxBodyBytes: number;
  maxWsPayloadBytes: number;
  /** An operation unanswered this long is a `timeout` (its socket is dropped). */
  timeoutMs: number;
  /**
   * Which set of callers the attacks come from (see `attackAddress`, `mintTokens`): each
   * set has addresses and token subjects of its own, so the API's limits know nothing
   * of it from an earlier attack (allowances, refused callers, sockets per address).
   */
  callers: number;
}

export type ToAttacker = { type: 'start'; settings: AttackSettings } | { type: 'stop' };

export interface AttackReport {
  name: string;
  who: string;
  what: string;
  sent: number;
  /** Outcome label → count. */
  outcomes: Record<string, number>;
  verdicts: Record<Verdict, number>;
  /** The slowest answer (ms). */
  slowestMs: number;
  /** Outcome label → the first error message or close reason seen with it. */
  examples: Record<string, string>;
}

export type FromAttacker =
  | { type: 'report'; attacks: AttackReport[]; ms: number }
  | { type: 'stopped' }
  | { type: 'failed'; error: string };
