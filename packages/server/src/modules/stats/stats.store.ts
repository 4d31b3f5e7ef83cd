import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import { BALANCE_MAX } from '../wallets/wallets.schemas.js';

type Executor = Kysely<Database>;

/**
 * Read-only reports for the dashboard's overview. The one place that reads other modules' tables
 * (users, wallets, ledger, events, webhook attempts): counts and sums, never a row, never a write,
 * every query scoped by project. See docs/adr/0012-dashboard.md.
 *
 * Times are ISO 8601 text on both dialects, so the day of a row is its first 10 characters.
 */
const day = sql<string>`substr(created_at, 1, 10)`;

/**
 * The sum of a non-negative integer column, capped at 2^53 - 1 (`BALANCE_MAX`): each balance and
 * amount is at most that, but a sum over many rows may not be, and the API answers JSON numbers
 * (docs/api.md, "Statistics"). Summed as numeric on PostgreSQL (exact) and as doubles on SQLite
 * (never an integer overflow; exact while every partial sum of non-negative integers stays at or
 * below 2^53), then compared with the cap; the answer is exact whenever it is below the cap.
 */
function cappedSum(column: 'balance' | 'amount') {
  const total = sql`coalesce(sum(${sql.ref(column)} * 1.0), 0)`;
  const cap = sql.lit(BALANCE_MAX);
  return sql<number>`cast(case when ${total} > ${cap} then ${cap} else ${total} end as bigint)`;
}

export async function countUsers(db: Executor, projectId: string): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return row.count;
}

export async function walletTotals(db: Executor, projectId: string): Promise<{ count: number; credits: number }> {
  const row = await db
    .selectFrom('wallets')
    .select((eb) => [eb.fn.countAll<number>().as('count'), cappedSum('balance').as('credits')])
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return { count: row.count, credits: row.credits };
}

export async function countEventsSince(db: Executor, projectId: string, since: string): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('project_id', '=', projectId)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return row.count;
}

/** Credits added and deducted (credit and debit transactions; transfers move credits, they add none) per day. */
export async function creditsPerDay(
  db: Executor,
  projectId: string,
  since: string,
): Promise<{ day: string; type: 'credit' | 'debit' | 'transfer'; total: number; count: number }[]> {
  const rows = await db
    .selectFrom('ledger_transactions')
    .select((eb) => [day.as('day'), 'type', cappedSum('amount').as('total'), eb.fn.countAll<number>().as('count')])
    .where('project_id', '=', projectId)
    .where('type', 'in', ['credit', 'debit'])
    .where('created_at', '>=', since)
    .groupBy([day, 'type'])
    .execute();
  return rows.map((row) => ({ day: row.day, type: row.type, total: row.total, count: row.count }));
}

/** Webhook attempts per day: how many, how many succeeded (2xx), and their latency. */
export async function webhookAttemptsPerDay(
  db: Executor,
  projectId: string,
  since: string,
): Promise<{ day: string; attempts: number; succeeded: number; latency_ms_avg: number; latency_ms_max: number }[]> {
  const rows = await db
    .selectFrom('webhook_attempts')
    .select((eb) => [
      day.as('day'),
      eb.fn.countAll<number>().as('attempts'),
      sql<number>`sum(case when status_code >= 200 and status_code < 300 then 1 else 0 end)`.as('succeeded'),
      eb.fn.avg<number>('latency_ms').as('latency_ms_avg'),
      eb.fn.max<number>('latency_ms').as('latency_ms_max'),
    ])
    .where('project_id', '=', projectId)
    .where('created_at', '>=', since)
    .groupBy(day)
    .execute();
  return rows.map((row) => ({
    day: row.day,
    attempts: row.attempts,
    succeeded: row.succeeded,
    latency_ms_avg: Math.round(row.latency_ms_avg),
    latency_ms_max: row.latency_ms_max,
  }));
}
