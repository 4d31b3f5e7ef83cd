import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Organizations, their members and their invitations.
 *
 * - `organizations`: slugs are unique per project.
 * - `organization_members`: one row per (organization, user) with a role key. Both foreign keys
 *   cascade, as a backstop: the services remove memberships themselves (with their events) before
 *   deleting an organization or a user, and the database guarantees none is ever left behind.
 * - `organization_invitations`: the invitation token is stored only as its SHA-256, set when the
 *   email is composed (docs/adr/0010-email-outbox.md). At most one pending invitation per
 *   (organization, address): a re-invite marks the previous one `replaced`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('slug', 'text', (column) => column.notNull())
    .addColumn('metadata', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('organizations_project_slug_idx').on('organizations').columns(['project_id', 'slug']).unique().execute();
  // GET /organizations, newest first, with a (created_at, id) cursor.
  await db.schema
    .createIndex('organizations_project_created_idx')
    .on('organizations')
    .columns(['project_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('organization_members')
    .addColumn('organization_id', 'text', (column) => column.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('organization_members_pk', ['organization_id', 'user_id'])
    .execute();
  // A user's memberships (GET /users/me/organizations, user deletion).
  await db.schema.createIndex('organization_members_user_idx').on('organization_members').columns(['project_id', 'user_id']).execute();
  // GET /organizations/{id}/members, newest first.
  await db.schema
    .createIndex('organization_members_created_idx')
    .on('organization_members')
    .columns(['organization_id', 'created_at', 'user_id'])
    .execute();

  await db.schema
    .createTable('organization_invitations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('organization_id', 'text', (column) => column.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('email_key', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('token_hash', 'text', (column) => column.unique())
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('accepted_at', 'text')
    .addColumn('accepted_user_id', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addCheckConstraint('organization_invitations_status_known', sql`status in ('pending', 'accepted', 'revoked', 'replaced')`)
    .execute();
  await db.schema
    .createIndex('organization_invitations_pending_idx')
    .on('organization_invitations')
    .columns(['organization_id', 'email_key'])
    .unique()
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  // GET /organizations/{id}/invitations, newest first.
  await db.schema
    .createIndex('organization_invitations_created_idx')
    .on('organization_invitations')
    .columns(['organization_id', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('organization_invitations').execute();
  await db.schema.dropTable('organization_members').execute();
  await db.schema.dropTable('organizations').execute();
}
