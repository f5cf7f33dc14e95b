import type uPlot from 'uplot';
import { describe, expect, it } from 'vitest';
import { timeRange } from '../../../../local/console/client/time-range';

const chart = {} as uPlot;
const range = (xs: number[], min: number, max: number) =>
  (timeRange(xs) as (u: uPlot, min: number, max: number) => uPlot.Range.MinMax)(chart, min, max);

describe('the time axis of a console chart', () => {
  const at = 1_764_900_000;

  it('shows an hour each side of a single instant, not the 1,000 days uPlot widens it to', () => {
    expect(range([at], at, at + 86_400_000)).toEqual([at - 3_600, at + 3_600]);
    expect(range([at, at], at, at + 86_400_000)).toEqual([at - 3_600, at + 3_600]);
  });

  it("keeps the data's own span, and a span the user zoomed to", () => {
    expect(range([at, at + 600], at, at + 600)).toEqual([at, at + 600]);
    expect(range([at], at - 60, at + 60)).toEqual([at - 60, at + 60]);
  });
});
