import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The audit log reads money movements from the ledger instead of a row of its own per movement
 * (docs/adr/0019-audit-reads-the-ledger.md); the hash chain covers them, sealed after commit.
 *
 * - PostgreSQL: `ledger_transactions.txid`, the writing transaction's id (a column default, as
 *   `audit_log.txid` since migration 0013), and the index (txid, id): the sealer's walk, in the
 *   order no transaction can commit behind. Rows written before this migration keep null: their
 *   audit entries are rows of `audit_log`, so the log does not show them twice.
 * - `audit_ledger_cursor`: one row, the last ledger transaction the sealer chained: (txid, id) on
 *   PostgreSQL; on SQLite `txid` is its rowid (SQLite has one writer: rowid order is commit order),
 *   and `start` the last rowid written before this migration (those have `audit_log` rows).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('audit_ledger_cursor')
    .addColumn('id', 'integer', (column) => column.primaryKey().check(sql`id = 1`))
    .addColumn('start', 'bigint', (column) => column.notNull())
    .addColumn('txid', 'bigint', (column) => column.notNull())
    .addColumn('entry_id', 'text', (column) => column.notNull())
    .execute();
  if (postgres) {
    await db.schema.alterTable('ledger_transactions').addColumn('txid', 'bigint').execute();
    // Set apart from adding the column: a volatile default given with it would rewrite every row.
    await sql`alter table ledger_transactions alter column txid set default (pg_current_xact_id()::text::bigint)`.execute(db);
    await db.schema
      .createIndex('ledger_transactions_txid_idx')
      .on('ledger_transactions')
      .columns(['txid', 'id'])
      .where(sql.ref('txid'), 'is not', null)
      .execute();
    await db.insertInto('audit_ledger_cursor').values({ id: 1, start: 0, txid: 0, entry_id: '' }).execute();
    return;
  }
  const { rows } = await sql<{ last: number | null }>`select max(rowid) as last from ledger_transactions`.execute(db);
  const last = rows[0]?.last ?? 0;
  await db.insertInto('audit_ledger_cursor').values({ id: 1, start: last, txid: last, entry_id: '' }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) {
    await db.schema.dropIndex('ledger_transactions_txid_idx').execute();
    await db.schema.alterTable('ledger_transactions').dropColumn('txid').execute();
  }
  await db.schema.dropTable('audit_ledger_cursor').execute();
}
