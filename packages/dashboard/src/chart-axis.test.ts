import { describe, expect, it } from 'vitest';
import {
  DAY_SECONDS,
  dayRange,
  dayTicks,
  dayToSeconds,
  formatDay,
  formatTimeTicks,
  secondsToDay,
  TIME_LABEL_SPACE_PX,
  timeRange,
  timeTicks,
  total,
  WHOLE_NUMBER_STEPS,
} from './chart-axis.js';

/** The 30 UTC days the overview asks for, ending on `today`, as the API lists them. */
function lastDays(today: string, count: number): number[] {
  const end = dayToSeconds(today);
  return Array.from({ length: count }, (_, index) => end - (count - 1 - index) * DAY_SECONDS);
}

describe('per-day axis', () => {
  it('reads and writes UTC days', () => {
    expect(dayToSeconds('2026-11-20')).toBe(Date.UTC(2026, 10, 20) / 1000);
    expect(secondsToDay(dayToSeconds('2026-11-20') + DAY_SECONDS - 1)).toBe('2026-11-20');
    expect(formatDay(dayToSeconds('2026-11-05'))).toBe('Nov 5');
    expect(formatDay(dayToSeconds('2027-01-01'))).toBe('Jan 1');
  });

  it("ends half a day after today, so today's bar is not cut by the right edge", () => {
    const days = lastDays('2026-11-25', 30);
    const [min, max] = dayRange(days);
    expect(max).toBe(dayToSeconds('2026-11-25') + DAY_SECONDS / 2);
    expect(min).toBe(dayToSeconds('2026-10-27') - DAY_SECONDS / 2);
    expect(dayRange([dayToSeconds('2026-11-25')])).toEqual([
      dayToSeconds('2026-11-25') - DAY_SECONDS / 2,
      dayToSeconds('2026-11-25') + DAY_SECONDS / 2,
    ]);
    expect(() => dayRange([])).toThrow();
  });

  it('always labels today, the last day, whatever the width (never a day early)', () => {
    const days = lastDays('2026-11-25', 30);
    const first = days[0]!;
    const last = days.at(-1)!;
    for (let ticksMax = 1; ticksMax <= 40; ticksMax += 1) {
      const ticks = dayTicks(first, last, ticksMax);
      expect(ticks.at(-1), `${ticksMax} ticks at most`).toBe(last);
      expect(ticks.length).toBeLessThanOrEqual(ticksMax);
      expect(ticks[0]).toBeGreaterThanOrEqual(first);
      expect(ticks).toEqual([...ticks].sort((a, b) => a - b));
    }
  });

  it('uses the smallest step that fits: every day when there is room, then weeks', () => {
    const days = lastDays('2026-11-25', 30);
    const first = days[0]!;
    const last = days.at(-1)!;
    expect(dayTicks(first, last, 30)).toEqual(days);
    expect(dayTicks(first, last, 8).map(secondsToDay)).toEqual(['2026-10-28', '2026-11-04', '2026-11-11', '2026-11-18', '2026-11-25']);
    expect(dayTicks(first, last, 3.9).map(secondsToDay)).toEqual(['2026-10-28', '2026-11-11', '2026-11-25']);
    expect(dayTicks(last, last, 5)).toEqual([last]);
  });
});

describe('instant axis', () => {
  it('leaves room around the first and last points, which sat on the edges cut in half', () => {
    expect(timeRange(1000, 2000)).toEqual([970, 2030]);
    expect(timeRange(5000, 5000)).toEqual([1400, 8600]);
  });
});

