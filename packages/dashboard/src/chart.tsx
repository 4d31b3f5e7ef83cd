import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import {
  dayRange,
  dayTicks,
  formatDay,
  formatTimeTicks,
  secondsToDay,
  timeRange,
  timeTicks,
  type TimeUnit,
  WHOLE_NUMBER_STEPS,
} from './chart-axis.js';

/** uPlot's `Axis.Side.Right`; its enum is a `const enum`, which isolated modules cannot read. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- the value of Axis.Side.Right, which cannot be imported.
const RIGHT_SIDE = 1 as uPlot.Axis.Side;
/** uPlot's `BarsPathBuilderFacetUnit.ScaleValue` (a `const enum` too): a bar's ends given as values of its scale. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- the value of BarsPathBuilderFacetUnit.ScaleValue, which cannot be imported.
const SCALE_VALUE = 1 as uPlot.Series.BarsPathBuilderFacetUnit;
/** The room one day label ("Nov 20") needs on the x axis, in CSS pixels. */
const DAY_LABEL_SPACE_PX = 50;

export interface ChartSeries {
  readonly label: string;
  readonly values: readonly (number | null)[];
  readonly color: string;
  /** Bars instead of a line (counts per day). Two bar series without `barBase` stand side by side. */
  readonly bars?: boolean;
  /** A stacked bar: drawn from these values up to `values`, instead of from 0. */
  readonly barBase?: readonly (number | null)[];
  /** A line that holds each value until the next point (a balance) instead of sloping between points. */
  readonly stepped?: boolean;
  /** A second, right-hand axis with its own scale (latency beside a count). */
  readonly rightAxis?: boolean;
}

/** What the legend says: a title, then one value per series, in the order of `series`. */
export interface LegendText {
  readonly title: string;
  readonly values: readonly string[];
}

export interface ChartProps {
  /** Describes the chart for screen readers: what it shows and its latest value. */
  readonly summary: string;
  /** Unix seconds, ascending. */
  readonly x: readonly number[];
  /** `days`: one point per UTC day (its midnight), labelled by day, today included; `time`: any instants. */
  readonly xAxis: 'days' | 'time';
  readonly series: readonly ChartSeries[];
  /**
   * The legend for the hovered point's index, or for `null` while none is hovered: then it shows
   * totals or the latest values, never a placeholder.
   */
  readonly legend: (index: number | null) => LegendText;
  readonly height?: number;
  readonly formatValue?: (value: number) => string;
  readonly formatRight?: (value: number) => string;
  readonly testId?: string;
}

/**
 * A uPlot chart that follows its container's width (375 px phones included), with its own legend
 * under it. The container carries `data-last-tick` (the UTC day of the last x label of a per-day
 * chart), `data-x-labels` (the x labels, joined by `|`) and `data-x-max`, which the browser test
 * reads since the axes are drawn on a canvas.
 */
