import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * `GET /v1/audit-logs?actor_id=` reads money movements from the ledger (docs/adr/0019): without
 * this index the filter walked every movement of the project (a sequential scan of
 * `ledger_transactions`, 1.9 s at 5 million movements in one project, `npm run bench -- scale`).
 * In the list's order, (created_at, id), after the actor. Partial: the system's movements
 * (expiries) have no actor id and are never looked up by one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('ledger_transactions_project_actor_idx')
    .on('ledger_transactions')
    .columns(['project_id', 'actor_id', 'created_at', 'id'])
    .where(sql.ref('actor_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ledger_transactions_project_actor_idx').execute();
}
