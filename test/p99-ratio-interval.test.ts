/** The bootstrap interval bench:hostile prints beside its p99 ratios (test/bench/support/p99-ratio-interval.ts). */
import { describe, expect, it } from 'vitest';
import { p99, p99RatioInterval } from './bench/support/p99-ratio-interval';

/** n samples from a seeded log-normal-ish latency: most near `median`, a long tail. */
function latencies(n: number, median: number, seed: number): number[] {
  let state = seed;
  const next = () => ((state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  return Array.from({ length: n }, () => median * Math.exp(0.6 * Math.sqrt(-2 * Math.log(next() || 1e-9)) * Math.cos(2 * Math.PI * next())));
}

describe('p99RatioInterval', () => {
  it('takes the p99 as the benches print it: the value at ⌊0.99 n⌋ of the sorted samples', () => {
    const sorted = Array.from({ length: 600 }, (_, i) => i + 1);
    expect(p99(sorted)).toBe(595);
    expect(p99([7])).toBe(7);
  });

  it('gives the point ratio of the two p99s and an interval around it', () => {
    const attack = latencies(600, 10, 1);
    const baseline = latencies(600, 5, 2);
    const interval = p99RatioInterval(attack, baseline)!;
    expect(interval.ratio).toBeCloseTo(p99([...attack].sort((a, b) => a - b)) / p99([...baseline].sort((a, b) => a - b)), 12);
    expect(interval.low).toBeLessThan(interval.ratio);
    expect(interval.high).toBeGreaterThan(interval.ratio);
    // Both draw from the same shape at twice the median: the interval holds the true 2×.
    expect(interval.low).toBeLessThan(2);
    expect(interval.high).toBeGreaterThan(2);
  });

  it('is wide for a few hundred samples and narrows with more', () => {
    const few = p99RatioInterval(latencies(300, 10, 3), latencies(300, 10, 4), { resamples: 500 })!;
    const many = p99RatioInterval(latencies(6_000, 10, 3), latencies(6_000, 10, 4), { resamples: 500 })!;
    // Twenty times the samples: about √20 ≈ 4.5 times narrower.
    expect(few.high - few.low).toBeGreaterThan(2 * (many.high - many.low));
    expect(many.low).toBeLessThan(1);
    expect(many.high).toBeGreaterThan(1);
  });

  it('is the same for the same samples and seed', () => {
    const a = latencies(500, 8, 5);
    const b = latencies(500, 4, 6);
    expect(p99RatioInterval(a, b, { seed: 9 })).toEqual(p99RatioInterval(a, b, { seed: 9 }));
  });

  it('answers null when a phase has no samples', () => {
    expect(p99RatioInterval([], [1, 2, 3])).toBeNull();
    expect(p99RatioInterval([1, 2, 3], [])).toBeNull();
  });
});
