import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The unique index that applies a ledger idempotency key at most once now holds only the
 * transactions that have a key. Before, every credit without a key added an entry too (SQLite and
 * PostgreSQL index NULLs, they just never compare equal): one more randomly placed index page
 * written per movement, for no rule. Same guarantee, less write work
 * (docs/adr/0005-ledger-write-path.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ledger_transactions_idempotency_idx').execute();
  await db.schema
    .createIndex('ledger_transactions_idempotency_idx')
    .on('ledger_transactions')
    .columns(['project_id', 'idempotency_scope', 'idempotency_key'])
    .unique()
    .where(sql.ref('idempotency_key'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ledger_transactions_idempotency_idx').execute();
  await db.schema
    .createIndex('ledger_transactions_idempotency_idx')
    .on('ledger_transactions')
    .columns(['project_id', 'idempotency_scope', 'idempotency_key'])
    .unique()
    .execute();
}
