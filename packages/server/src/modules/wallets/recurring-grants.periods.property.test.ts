import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RecurringGrantInterval } from '../../db/schema.js';
import { addMonths, daysInMonth, duePeriods, periodStartMs, type Schedule } from './recurring-grants.periods.js';

/** The periods of a recurring grant (docs/adr/0022-recurring-grants.md): pure arithmetic, no database. */

const DAY_MS = 86_400_000;
const start = fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2100-12-31T23:59:59Z'), noInvalidDate: true });
const schedule = fc.record({
  startsAtMs: start.map((date) => date.getTime()),
  interval: fc.constantFrom<RecurringGrantInterval>('day', 'week', 'month', 'year'),
  intervalCount: fc.integer({ min: 1, max: 12 }),
});

const utc = (ms: number) => {
  const date = new Date(ms);
  return { year: date.getUTCFullYear(), month: date.getUTCMonth(), day: date.getUTCDate(), timeOfDayMs: ms % DAY_MS };
};

describe('recurring grant periods', () => {
  it('start at starts_at and strictly increase', () => {
    fc.assert(
      fc.property(schedule, fc.integer({ min: 0, max: 500 }), (given: Schedule, index) => {
        expect(periodStartMs(given, 0)).toBe(given.startsAtMs);
        expect(periodStartMs(given, index + 1)).toBeGreaterThan(periodStartMs(given, index));
      }),
    );
  });

  it('days and weeks are fixed lengths', () => {
    fc.assert(
      fc.property(schedule, fc.integer({ min: 0, max: 500 }), (given: Schedule, index) => {
        if (given.interval !== 'day' && given.interval !== 'week') return;
        const lengthMs = (given.interval === 'day' ? 1 : 7) * given.intervalCount * DAY_MS;
        expect(periodStartMs(given, index)).toBe(given.startsAtMs + index * lengthMs);
      }),
    );
  });

  it('months and years keep the anchor day, clamped to the month, and the time of day', () => {
    fc.assert(
      fc.property(schedule, fc.integer({ min: 0, max: 300 }), (given: Schedule, index) => {
        if (given.interval !== 'month' && given.interval !== 'year') return;
        const anchor = utc(given.startsAtMs);
        const at = utc(periodStartMs(given, index));
        const months = index * given.intervalCount * (given.interval === 'year' ? 12 : 1);
        expect(at.year * 12 + at.month).toBe(anchor.year * 12 + anchor.month + months);
        expect(at.day).toBe(Math.min(anchor.day, daysInMonth(at.year, at.month)));
        expect(at.timeOfDayMs).toBe(anchor.timeOfDayMs);
      }),
    );
  });

  it('a month from the 31st falls on the month’s last day and comes back to the 31st', () => {
    const from = Date.parse('2027-01-31T09:30:00.000Z');
    const monthly = { startsAtMs: from, interval: 'month', intervalCount: 1 } as const;
    const starts = [0, 1, 2, 3, 4].map((index) => new Date(periodStartMs(monthly, index)).toISOString());
    expect(starts).toEqual([
      '2027-01-31T09:30:00.000Z',
      '2027-02-28T09:30:00.000Z',
      '2027-03-31T09:30:00.000Z',
      '2027-04-30T09:30:00.000Z',
      '2027-05-31T09:30:00.000Z',
    ]);
    expect(new Date(addMonths(Date.parse('2028-01-31T00:00:00.000Z'), 1)).toISOString()).toBe('2028-02-29T00:00:00.000Z');
    const yearly = { startsAtMs: Date.parse('2028-02-29T00:00:00.000Z'), interval: 'year', intervalCount: 1 } as const;
    expect(new Date(periodStartMs(yearly, 1)).toISOString()).toBe('2029-02-28T00:00:00.000Z');
    expect(new Date(periodStartMs(yearly, 4)).toISOString()).toBe('2032-02-29T00:00:00.000Z');
  });

  it('due periods: each period once, in order, only once begun; expired ones skipped with period_end', () => {
    fc.assert(
      fc.property(
        schedule,
        fc.constantFrom<'never' | 'period_end'>('never', 'period_end'),
        fc.array(fc.integer({ min: 0, max: 400 * DAY_MS }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 5 }),
        (given: Schedule, expires, advances, periodsMax) => {
          const full = { ...given, expires };
          let nowMs = given.startsAtMs;
          let next = 0;
          const credited: number[] = [];
          for (const advanceMs of advances) {
            nowMs += advanceMs;
            // Runs until caught up, as the job does tick after tick.
            for (;;) {
              const due = duePeriods(full, { from: next, nowMs, periodsMax, stepsMax: 100_000 });
              for (const period of due.periods) {
                expect(period.startMs).toBeLessThanOrEqual(nowMs);
                expect(period.endMs).toBe(periodStartMs(given, period.index + 1));
                if (expires === 'period_end') expect(period.endMs).toBeGreaterThan(nowMs);
                credited.push(period.index);
              }
              expect(due.next).toBeGreaterThanOrEqual(next);
              if (due.next === next) break;
              next = due.next;
            }
            expect(periodStartMs(given, next)).toBeGreaterThan(nowMs);
          }
          expect(new Set(credited).size).toBe(credited.length);
          expect([...credited].sort((a, b) => a - b)).toEqual(credited);
          if (expires === 'never') expect(credited).toEqual([...Array(next).keys()]);
        },
      ),
    );
  });
});
