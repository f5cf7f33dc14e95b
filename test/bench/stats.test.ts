import { describe, expect, it } from 'vitest';
import { median, percentile, ratio, round } from '../../bench/stats';

describe('bench stats', () => {
  it('uses nearest-rank percentiles without reordering the input', () => {
    const hundred = Array.from({ length: 100 }, (_, index) => 100 - index);
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(hundred[0]).toBe(100);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([7], 99)).toBe(7);
    expect(median([5, 1, 4, 2, 3])).toBe(3);
  });

  it('refuses empty input, impossible percentiles and a zero baseline', () => {
    expect(() => median([])).toThrow(RangeError);
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => ratio(1, 0)).toThrow(RangeError);
  });

  it('rounds and divides', () => {
    expect(round(0.1 + 0.2, 2)).toBe(0.3);
    expect(round(1234.56)).toBe(1234.6);
    expect(ratio(10, 4)).toBe(2.5);
  });
});
