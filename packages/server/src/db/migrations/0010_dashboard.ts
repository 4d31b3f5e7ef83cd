import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Operator dashboard sessions (docs/adr/0012-dashboard.md).
 *
 * A row is a signed-in browser: the SHA-256 of its cookie token (never the token, never the secret
 * key), the project and the id of the secret key it was opened with, and when it ends. The cookie
 * lookup by hash is, like the secret-key lookup, how a request finds its project.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('token_hash', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('key_id', 'text', (column) => column.notNull().references('api_keys.id'))
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('ended_at', 'text')
    .execute();
  // Ending every session of a key, and sweeping expired rows.
  await db.schema.createIndex('dashboard_sessions_key_idx').on('dashboard_sessions').columns(['project_id', 'key_id']).execute();
  await db.schema.createIndex('dashboard_sessions_expires_idx').on('dashboard_sessions').columns(['expires_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dashboard_sessions').execute();
}
