import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Social and OpenID Connect sign-in: each project's provider configurations, the single-use state
 * of sign-ins in flight, and the identities that link a provider's account to a user.
 *
 * No secret is stored in clear: client secrets, Apple private keys and PKCE verifiers are sealed
 * with AES-256-GCM (lib/secret-box.ts); a sign-in's `state` is stored as a SHA-256 hash. See
 * docs/adr/0008-oauth.md.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oauth_providers')
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('client_id', 'text', (column) => column.notNull())
    // JSON of the secret part ({client_secret} or Apple's {private_key}), sealed.
    .addColumn('secret_sealed', 'text', (column) => column.notNull())
    .addColumn('issuer', 'text')
    .addColumn('apple_team_id', 'text')
    .addColumn('apple_key_id', 'text')
    .addColumn('scopes', 'text', (column) => column.notNull())
    .addColumn('redirect_uris', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('oauth_providers_pk', ['project_id', 'provider'])
    .execute();

  await db.schema
    .createTable('oauth_states')
    .addColumn('state_hash', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('redirect_uri', 'text', (column) => column.notNull())
    .addColumn('code_verifier_sealed', 'text', (column) => column.notNull())
    .addColumn('nonce', 'text')
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute();
  // The clean-up of expired states.
  await db.schema.createIndex('oauth_states_expires_idx').on('oauth_states').column('expires_at').execute();

  await db.schema
    .createTable('user_identities')
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('subject', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('last_used_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('user_identities_pk', ['project_id', 'provider', 'subject'])
    .execute();
  // One account per provider per user; also the lookup of a user's identities.
  await db.schema
    .createIndex('user_identities_user_idx')
    .on('user_identities')
    .columns(['project_id', 'user_id', 'provider'])
    .unique()
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('user_identities').execute();
  await db.schema.dropTable('oauth_states').execute();
  await db.schema.dropTable('oauth_providers').execute();
}
