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

/** The sum of the values that are not null. */
export function total(values: readonly (number | null)[]): number {
  return values.reduce<number>((sum, value) => sum + (value ?? 0), 0);
}

/** Tick steps of a left axis whose values are whole numbers (credits, counts): 1, 2, 5, 10, 20, 50, … */
export const WHOLE_NUMBER_STEPS: readonly number[] = Array.from({ length: 16 }, (_, exponent) =>
  [1, 2, 5].map((mantissa) => mantissa * 10 ** exponent),
).flat();
