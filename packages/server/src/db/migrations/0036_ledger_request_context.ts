import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The audit log reads holds and money movements from the ledger with the end user's address and
 * agent (docs/adr/0019-audit-reads-the-ledger.md):
 *
 * - `ledger_transactions` gains `ip` and `user_agent`: the client of the request that made the
 *   movement (the end user a secret key's request names with `X-End-User-IP` and
 *   `X-End-User-Agent`), null for the service's own movements and for rows written before.
 * - `wallet_holds` gains who made the hold and with which request (`actor_type`, `actor_id`,
 *   `actor_user_id`, `request_id`, `ip`, `user_agent`), and the same of what ended it (capture,
 *   void or expiry: `ended_…`). Holds made before this migration show the `system` actor.
 * - Two indexes let the audit log page through a project's holds by time, newest first, as it
 *   pages through everything else: by creation `(project_id, created_at, id)` and by end
 *   `(project_id, updated_at, id)` (a hold's `updated_at` is the time it ended).
 */
const CONTEXT_COLUMNS = ['actor_id', 'actor_user_id', 'request_id', 'ip', 'user_agent'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ledger_transactions').addColumn('ip', 'text').execute();
  await db.schema.alterTable('ledger_transactions').addColumn('user_agent', 'text').execute();
  for (const prefix of ['', 'ended_']) {
    await db.schema
      .alterTable('wallet_holds')
      .addColumn(`${prefix}actor_type`, 'text', (column) => (prefix === '' ? column.notNull().defaultTo('system') : column))
      .execute();
    for (const column of CONTEXT_COLUMNS) {
      await db.schema.alterTable('wallet_holds').addColumn(`${prefix}${column}`, 'text').execute();
    }
  }
  await db.schema.createIndex('wallet_holds_project_created_idx').on('wallet_holds').columns(['project_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('wallet_holds_project_updated_idx').on('wallet_holds').columns(['project_id', 'updated_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('wallet_holds_project_updated_idx').execute();
  await db.schema.dropIndex('wallet_holds_project_created_idx').execute();
  for (const prefix of ['ended_', '']) {
    for (const column of [...CONTEXT_COLUMNS].reverse()) {
      await db.schema.alterTable('wallet_holds').dropColumn(`${prefix}${column}`).execute();
    }
    await db.schema.alterTable('wallet_holds').dropColumn(`${prefix}actor_type`).execute();
  }
  await db.schema.alterTable('ledger_transactions').dropColumn('user_agent').execute();
  await db.schema.alterTable('ledger_transactions').dropColumn('ip').execute();
}
