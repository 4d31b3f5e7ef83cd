import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * A wallet's grants with credits left, in spending order (priority, then earliest expiry with
 * never-expiring last, then age; docs/adr/0018-holds-and-grants.md). A debit reads the first of
 * them from this index and stops (modules/ledger/ledger.statements-holds.ts `loadGrants`), where
 * it sorted every grant the wallet had left: 122 ms per debit on PostgreSQL for a wallet holding
 * 100,000 unspent credits. It replaces `wallet_grants_live_idx` (project_id, wallet_id, priority),
 * its prefix.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index wallet_grants_spending_idx on wallet_grants
    (project_id, wallet_id, priority, (case when expires_at is null then 1 else 0 end), expires_at, created_at, id)
    where remaining > 0`.execute(db);
  await db.schema.dropIndex('wallet_grants_live_idx').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('wallet_grants_live_idx')
    .on('wallet_grants')
    .columns(['project_id', 'wallet_id', 'priority'])
    .where(sql.ref('remaining'), '>', 0)
    .execute();
  await db.schema.dropIndex('wallet_grants_spending_idx').execute();
}
