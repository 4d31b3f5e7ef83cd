import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Organization domains (docs/adr/0011-sso.md, "Domains"): the email domains an organization has
 * claimed, each `pending` until its TXT record is found (or `verified` at once when the operator
 * asserts it, `manual`). An organization names a domain once (the primary key); several
 * organizations of a project may have it pending, but only one has it verified: the partial unique
 * index decides, in the statement that verifies, on both dialects. Deleting the organization
 * deletes its domains.
 *
 * SSO connections now answer only for their organization's verified domains. The domains that
 * existing connections name were declared by the project's operator, which is what `manual`
 * records: they become verified `manual` domains of the connection's organization, so sign-ins
 * through those connections go on as before. (`sso_domains` is unique per project, so no domain
 * is verified twice.)
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('organization_domains')
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('organization_id', 'text', (column) => column.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('domain', 'text', (column) => column.notNull())
    .addColumn('verification', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('txt_value', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('verified_at', 'text')
    .addPrimaryKeyConstraint('organization_domains_pk', ['project_id', 'organization_id', 'domain'])
    .execute();
  await db.schema
    .createIndex('organization_domains_verified_idx')
    .on('organization_domains')
    .columns(['project_id', 'domain'])
    .unique()
    .where(sql.ref('status'), '=', 'verified')
    .execute();

  const declared = await db
    .selectFrom('sso_domains')
    .innerJoin('sso_connections', 'sso_connections.id', 'sso_domains.connection_id')
    .select(['sso_domains.project_id', 'sso_connections.organization_id', 'sso_domains.domain', 'sso_connections.created_at'])
    .execute();
  for (const row of declared as Array<{ project_id: string; organization_id: string; domain: string; created_at: string }>) {
    await db
      .insertInto('organization_domains')
      .values({
        project_id: row.project_id,
        organization_id: row.organization_id,
        domain: row.domain,
        verification: 'manual',
        status: 'verified',
        txt_value: `svc-verification=${randomBytes(24).toString('base64url')}`,
        created_at: row.created_at,
        verified_at: row.created_at,
      })
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('organization_domains').execute();
}
