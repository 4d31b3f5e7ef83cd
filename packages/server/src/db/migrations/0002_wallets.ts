import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/** 2^53 - 1: the largest balance (docs/api.md section 1), the largest integer JSON carries exactly. */
const BALANCE_MAX = '9007199254740991';
const AMOUNT_MAX = '1000000000000';

/**
 * Wallets, the double-entry ledger and the event outbox.
 *
 * The database itself guards what must never happen, beside the code that avoids it: a balance out
 * of range fails a CHECK constraint, and an UPDATE or DELETE on a ledger transaction or entry fails
 * a trigger (the ledger is append-only).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;

  await db.schema
    .createTable('wallets')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('currency', 'text', (column) => column.notNull())
    .addColumn('balance', 'bigint', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('metadata', 'text', (column) => column.notNull())
    .addColumn('low_balance_threshold', 'bigint')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addCheckConstraint('wallets_balance_range', sql.raw(`balance >= 0 and balance <= ${BALANCE_MAX}`))
    .addCheckConstraint('wallets_status_known', sql`status in ('active', 'frozen', 'closed')`)
    .execute();
  // GET /wallets (newest first) and GET /wallets?user_id=, both with a (created_at, id) cursor.
  await db.schema.createIndex('wallets_project_created_idx').on('wallets').columns(['project_id', 'created_at', 'id']).execute();
  await db.schema
    .createIndex('wallets_project_user_created_idx')
    .on('wallets')
    .columns(['project_id', 'user_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('ledger_transactions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('type', 'text', (column) => column.notNull())
    .addColumn('currency', 'text', (column) => column.notNull())
    .addColumn('amount', 'bigint', (column) => column.notNull())
    .addColumn('description', 'text')
    .addColumn('metadata', 'text', (column) => column.notNull())
    .addColumn('idempotency_key', 'text')
    .addColumn('idempotency_scope', 'text', (column) => column.notNull())
    .addColumn('wallet_id', 'text')
    .addColumn('from_wallet_id', 'text')
    .addColumn('to_wallet_id', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addCheckConstraint('ledger_transactions_type_known', sql`type in ('credit', 'debit', 'transfer')`)
    .addCheckConstraint('ledger_transactions_amount_range', sql.raw(`amount >= 1 and amount <= ${AMOUNT_MAX}`))
    .execute();
  // A key is applied at most once, whatever happens to the idempotency table. NULL keys are distinct.
  await db.schema
    .createIndex('ledger_transactions_idempotency_idx')
    .on('ledger_transactions')
    .columns(['project_id', 'idempotency_scope', 'idempotency_key'])
    .unique()
    .execute();

  await db.schema
    .createTable('ledger_entries')
    .addColumn('seq', postgres ? 'bigint' : 'integer', (column) =>
      // SQLite: an INTEGER PRIMARY KEY is the rowid, assigned in insertion order.
      postgres ? column.primaryKey().generatedAlwaysAsIdentity() : column.primaryKey(),
    )
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('transaction_id', 'text', (column) => column.notNull().references('ledger_transactions.id'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('amount', 'bigint', (column) => column.notNull())
    .addColumn('balance_after', 'bigint')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addCheckConstraint('ledger_entries_amount_nonzero', sql`amount <> 0`)
    .execute();
  // A wallet's history, newest first, and the cursor lookup (account, transaction) within it.
  await db.schema.createIndex('ledger_entries_account_idx').on('ledger_entries').columns(['project_id', 'account_id', 'seq']).execute();
  await db.schema
    .createIndex('ledger_entries_transaction_idx')
    .on('ledger_entries')
    .columns(['transaction_id', 'account_id'])
    .unique()
    .execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('type', 'text', (column) => column.notNull())
    .addColumn('data', 'text', (column) => column.notNull())
    .addColumn('idempotency_key', 'text', (column) => column.notNull().unique())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('events_project_created_idx').on('events').columns(['project_id', 'created_at']).execute();

  for (const table of ['ledger_transactions', 'ledger_entries']) {
    if (postgres) {
      await sql
        .raw(
          `create or replace function ${table}_append_only() returns trigger language plpgsql as $$ ` +
            `begin raise exception '${table} is append-only'; end $$`,
        )
        .execute(db);
      await sql
        .raw(`create trigger ${table}_append_only before update or delete on ${table} for each row execute function ${table}_append_only()`)
        .execute(db);
    } else {
      for (const operation of ['update', 'delete']) {
        await sql
          .raw(
            `create trigger ${table}_no_${operation} before ${operation} on ${table} ` +
              `begin select raise(abort, '${table} is append-only'); end`,
          )
          .execute(db);
      }
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.dropTable('events').execute();
  await db.schema.dropTable('ledger_entries').execute();
  await db.schema.dropTable('ledger_transactions').execute();
  await db.schema.dropTable('wallets').execute();
  if (postgres) {
    await sql`drop function if exists ledger_transactions_append_only()`.execute(db);
    await sql`drop function if exists ledger_entries_append_only()`.execute(db);
  }
}
