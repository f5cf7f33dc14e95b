/**
 * Order statistics for the benchmarks. Medians and nearest-rank percentiles only: on a shared
 * two-core machine a mean is dragged around by the other tenants' bursts, an order statistic much
 * less so.
 */

/** The values sorted ascending, as a new array. */
export function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/**
 * The nearest-rank percentile `p` (0 < p ≤ 100) of `values`: the smallest value such that at least
 * p % of the values are ≤ it. p50 of [1, 2, 3, 4] is 2, p99 of 100 values is the 99th smallest.
 *
 * @throws {RangeError} no values, or p outside (0, 100]
 *
 * @example
 * ```ts
 * percentile([5, 1, 4, 2, 3], 50); // 3
 * ```
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError('percentile of no values');
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  const ordered = sorted(values);
  const rank = Math.ceil((p / 100) * ordered.length);
  return ordered[Math.min(ordered.length, Math.max(1, rank)) - 1] as number;
}

/**
 * The median: the middle value, or the mean of the two middle values for an even count.
 *
 * @throws {RangeError} no values
 *
 * @example
 * ```ts
 * median([4, 1, 3, 2]); // 2.5
 * ```
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of no values');
  const ordered = sorted(values);
  const middle = Math.floor(ordered.length / 2);
  return ordered.length % 2 === 1 ? (ordered[middle] as number) : ((ordered[middle - 1] as number) + (ordered[middle] as number)) / 2;
}

/** Arithmetic mean. @throws {RangeError} no values */
export function mean(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('mean of no values');
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

export interface Summary {
  readonly count: number;
  readonly min: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Count, min, p50/p90/p99 (nearest rank), max and mean of `values`. */
export function summarize(values: readonly number[]): Summary {
  const ordered = sorted(values);
  return {
    count: ordered.length,
    min: ordered[0] as number,
    p50: percentile(ordered, 50),
    p90: percentile(ordered, 90),
    p99: percentile(ordered, 99),
    max: ordered[ordered.length - 1] as number,
    mean: mean(ordered),
  };
}

/** `value` rounded to `digits` decimals (for the results file: no 0.30000000000000004). */
export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** `a / b`, rounded to two decimals; the ratios of the results file. */
export function ratio(a: number, b: number): number {
  if (!(b > 0)) throw new RangeError(`ratio against a non-positive baseline (${b})`);
  return round(a / b, 2);
}
