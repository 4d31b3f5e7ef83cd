import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

const TYPES_BEFORE = "type in ('credit', 'debit', 'transfer', 'expiry')";
const TYPES_AFTER = "type in ('credit', 'debit', 'transfer', 'expiry', 'reversal')";

/**
 * Reversals (docs/adr/0024-reversals.md):
 *
 * - `ledger_transactions`: type `reversal`; `reverses`, the transaction a reversal gives back
 *   (null on other types); `asked_amount`, the amount a reversal was asked for (null: all that was
 *   left), part of its idempotency key's fingerprint;
 * - `ledger_transactions_reverses_idx` on (project_id, reverses), where reverses is set: the
 *   reversals of a transaction, summed by the write path under its wallets' locks.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable('ledger_transactions').addColumn('reverses', 'text').execute();
  await db.schema.alterTable('ledger_transactions').addColumn('asked_amount', 'bigint').execute();
  if (postgres) {
    await sql`alter table ledger_transactions drop constraint ledger_transactions_type_known`.execute(db);
    await sql.raw(`alter table ledger_transactions add constraint ledger_transactions_type_known check (${TYPES_AFTER})`).execute(db);
  } else {
    await widenSqliteTypeCheck(db);
  }
  await db.schema
    .createIndex('ledger_transactions_reverses_idx')
    .on('ledger_transactions')
    .columns(['project_id', 'reverses'])
    .where(sql.ref('reverses'), 'is not', null)
    .execute();
}

/**
 * SQLite cannot alter a CHECK constraint: the table is made again with the wider one, inside the
 * migration's transaction, as migration 0023 did. Its rows wait in a copy while it is dropped and
 * created; the foreign key of `ledger_entries` is checked at commit (`defer_foreign_keys`). Each row
 * keeps its rowid: the audit log's sealer reads the ledger in rowid order and keeps its position as
 * one (docs/adr/0019-audit-reads-the-ledger.md). Its indexes and triggers are made again from their
 * stored definitions.
 */
async function widenSqliteTypeCheck(db: Kysely<any>): Promise<void> {
  const objects = await sql<{ type: string; name: string; sql: string | null }>`
    select type, name, sql from sqlite_master where tbl_name = 'ledger_transactions'`.execute(db);
  const table = objects.rows.find((row) => row.type === 'table');
  if (table?.sql == null || !table.sql.includes(TYPES_BEFORE)) throw new Error('ledger_transactions has an unexpected definition');
  const dependents = objects.rows.filter((row) => row.type !== 'table' && row.sql !== null);
  await sql`pragma defer_foreign_keys = on`.execute(db);
  const columns = await sql<{ name: string }>`select name from pragma_table_info('ledger_transactions')`.execute(db);
  const list = columns.rows.map((column) => `"${column.name}"`).join(', ');
  await sql`create table ledger_transactions_0040 as select rowid as rowid_0040, * from ledger_transactions`.execute(db);
  await sql`drop table ledger_transactions`.execute(db);
  await sql.raw(table.sql.replace(TYPES_BEFORE, TYPES_AFTER)).execute(db);
  await sql.raw(`insert into ledger_transactions (rowid, ${list}) select rowid_0040, ${list} from ledger_transactions_0040`).execute(db);
  await sql`drop table ledger_transactions_0040`.execute(db);
  for (const dependent of dependents) if (dependent.sql !== null) await sql.raw(dependent.sql).execute(db);
}