describe('instant axis ticks and labels', () => {
  const at = (iso: string) => Date.parse(iso) / 1000;
  const end = at('2026-11-25T16:47:13.000Z');
  const SPANS: readonly { name: string; seconds: number; unit: string }[] = [
    { name: 'a minute', seconds: 60, unit: 'second' },
    { name: 'an hour', seconds: 3600, unit: 'time' },
    { name: 'a day', seconds: DAY_SECONDS, unit: 'time' },
    { name: 'a week', seconds: 7 * DAY_SECONDS, unit: 'day' },
    { name: '30 days', seconds: 30 * DAY_SECONDS, unit: 'day' },
    { name: 'a year', seconds: 365 * DAY_SECONDS, unit: 'month' },
  ];
  const WIDTHS = [240, 375, 600, 900, 1280];

  it('labels each span in a unit that fits it, at a desktop width', () => {
    for (const span of SPANS) expect(timeTicks(end - span.seconds, end, 900).unit, span.name).toBe(span.unit);
    expect(timeTicks(end - 10 * 365 * DAY_SECONDS, end, 900).unit).toBe('year');
  });

  it('never gives a label less than its room, whatever the span and the width, and never repeats one', () => {
    for (const span of SPANS)
      for (const width of WIDTHS) {
        const what = `${span.name} at ${width} px`;
        const { ticks, unit } = timeTicks(end - span.seconds, end, width);
        expect(ticks.length, what).toBeGreaterThanOrEqual(2);
        expect(ticks.length, what).toBeLessThanOrEqual(Math.floor(width / TIME_LABEL_SPACE_PX[unit]));
        expect(ticks, what).toEqual([...ticks].sort((a, b) => a - b));
        expect(ticks[0], what).toBeGreaterThanOrEqual(end - span.seconds);
        expect(ticks.at(-1), what).toBeLessThanOrEqual(end);
        const labels = formatTimeTicks(ticks, unit);
        expect(new Set(labels).size, `${what}: ${labels.join(', ')}`).toBe(labels.length);
        // The longest label fits its room (at about 7 px a character of the axis' 12 px font).
        expect(Math.max(...labels.map((label) => label.length)) * 7, what).toBeLessThan(TIME_LABEL_SPACE_PX[unit]);
      }
  });

  it('labels the start of a span that holds no whole second, so a chart of close points has a label', () => {
    const within = timeTicks(at('2026-11-25T14:29:58.100Z'), at('2026-11-25T14:29:58.900Z'), 375);
    expect(formatTimeTicks(within.ticks, within.unit)).toEqual(['14:29:58']);
  });

  it('puts ticks on round UTC times and labels them in the unit', () => {
    const seconds = timeTicks(at('2026-11-25T14:29:58.500Z'), at('2026-11-25T14:30:04.000Z'), 375);
    expect(formatTimeTicks(seconds.ticks, seconds.unit)).toEqual(['14:30:00', '14:30:02', '14:30:04']);
    const hour = timeTicks(at('2026-11-25T14:00:00.000Z'), at('2026-11-25T15:00:00.000Z'), 375);
    expect(formatTimeTicks(hour.ticks, hour.unit)).toEqual(['14:00', '14:15', '14:30', '14:45', '15:00']);
    const day = timeTicks(at('2026-11-24T16:47:13.000Z'), end, 375);
    expect(formatTimeTicks(day.ticks, day.unit)).toEqual(['18:00', 'Nov 25', '06:00', '12:00']);
    const week = timeTicks(at('2026-11-18T16:47:13.000Z'), end, 600);
    expect(formatTimeTicks(week.ticks, week.unit)).toEqual(['Nov 19', 'Nov 20', 'Nov 21', 'Nov 22', 'Nov 23', 'Nov 24', 'Nov 25']);
    const month = timeTicks(at('2026-10-26T16:47:13.000Z'), end, 375);
    // Weekly ticks fall on Mondays.
    expect(month.ticks.map((tick) => new Date(tick * 1000).getUTCDay())).toEqual(month.ticks.map(() => 1));
    expect(formatTimeTicks(month.ticks, month.unit)).toEqual(['Nov 2', 'Nov 9', 'Nov 16', 'Nov 23']);
    const year = timeTicks(at('2025-11-25T16:47:13.000Z'), end, 900);
    expect(formatTimeTicks(year.ticks, year.unit)).toEqual([
      'Dec 2025',
      'Jan 2026',
      'Feb',
      'Mar',
      'Apr',
      'May',
      'Jun',
      'Jul',
      'Aug',
      'Sep',
      'Oct',
      'Nov',
    ]);
    const narrowYear = timeTicks(at('2025-11-25T16:47:13.000Z'), end, 375);
    expect(formatTimeTicks(narrowYear.ticks, narrowYear.unit)).toEqual(['Jan 2026', 'Apr', 'Jul', 'Oct']);
  });

  it('gives one tick at most to a width with room for one label, and none to an empty range', () => {
    expect(timeTicks(end - DAY_SECONDS, end, 40).ticks.length).toBeLessThanOrEqual(1);
    expect(timeTicks(end, end - 1, 900).ticks).toEqual([]);
  });
});

describe('legend and value axis', () => {
  it('totals values, leaving out days without one', () => {
    expect(total([1, null, 2, 0])).toBe(3);
    expect(total([])).toBe(0);
  });

  it('steps whole-number axes by 1, 2, 5 × 10^n, so a count of 2 is not labelled 0.5', () => {
    expect(WHOLE_NUMBER_STEPS.slice(0, 6)).toEqual([1, 2, 5, 10, 20, 50]);
    expect(WHOLE_NUMBER_STEPS.every((step) => Number.isInteger(step))).toBe(true);
    expect(WHOLE_NUMBER_STEPS.at(-1)).toBeGreaterThanOrEqual(1e12);
  });
});
