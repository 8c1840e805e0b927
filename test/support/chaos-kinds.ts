/**
 * Stand-in processors for the chaos benchmark (test/bench/chaos.bench.ts) and its small
 * version in the suite (test/engine/chaos.test.ts): one per service kind, so that the
 * API serves their jobs (subscriptions, cancelJob) exactly as it serves real ones.
 *
 * - AUTOMATIC_SCHEDULE, "short": sleeps `ms` and returns — the engine's fast path (the
 *   delivery is settled first, the completion commits after, batched).
 * - SCHEDULE_PUBLISH, "flaky": throws on its first `failAttempts` attempts (the retry
 *   path), then succeeds with an effect row written by `completeWithin`.
 * - MAKEUP_EXAM_AUTO, "slow": `steps` steps of `stepMs`, reporting each and checking its
 *   signal between them (the target of cancellations), then an effect row.
 *
 * What "completed twice" means is countable in the database: every `completeWithin`
 * writes one `chaos_effects` row in the transaction that commits SUCCEEDED, and a
 * trigger records every status change of every job in `chaos_transitions` (so a job
 * entering SUCCEEDED twice, or leaving a terminal status, shows for every kind).
 * `CHAOS_SCHEMA_SQL` creates both; the benchmark runs it after the migrations.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { KindDefaults, KindRegistration, ProcessorContext } from '../../src/engine/registry';
import { JobKind } from '../../src/job-kinds';

/** `1`: a spawned service process (service-process.ts) runs the chaos stand-ins instead of the service's kinds. */
export const CHAOS_KINDS_ENV = 'JIAOWU_CHAOS_KINDS';

/** Which behaviour each service kind stands in for. */
export const CHAOS_KIND = {
  short: JobKind.AUTOMATIC_SCHEDULE,
  flaky: JobKind.SCHEDULE_PUBLISH,
  slow: JobKind.MAKEUP_EXAM_AUTO,
} as const;

export interface ShortInput {
  ms: number;
}
export interface FlakyInput {
  ms: number;
  /** Attempts (claims) that throw before one succeeds. */
  failAttempts: number;
}
export interface SlowInput {
  steps: number;
  stepMs: number;
}

export const CHAOS_SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS chaos_effects (
  job_id uuid NOT NULL,
  attempt int NOT NULL,
  pid int NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS chaos_effects_job_id ON chaos_effects (job_id);
CREATE TABLE IF NOT EXISTS chaos_transitions (
  job_id uuid NOT NULL,
  from_status text NOT NULL,
  to_status text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS chaos_transitions_job_id ON chaos_transitions (job_id);
CREATE OR REPLACE FUNCTION chaos_record_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chaos_transitions (job_id, from_status, to_status) VALUES (NEW.id, OLD.status, NEW.status);
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS chaos_transitions_on_status ON jobs;
CREATE TRIGGER chaos_transitions_on_status AFTER UPDATE OF status ON jobs
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION chaos_record_transition();
`;

/** Every processor made here, so `assertChaosKinds` can tell a stand-in from the service's own. */
const standIns = new WeakSet<object>();
function standIn<Input, Result>(registration: KindRegistration<Input, Result>): KindRegistration<Input, Result> {
  standIns.add(registration.processor);
  return registration;
}

/** Waits `ms`, or less if the job is aborted (the caller then throws the signal's reason). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

const bounded = (value: unknown, fallback: number, max: number) => Math.max(0, Math.min(max, Number.isFinite(Number(value)) ? Number(value) : fallback));

/** The effect of one successful run, committed with the job's SUCCEEDED. */
function recordEffect<Input>(ctx: ProcessorContext<Input>): Promise<{ pid: number; attempt: number }> {
  return ctx.completeWithin(async (em: EntityManager) => {
    await em
      .getConnection()
      .execute('INSERT INTO chaos_effects (job_id, attempt, pid) VALUES (?, ?, ?)', [ctx.job.id, ctx.attempt, process.pid], 'run', em.getTransactionContext());
    return { pid: process.pid, attempt: ctx.attempt };
  });
}

export function shortRegistration(defaults: KindDefaults): KindRegistration<ShortInput, { pid: number }> {
  return standIn({
    kind: CHAOS_KIND.short,
    defaults,
    processor: async ({ input, signal }) => {
      await pause(bounded(input?.ms, 50, 60_000), signal);
      throwIfAborted(signal);
      return { pid: process.pid };
    },
  });
}

export function flakyRegistration(defaults: KindDefaults): KindRegistration<FlakyInput, { pid: number; attempt: number }> {
  return standIn({
    kind: CHAOS_KIND.flaky,
    defaults,
    processor: async (ctx) => {
      const { input, signal, attempt } = ctx;
      ctx.progress.step(`attempt ${attempt}`);
      await pause(bounded(input?.ms, 50, 60_000), signal);
      throwIfAborted(signal);
      if (attempt <= bounded(input?.failAttempts, 1, 100)) throw new Error(`planned failure of attempt ${attempt}`);
      return recordEffect(ctx);
    },
  });
}

export function slowRegistration(defaults: KindDefaults): KindRegistration<SlowInput, { pid: number; attempt: number }> {
  return standIn({
    kind: CHAOS_KIND.slow,
    defaults,
    processor: async (ctx) => {
      const { input, signal } = ctx;
      const steps = bounded(input?.steps, 4, 100);
      for (let i = 1; i <= steps; i++) {
        throwIfAborted(signal);
        ctx.progress.step(`step ${i} of ${steps}`);
        await pause(bounded(input?.stepMs, 250, 60_000), signal);
        ctx.progress.report(i / steps);
      }
      throwIfAborted(signal);
      return recordEffect(ctx);
    },
  });
}

/** The three stand-ins with the given defaults (for an enqueuer's registry). */
export function chaosRegistrations(defaults: KindDefaults = { consumers: 1 }): KindRegistration<any, any>[] {
  return [shortRegistration(defaults), flakyRegistration(defaults), slowRegistration(defaults)];
}

/**
 * The stand-ins to pass `startApp` as `extraKinds`: each takes the place of the service's
 * own kind of that name, with the consumer count the configuration gives that kind.
 */
export function chaosKindsFor(consumersOf: (kind: JobKind) => number): KindRegistration<any, any>[] {
  return [
    shortRegistration({ consumers: consumersOf(CHAOS_KIND.short) }),
    flakyRegistration({ consumers: consumersOf(CHAOS_KIND.flaky) }),
    slowRegistration({ consumers: consumersOf(CHAOS_KIND.slow) }),
  ];
}

/** Throws unless every service kind in `registry` runs a chaos stand-in. */
export function assertChaosKinds(registry: { require(kind: string): KindRegistration }): void {
  for (const kind of Object.values(CHAOS_KIND)) {
    if (!standIns.has(registry.require(kind).processor)) {
      throw new Error(`${CHAOS_KINDS_ENV}=1 but ${kind} does not run its chaos stand-in (could not replace the service's processor)`);
    }
  }
}
