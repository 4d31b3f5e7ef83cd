import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Categories of credits (docs/adr/0021-categories.md):
 *
 * - `wallet_grants.category`: the category of the credit that made the grant (a transfer's grants
 *   keep the one of the grant they came from); every existing grant is `default`.
 * - `ledger_transactions.category`: a credit's category as asked (null on other types), and
 *   `ledger_transactions.categories`: the categories a debit or transfer was restricted to (JSON
 *   array; null when it was not). The fingerprint of an idempotency key is rebuilt from them.
 * - `wallet_holds.categories`: the same for a hold.
 *
 * No new index: a restricted draw reads the wallet's grants through `wallet_grants_spending_idx`
 * (migration 0028) and keeps those of its categories.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('wallet_grants')
    .addColumn('category', 'text', (column) => column.notNull().defaultTo('default'))
    .execute();
  await db.schema.alterTable('ledger_transactions').addColumn('category', 'text').execute();
  await db.schema.alterTable('ledger_transactions').addColumn('categories', 'text').execute();
  await db.schema.alterTable('wallet_holds').addColumn('categories', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('wallet_holds').dropColumn('categories').execute();
  await db.schema.alterTable('ledger_transactions').dropColumn('categories').execute();
  await db.schema.alterTable('ledger_transactions').dropColumn('category').execute();
  await db.schema.alterTable('wallet_grants').dropColumn('category').execute();
}
