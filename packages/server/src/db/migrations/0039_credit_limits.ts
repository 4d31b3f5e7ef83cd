import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/** 2^53 - 1: the largest balance and credit limit (docs/api.md section 1). */
const BALANCE_MAX = '9007199254740991';
const RANGE_BEFORE = `balance >= 0 and balance <= ${BALANCE_MAX}`;
const RANGE_AFTER =
  `balance >= -credit_limit and balance <= ${BALANCE_MAX} and credit_limit >= 0 and credit_limit <= ${BALANCE_MAX}` +
  ' and debt >= 0 and debt <= credit_limit';

/**
 * Credit limits (docs/adr/0023-credit-limits.md):
 *
 * - `wallets.credit_limit`: how far the balance may go below 0 (default 0: not at all);
 * - `wallets.debt`: what the wallet owes, the credits taken beyond its grants, kept by the ledger's
 *   write path; a wallet's balance is Σ grants' `remaining` − `debt`;
 * - `ledger_transactions.repaid`: what a credit or a received transfer repaid of that debt;
 * - the CHECK constraint `wallets_balance_range` now allows a balance down to −`credit_limit` and
 *   keeps `debt` within 0 to `credit_limit`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .alterTable('wallets')
    .addColumn('credit_limit', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('wallets')
    .addColumn('debt', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('ledger_transactions')
    .addColumn('repaid', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  if (postgres) {
    await sql`alter table wallets drop constraint wallets_balance_range`.execute(db);
    await sql.raw(`alter table wallets add constraint wallets_balance_range check (${RANGE_AFTER})`).execute(db);
  } else {
    await widenSqliteBalanceCheck(db);
  }
}

/**
 * SQLite cannot alter a CHECK constraint: `wallets` is made again with the wider one, inside the
 * migration's transaction, as migration 0023 did for `ledger_transactions`. Its rows wait in a copy
 * while it is dropped and created; the foreign keys of grants and holds are checked at commit
 * (`defer_foreign_keys`), when every wallet is back. Its indexes and triggers are made again from
 * their stored definitions, after the copy, so the triggers counting wallets do not count them twice.
 */
async function widenSqliteBalanceCheck(db: Kysely<any>): Promise<void> {
  const objects = await sql<{ type: string; name: string; sql: string | null }>`
    select type, name, sql from sqlite_master where tbl_name = 'wallets'`.execute(db);
  const table = objects.rows.find((row) => row.type === 'table');
  if (table?.sql == null || !table.sql.includes(RANGE_BEFORE)) throw new Error('wallets has an unexpected definition');
  const dependents = objects.rows.filter((row) => row.type !== 'table' && row.sql !== null);
  await sql`pragma defer_foreign_keys = on`.execute(db);
  await sql`create table wallets_0039 as select * from wallets`.execute(db);
  await sql`drop table wallets`.execute(db);
  await sql.raw(table.sql.replace(RANGE_BEFORE, RANGE_AFTER)).execute(db);
  await sql`insert into wallets select * from wallets_0039`.execute(db);
  await sql`drop table wallets_0039`.execute(db);
  for (const dependent of dependents) if (dependent.sql !== null) await sql.raw(dependent.sql).execute(db);
}
