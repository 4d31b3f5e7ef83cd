import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Passkeys (WebAuthn; docs/adr/0017-passkeys.md).
 *
 * - `projects.webauthn`: the project's relying party as JSON `{rp_id, rp_name, origins}`, or null
 *   while the project has none (passkey routes then answer `webauthn_not_configured`).
 * - `passkeys`: one registered credential per row. The credential id and COSE public key are not
 *   secrets (an authenticator hands both to anyone who asks); `sign_count` is the authenticator's
 *   counter, kept to detect cloned authenticators. A credential id is unique within a project.
 * - `passkey_challenges`: ceremonies in flight, 5 minutes, single use. Only the SHA-256 of the
 *   challenge is stored: the authenticator's response carries the challenge back, and the service
 *   compares its hash. `user_bound` is 1 when the options named a user (registration, or sign-in
 *   options asked with an email): only that user's passkey may answer, and none when `user_id` is
 *   null because no user has that address.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('webauthn', 'text').execute();

  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('credential_id', 'text', (column) => column.notNull())
    .addColumn('public_key', 'text', (column) => column.notNull())
    .addColumn('sign_count', 'bigint', (column) => column.notNull())
    .addColumn('transports', 'text', (column) => column.notNull())
    .addColumn('device_type', 'text', (column) => column.notNull())
    .addColumn('backed_up', 'integer', (column) => column.notNull())
    .addColumn('aaguid', 'text', (column) => column.notNull())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('passkeys_credential_idx').on('passkeys').columns(['project_id', 'credential_id']).unique().execute();
  await db.schema.createIndex('passkeys_user_idx').on('passkeys').columns(['project_id', 'user_id', 'created_at']).execute();
  await db.schema.createIndex('passkeys_user_fk_idx').on('passkeys').column('user_id').execute();

  await db.schema
    .createTable('passkey_challenges')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('purpose', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.references('users.id').onDelete('cascade'))
    .addColumn('user_bound', 'integer', (column) => column.notNull())
    .addColumn('challenge_hash', 'text', (column) => column.notNull().unique())
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('passkey_challenges_expires_idx').on('passkey_challenges').column('expires_at').execute();
  await db.schema.createIndex('passkey_challenges_user_idx').on('passkey_challenges').column('user_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('passkey_challenges').execute();
  await db.schema.dropTable('passkeys').execute();
  await db.schema.alterTable('projects').dropColumn('webauthn').execute();
}
