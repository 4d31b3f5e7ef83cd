import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * PostgreSQL's audit entries are sealed in the order of the transactions that wrote them, instead
 * of through a queue table (docs/adr/0007-audit-log.md, "Chaining").
 *
 * - `audit_log.txid`: the writing transaction's id, a column default (`pg_current_xact_id()`), so
 *   every insert fills it without naming it. Rows written before this migration keep null; a queue
 *   row of theirs, if any, is still sealed from `audit_unsealed`. The index (txid, id) is the
 *   sealer's order: it reads the entries after its cursor straight from it, and every insert adds
 *   to its right-hand edge. (A BRIN index costs an insert nothing, but until autovacuum summarizes
 *   them its page ranges all match: measured, the sealer then rescanned the table's unsummarized
 *   tail on every pass, 13 µs per entry sealed against 2 µs.)
 * - `audit_seal_cursor`: one row, the last entry sealed in (txid, id) order. Sealers lock it, so
 *   they take turns.
 *
 * SQLite chains every entry in its own transaction (it has one writer) and leaves `txid` null; the
 * column exists there too so that both dialects have one schema.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable('audit_log').addColumn('txid', 'bigint').execute();
  if (!postgres) return;
  // Set apart from adding the column: a volatile default given with the column would be evaluated
  // for, and rewrite, every existing row.
  await sql`alter table audit_log alter column txid set default (pg_current_xact_id()::text::bigint)`.execute(db);
  await db.schema
    .createIndex('audit_log_txid_idx')
    .on('audit_log')
    .columns(['txid', 'id'])
    .where(sql.ref('txid'), 'is not', null)
    .execute();
  await db.schema
    .createTable('audit_seal_cursor')
    .addColumn('id', 'integer', (column) => column.primaryKey().check(sql`id = 1`))
    .addColumn('txid', 'bigint', (column) => column.notNull())
    .addColumn('entry_id', 'text', (column) => column.notNull())
    .execute();
  await db.insertInto('audit_seal_cursor').values({ id: 1, txid: 0, entry_id: '' }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) {
    await db.schema.dropTable('audit_seal_cursor').execute();
    await db.schema.dropIndex('audit_log_txid_idx').execute();
  }
  await db.schema.alterTable('audit_log').dropColumn('txid').execute();
}
