import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Users, custom roles, sessions, single-use email tokens and the email outbox.
 *
 * No secret is stored in any of them: passwords as argon2id hashes, session tokens, refresh tokens
 * and email tokens as SHA-256 hashes. The email outbox holds what to send, never a token: tokens are
 * created when an email is composed, just before it is sent.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('email_key', 'text', (column) => column.notNull())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('email_verified_at', 'text')
    .addColumn('roles', 'text', (column) => column.notNull())
    .addColumn('metadata', 'text', (column) => column.notNull())
    .addColumn('banned_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .execute();
  // Emails are unique per project, compared case-insensitively (email_key is lower-cased).
  await db.schema.createIndex('users_project_email_idx').on('users').columns(['project_id', 'email_key']).unique().execute();
  // GET /users, newest first, with a (created_at, id) cursor.
  await db.schema.createIndex('users_project_created_idx').on('users').columns(['project_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('roles')
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('key', 'text', (column) => column.notNull())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('permissions', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('roles_pk', ['project_id', 'key'])
    .execute();

  // Sessions outlive their user's row (a deleted user's sessions stay, revoked), so user_id has no
  // foreign key; every query is scoped by project and user.
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('token_hash', 'text', (column) => column.notNull())
    .addColumn('refresh_token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('refresh_expires_at', 'text', (column) => column.notNull())
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('refreshed_at', 'text')
    .addColumn('replaced_by', 'text')
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('last_used_at', 'text', (column) => column.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('revoked_reason', 'text')
    .addCheckConstraint(
      'sessions_revoked_reason_known',
      sql`revoked_reason is null or revoked_reason in ('logout', 'revoked', 'refreshed', 'refresh_token_reuse', 'password_reset', 'user_banned', 'user_deleted')`,
    )
    .execute();
  // A user's sessions, newest first (GET /users/{id}/sessions, revoke all).
  await db.schema.createIndex('sessions_user_idx').on('sessions').columns(['project_id', 'user_id', 'created_at', 'id']).execute();
  // Every session of a refresh chain, revoked together when a used refresh token comes back.
  await db.schema.createIndex('sessions_chain_idx').on('sessions').columns(['project_id', 'chain_id']).execute();

  await db.schema
    .createTable('email_tokens')
    .addColumn('token_hash', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('purpose', 'text', (column) => column.notNull())
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addCheckConstraint('email_tokens_purpose_known', sql`purpose in ('verify_email', 'password_reset')`)
    .execute();
  await db.schema.createIndex('email_tokens_user_idx').on('email_tokens').columns(['project_id', 'user_id', 'purpose']).execute();

  await db.schema
    .createTable('email_outbox')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('template', 'text', (column) => column.notNull())
    .addColumn('recipient', 'text', (column) => column.notNull())
    .addColumn('data', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull())
    .addColumn('next_attempt_at', 'text', (column) => column.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('sent_at', 'text')
    .addCheckConstraint('email_outbox_status_known', sql`status in ('pending', 'sent', 'failed', 'cancelled')`)
    .execute();
  // The email job's scan: pending emails whose next attempt is due.
  await db.schema.createIndex('email_outbox_due_idx').on('email_outbox').columns(['status', 'next_attempt_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('email_outbox').execute();
  await db.schema.dropTable('email_tokens').execute();
  await db.schema.dropTable('sessions').execute();
  await db.schema.dropTable('roles').execute();
  await db.schema.dropTable('users').execute();
}
