import { assert } from '../../lib/assert.js';
import type { RecurringGrantInterval } from '../../db/schema.js';

/**
 * The periods of a recurring grant, in UTC (docs/adr/0022-recurring-grants.md). Period `index`
 * starts `index × interval_count` intervals after `starts_at`; it ends where the next one starts.
 * Days and weeks are fixed lengths; months and years are calendar months anchored on the day of
 * `starts_at`, clamped to the month's last day: from 31 January, 28 (or 29) February, then 31 March.
 * The time of day is kept.
 */

export interface Schedule {
  /** Milliseconds since the epoch. */
  readonly startsAtMs: number;
  readonly interval: RecurringGrantInterval;
  readonly intervalCount: number;
}

const DAY_MS = 86_400_000;

/** The start of period `index` (0 is `starts_at`), in milliseconds since the epoch. */
export function periodStartMs(schedule: Schedule, index: number): number {
  assert(Number.isSafeInteger(index) && index >= 0, `a period index is a whole number ≥ 0: ${index}`);
  const steps = index * schedule.intervalCount;
  switch (schedule.interval) {
    case 'day':
      return schedule.startsAtMs + steps * DAY_MS;
    case 'week':
      return schedule.startsAtMs + steps * 7 * DAY_MS;
    case 'month':
      return addMonths(schedule.startsAtMs, steps);
    case 'year':
      return addMonths(schedule.startsAtMs, steps * 12);
  }
}

/** Calendar months after `fromMs`, on the same day of the month or the month's last day if it has fewer. */
export function addMonths(fromMs: number, months: number): number {
  const from = new Date(fromMs);
  const monthIndex = from.getUTCFullYear() * 12 + from.getUTCMonth() + months;
  const year = Math.floor(monthIndex / 12);
  const month = monthIndex - year * 12;
  const day = Math.min(from.getUTCDate(), daysInMonth(year, month));
  const timeOfDayMs = fromMs - Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate());
  return utcDate(year, month, day) + timeOfDayMs;
}

export function daysInMonth(year: number, month: number): number {
  return new Date(utcDate(year, month + 1, 1) - DAY_MS).getUTCDate();
}

/** `Date.UTC` for any year: it reads years 0 to 99 as 1900 to 1999. */
function utcDate(year: number, month: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  date.setUTCHours(0, 0, 0, 0);
  return date.getTime();
}

export interface DuePeriod {
  readonly index: number;
  readonly startMs: number;
  readonly endMs: number;
}

export interface DuePeriods {
  /** The periods to credit now, in order. */
  readonly periods: readonly DuePeriod[];
  /** The first period neither credited nor skipped: where the schedule continues. */
  readonly next: number;
}

/**
 * The periods from `from` on whose start has come at `nowMs`: at most `periodsMax` of them, and at
 * most `stepsMax` looked at. With `expires: period_end`, a period already over at `nowMs` is
 * skipped, not credited: its credit would expire as it arrived.
 */
export function duePeriods(
  schedule: Schedule & { readonly expires: 'never' | 'period_end' },
  window: { readonly from: number; readonly nowMs: number; readonly periodsMax: number; readonly stepsMax: number },
): DuePeriods {
  const periods: DuePeriod[] = [];
  let index = window.from;
  for (let steps = 0; steps < window.stepsMax && periods.length < window.periodsMax; steps += 1) {
    const startMs = periodStartMs(schedule, index);
    if (startMs > window.nowMs) break;
    const endMs = periodStartMs(schedule, index + 1);
    if (schedule.expires === 'never' || endMs > window.nowMs) periods.push({ index, startMs, endMs });
    index += 1;
  }
  return { periods, next: index };
}
