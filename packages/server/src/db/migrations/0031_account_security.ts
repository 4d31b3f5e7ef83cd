import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Account security (docs/api.md, "Reauthentication" and "Emailed codes"):
 *
 * - `sessions.authenticated_at`: when the session's user last proved who they are on its refresh
 *   chain, by signing in or by `POST /v1/users/me/reauthenticate`. Changing how one signs in needs
 *   it to be recent. A refresh carries it over. Sessions from before this migration have none and
 *   must reauthenticate first: no row is rewritten, and the window (minutes) has passed for them
 *   anyway.
 * - `email_code_requests`: one row per code asked, so that asking again no longer replaces the
 *   code already sent (`email_codes` kept one row per address). Live rows of `email_codes` move
 *   here, so codes in flight during the upgrade keep working; `email_codes` stays, empty and unused.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('authenticated_at', 'text').execute();

  await db.schema
    .createTable('email_code_requests')
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    // Random; names the request, salts the hash, and ties the queued email to this row.
    .addColumn('request_ref', 'text', (column) => column.notNull())
    .addColumn('email_key', 'text', (column) => column.notNull())
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('code_hash', 'text')
    .addColumn('create_user', 'integer', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('email_code_requests_pk', ['project_id', 'request_ref'])
    .execute();
  // The codes of one address, newest first: asking counts them, verifying reads the live ones.
  await db.schema
    .createIndex('email_code_requests_address_idx')
    .on('email_code_requests')
    .columns(['project_id', 'email_key', 'created_at'])
    .execute();
  await db.schema.createIndex('email_code_requests_expires_idx').on('email_code_requests').column('expires_at').execute();

  await sql`insert into email_code_requests
      (project_id, request_ref, email_key, email, code_hash, create_user, attempts, expires_at, used_at, created_at)
    select project_id, request_ref, email_key, email, code_hash, create_user, attempts, expires_at, used_at, created_at
    from email_codes`.execute(db);
  await sql`delete from email_codes`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('email_code_requests').execute();
  await db.schema.alterTable('sessions').dropColumn('authenticated_at').execute();
}
