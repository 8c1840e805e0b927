/**
 * How far a latency figure of one run can be trusted: a percentile bootstrap. The
 * samples are drawn again with replacement (as many as there are), the figure taken of
 * each draw, and the interval is the middle `confidence` of those figures. With 600
 * samples a p99 is the sixth-slowest, so one slow moment more or less moves it. The
 * interval says how much of a figure is that luck: a bar missed by a figure whose
 * interval spans the bar is within the noise of the run, one missed by a figure whose
 * whole interval lies past it is not.
 *
 * Seeded (the same samples give the same interval) and pure.
 */
import { quantile } from './quantile';
import { SeededRandom } from './seeded-random';

/** The p99 as the benches print it (`quantile`): the value at ⌊0.99 n⌋ of the sorted samples. */
export const p99 = (sorted: ArrayLike<number>): number => quantile(sorted, 0.99);

export interface Interval {
  /** The figure of the samples themselves. */
  value: number;
  low: number;
  high: number;
}

/** A ratio of two p99s with its interval (`ratio` is the samples' own). */
export interface RatioInterval {
  ratio: number;
  low: number;
  high: number;
}

export interface BootstrapOptions {
  resamples?: number;
  confidence?: number;
  seed?: number;
}

export const DEFAULT_RESAMPLES = 2_000;
export const DEFAULT_CONFIDENCE = 0.95;

/** The q-quantile of `samples` (as `quantile` takes it), with its bootstrap interval; null without samples. */
export function quantileInterval(samples: readonly number[], q: number, options: BootstrapOptions = {}): Interval | null {
  if (samples.length === 0) return null;
  const draw = resampler(options.seed);
  const into = new Float64Array(samples.length);
  const { low, high } = middle(options, () => quantile(draw(samples, into), q));
  return { value: quantile(Float64Array.from(samples).sort(), q), low, high };
}

/** p99(numerator) / p99(denominator), with its bootstrap interval (each side drawn apart); null when either has no samples. */
export function p99RatioInterval(numerator: readonly number[], denominator: readonly number[], options: BootstrapOptions = {}): RatioInterval | null {
  if (numerator.length === 0 || denominator.length === 0) return null;
  const draw = resampler(options.seed);
  const top = new Float64Array(numerator.length);
  const bottom = new Float64Array(denominator.length);
  const { low, high } = middle(options, () => p99(draw(numerator, top)) / p99(draw(denominator, bottom)));
  return {
    ratio: p99(Float64Array.from(numerator).sort()) / p99(Float64Array.from(denominator).sort()),
    low,
    high,
  };
}

/** Fills `into` with a draw of `values` (with replacement) and returns it sorted. */
function resampler(seed = 1): (values: readonly number[], into: Float64Array) => Float64Array {
  const random = new SeededRandom(seed);
  return (values, into) => {
    for (let i = 0; i < into.length; i++) into[i] = values[Math.floor(random.next() * values.length)]!;
    return into.sort();
  };
}

/** The middle `confidence` of `resamples` figures of fresh draws. */
function middle(options: BootstrapOptions, figureOfDraw: () => number): { low: number; high: number } {
  const resamples = options.resamples ?? DEFAULT_RESAMPLES;
  const confidence = options.confidence ?? DEFAULT_CONFIDENCE;
  const figures = new Float64Array(resamples);
  for (let i = 0; i < resamples; i++) figures[i] = figureOfDraw();
  figures.sort();
  const tail = (1 - confidence) / 2;
  const at = (q: number) => figures[Math.min(resamples - 1, Math.max(0, Math.round(q * (resamples - 1))))]!;
  return { low: at(tail), high: at(1 - tail) };
}
