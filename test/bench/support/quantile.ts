/**
 * The q-quantile (0 ≤ q ≤ 1) of ascending `sorted` values as every bench prints it: the
 * value at ⌊q·n⌋ (the last for q = 1); NaN when there are none. A p99 of 600 samples is
 * the sixth-slowest.
 */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
