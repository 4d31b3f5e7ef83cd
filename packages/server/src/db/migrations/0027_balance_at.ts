import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * `GET /v1/wallets/{id}/balance?at=` (docs/api.md section 4): a wallet's balance at a past time is
 * the `balance_after` of its last entry created at or before that time, one seek on this index
 * whatever the size of the wallet's history. Partial on `balance_after is not null`: only wallet
 * entries carry a balance; the issuance accounts' entries (half of all rows) are left out of it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('ledger_entries_account_time_idx')
    .on('ledger_entries')
    .columns(['project_id', 'account_id', 'created_at', 'seq'])
    .where(sql.ref('balance_after'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ledger_entries_account_time_idx').execute();
}
