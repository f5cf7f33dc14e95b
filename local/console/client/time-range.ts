import type uPlot from 'uplot';

/**
 * The range of a chart's time axis: what uPlot gives, except around a single instant, an hour each
 * side. uPlot widens a time scale holding one instant to `86400 / ms` units after it, which with
 * seconds is 1,000 days: a lone balance reading was drawn at the edge of three empty years.
 *
 * @param xs the chart's instants, in seconds
 * @param padSeconds each side of a single instant; @default 3600
 */
export function timeRange(xs: readonly number[], padSeconds = 3_600): uPlot.Scale.Range {
  const first = xs[0];
  const single = first !== undefined && xs.every((x) => x === first);
  return (_u, min, max) =>
    (single && min === first) || min === max ? [min - padSeconds, min + padSeconds] : [min, max];
}
