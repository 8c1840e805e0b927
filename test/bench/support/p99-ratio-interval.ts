/**
 * How far a ratio of two p99s can be trusted: a percentile bootstrap. Each phase's
 * samples are drawn again with replacement (as many as it has), the p99 of each draw
 * taken and their ratio kept; the interval is the middle `confidence` of those ratios.
 * With 600 samples a p99 is the sixth-slowest, so one slow moment more or less in a
 * phase moves it — and the ratio with it. The interval says how much of a ratio is that
 * luck: a bar missed by a ratio whose interval spans the bar is within the noise of
 * the run, one missed by a ratio whose whole interval lies past it is not.
 *
 * Seeded (the same samples give the same interval) and pure.
 */
import { quantile } from './quantile';

/** The p99 as the benches print it (`quantile`): the value at ⌊0.99 n⌋ of the sorted samples. */
export const p99 = (sorted: ArrayLike<number>): number => quantile(sorted, 0.99);

export interface RatioInterval {
  /** The ratio of the samples' own p99s. */
  ratio: number;
  low: number;
  high: number;
}

export const DEFAULT_RESAMPLES = 2_000;
export const DEFAULT_CONFIDENCE = 0.95;

/** p99(numerator) / p99(denominator), with its bootstrap interval; null when either has no samples. */
export function p99RatioInterval(
  numerator: readonly number[],
  denominator: readonly number[],
  options: { resamples?: number; confidence?: number; seed?: number } = {},
): RatioInterval | null {
  if (numerator.length === 0 || denominator.length === 0) return null;
  const resamples = options.resamples ?? DEFAULT_RESAMPLES;
  const confidence = options.confidence ?? DEFAULT_CONFIDENCE;
  const random = mulberry32(options.seed ?? 1);
  const draw = (values: readonly number[], into: Float64Array) => {
    for (let i = 0; i < into.length; i++) into[i] = values[Math.floor(random() * values.length)]!;
    return p99(into.sort());
  };
  const top = new Float64Array(numerator.length);
  const bottom = new Float64Array(denominator.length);
  const ratios = new Float64Array(resamples);
  for (let i = 0; i < resamples; i++) ratios[i] = draw(numerator, top) / draw(denominator, bottom);
  ratios.sort();
  const tail = (1 - confidence) / 2;
  const at = (q: number) => ratios[Math.min(resamples - 1, Math.max(0, Math.round(q * (resamples - 1))))]!;
  return {
    ratio: p99(Float64Array.from(numerator).sort()) / p99(Float64Array.from(denominator).sort()),
    low: at(tail),
    high: at(1 - tail),
  };
}

/** A small seeded generator (mulberry32): uniform in [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
