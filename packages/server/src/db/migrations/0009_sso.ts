import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Enterprise SSO (docs/adr/0011-sso.md).
 *
 * - `sso_connections`: one OpenID Connect or SAML identity provider per organization. The OIDC
 *   client secret is sealed (lib/secret-box.ts); the SAML signing certificate is public.
 * - `sso_domains`: the email domains a connection answers for, unique per project.
 * - `sso_requests`: sign-ins in flight, 10 minutes: an OIDC state's SHA-256 (with its sealed PKCE
 *   verifier and nonce) or a SAML AuthnRequest id, single use.
 * - `sso_assertions`: SAML assertion ids already accepted, kept until the assertion expires, so
 *   each is used once.
 * - `sso_codes`: the service's own one-time codes, stored as SHA-256, with the identity the
 *   identity provider asserted, until `POST /v1/auth/sso/callback` uses them.
 *
 * Everything cascades from the organization: deleting it deletes its connection and what hangs
 * from that.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sso_connections')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('organization_id', 'text', (column) => column.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('type', 'text', (column) => column.notNull())
    .addColumn('default_role', 'text', (column) => column.notNull())
    .addColumn('allow_idp_initiated', 'integer', (column) => column.notNull())
    .addColumn('redirect_uris', 'text', (column) => column.notNull())
    .addColumn('oidc_issuer', 'text')
    .addColumn('oidc_client_id', 'text')
    .addColumn('oidc_client_secret_sealed', 'text')
    .addColumn('saml_idp_entity_id', 'text')
    .addColumn('saml_idp_sso_url', 'text')
    .addColumn('saml_idp_certificate', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute();
  // One connection per organization.
  await db.schema
    .createIndex('sso_connections_organization_idx')
    .on('sso_connections')
    .columns(['project_id', 'organization_id'])
    .unique()
    .execute();

  await db.schema
    .createTable('sso_domains')
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('domain', 'text', (column) => column.notNull())
    .addColumn('connection_id', 'text', (column) => column.notNull().references('sso_connections.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('sso_domains_pk', ['project_id', 'domain'])
    .execute();
  await db.schema.createIndex('sso_domains_connection_idx').on('sso_domains').column('connection_id').execute();

  await db.schema
    .createTable('sso_requests')
    .addColumn('request_key', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('connection_id', 'text', (column) => column.notNull().references('sso_connections.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (column) => column.notNull())
    .addColumn('client_state', 'text')
    .addColumn('code_verifier_sealed', 'text')
    .addColumn('nonce', 'text')
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('sso_requests_expires_idx').on('sso_requests').column('expires_at').execute();
  await db.schema.createIndex('sso_requests_connection_idx').on('sso_requests').column('connection_id').execute();

  await db.schema
    .createTable('sso_assertions')
    .addColumn('connection_id', 'text', (column) => column.notNull().references('sso_connections.id').onDelete('cascade'))
    .addColumn('assertion_id', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('sso_assertions_pk', ['connection_id', 'assertion_id'])
    .execute();
  await db.schema.createIndex('sso_assertions_expires_idx').on('sso_assertions').column('expires_at').execute();

  await db.schema
    .createTable('sso_codes')
    .addColumn('code_hash', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('connection_id', 'text', (column) => column.notNull().references('sso_connections.id').onDelete('cascade'))
    .addColumn('subject', 'text', (column) => column.notNull())
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('sso_codes_expires_idx').on('sso_codes').column('expires_at').execute();
  await db.schema.createIndex('sso_codes_connection_idx').on('sso_codes').column('connection_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sso_codes').execute();
  await db.schema.dropTable('sso_assertions').execute();
  await db.schema.dropTable('sso_requests').execute();
  await db.schema.dropTable('sso_domains').execute();
  await db.schema.dropTable('sso_connections').execute();
}
