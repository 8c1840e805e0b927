/**
 * The retry policy on its own (pure rules), and the runner applying it: a processor's
 * user-input error fails the job at once instead of being retried to the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { PermanentJobError } from '../../src/engine/registry';
import { decideAfterFailure, finalErrorMessage, isLastAttempt, isRetryable, retryDelayMs } from '../../src/engine/retry-policy';
import { JobStatus } from '../../src/engine/types';
import { badInput, conflict, notFound } from '../../src/errors';
import { buildEngine, createTestDb, outboxRows, waitForJob } from '../support/engine-harness';

const settings = { baseMs: 1_000, maxMs: 60_000 };

describe('retry policy (pure)', () => {
  it('a retry waits base·2^(n-1), capped, with equal jitter (50–100 % of nominal)', () => {
    expect(retryDelayMs(1, 1_000, 60_000, () => 0)).toBe(500);
    expect(retryDelayMs(1, 1_000, 60_000, () => 1)).toBe(1_000);
    expect(retryDelayMs(3, 1_000, 60_000, () => 0)).toBe(2_000);
    expect(retryDelayMs(3, 1_000, 60_000, () => 1)).toBe(4_000);
    expect(retryDelayMs(20, 1_000, 60_000, () => 1)).toBe(60_000);
    expect(retryDelayMs(20, 1_000, 60_000, () => 0)).toBe(30_000);
    // Huge attempt numbers do not overflow into Infinity/NaN.
    expect(retryDelayMs(10_000, 1_000, 60_000, () => 0.5)).toBe(45_000);
    expect(retryDelayMs(0, 1_000, 60_000, () => 1)).toBe(1_000);
  });

  it('only an error that says so is not retryable', () => {
    expect(isRetryable(new Error('boom'))).toBe(true);
    expect(isRetryable('a string')).toBe(true);
    expect(isRetryable(null)).toBe(true);
    expect(isRetryable({ retryable: true })).toBe(true);
    expect(isRetryable({ retryable: 'no' })).toBe(true);
    expect(isRetryable(new PermanentJobError('bad data'))).toBe(false);
    expect(isRetryable(Object.assign(new Error('x'), { retryable: false }))).toBe(false);
    // The domains' shared errors: user input and a missing record never get better; a conflict may.
    expect(isRetryable(badInput('planId: no such plan'))).toBe(false);
    expect(isRetryable(notFound('no such term'))).toBe(false);
    expect(isRetryable(conflict('another publish of this term is running'))).toBe(true);
  });

  it('retry until the limit, fail on the attempt that reaches it, fail at once when not retryable', () => {
    const error = new Error('flaky');
    expect(decideAfterFailure({ error, attempt: 1, attemptLimit: 3, settings }, () => 0)).toEqual({ action: 'retry', delayMs: 500 });
    expect(decideAfterFailure({ error, attempt: 2, attemptLimit: 3, settings }, () => 0)).toEqual({ action: 'retry', delayMs: 1_000 });
    expect(decideAfterFailure({ error, attempt: 3, attemptLimit: 3, settings })).toEqual({ action: 'fail', reason: 'attempts-exhausted' });
    expect(decideAfterFailure({ error, attempt: 4, attemptLimit: 3, settings })).toEqual({ action: 'fail', reason: 'attempts-exhausted' });
    expect(decideAfterFailure({ error: badInput('x'), attempt: 1, attemptLimit: 3, settings })).toEqual({ action: 'fail', reason: 'not-retryable' });
    expect(decideAfterFailure({ error: new PermanentJobError('x'), attempt: 1, attemptLimit: 1, settings })).toEqual({ action: 'fail', reason: 'not-retryable' });
    expect(isLastAttempt(2, 3)).toBe(false);
    expect(isLastAttempt(3, 3)).toBe(true);
  });

  it('the final message keeps a non-retryable error as it is and explains an exhausted one', () => {
    expect(finalErrorMessage('planId: no such plan', { reason: 'not-retryable' }, 1, 5)).toBe('planId: no such plan');
    expect(finalErrorMessage('flaky', { reason: 'attempts-exhausted' }, 5, 5)).toMatch(/^flaky \(attempt 5 of 5; automatic retries stopped/);
  });
});

describe('the runner applies it', () => {
  let ctx: Awaited<ReturnType<typeof createTestDb>>;
  let engine: JobEngine;
  const calls = new Map<string, number>();
  beforeAll(async () => {
    ctx = await createTestDb('engine_retry_policy');
    engine = buildEngine({
      db: ctx.db,
      settings: { attemptLimit: 4, retryBaseMs: 100, retryMaxMs: 200 },
      registrations: [
        {
          kind: 'THROWS',
          defaults: { consumers: 2 },
          processor: async ({ job, input }) => {
            calls.set(job.id, (calls.get(job.id) ?? 0) + 1);
            const { throw: what } = input as { throw: 'bad-input' | 'not-found' | 'conflict' | 'plain' };
            if (what === 'bad-input') throw badInput('The plan cannot be evaluated: course C001 has more lectures than the week has periods');
            if (what === 'not-found') throw notFound('Schedule plan 42 no longer exists');
            if (what === 'conflict') throw conflict('Another publish of this term is running');
            throw new Error('the solver ran out of memory');
          },
        },
      ],
    });
    await engine.start();
  });
  afterAll(async () => {
    await engine?.stop(1_000);
    await ctx?.close();
  });

  it("a processor's BAD_USER_INPUT (or NOT_FOUND) fails the job on its first attempt, with the error's own message", async () => {
    for (const [what, text] of [
      ['bad-input', 'The plan cannot be evaluated: course C001 has more lectures than the week has periods'],
      ['not-found', 'Schedule plan 42 no longer exists'],
    ] as const) {
      const { job } = await engine.enqueue({ kind: 'THROWS', input: { throw: what } });
      const done = await waitForJob(engine, job.id);
      expect(done.status).toBe(JobStatus.FAILED);
      expect(done.attempts).toBe(1);
      expect(done.errorMessage).toBe(text);
      expect(calls.get(job.id)).toBe(1);
      const rows = await outboxRows(ctx.db.pool, job.id);
      expect(rows.map((r) => [r.state, r.processing_attempts])).toEqual([['COMPLETED', 1]]);
    }
  });

  it('a retryable failure (a plain error, a CONFLICT) is retried to the attempt limit', async () => {
    for (const what of ['plain', 'conflict'] as const) {
      const { job } = await engine.enqueue({ kind: 'THROWS', input: { throw: what } });
      const done = await waitForJob(engine, job.id);
      expect(done.status).toBe(JobStatus.FAILED);
      expect(done.attempts).toBe(4);
      expect(calls.get(job.id)).toBe(4);
      expect(done.errorMessage).toMatch(/\(attempt 4 of 4; automatic retries stopped/);
    }
  });
});
