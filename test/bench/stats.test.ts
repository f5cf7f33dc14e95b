import { describe, expect, it } from 'vitest';
import { mean, median, percentile, ratio, round, summarize } from '../../bench/stats';

describe('bench stats', () => {
  it('takes the median of odd and even counts without reordering the input', () => {
    const values = [5, 1, 4, 2, 3];
    expect(median(values)).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(values).toEqual([5, 1, 4, 2, 3]);
  });

  it('uses nearest-rank percentiles', () => {
    const hundred = Array.from({ length: 100 }, (_, index) => index + 1);
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([7], 99)).toBe(7);
  });

  it('refuses empty input and impossible percentiles', () => {
    expect(() => median([])).toThrow(RangeError);
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => ratio(1, 0)).toThrow(RangeError);
  });

  it('summarizes and rounds', () => {
    expect(summarize([3, 1, 2])).toEqual({ count: 3, min: 1, p50: 2, p90: 3, p99: 3, max: 3, mean: 2 });
    expect(mean([1, 2])).toBe(1.5);
    expect(round(0.1 + 0.2, 2)).toBe(0.3);
    expect(ratio(10, 4)).toBe(2.5);
  });
});
