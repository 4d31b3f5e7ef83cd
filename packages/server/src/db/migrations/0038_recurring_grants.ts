import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Recurring grants (docs/adr/0022-recurring-grants.md):
 *
 * - `recurring_grants`: a schedule of credits to one wallet, one per period from `starts_at` on.
 *   `next_period` is the index of the first period not yet granted (or skipped), and
 *   `next_grant_at` its start: the job credits every grant whose `next_grant_at` has come, then
 *   moves both on. Null once cancelled, so the job's index holds active grants only.
 * - `ledger_transactions.recurring_grant_id`: the recurring grant a credit was made for; its
 *   period is in the credit's idempotency key (`<recurring grant id>:<period index>`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('recurring_grants')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('wallet_id', 'text', (column) => column.notNull().references('wallets.id'))
    .addColumn('amount', 'bigint', (column) => column.notNull())
    .addColumn('interval', 'text', (column) => column.notNull())
    .addColumn('interval_count', 'integer', (column) => column.notNull())
    .addColumn('starts_at', 'text', (column) => column.notNull())
    .addColumn('expires', 'text', (column) => column.notNull())
    .addColumn('category', 'text', (column) => column.notNull())
    .addColumn('priority', 'integer', (column) => column.notNull())
    .addColumn('description', 'text')
    .addColumn('metadata', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('next_period', 'integer', (column) => column.notNull())
    .addColumn('next_grant_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('cancelled_at', 'text')
    .addCheckConstraint('recurring_grants_interval_known', sql`"interval" in ('day', 'week', 'month', 'year')`)
    .addCheckConstraint('recurring_grants_expires_known', sql`expires in ('never', 'period_end')`)
    .addCheckConstraint('recurring_grants_status_known', sql`status in ('active', 'cancelled')`)
    .addCheckConstraint('recurring_grants_next', sql`next_period >= 0 and (status = 'active') = (next_grant_at is not null)`)
    .execute();
  // GET /wallets/{id}/recurring-grants, newest first with a (created_at, id) cursor.
  await db.schema
    .createIndex('recurring_grants_wallet_created_idx')
    .on('recurring_grants')
    .columns(['project_id', 'wallet_id', 'created_at', 'id'])
    .execute();
  // The job's look-up: active grants whose next period has begun.
  await db.schema
    .createIndex('recurring_grants_due_idx')
    .on('recurring_grants')
    .column('next_grant_at')
    .where(sql.ref('next_grant_at'), 'is not', null)
    .execute();
  await db.schema.alterTable('ledger_transactions').addColumn('recurring_grant_id', 'text').execute();
}