export function Chart(props: ChartProps) {
  const container = useRef<HTMLDivElement>(null);
  const [hovered, setHovered] = useState<number | null>(null);
  useEffect(() => {
    const element = container.current;
    if (element === null) return;
    const format = props.formatValue ?? String;
    const formatRight = props.formatRight ?? String;
    const width = () => Math.max(240, element.clientWidth);
    const height = props.height ?? 220;
    const days = props.xAxis === 'days';
    const grid = { stroke: 'rgba(127,127,127,0.15)' };
    /** The unit of the instant axis' last ticks, for their labels. */
    let timeUnit: TimeUnit = 'day';
    const options: uPlot.Options = {
      width: width(),
      height,
      legend: { show: false },
      // The cursor marks the points of lines; on a bar it would float beside a bar of a pair.
      cursor: { drag: { x: false, y: false }, points: { size: (_u, index) => (props.series[index - 1]?.bars === true ? 0 : 8) } },
      // The API's days and times are UTC; the page shows UTC everywhere.
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
      scales: {
        x: days ? { time: false, range: () => dayRange(props.x) } : { time: true, range: (_u, min, max) => timeRange(min, max) },
        y: { range: (_u, min, max) => [Math.min(0, min), max <= 0 ? 1 : max * 1.1] },
        right: { range: (_u, _min, max) => [0, max <= 0 ? 1 : max * 1.2] },
      },
      axes: [
        days
          ? {
              stroke: 'currentColor',
              grid,
              splits: (u) => {
                const first = props.x[0] ?? 0;
                const last = props.x.at(-1) ?? first;
                const ticks = dayTicks(first, last, u.bbox.width / uPlot.pxRatio / DAY_LABEL_SPACE_PX);
                element.dataset['lastTick'] = secondsToDay(ticks.at(-1) ?? last);
                return ticks;
              },
              values: (_u, ticks) => {
                const labels = ticks.map(formatDay);
                element.dataset['xLabels'] = labels.join('|');
                return labels;
              },
            }
          : {
              stroke: 'currentColor',
              grid,
              // Round UTC times in a unit that fits the span, as many as the width has room for (chart-axis.ts).
              splits: (u, _axis, min, max) => {
                const { ticks, unit } = timeTicks(min, max, u.bbox.width / uPlot.pxRatio);
                timeUnit = unit;
                return ticks;
              },
              values: (_u, ticks) => {
                const labels = formatTimeTicks(ticks, timeUnit);
                element.dataset['xLabels'] = labels.join('|');
                return labels;
              },
            },
        {
          stroke: 'currentColor',
          grid,
          size: 70,
          incrs: [...WHOLE_NUMBER_STEPS],
          values: (_u, ticks) => ticks.map(format),
        },
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
      series: [{}, ...props.series.map((series) => seriesOptions(series, props.series))],
      hooks: {
        setCursor: [(u) => setHovered(u.cursor.idx ?? null)],
        draw: [(u) => (element.dataset['xMax'] = String(u.scales['x']?.max ?? ''))],
      },
    };
    // A bar of 0 would be drawn as a dash on the axis, a row of them along every empty day.
    const drawn = props.series.map((series) =>
      series.bars === true ? series.values.map((value) => (value === 0 ? null : value)) : Array.from(series.values),
    );
    const data = [Array.from(props.x), ...drawn] as uPlot.AlignedData;
    const plot = new uPlot(options, data, element);
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [props.x, props.xAxis, props.series, props.height, props.formatValue, props.formatRight]);
  const legend = props.legend(hovered !== null && hovered < props.x.length ? hovered : null);
  return (
    <figure className="chart">
      <div ref={container} role="img" aria-label={props.summary} data-testid={props.testId} data-points={props.x.length} />
      <div className="chart-legend" data-testid={props.testId === undefined ? undefined : `${props.testId}-legend`}>
        <span className="chart-legend-title">{legend.title}</span>
        {props.series.map((series, index) => (
          <span key={series.label} className="chart-legend-item">
            <span className="chart-swatch" style={{ background: series.color }} aria-hidden="true" />
            {series.label} <strong>{legend.values[index] ?? ''}</strong>
          </span>
        ))}
      </div>
      <figcaption className="visually-hidden">{props.summary}</figcaption>
    </figure>
  );
}

/** One series' drawing: bars (side by side when there are two, stacked on `barBase`), or a line with its points visible. */
function seriesOptions(series: ChartSeries, all: readonly ChartSeries[]): uPlot.Series {
  const common = { label: series.label, stroke: series.color, width: 2, scale: series.rightAxis === true ? 'right' : 'y' };
  if (series.bars === true) {
    const sideBySide = all.filter((candidate) => candidate.bars === true && candidate.barBase === undefined);
    const pair = sideBySide.length === 2 && series.barBase === undefined;
    const base = series.barBase;
    const bars = uPlot.paths.bars?.({
      size: pair ? [0.4, 24] : [0.6, 40],
      align: pair ? (sideBySide[0] === series ? -1 : 1) : 0,
      ...(base === undefined
        ? {}
        : {
            disp: {
              y0: { unit: SCALE_VALUE, values: () => Array.from(base) },
              y1: { unit: SCALE_VALUE, values: () => Array.from(series.values) },
            },
          }),
    });
    return { ...common, fill: `${series.color}55`, ...(bars === undefined ? {} : { paths: bars }), points: { show: false } };
  }
  const stepped = series.stepped === true ? uPlot.paths.stepped?.({ align: 1 }) : undefined;
  // Points always show, so a day between two empty days still reads as a value, not as nothing.
  return { ...common, ...(stepped === undefined ? {} : { paths: stepped }), points: { show: true, size: 6 } };
}
