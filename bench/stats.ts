/** The few statistics the bench prints: nearest-rank percentiles, medians, rounding. */

/** The nearest-rank `p`-th percentile (0 < p ≤ 100) of `values`; the input is not reordered. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError('percentile of no values');
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile ${p} is outside (0, 100]`);
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** `value / baseline`, to two decimals. */
export function ratio(value: number, baseline: number): number {
  if (!(baseline > 0)) throw new RangeError(`ratio to a baseline of ${baseline}`);
  return round(value / baseline, 2);
}
