import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Maintained aggregates for the statistics and dashboard reads (docs/performance.md, "Large
 * tables"), so none of them counts or sums a project's rows per request:
 *
 * - `project_counts` (project_id, users, wallets): kept by triggers in the transaction of every
 *   insert and delete of a user or a wallet, filled here from the rows that exist.
 * - `stats_days` (project_id, source, day): per-day counts and sums of ledger transactions (source
 *   = their type), events (`event`) and webhook attempts (`webhook_attempt`), folded in by the
 *   stats job off the write path (modules/stats/stats.fold.ts). Sums of amounts are kept as two
 *   columns, the bits above 2^26 and the 26 bits below, so that no sum leaves the safe integers.
 * - `stats_folds` (project_id, source, folded_until): the watermark of each fold. Rows created
 *   before it are in `stats_days`; the reads add the rows from it on with an index range read
 *   (the (project_id, created_at) indexes), so the answers stay exact.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('project_counts')
    .addColumn('project_id', 'text', (column) => column.primaryKey())
    .addColumn('users', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('wallets', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('stats_days')
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('source', 'text', (column) => column.notNull())
    .addColumn('day', 'text', (column) => column.notNull())
    .addColumn('n', 'bigint', (column) => column.notNull())
    .addColumn('amount_hi', 'bigint', (column) => column.notNull())
    .addColumn('amount_lo', 'bigint', (column) => column.notNull())
    .addColumn('succeeded', 'bigint', (column) => column.notNull())
    .addColumn('latency_sum', 'bigint', (column) => column.notNull())
    .addColumn('latency_max', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('stats_days_pk', ['project_id', 'source', 'day'])
    .execute();
  await db.schema
    .createTable('stats_folds')
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('source', 'text', (column) => column.notNull())
    .addColumn('folded_until', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('stats_folds_pk', ['project_id', 'source'])
    .execute();

  for (const table of ['users', 'wallets']) {
    if (postgres) {
      await sql
        .raw(
          `create or replace function project_counts_${table}() returns trigger language plpgsql as $$ begin ` +
            `if tg_op = 'INSERT' then ` +
            `insert into project_counts (project_id, ${table}) values (new.project_id, 1) ` +
            `on conflict (project_id) do update set ${table} = project_counts.${table} + 1; return new; ` +
            `else update project_counts set ${table} = ${table} - 1 where project_id = old.project_id; return old; end if; ` +
            `end $$`,
        )
        .execute(db);
      await sql
        .raw(
          `create trigger ${table}_project_count after insert or delete on ${table} ` +
            `for each row execute function project_counts_${table}()`,
        )
        .execute(db);
    } else {
      await sql
        .raw(
          `create trigger ${table}_project_count_insert after insert on ${table} begin ` +
            `insert or ignore into project_counts (project_id) values (new.project_id); ` +
            `update project_counts set ${table} = ${table} + 1 where project_id = new.project_id; end`,
        )
        .execute(db);
      await sql
        .raw(
          `create trigger ${table}_project_count_delete after delete on ${table} begin ` +
            `update project_counts set ${table} = ${table} - 1 where project_id = old.project_id; end`,
        )
        .execute(db);
    }
  }
  await sql`
    insert into project_counts (project_id, users, wallets)
    select id,
      (select count(*) from users where users.project_id = projects.id),
      (select count(*) from wallets where wallets.project_id = projects.id)
    from projects
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const table of ['users', 'wallets']) {
    if (postgres) {
      await sql.raw(`drop trigger ${table}_project_count on ${table}`).execute(db);
      await sql.raw(`drop function project_counts_${table}()`).execute(db);
    } else {
      await sql.raw(`drop trigger ${table}_project_count_insert`).execute(db);
      await sql.raw(`drop trigger ${table}_project_count_delete`).execute(db);
    }
  }
  await db.schema.dropTable('stats_folds').execute();
  await db.schema.dropTable('stats_days').execute();
  await db.schema.dropTable('project_counts').execute();
}
