import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Session JWTs (docs/adr/0020-session-jwts.md): each project's signing keys, and how each session
 * signed in.
 *
 * `session_signing_keys` holds a project's keys: the public half as a JWK, the private half sealed
 * with the service keyring (lib/secret-box.ts), never in clear. The key that signs is the one
 * activated and not retired; the next key (not activated) is published before it signs, so that
 * verifiers holding a cached key set already know it when a rotation makes it sign. Partial unique
 * indexes keep each to one per project on both dialects, so two first sign-ins that both create
 * the project's first keys cannot both succeed. A retired key stays
 * (published while JWTs it signed may live), which is also what an audit needs.
 *
 * `sessions.amr` and `mfa_tokens.amr`: the methods a sign-in used, as a JSON array (RFC 8176
 * names where one exists); a refresh carries its predecessor's over, and a pending second factor
 * remembers the first. Null for sessions and tokens from before this migration.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('session_signing_keys')
    .addColumn('kid', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('alg', 'text', (column) => column.notNull())
    .addColumn('public_jwk', 'text', (column) => column.notNull())
    .addColumn('private_key_sealed', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('activated_at', 'text')
    .addColumn('retired_at', 'text')
    .execute();
  // One key that signs (activated, not retired) and one next key (published, not yet signing) per project.
  await db.schema
    .createIndex('session_signing_keys_signing_idx')
    .on('session_signing_keys')
    .column('project_id')
    .unique()
    .where(sql<boolean>`retired_at is null and activated_at is not null`)
    .execute();
  await db.schema
    .createIndex('session_signing_keys_next_idx')
    .on('session_signing_keys')
    .column('project_id')
    .unique()
    .where(sql.ref('activated_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('session_signing_keys_project_idx')
    .on('session_signing_keys')
    .columns(['project_id', 'created_at'])
    .execute();
  await db.schema.alterTable('sessions').addColumn('amr', 'text').execute();
  await db.schema.alterTable('mfa_tokens').addColumn('amr', 'text').execute();
}
