import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { JobSnapshot, JobText } from './types';

/**
 * What a processor uses to tell watchers where it is. Steps and messages are best given
 * as coded text (a stable code, its parameters and the English sentence) so any UI can
 * say them in its own language; a plain string is stored with no code.
 */
export interface ProgressReporter {
  /** A named step a UI can show ("Building the model"); stored and published at once. */
  step(name: string | JobText, message?: string | JobText): void;
  /** Progress within the job, 0–1, and an optional message; published at most about once a second. */
  report(fraction: number, message?: string | JobText): void;
}

export interface ProcessorContext<Input> {
  job: JobSnapshot;
  input: Input;
  /** A fresh MikroORM EntityManager for this job, forked on first use. */
  readonly em: EntityManager;
  /** Aborted when the job is cancelled, its lease is lost, or the process shuts down. */
  signal: AbortSignal;
  logger: Logger;
  progress: ProgressReporter;
  /** 1 for the first attempt of this job's current attempt series. */
  attempt: number;
  /**
   * Runs `work` in one transaction that also completes the job, so the processor's
   * writes and the job's SUCCEEDED commit together or not at all (and only while
   * this runner still holds the lease). Its return value becomes the job's result.
   */
  completeWithin<R>(work: (em: EntityManager) => Promise<R>): Promise<R>;
}

/**
 * Thrown by a processor for a failure that no retry can fix (bad data): the job fails at
 * once. (Any error with `retryable: false` does the same; see retry-policy.ts.) Given
 * coded text, the job's error carries its code and parameters (see `jobTextOf`).
 */
export class PermanentJobError extends Error {
  readonly retryable = false;
  readonly jobText: JobText | null;

  constructor(message: string | JobText) {
    super(typeof message === 'string' ? message : message.text);
    this.name = 'PermanentJobError';
    this.jobText = typeof message === 'string' ? null : message;
  }
}

/**
 * The coded text a failure describes itself with: its `jobText` property when that is
 * a well-formed code with object parameters (the contract any domain error may follow;
 * the engine knows none by name), else null — the job then fails with the generic code.
 */
export function jobTextOf(error: unknown): JobText | null {
  if (typeof error !== 'object' || error === null) return null;
  const text = (error as { jobText?: unknown }).jobText as Partial<JobText> | null | undefined;
  if (typeof text !== 'object' || text === null) return null;
  if (typeof text.code !== 'string' || !/^[a-z][a-z0-9.-]*$/.test(text.code) || typeof text.text !== 'string') return null;
  const params = text.params;
  if (params !== null && params !== undefined && (typeof params !== 'object' || Array.isArray(params))) return null;
  return { code: text.code, params: params ?? null, text: text.text };
}

export type Processor<Input = unknown, Result = unknown> = (ctx: ProcessorContext<Input>) => Promise<Result>;

export interface KindDefaults {
  /** Concurrent jobs of this kind per worker process (1–16). */
  consumers: number;
  /** Claims allowed per attempt series before the job fails; defaults to the engine's. */
  attemptLimit?: number;
  /**
   * Lease length in seconds; defaults to the engine's. At least MIN_LEASE_SECONDS for
   * a job that heartbeats (see there); shorter only where a test wants a lease to lapse.
   */
  leaseSeconds?: number;
  /**
   * Deliveries of this kind a worker process holds beyond those running (default 0), so
   * a consumer that finishes a job starts the next without a broker round trip. Worth it
   * for short jobs only: a held delivery waits for this process while another may idle.
   */
  prefetch?: number;
  /**
   * Held deliveries a worker process claims before a processor slot is free (default 0):
   * the claims of more jobs share each statement, so a drain of many short jobs needs
   * fewer statements per job. A job claimed ahead is RUNNING, with its lease kept by its
   * heartbeat, while it waits here for a slot — up to one job's run; at most `consumers`
   * processors of the kind still run at once (see RunSlots). The broker's window grows by
   * as many deliveries. For short jobs only, as prefetch.
   */
  claimAhead?: number;
}

export interface KindRegistration<Input = unknown, Result = unknown> {
  kind: string;
  processor: Processor<Input, Result>;
  defaults: KindDefaults;
  /** Checks and normalises input at enqueue; throws to refuse it. */
  validateInput?: (input: unknown) => Input;
}

/** The kinds this process knows: the only way a kind plugs into the engine. */
export class KindRegistry {
  private readonly kinds = new Map<string, KindRegistration>();

  register<Input, Result>(registration: KindRegistration<Input, Result>): void {
    if (this.kinds.has(registration.kind)) throw new Error(`job kind ${registration.kind} is registered twice`);
    this.kinds.set(registration.kind, registration as unknown as KindRegistration);
  }

  get(kind: string): KindRegistration | undefined {
    return this.kinds.get(kind);
  }

  require(kind: string): KindRegistration {
    const registration = this.kinds.get(kind);
    if (!registration) throw new Error(`no processor is registered for job kind ${kind}`);
    return registration;
  }

  names(): string[] {
    return [...this.kinds.keys()];
  }
}
