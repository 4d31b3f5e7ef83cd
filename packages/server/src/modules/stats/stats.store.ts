import { type Kysely, type RawBuilder, sql } from 'kysely';
import { PREPARED_STATEMENT } from '../../db/database.js';
import type { Database, StatsFoldSource, StatsSource } from '../../db/schema.js';
import { BALANCE_MAX } from '../wallets/wallets.schemas.js';
import { LEDGER_SOURCE } from './stats.fold.js';

type Executor = Kysely<Database>;

/**
 * Read-only reports for the dashboard's overview. The one place that reads other modules' tables:
 * never a row-by-row count or sum of a project's table. Counts of users and wallets come from
 * `project_counts` (kept by triggers); per-day counts and sums come from `stats_days` (folded by
 * stats.fold.ts) plus, in the same statement, an index range read of the rows the fold has not
 * reached yet, so every answer is exact (docs/adr/0012-dashboard.md, docs/performance.md).
 *
 * Times are ISO 8601 text on both dialects, so the day of a row is its first 10 characters.
 */
const DAY = sql.raw('substr(created_at, 1, 10)');
/** The `day` of a row summed over a whole range. */
const WHOLE = sql.raw("''");
const TWO_26 = 2n ** 26n;

/** One day of one source: the folded sums plus the rows after the watermark. */
export interface DayTotals {
  readonly day: string;
  readonly source: StatsSource;
  readonly n: number;
  /** The exact sum of amounts (ledger sources). */
  readonly amount: bigint;
  readonly succeeded: number;
  readonly latency_sum: number;
  readonly latency_max: number;
}

/** A sum of amounts as a JSON number: exact below 2^53 - 1, capped at it (docs/api.md, "Statistics"). */
export function capped(value: bigint): number {
  return value > BigInt(BALANCE_MAX) ? BALANCE_MAX : value < 0n ? 0 : Number(value);
}

/**
 * Each read here is one fixed text per call site (the sources are constants of the caller), run as a
 * named prepared statement on PostgreSQL: planning these statements took longer than running them
 * (docs/performance.md, "Scale benchmark").
 */
const PREPARED = sql.raw(PREPARED_STATEMENT);

/**
 * The rows of `source` the fold has not reached. The watermark is read in the statement (so the
 * answer is exact whatever a fold commits meanwhile), but the planner cannot see its value and
 * estimates a third of the project's rows: at 10 million ledger rows it chose a sequential scan
 * (docs/performance.md, "Scale benchmark"). `hint`, a watermark read before the statement, is a
 * constant it can see; the watermark only moves forward, so the bound changes no answer.
 */
function unfolded(source: StatsFoldSource, projectId: string, since: string, hint: string, day: RawBuilder<unknown>): RawBuilder<unknown> {
  const after = sql`where project_id = ${projectId} and created_at >= ${since} and created_at >= ${hint} and created_at >= coalesce(
    (select folded_until from stats_folds where project_id = ${projectId} and source = ${source}), '')`;
  switch (source) {
    case 'ledger':
      return sql`select ${day} as day, ${LEDGER_SOURCE} as source, 1 as n, amount / 67108864 as hi, amount % 67108864 as lo,
          0 as ok, 0 as lat_sum, 0 as lat_max from ledger_transactions ${after}`;
    case 'events':
      return sql`select ${day} as day, 'event' as source, 1 as n, 0 as hi, 0 as lo, 0 as ok, 0 as lat_sum, 0 as lat_max
        from events ${after}`;
    case 'webhook_attempts':
      return sql`select ${day} as day, 'webhook_attempt' as source, 1 as n, 0 as hi, 0 as lo,
          case when status_code >= 200 and status_code < 300 then 1 else 0 end as ok,
          latency_ms as lat_sum, latency_ms as lat_max from webhook_attempts ${after}`;
  }
}

/** One fold's part of a read: its sources, per day from `since` on. */
export interface DaysPart {
  readonly fold: StatsFoldSource;
  readonly sources: readonly StatsSource[];
  /** An ISO time at midnight UTC, or '' for all time. */
  readonly since: string;
  /**
   * One row per source for the whole range (its `day` is ''), summed in the statement, instead of
   * one per day: the overview's circulation is every day of the ledger (docs/performance.md).
   */
  readonly whole?: boolean;
}

