import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { StatsFoldSource } from '../../db/schema.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';

const MINUTE_MS = 60 * 1000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/**
 * How far behind the clock a fold stays. A row's `created_at` is read from the clock before its
 * transaction commits; a row that commits more than this after its time would be missed by the
 * fold, so the lag bounds how long a writing transaction may take. The reads add every row from
 * the watermark on, so the answers are exact whatever the lag; it only sets how many recent rows a
 * read adds by index range (at most the lag plus the job's interval of rows).
 */
export const FOLD_LAG_MS = 5 * MINUTE_MS;

/** Every source a fold reads, with the per-day columns it adds to `stats_days`. */
export const FOLD_SOURCES: readonly StatsFoldSource[] = ['ledger', 'events', 'webhook_attempts'];

/** The day of a row: its ISO time's first 10 characters, on both dialects. */
const DAY = sql.raw('substr(created_at, 1, 10)');

/**
 * A ledger row's source: its type, except that a reversal is `reversal_<the type it reverses>`, so
 * that the circulation knows which way it moved the credits (docs/adr/0024-reversals.md).
 */
export const LEDGER_SOURCE = sql.raw(
  `case when type = 'reversal' then 'reversal_' || coalesce((select o.type from ledger_transactions o
     where o.project_id = ledger_transactions.project_id and o.id = ledger_transactions.reverses), 'transfer') else type end`,
);

function foldSelect(source: StatsFoldSource): RawBuilder<unknown> {
  switch (source) {
    case 'ledger':
      return sql`select project_id, ${LEDGER_SOURCE}, ${DAY}, count(*), sum(amount / 67108864), sum(amount % 67108864), 0, 0, 0
        from ledger_transactions`;
    case 'events':
      return sql`select project_id, 'event', ${DAY}, count(*), 0, 0, 0, 0, 0 from events`;
    case 'webhook_attempts':
      return sql`select project_id, 'webhook_attempt', ${DAY}, count(*), 0, 0,
          sum(case when status_code >= 200 and status_code < 300 then 1 else 0 end), sum(latency_ms), max(latency_ms)
        from webhook_attempts`;
  }
}

function groupBy(source: StatsFoldSource): RawBuilder<unknown> {
  return source === 'ledger' ? sql`group by project_id, ${LEDGER_SOURCE}, ${DAY}` : sql`group by project_id, ${DAY}`;
}

function tableOf(source: StatsFoldSource): string {
  return source === 'ledger' ? 'ledger_transactions' : source;
}

export interface FoldOptions {
  /** The longest span of time one step folds; a run folds at most `stepsMax` steps per project and source. */
  readonly stepMs?: number;
  readonly stepsMax?: number;
}

/**
 * Folds rows older than the clock minus `FOLD_LAG_MS` into `stats_days`, one bounded step at a
 * time, each step one transaction that moves its watermark; a concurrent fold of the same project
 * and source waits on the watermark's row (PostgreSQL) or the write lock (SQLite), and a step whose
 * watermark moved meanwhile changes nothing. Returns true when every fold has caught up.
 */
export async function foldStats(db: Db, clock: Clock, options: FoldOptions = {}): Promise<boolean> {
  const stepMs = options.stepMs ?? DAY_MS;
  const stepsMax = options.stepsMax ?? 50;
  const projects = await db.kysely.selectFrom('projects').select('id').orderBy('id').execute();
  let caughtUp = true;
  for (const { id } of projects) {
    for (const source of FOLD_SOURCES) {
      let more = true;
      for (let step = 0; more && step < stepsMax; step += 1) {
        more = await foldStep(db, id, source, clock.now(), stepMs);
      }
      if (more) caughtUp = false;
    }
  }
  return caughtUp;
}

