import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { randomBase62 } from '../../lib/ids.js';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

const TYPES_BEFORE = "type in ('credit', 'debit', 'transfer')";
const TYPES_AFTER = "type in ('credit', 'debit', 'transfer', 'expiry')";

/**
 * Holds and grants (docs/adr/0018-holds-and-grants.md):
 *
 * - `wallet_grants`: every credit (and every part of a transfer received) is a grant with a
 *   `priority`, an optional `expires_at`, what is left of it (`remaining`), the part of that
 *   reserved by pending holds (`held`) and what expired (`expired`). A wallet's grants' `remaining`
 *   sum to its balance; wallets that hold credits now get one never-expiring grant of their balance.
 * - `wallet_holds`: reservations of credits, with the grants each reserved (`sources`, JSON).
 * - `wallets.held`: the sum of the wallet's pending holds, kept by the ledger's write path.
 * - `ledger_transactions`: type `expiry` (a grant's remaining leaving the wallet); `sources` (JSON,
 *   the grants a movement drew on or made); `priority` and `expires_at` of the grant a credit made.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;

  await db.schema
    .alterTable('wallets')
    .addColumn('held', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('ledger_transactions').addColumn('sources', 'text').execute();
  await db.schema.alterTable('ledger_transactions').addColumn('priority', 'integer').execute();
  await db.schema.alterTable('ledger_transactions').addColumn('expires_at', 'text').execute();
  if (postgres) {
    await sql`alter table ledger_transactions drop constraint ledger_transactions_type_known`.execute(db);
    await sql.raw(`alter table ledger_transactions add constraint ledger_transactions_type_known check (${TYPES_AFTER})`).execute(db);
  } else {
    await widenSqliteTypeCheck(db);
  }

  await db.schema
    .createTable('wallet_grants')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('wallet_id', 'text', (column) => column.notNull().references('wallets.id'))
    .addColumn('transaction_id', 'text')
    .addColumn('amount', 'bigint', (column) => column.notNull())
    .addColumn('remaining', 'bigint', (column) => column.notNull())
    .addColumn('held', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('expired', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('priority', 'integer', (column) => column.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addCheckConstraint('wallet_grants_amounts', sql`remaining >= 0 and held >= 0 and held <= remaining and remaining <= amount`)
    .execute();
  // GET /wallets/{id}/grants, newest first with a (created_at, id) cursor.
  await db.schema
    .createIndex('wallet_grants_wallet_created_idx')
    .on('wallet_grants')
    .columns(['project_id', 'wallet_id', 'created_at', 'id'])
    .execute();
  // The grants a movement may draw on, and the expiry job's look-up: only grants with credits left.
  await db.schema
    .createIndex('wallet_grants_live_idx')
    .on('wallet_grants')
    .columns(['project_id', 'wallet_id', 'priority'])
    .where(sql.ref('remaining'), '>', 0)
    .execute();
  await db.schema
    .createIndex('wallet_grants_expiring_idx')
    .on('wallet_grants')
    .columns(['expires_at'])
    .where(sql<boolean>`remaining > 0 and expires_at is not null`)
    .execute();

  await db.schema
    .createTable('wallet_holds')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('wallet_id', 'text', (column) => column.notNull().references('wallets.id'))
    .addColumn('amount', 'bigint', (column) => column.notNull())
    .addColumn('captured_amount', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('sources', 'text', (column) => column.notNull())
    .addColumn('description', 'text')
    .addColumn('metadata', 'text', (column) => column.notNull())
    .addColumn('idempotency_key', 'text')
    .addColumn('idempotency_scope', 'text', (column) => column.notNull())
    .addColumn('transaction_id', 'text')
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addCheckConstraint('wallet_holds_status_known', sql`status in ('pending', 'captured', 'voided', 'expired')`)
    .execute();
  await db.schema
    .createIndex('wallet_holds_idempotency_idx')
    .on('wallet_holds')
    .columns(['project_id', 'idempotency_scope', 'idempotency_key'])
    .unique()
    .execute();
  await db.schema
    .createIndex('wallet_holds_wallet_created_idx')
    .on('wallet_holds')
    .columns(['project_id', 'wallet_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('wallet_holds_pending_idx')
    .on('wallet_holds')
    .columns(['expires_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();

  // The credits wallets hold now become one never-expiring grant each, so Σ remaining = balance.
  const funded = await db.selectFrom('wallets').select(['id', 'project_id', 'balance', 'created_at']).where('balance', '>', 0).execute();
  for (const wallet of funded as { id: string; project_id: string; balance: number | string; created_at: string }[]) {
    await db
      .insertInto('wallet_grants')
      .values({
        id: `grt_${randomBase62(22)}`,
        project_id: wallet.project_id,
        wallet_id: wallet.id,
        transaction_id: null,
        amount: wallet.balance,
        remaining: wallet.balance,
        priority: 50,
        expires_at: null,
        created_at: wallet.created_at,
      })
      .execute();
  }
}

/**
 * SQLite cannot alter a CHECK constraint: the table is made again with the wider one, inside the
 * migration's transaction. Its rows wait in a copy while it is dropped and created; the foreign key
 * of `ledger_entries` is checked at commit (`defer_foreign_keys`), when every transaction is back.
 * Its indexes and triggers are made again from their stored definitions.
 */
async function widenSqliteTypeCheck(db: Kysely<any>): Promise<void> {
  const objects = await sql<{ type: string; name: string; sql: string | null }>`
    select type, name, sql from sqlite_master where tbl_name = 'ledger_transactions'`.execute(db);
  const table = objects.rows.find((row) => row.type === 'table');
  if (table?.sql == null || !table.sql.includes(TYPES_BEFORE)) throw new Error('ledger_transactions has an unexpected definition');
  const dependents = objects.rows.filter((row) => row.type !== 'table' && row.sql !== null);
  await sql`pragma defer_foreign_keys = on`.execute(db);
  await sql`create table ledger_transactions_0023 as select * from ledger_transactions`.execute(db);
  await sql`drop table ledger_transactions`.execute(db);
  await sql.raw(table.sql.replace(TYPES_BEFORE, TYPES_AFTER)).execute(db);
  await sql`insert into ledger_transactions select * from ledger_transactions_0023`.execute(db);
  await sql`drop table ledger_transactions_0023`.execute(db);
  for (const dependent of dependents) if (dependent.sql !== null) await sql.raw(dependent.sql).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('wallet_holds').execute();
  await db.schema.dropTable('wallet_grants').execute();
  for (const column of ['expires_at', 'priority', 'sources']) {
    await db.schema.alterTable('ledger_transactions').dropColumn(column).execute();
  }
  await db.schema.alterTable('wallets').dropColumn('held').execute();
}
