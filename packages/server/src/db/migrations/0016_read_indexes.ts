import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Every list, statistics and audit-filter read answers from an index, never a scan of a project's
 * rows (packages/server/src/db/read-indexes.postgres.test.ts checks each plan).
 *
 * - `webhook_attempts_project_created_idx` (project_id, created_at): `GET /v1/stats/webhooks`
 *   (stats.store `webhookAttemptsPerDay`). The table had only its primary key (delivery_id,
 *   attempt_number), which serves a delivery's attempts but not a project's days.
 * - `ledger_transactions_project_created_idx` (project_id, created_at): `GET /v1/stats/credits`
 *   (stats.store `creditsPerDay`), which read every transaction of every project.
 * - `audit_log_project_action_idx` (project_id, action, created_at, id): `GET /v1/audit-log?action=`.
 * - `audit_log_project_actor_idx` (project_id, actor_id, created_at, id), partial on
 *   `actor_id is not null`: `GET /v1/audit-log?actor_id=`.
 * - `audit_log_project_resource_id_idx` (project_id, resource_id, created_at, id), partial on
 *   `resource_id is not null`: `GET /v1/audit-log?resource_id=`. Migration 0011 dropped the first
 *   index by resource for what it cost each audited write; a filtered read that walked the whole
 *   project's log newest first (one page per 100 entries until enough matched, or to its start
 *   when none did) is the larger cost once a log is large. All three keep the list's order
 *   (created_at, id), so a page stops at `limit`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_attempts_project_created_idx')
    .on('webhook_attempts')
    .columns(['project_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('ledger_transactions_project_created_idx')
    .on('ledger_transactions')
    .columns(['project_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('audit_log_project_action_idx')
    .on('audit_log')
    .columns(['project_id', 'action', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_log_project_actor_idx')
    .on('audit_log')
    .columns(['project_id', 'actor_id', 'created_at', 'id'])
    .where(sql.ref('actor_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('audit_log_project_resource_id_idx')
    .on('audit_log')
    .columns(['project_id', 'resource_id', 'created_at', 'id'])
    .where(sql.ref('resource_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('audit_log_project_resource_id_idx').execute();
  await db.schema.dropIndex('audit_log_project_actor_idx').execute();
  await db.schema.dropIndex('audit_log_project_action_idx').execute();
  await db.schema.dropIndex('ledger_transactions_project_created_idx').execute();
  await db.schema.dropIndex('webhook_attempts_project_created_idx').execute();
}
