/**
 * The bootstrap intervals the benches print (test/bench/support/bootstrap-interval.ts):
 * bench:hostile's beside its p99 ratios, bench:engine's beside its start latencies.
 */
import { describe, expect, it } from 'vitest';
import { p99, p99RatioInterval, quantileInterval } from './bench/support/bootstrap-interval';
import { quantile } from './bench/support/quantile';

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

describe('quantileInterval', () => {
  it('gives the quantile of the samples themselves and an interval around it', () => {
    const samples = latencies(1_000, 1, 7);
    const sorted = [...samples].sort((a, b) => a - b);
    for (const q of [0.5, 0.99]) {
      const interval = quantileInterval(samples, q)!;
      expect(interval.value).toBe(quantile(sorted, q));
      expect(interval.low).toBeLessThanOrEqual(interval.value);
      expect(interval.high).toBeGreaterThanOrEqual(interval.value);
      expect(interval.high).toBeGreaterThan(interval.low);
    }
  });

  it('holds the true quantile of the shape the samples come from', () => {
    // The shape's median is `median` itself (exp of a normal's median, 0).
    const median = quantileInterval(latencies(1_000, 2, 11), 0.5)!;
    expect(median.low).toBeLessThan(2);
    expect(median.high).toBeGreaterThan(2);
  });

  it('is wider for a p99 than for a median of the same samples, and narrows with more samples', () => {
    const samples = latencies(400, 1, 13);
    const p50 = quantileInterval(samples, 0.5, { resamples: 500 })!;
    const tail = quantileInterval(samples, 0.99, { resamples: 500 })!;
    expect(tail.high - tail.low).toBeGreaterThan(2 * (p50.high - p50.low));
    const more = quantileInterval(latencies(8_000, 1, 13), 0.99, { resamples: 500 })!;
    expect(tail.high - tail.low).toBeGreaterThan(2 * (more.high - more.low));
  });

  it('puts one slow sample in a p99 only as often as luck draws it', () => {
    // 396 samples of 1 ms and four of 50 ms: the p99 (of 400, the fourth-slowest) is 50 ms, yet a
    // draw holds fewer than four of them often enough that the interval reaches 1 ms.
    const samples = [...Array.from({ length: 396 }, () => 1), 50, 50, 50, 50];
    const interval = quantileInterval(samples, 0.99)!;
    expect(interval.value).toBe(50);
    expect(interval.low).toBe(1);
    expect(interval.high).toBe(50);
  });

  it('is the same for the same samples and seed, and null without samples', () => {
    const samples = latencies(300, 3, 17);
    expect(quantileInterval(samples, 0.99, { seed: 4 })).toEqual(quantileInterval(samples, 0.99, { seed: 4 }));
    expect(quantileInterval([], 0.5)).toBeNull();
  });
});
