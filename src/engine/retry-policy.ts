/**
 * What happens after a job's attempt fails: retry after a back-off, or fail for good.
 * Pure (no I/O, randomness injected) so every rule is unit-tested on its own; the
 * runner applies the decision.
 *
 * - A failure is *retryable* unless the error says otherwise: `PermanentJobError`, or
 *   any error whose `retryable` property is `false` (the contract a domain's own error
 *   types use — the engine knows no domain error by name).
 * - A retryable failure is retried until the attempt limit; the attempt that reaches
 *   it fails the job.
 * - Retry N waits `baseMs · 2^(N-1)`, capped at `maxMs`, with "equal jitter" (half
 *   fixed, half random): jobs that failed together do not come back together, and no
 *   retry comes sooner than half its nominal delay.
 *
 * (Attempts are counted by the claim — an attempt lost with its worker counts too, so
 * a job that kills its worker every time still reaches the limit; only a last attempt
 * whose processor had returned is spared, see spare-attempt.ts.)
 */

/** An error that declares whether a retry could succeed. */
export interface MaybeRetryable {
  retryable?: unknown;
}

export interface RetrySettings {
  /** First retry delay. */
  baseMs: number;
  /** Cap of the delay. */
  maxMs: number;
}

export type FailureDecision =
  | { action: 'retry'; delayMs: number }
  | { action: 'fail'; reason: 'not-retryable' | 'attempts-exhausted' };

/** Whether a retry could succeed: false only when the error says so. */
export function isRetryable(error: unknown): boolean {
  return !(typeof error === 'object' && error !== null && (error as MaybeRetryable).retryable === false);
}

/**
 * Delay before retry number `attempt` (1-based): exponential from `baseMs`, capped at
 * `maxMs`, with equal jitter.
 */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const nominal = Math.min(maxMs, baseMs * 2 ** exponent);
  return Math.round(nominal / 2 + random() * (nominal / 2));
}

/** The decision after attempt `attempt` (1-based) of at most `attemptLimit` failed with `error`. */
export function decideAfterFailure(
  args: { error: unknown; attempt: number; attemptLimit: number; settings: RetrySettings },
  random: () => number = Math.random,
): FailureDecision {
  if (!isRetryable(args.error)) return { action: 'fail', reason: 'not-retryable' };
  if (args.attempt >= args.attemptLimit) return { action: 'fail', reason: 'attempts-exhausted' };
  return { action: 'retry', delayMs: retryDelayMs(args.attempt, args.settings.baseMs, args.settings.maxMs, random) };
}

/** Whether attempt `attempt` is the job's last one: a failure now fails the job. */
export const isLastAttempt = (attempt: number, attemptLimit: number): boolean => attempt >= attemptLimit;

/** The job's error message when it fails for good. */
export function finalErrorMessage(errorText: string, decision: { reason: 'not-retryable' | 'attempts-exhausted' }, attempt: number, attemptLimit: number): string {
  if (decision.reason === 'not-retryable') return errorText;
  return `${errorText} (attempt ${attempt} of ${attemptLimit}; automatic retries stopped — fix the cause, then retry the job)`;
}
