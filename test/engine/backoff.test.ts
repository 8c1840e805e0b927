import { describe, expect, it } from 'vitest';
import { claimLostDelayMs } from '../../src/engine/backoff';
import { retryDelayMs } from '../../src/engine/retry-policy';

describe('retryDelayMs: exponential from the base, capped, with equal jitter', () => {
  it('stays within [nominal/2, nominal] where nominal = min(max, base × 2^(attempt-1))', () => {
    const cases: Array<[attempt: number, nominal: number]> = [
      [1, 2_000],
      [2, 4_000],
      [3, 8_000],
      [8, 256_000],
      [9, 300_000],
      [50, 300_000],
    ];
    for (const [attempt, nominal] of cases) {
      expect(retryDelayMs(attempt, 2_000, 300_000, () => 0)).toBe(nominal / 2);
      expect(retryDelayMs(attempt, 2_000, 300_000, () => 1)).toBe(nominal);
      expect(retryDelayMs(attempt, 2_000, 300_000, () => 0.5)).toBe((nominal * 3) / 4);
    }
  });

  it('treats attempt 0 (or less) as the first retry and never overflows', () => {
    expect(retryDelayMs(0, 1_000, 60_000, () => 1)).toBe(1_000);
    expect(retryDelayMs(-3, 1_000, 60_000, () => 1)).toBe(1_000);
    expect(retryDelayMs(10_000, 1_000, 60_000, () => 1)).toBe(60_000);
  });
});

describe('claimLostDelayMs: wait for the holder’s lease, within 1 s … the lease', () => {
  it('follows the lease left, clamped', () => {
    expect(claimLostDelayMs(12_345, 30)).toBe(12_345);
    expect(claimLostDelayMs(200, 30)).toBe(1_000);
    expect(claimLostDelayMs(-5_000, 30)).toBe(1_000);
    expect(claimLostDelayMs(120_000, 30)).toBe(30_000);
    expect(claimLostDelayMs(null, 30)).toBe(1_000);
  });
});
