import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The audit log loses its index by resource. Keyed by a wallet, user or endpoint id, it put every
 * audited write on an index page of its own (a credit over 1,000 wallets: one more random page per
 * credit, about a third of what the audit write cost). `?resource_id=` now filters while scanning
 * the project's entries newest first, as `?action=` and `?actor_id=` always did
 * (docs/adr/0007-audit-log.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('audit_log_project_resource_idx').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('audit_log_project_resource_idx')
    .on('audit_log')
    .columns(['project_id', 'resource_id', 'created_at', 'id'])
    .execute();
}
