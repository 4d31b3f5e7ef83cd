import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Second factors and passwordless sign-in by emailed code (docs/adr/0016-mfa.md):
 *
 * - `mfa_totp`: one authenticator app per user, its secret sealed (lib/secret-box.ts), with the
 *   last time step accepted, so that each code is accepted once.
 * - `mfa_recovery_codes`: ten single-use codes per active factor, as SHA-256 hashes.
 * - `mfa_tokens`: the sign-ins waiting for their second factor (`svc_mfa_…`), as SHA-256 hashes.
 * - `email_codes`: the latest sign-in code sent to each address, as a salted SHA-256 hash.
 *
 * Every row of a user goes with the user (ON DELETE CASCADE).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mfa_totp')
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('secret_sealed', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    // Unix time / 30 s: about 59 million now, within a 32-bit integer until the year 4010.
    .addColumn('last_used_step', 'integer')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('activated_at', 'text')
    .addPrimaryKeyConstraint('mfa_totp_pk', ['project_id', 'user_id'])
    .execute();
  await db.schema.createIndex('mfa_totp_user_idx').on('mfa_totp').column('user_id').execute();

  await db.schema
    .createTable('mfa_recovery_codes')
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (column) => column.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('mfa_recovery_codes_pk', ['project_id', 'user_id', 'code_hash'])
    .execute();
  await db.schema.createIndex('mfa_recovery_codes_user_idx').on('mfa_recovery_codes').column('user_id').execute();

  await db.schema
    .createTable('mfa_tokens')
    .addColumn('token_hash', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('mfa_tokens_user_idx').on('mfa_tokens').columns(['project_id', 'user_id']).execute();
  await db.schema.createIndex('mfa_tokens_expires_idx').on('mfa_tokens').column('expires_at').execute();

  await db.schema
    .createTable('email_codes')
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('email_key', 'text', (column) => column.notNull())
    .addColumn('email', 'text', (column) => column.notNull())
    // Names the request: the email of an older request composes nothing once a newer one exists.
    .addColumn('request_ref', 'text', (column) => column.notNull())
    .addColumn('code_hash', 'text')
    .addColumn('create_user', 'integer', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('email_codes_pk', ['project_id', 'email_key'])
    .execute();
  await db.schema.createIndex('email_codes_expires_idx').on('email_codes').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('email_codes').execute();
  await db.schema.dropTable('mfa_tokens').execute();
  await db.schema.dropTable('mfa_recovery_codes').execute();
  await db.schema.dropTable('mfa_totp').execute();
}
