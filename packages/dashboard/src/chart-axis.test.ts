import { describe, expect, it } from 'vitest';
import {
  DAY_SECONDS,
  dayRange,
  dayTicks,
  dayToSeconds,
  formatDay,
  secondsToDay,
  timeRange,
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
