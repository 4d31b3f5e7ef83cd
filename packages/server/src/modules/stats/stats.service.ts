import type { Db } from '../../db/database.js';
import { type Clock, isoTime } from '../../shared/clock.js';
import * as store from './stats.store.js';

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

/** Counts and per-day series for the dashboard's overview, computed by SQL on both dialects. */
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
    const [users, wallets, eventsToday] = await Promise.all([
      store.countUsers(db, projectId),
      store.walletTotals(db, projectId),
      store.countEventsSince(db, projectId, isoTime(startOfDay(now))),
    ]);
    return {
      object: 'stats.overview',
      users,
      wallets: wallets.count,
      credits_in_circulation: wallets.credits,
      events_today: eventsToday,
      as_of: isoTime(now),
    };
  }

  /** The last `days` days (today included), oldest first, every day present even when empty. */
  async credits(projectId: string, days: number): Promise<CreditsDay[]> {
    const dayList = lastDays(this.#clock.now(), days);
    const rows = await store.creditsPerDay(this.#db.kysely, projectId, `${dayList[0] ?? ''}T00:00:00.000Z`);
    return dayList.map((day) => {
      const credit = rows.find((row) => row.day === day && row.type === 'credit');
      const debit = rows.find((row) => row.day === day && row.type === 'debit');
      return {
        day,
        added: credit?.total ?? 0,
        deducted: debit?.total ?? 0,
        credit_count: credit?.count ?? 0,
        debit_count: debit?.count ?? 0,
      };
    });
  }

  async webhooks(projectId: string, days: number): Promise<WebhooksDay[]> {
    const dayList = lastDays(this.#clock.now(), days);
    const rows = await store.webhookAttemptsPerDay(this.#db.kysely, projectId, `${dayList[0] ?? ''}T00:00:00.000Z`);
    return dayList.map((day) => {
      const row = rows.find((candidate) => candidate.day === day);
      if (row === undefined) return { day, attempts: 0, succeeded: 0, success_rate: null, latency_ms_avg: null, latency_ms_max: null };
      return { ...row, success_rate: row.attempts === 0 ? null : row.succeeded / row.attempts };
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
