import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The ledger's one write path (docs/adr/0005-ledger-write-path.md):
 *
 * - Every transaction names who made it: the audit log's actor (`actor_type`, `actor_id`,
 *   `actor_user_id`) and the `request_id` of the request that made it. Rows written before this
 *   migration show the `system` actor and no request id.
 * - Ledger idempotency keys are the ledger's own: a key maps to its transaction (the existing
 *   `idempotency_key` and `idempotency_scope` columns and their unique index), and the replayed
 *   answer is rebuilt from the ledger. A refusal keyed by an idempotency key is kept in
 *   `ledger_refusals`: the refusal's code, message and `param`, the request id it was first
 *   answered with, and the request's fingerprint (per-field hashes), so a retry gets the same
 *   refusal and a different request under the key is named.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('ledger_transactions')
    .addColumn('actor_type', 'text', (column) => column.notNull().defaultTo('system'))
    .execute();
  await db.schema.alterTable('ledger_transactions').addColumn('actor_id', 'text').execute();
  await db.schema.alterTable('ledger_transactions').addColumn('actor_user_id', 'text').execute();
  await db.schema.alterTable('ledger_transactions').addColumn('request_id', 'text').execute();

  await db.schema
    .createTable('ledger_refusals')
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('idempotency_scope', 'text', (column) => column.notNull())
    .addColumn('idempotency_key', 'text', (column) => column.notNull())
    .addColumn('request_hash', 'text', (column) => column.notNull())
    .addColumn('request_fields', 'text', (column) => column.notNull())
    .addColumn('code', 'text', (column) => column.notNull())
    .addColumn('message', 'text', (column) => column.notNull())
    .addColumn('param', 'text')
    .addColumn('request_id', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('ledger_refusals_pk', ['project_id', 'idempotency_scope', 'idempotency_key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('ledger_refusals').execute();
  for (const column of ['request_id', 'actor_user_id', 'actor_id', 'actor_type']) {
    await db.schema.alterTable('ledger_transactions').dropColumn(column).execute();
  }
}