/**
 * Per day and source since `since` (an ISO time at midnight UTC, or '' for all time): the folded
 * days and the unfolded rows, read in one statement so a fold committing meanwhile is seen either
 * wholly or not at all.
 */
export async function daysSince(
  db: Executor,
  projectId: string,
  fold: StatsFoldSource,
  sources: readonly StatsSource[],
  since: string,
): Promise<DayTotals[]> {
  return daysOf(db, projectId, [{ fold, sources, since }]);
}

/** The columns of a day's row as the statement returns them. */
interface DayRow {
  day: string;
  source: string;
  n: number;
  hi: number;
  lo: number;
  ok: number;
  lat_sum: number;
  lat_max: number;
}

/** `daysSince` of several folds in one statement. No source may be in two parts. */
async function daysOf(db: Executor, projectId: string, parts: readonly DaysPart[]): Promise<DayTotals[]> {
  const hints = await watermarks(db, projectId);
  const result = await sql<DayRow>`${PREPARED} ${daysQuery(projectId, parts, hints)}`.execute(db);
  return result.rows.map(toDayTotals);
}

/**
 * The overview's read in one statement (one round trip and one plan instead of three): the
 * project's counts and `daysOf(parts)`.
 */
export async function countsAndDays(
  db: Executor,
  projectId: string,
  parts: readonly DaysPart[],
): Promise<{ users: number; wallets: number; days: DayTotals[] }> {
  const hints = await watermarks(db, projectId);
  const result = await sql<DayRow>`${PREPARED}
    select '' as day, 'counts' as source, users as n, wallets as hi, 0 as lo, 0 as ok, 0 as lat_sum, 0 as lat_max
    from project_counts where project_id = ${projectId}
    union all
    select * from (${daysQuery(projectId, parts, hints)}) as days`.execute(db);
  const counts = result.rows.find((row) => row.source === 'counts');
  return {
    users: counts?.n ?? 0,
    wallets: counts?.hi ?? 0,
    days: result.rows.filter((row) => row.source !== 'counts').map(toDayTotals),
  };
}

/** The project's fold watermarks as they stand now (each only moves forward). */
async function watermarks(db: Executor, projectId: string): Promise<Map<string, string>> {
  const result = await sql<{ source: string; folded_until: string }>`${PREPARED}
    select source, folded_until from stats_folds where project_id = ${projectId}`.execute(db);
  return new Map(result.rows.map((row) => [row.source, row.folded_until]));
}

function daysQuery(projectId: string, parts: readonly DaysPart[], hints: ReadonlyMap<string, string>): RawBuilder<unknown> {
  const sources = parts.flatMap((part) => part.sources);
  const unions = parts.map(
    (part) => sql`select ${part.whole === true ? WHOLE : sql.raw('day')} as day, source, n, amount_hi as hi, amount_lo as lo,
        succeeded as ok, latency_sum as lat_sum, latency_max as lat_max
      from stats_days where project_id = ${projectId} and source in (${sql.join(part.sources)}) and day >= ${part.since.slice(0, 10)}
      union all
      ${unfolded(part.fold, projectId, part.since, hints.get(part.fold) ?? '', part.whole === true ? WHOLE : DAY)}`,
  );
  return sql`select day, source, sum(n) as n, sum(hi) as hi, sum(lo) as lo, sum(ok) as ok, sum(lat_sum) as lat_sum, max(lat_max) as lat_max
    from (${sql.join(unions, sql` union all `)}) as days
    where source in (${sql.join(sources)})
    group by day, source`;
}

function toDayTotals(row: DayRow): DayTotals {
  return {
    day: row.day,
    source: row.source as StatsSource,
    n: row.n,
    amount: BigInt(row.hi) * TWO_26 + BigInt(row.lo),
    succeeded: row.ok,
    latency_sum: row.lat_sum,
    latency_max: row.lat_max,
  };
}