/** One step of one fold; true when there is more to fold. */
async function foldStep(db: Db, projectId: string, source: StatsFoldSource, now: Date, stepMs: number): Promise<boolean> {
  const limit = isoTime(new Date(now.getTime() - FOLD_LAG_MS));
  const postgres = db.dialect === 'postgres';
  return inTransaction(db, async (trx) => {
    await sql`insert into stats_folds (project_id, source, folded_until) values (${projectId}, ${source}, '')
      on conflict (project_id, source) do nothing`.execute(trx);
    const watermark = await sql<{ folded_until: string }>`select folded_until from stats_folds
      where project_id = ${projectId} and source = ${source} ${postgres ? sql`for update` : sql``}`.execute(trx);
    const from = watermark.rows[0]?.folded_until ?? '';
    if (from >= limit) return false;
    let start = from;
    if (from === '') {
      const first = await sql<{ first: string | null }>`select min(created_at) as first from ${sql.table(tableOf(source))}
        where project_id = ${projectId}`.execute(trx);
      start = first.rows[0]?.first ?? limit;
    }
    const stepEnd = isoTime(new Date(Math.floor((Date.parse(start) + stepMs) / MINUTE_MS) * MINUTE_MS));
    const upto = stepEnd < limit ? stepEnd : limit;
    if (upto > start) {
      const greatest = postgres ? sql.raw('greatest') : sql.raw('max');
      await sql`insert into stats_days (project_id, source, day, n, amount_hi, amount_lo, succeeded, latency_sum, latency_max)
        ${foldSelect(source)}
        where project_id = ${projectId} and created_at >= ${from} and created_at < ${upto}
        ${groupBy(source)}
        on conflict (project_id, source, day) do update set
          n = stats_days.n + excluded.n,
          amount_hi = stats_days.amount_hi + excluded.amount_hi,
          amount_lo = stats_days.amount_lo + excluded.amount_lo,
          succeeded = stats_days.succeeded + excluded.succeeded,
          latency_sum = stats_days.latency_sum + excluded.latency_sum,
          latency_max = ${greatest}(stats_days.latency_max, excluded.latency_max)`.execute(trx);
    }
    const moved = await trx
      .updateTable('stats_folds')
      .set({ folded_until: upto })
      .where('project_id', '=', projectId)
      .where('source', '=', source)
      .where('folded_until', '=', from)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) throw new Error(`stats fold of ${source} for ${projectId} moved under it`);
    return upto < limit;
  });
}

/** The stats fold as a periodic job of `serve` and `worker`. */
export function statsFoldJob(db: Db, clock: Clock): PeriodicJob {
  return {
    name: 'stats-fold',
    intervalMs: MINUTE_MS,
    async run() {
      await foldStats(db, clock);
    },
  };
}

/**
 * Adds the attempts of one webhook endpoint's deliveries that no fold has reached yet to
 * `stats_days`, in the caller's transaction, just before the endpoint is deleted: its deliveries
 * and their attempts go with it (ON DELETE CASCADE), so without this the statistics would lose the
 * attempts of the last minutes (the folded days keep the older ones). It locks the fold's watermark
 * first, like a fold step: a fold waits for the deletion to commit and then no longer sees the
 * rows, and this adds only rows the fold has not taken, so nothing is counted twice.
 */
export async function foldEndpointAttempts(trx: Transaction, dialect: Db['dialect'], projectId: string, endpointId: string): Promise<void> {
  const postgres = dialect === 'postgres';
  await sql`insert into stats_folds (project_id, source, folded_until) values (${projectId}, 'webhook_attempts', '')
    on conflict (project_id, source) do nothing`.execute(trx);
  const watermark = await sql<{ folded_until: string }>`select folded_until from stats_folds
    where project_id = ${projectId} and source = 'webhook_attempts' ${postgres ? sql`for update` : sql``}`.execute(trx);
  const from = watermark.rows[0]?.folded_until ?? '';
  const greatest = postgres ? sql.raw('greatest') : sql.raw('max');
  await sql`insert into stats_days (project_id, source, day, n, amount_hi, amount_lo, succeeded, latency_sum, latency_max)
    select a.project_id, 'webhook_attempt', substr(a.created_at, 1, 10), count(*), 0, 0,
      sum(case when a.status_code >= 200 and a.status_code < 300 then 1 else 0 end), sum(a.latency_ms), max(a.latency_ms)
    from webhook_deliveries d join webhook_attempts a on a.delivery_id = d.id
    where d.project_id = ${projectId} and d.endpoint_id = ${endpointId} and a.project_id = ${projectId} and a.created_at >= ${from}
    group by a.project_id, substr(a.created_at, 1, 10)
    on conflict (project_id, source, day) do update set
      n = stats_days.n + excluded.n,
      succeeded = stats_days.succeeded + excluded.succeeded,
      latency_sum = stats_days.latency_sum + excluded.latency_sum,
      latency_max = ${greatest}(stats_days.latency_max, excluded.latency_max)`.execute(trx);
}
