import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** uPlot's `Axis.Side.Right`; its enum is a `const enum`, which isolated modules cannot read. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- the value of Axis.Side.Right, which cannot be imported.
const RIGHT_SIDE = 1 as uPlot.Axis.Side;

export interface ChartSeries {
  readonly label: string;
  readonly values: readonly (number | null)[];
  readonly color: string;
  /** Bars instead of a line (counts per day). */
  readonly bars?: boolean;
  /** A second, right-hand axis with its own scale (latency beside a rate). */
  readonly rightAxis?: boolean;
}

export interface ChartProps {
  /** Describes the chart for screen readers: what it shows and its latest value. */
  readonly summary: string;
  /** Unix seconds, ascending. */
  readonly x: readonly number[];
  readonly series: readonly ChartSeries[];
  readonly height?: number;
  /** A fixed left-axis range, e.g. [0, 100] for a percentage; by default from 0 to a little above the largest value. */
  readonly yRange?: readonly [number, number];
  readonly formatValue?: (value: number) => string;
  readonly formatRight?: (value: number) => string;
  readonly testId?: string;
}

/** A uPlot chart that follows its container's width (375 px phones included). */
export function Chart(props: ChartProps) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (element === null) return;
    const format = props.formatValue ?? String;
    const formatRight = props.formatRight ?? String;
    const width = () => Math.max(240, element.clientWidth);
    const bars = uPlot.paths.bars?.({ size: [0.6, 40] });
    const options: uPlot.Options = {
      width: width(),
      height: props.height ?? 220,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: true },
        y: {
          range: (_u, min, max) =>
            props.yRange === undefined ? [Math.min(0, min), max <= 0 ? 1 : max * 1.1] : [props.yRange[0], props.yRange[1]],
        },
        right: { auto: true },
      },
      axes: [
        { stroke: 'currentColor', grid: { stroke: 'rgba(127,127,127,0.15)' } },
        { stroke: 'currentColor', grid: { stroke: 'rgba(127,127,127,0.15)' }, size: 70, values: (_u, ticks) => ticks.map(format) },
        ...(props.series.some((series) => series.rightAxis === true)
          ? [
              {
                scale: 'right',
                side: RIGHT_SIDE,
                stroke: 'currentColor',
                grid: { show: false },
                size: 60,
                values: (_u: uPlot, ticks: number[]) => ticks.map(formatRight),
              },
            ]
          : []),
      ],
      series: [
        {},
        ...props.series.map((series) => ({
          label: series.label,
          stroke: series.color,
          width: 2,
          scale: series.rightAxis === true ? 'right' : 'y',
          value: (_u: uPlot, value: number | null) =>
            value === null ? '—' : series.rightAxis === true ? formatRight(value) : format(value),
          ...(series.bars === true
            ? { fill: `${series.color}55`, ...(bars === undefined ? {} : { paths: bars }), points: { show: false } }
            : { points: { show: true, size: 5 } }),
        })),
      ],
    };
    const data = [Array.from(props.x), ...props.series.map((series) => Array.from(series.values))] as uPlot.AlignedData;
    const plot = new uPlot(options, data, element);
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: props.height ?? 220 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [props.x, props.series, props.height, props.yRange, props.formatValue, props.formatRight]);
  return (
    <figure className="chart">
      <div ref={container} role="img" aria-label={props.summary} data-testid={props.testId} data-points={props.x.length} />
      <figcaption className="visually-hidden">{props.summary}</figcaption>
    </figure>
  );
}

/** "2026-11-20" → Unix seconds at 00:00 UTC. */
export function dayToSeconds(day: string): number {
  return Date.parse(`${day}T00:00:00.000Z`) / 1000;
}
