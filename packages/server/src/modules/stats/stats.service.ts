import type { Db } from '../../db/database.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import * as store from './stats.store.js';

/** For the webhooks module: keeps an endpoint's attempts in the statistics when it is deleted (stats.fold.ts). */
export { foldEndpointAttempts } from './stats.fold.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface Overview {
  readonly object: 'stats.overview';
  readonly users: number;
  readonly wallets: number;
  /** The sum of every wallet's balance. */
  readonly credits_in_circulation: number;
  /** Events since midnight UTC. */
  readonly events_today: number;
  readonly as_of: string;
}

export interface CreditsDay {
  readonly day: string;
  readonly added: number;
  readonly deducted: number;
  readonly credit_count: number;
  readonly debit_count: number;
}

export interface WebhooksDay {
  readonly day: string;
  readonly attempts: number;
  readonly succeeded: number;
  /** succeeded / attempts, or null on a day without attempts. */
  readonly success_rate: number | null;
  readonly latency_ms_avg: number | null;
  readonly latency_ms_max: number | null;
}

/** Counts and per-day series for the dashboard's overview, from maintained aggregates (stats.store.ts). */
export class StatsService {
  readonly #db: Db;
  readonly #clock: Clock;

  constructor(options: { db: Db; clock: Clock }) {
    this.#db = options.db;
    this.#clock = options.clock;
  }

  async overview(projectId: string): Promise<Overview> {
    const now = this.#clock.now();
    const db = this.#db.kysely;
    const counts = await store.countsAndDays(db, projectId, [
      { fold: 'ledger', sources: ['credit', 'debit', 'expiry', 'reversal_credit', 'reversal_debit'], since: '', whole: true },
      { fold: 'events', sources: ['event'], since: isoTime(startOfDay(now)), whole: true },
    ]);
    const events = counts.days.filter((row) => row.source === 'event');
    const ledger = counts.days.filter((row) => row.source !== 'event');
    // Every balance is the sum of its wallet's credits less its debits and expiries (transfers, and
    // their reversals, move credits between wallets of one project), so their sum is the project's
    // credits less the rest; a credit's reversal takes credits back, a debit's gives them back.
    let circulation = 0n;
    for (const row of ledger) circulation += row.source === 'credit' || row.source === 'reversal_debit' ? row.amount : -row.amount;
    return {
      object: 'stats.overview',
      users: counts.users,
      wallets: counts.wallets,
      credits_in_circulation: store.capped(circulation),
      events_today: events.reduce((sum, row) => sum + row.n, 0),
      as_of: isoTime(now),
    };
  }

  /** The last `days` days (today included), oldest first, every day present even when empty. */
  async credits(projectId: string, days: number): Promise<CreditsDay[]> {
    const dayList = lastDays(this.#clock.now(), days);
    const rows = await store.daysSince(this.#db.kysely, projectId, 'ledger', ['credit', 'debit'], `${dayList[0] ?? ''}T00:00:00.000Z`);
    return dayList.map((day) => {
      const credit = rows.find((row) => row.day === day && row.source === 'credit');
      const debit = rows.find((row) => row.day === day && row.source === 'debit');
      return {
        day,
        added: store.capped(credit?.amount ?? 0n),
        deducted: store.capped(debit?.amount ?? 0n),
        credit_count: credit?.n ?? 0,
        debit_count: debit?.n ?? 0,
      };
    });
  }

  async webhooks(projectId: string, days: number): Promise<WebhooksDay[]> {
    const dayList = lastDays(this.#clock.now(), days);
    const rows = await store.daysSince(
      this.#db.kysely,
      projectId,
      'webhook_attempts',
      ['webhook_attempt'],
      `${dayList[0] ?? ''}T00:00:00.000Z`,
    );
    return dayList.map((day) => {
      const row = rows.find((candidate) => candidate.day === day);
      if (row === undefined || row.n === 0)
        return { day, attempts: 0, succeeded: 0, success_rate: null, latency_ms_avg: null, latency_ms_max: null };
      return {
        day,
        attempts: row.n,
        succeeded: row.succeeded,
        success_rate: row.succeeded / row.n,
        latency_ms_avg: Math.round(row.latency_sum / row.n),
        latency_ms_max: row.latency_max,
      };
    });
  }
}

function startOfDay(date: Date): Date {
  return new Date(Math.floor(date.getTime() / DAY_MS) * DAY_MS);
}

/** `YYYY-MM-DD` of the last `days` UTC days, oldest first. */
export function lastDays(now: Date, days: number): string[] {
  const today = startOfDay(now).getTime();
  return Array.from({ length: days }, (_, index) => new Date(today - (days - 1 - index) * DAY_MS).toISOString().slice(0, 10));
}
