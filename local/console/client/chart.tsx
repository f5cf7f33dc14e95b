/** A uPlot chart that fills its container's width and follows its resizes. */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface ChartProps {
  /** Options without width and height; a new object rebuilds the chart. */
  readonly options: Omit<uPlot.Options, 'width' | 'height'>;
  readonly data: uPlot.AlignedData;
  readonly height: number;
  readonly testid?: string;
  readonly label?: string;
}

export function Chart({ options, data, height, testid, label }: ChartProps) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element) return undefined;
    const width = () => Math.max(200, Math.floor(element.clientWidth));
    const chart = new uPlot({ ...options, width: width(), height }, data, element);
    let frame = 0;
    const observer = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        if (chart.width !== width()) chart.setSize({ width: width(), height });
      });
    });
    observer.observe(element);
    return () => {
      cancelAnimationFrame(frame);
      observer.disconnect();
      chart.destroy();
    };
  }, [options, data, height]);
  return <div class="chart" ref={container} data-testid={testid} role="img" aria-label={label} />;
}

export const PALETTE = [
  '#2563eb',
  '#16a34a',
  '#d97706',
  '#9333ea',
  '#dc2626',
  '#0891b2',
  '#db2777',
  '#65a30d',
  '#4b5563',
  '#7c3aed',
];
