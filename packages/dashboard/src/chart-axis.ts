/**
 * The time axis of the per-day charts, as pure functions of Unix seconds (UTC days, like the API's
 * `day` fields), so they can be tested without a browser. The chart (chart.tsx) draws what these
 * return.
 */

export const DAY_SECONDS = 86_400;

/** "2026-11-20" → Unix seconds at 00:00 UTC. */
export function dayToSeconds(day: string): number {
  return Date.parse(`${day}T00:00:00.000Z`) / 1000;
}

/** Unix seconds → "2026-11-20", the UTC day they fall in. */
export function secondsToDay(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

/**
 * The x range of a per-day chart: half a day before the first day and after the last. A day's bar
 * is centred on its midnight, so a range ending at the last midnight cut today's bar in half
 * against the right edge.
 */
export function dayRange(days: readonly number[]): [number, number] {
  const first = days[0];
  const last = days.at(-1);
  if (first === undefined || last === undefined) throw new Error('a per-day chart needs at least one day');
  return [first - DAY_SECONDS / 2, last + DAY_SECONDS / 2];
}

/**
 * The x range of a chart of instants (a balance after each transaction): its span widened by 3 %
 * on each side, an hour when it has one instant, so the first and last points are drawn whole
 * instead of being cut in half by the plot's edges.
 */
export function timeRange(min: number, max: number): [number, number] {
  const padding = max > min ? (max - min) * 0.03 : 3600;
  return [min - padding, max + padding];
}

/** Days between two ticks, smallest first: the first that keeps the labels apart is used. */
const TICK_STEPS_DAYS = [1, 2, 3, 7, 14, 28, 56, 91, 182] as const;
const TICK_STEP_DAYS_MAX = 364;

/**
 * The ticks of a per-day axis from `first` to `last` (midnights, Unix seconds), at most `ticksMax`
 * of them, ascending. They are counted back from the last day, so the last day (today) always has
 * its label: uPlot's own time ticks started from the first day and could stop a day or more
 * before today.
 */
export function dayTicks(first: number, last: number, ticksMax: number): number[] {
  const days = Math.round((last - first) / DAY_SECONDS) + 1;
  const limit = Math.max(1, Math.floor(ticksMax));
  const step = TICK_STEPS_DAYS.find((candidate) => Math.ceil(days / candidate) <= limit) ?? TICK_STEP_DAYS_MAX;
  const ticks: number[] = [];
  for (let tick = last; tick >= first; tick -= step * DAY_SECONDS) ticks.unshift(tick);
  return ticks;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** Unix seconds → "Nov 20" (UTC), the label of a day; no locale, like the rest of the page. */
export function formatDay(seconds: number): string {
  const date = new Date(seconds * 1000);
  return `${MONTHS[date.getUTCMonth()] ?? ''} ${date.getUTCDate()}`;
}

/** What one label of an instant axis names, from its step: a time of day, a day, a month or a year. */
export type TimeUnit = 'second' | 'time' | 'day' | 'month' | 'year';

/**
 * The room one label takes on an instant axis, in CSS pixels, with a gap: "14:30:15"; "14:30" or "Nov 20" at
 * midnight, "Nov 20", "Nov 2026" on the first tick and in January, "2026". The step is chosen so
 * that every label gets this much, so labels never overlap whatever the width.
 */
export const TIME_LABEL_SPACE_PX: Readonly<Record<TimeUnit, number>> = { second: 72, time: 56, day: 56, month: 72, year: 48 };

const HOUR_SECONDS = 3600;

/** A step of an instant axis: a fixed number of seconds, or a number of calendar months (UTC). */
interface TimeStep {
  readonly unit: TimeUnit;
  readonly seconds?: number;
  readonly months?: number;
}

/** Steps smallest first: the first whose labels fit the width is used. */
const TIME_STEPS: readonly TimeStep[] = [
  ...[1, 2, 5, 10, 15, 30].map((seconds) => ({ unit: 'second' as const, seconds })),
  ...[1, 2, 5, 10, 15, 30].map((minutes) => ({ unit: 'time' as const, seconds: minutes * 60 })),
  ...[1, 2, 3, 6, 12].map((hours) => ({ unit: 'time' as const, seconds: hours * HOUR_SECONDS })),
  ...[1, 2, 7, 14].map((days) => ({ unit: 'day' as const, seconds: days * DAY_SECONDS })),
  ...[1, 2, 3, 6].map((months) => ({ unit: 'month' as const, months })),
  ...[1, 2, 5, 10, 25, 50, 100].map((years) => ({ unit: 'year' as const, months: years * 12 })),
];

/** The longest span labelled in times of day. */
const TIME_OF_DAY_SPAN_MAX_SECONDS = 3 * DAY_SECONDS;
/** Monday 1970-01-05 00:00 UTC: weekly ticks fall on Mondays. */
const FIRST_MONDAY_SECONDS = 4 * DAY_SECONDS;
/** More ticks than this are never asked for (a 10,000 px axis at the smallest label space). */
const TIME_TICKS_MAX = 200;

/** The ticks of `step` from `min` to `max`, at round UTC times; undefined once there would be more than `limit`. */
function stepTicks(min: number, max: number, step: TimeStep, limit: number): number[] | undefined {
  const ticks: number[] = [];
  if (step.seconds !== undefined) {
    const seconds = step.seconds;
    if ((max - min) / seconds > limit + 1) return undefined;
    // Steps of a week or two start on a Monday; shorter ones on the epoch, so hours fall on midnight.
    const origin = seconds >= 7 * DAY_SECONDS ? FIRST_MONDAY_SECONDS : 0;
    for (let tick = Math.ceil((min - origin) / seconds) * seconds + origin; tick <= max; tick += seconds) ticks.push(tick);
  } else {
    const months = step.months ?? 1;
    // A bound on the loop only (a month is 28 to 31 days): the count is checked below.
    if ((max - min) / (months * 28 * DAY_SECONDS) > 2 * limit + 2) return undefined;
    const start = new Date(min * 1000);
    // Month indexes from year 0, so quarters start in January, April, July and October, and years on multiples of the step.
    let index = Math.ceil((start.getUTCFullYear() * 12 + start.getUTCMonth()) / months) * months;
    for (;;) {
      const tick = Date.UTC(Math.floor(index / 12), index % 12, 1) / 1000;
      if (tick > max) break;
      if (tick >= min) ticks.push(tick);
      index += months;
    }
  }
  return ticks.length <= limit ? ticks : undefined;
}

/**
 * The ticks of an instant axis from `min` to `max` (Unix seconds) on an axis `widthPx` wide: the
 * smallest round step (seconds, minutes, hours, days, weeks, months, years, in UTC) whose labels each get
 * their `TIME_LABEL_SPACE_PX`, and the unit their labels name. A minute is labelled in seconds, an hour is labelled in minutes, a
 * day in hours, a week or a month in days, a year in months.
 */
export function timeTicks(min: number, max: number, widthPx: number): { ticks: number[]; unit: TimeUnit } {
  for (const step of TIME_STEPS) {
    // Over more than a few days, times of day repeat ("12:00" every day) and say less than days.
    if ((step.unit === 'time' || step.unit === 'second') && max - min > TIME_OF_DAY_SPAN_MAX_SECONDS) continue;
    const limit = Math.min(TIME_TICKS_MAX, Math.max(1, Math.floor(widthPx / TIME_LABEL_SPACE_PX[step.unit])));
    const ticks = stepTicks(min, max, step, limit);
    if (ticks === undefined) continue;
    // A span inside one second holds no whole second: its start is labelled, so the axis of a chart
    // with points is never bare; an empty range has none.
    return ticks.length > 0 || min > max ? { ticks, unit: step.unit } : { ticks: [min], unit: 'second' };
  }
  return { ticks: [], unit: 'year' };
}

/**
 * The labels of `ticks` of `unit` (UTC, no locale): "14:30:15"; "14:30", with the day ("Nov 20") at midnight
 * so a span over several days says which; "Nov 20"; "Nov", with the year on the first tick and in
 * January ("Jan 2027"); "2027".
 */
export function formatTimeTicks(ticks: readonly number[], unit: TimeUnit): string[] {
  return ticks.map((tick, index) => {
    const date = new Date(tick * 1000);
    const clock = `${String(date.getUTCHours()).padStart(2, '0')}:${String(date.getUTCMinutes()).padStart(2, '0')}`;
    switch (unit) {
      case 'second':
        return `${clock}:${String(date.getUTCSeconds()).padStart(2, '0')}`;
      case 'time':
        return tick % DAY_SECONDS === 0 ? formatDay(tick) : clock;
      case 'day':
        return formatDay(tick);
      case 'month': {
        const month = MONTHS[date.getUTCMonth()] ?? '';
        return index === 0 || date.getUTCMonth() === 0 ? `${month} ${date.getUTCFullYear()}` : month;
      }
      case 'year':
        return String(date.getUTCFullYear());
    }
  });
}

/** The sum of the values that are not null. */
export function total(values: readonly (number | null)[]): number {
  return values.reduce<number>((sum, value) => sum + (value ?? 0), 0);
}

/** Tick steps of a left axis whose values are whole numbers (credits, counts): 1, 2, 5, 10, 20, 50, … */
export const WHOLE_NUMBER_STEPS: readonly number[] = Array.from({ length: 16 }, (_, exponent) =>
  [1, 2, 5].map((mantissa) => mantissa * 10 ** exponent),
).flat();
