import type { Kysely } from 'kysely';
import { keysetPage } from '../../db/pagination.js';
import type { Database, OrganizationDomainsTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type DomainRow = OrganizationDomainsTable;

export async function insertDomain(db: Executor, row: DomainRow): Promise<void> {
  await db.insertInto('organization_domains').values(row).execute();
}

export async function findDomain(db: Executor, projectId: string, organizationId: string, domain: string): Promise<DomainRow | undefined> {
  return db
    .selectFrom('organization_domains')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .where('domain', '=', domain)
    .executeTakeFirst();
}

/** The organization of the project that has `domain` verified, if any. */
export async function findVerifiedOwner(db: Executor, projectId: string, domain: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('organization_domains')
    .select('organization_id')
    .where('project_id', '=', projectId)
    .where('domain', '=', domain)
    .where('status', '=', 'verified')
    .executeTakeFirst();
  return row?.organization_id;
}

/** An organization's domains, newest first, with a (created_at, domain) cursor. */
export async function listDomains(
  db: Executor,
  projectId: string,
  organizationId: string,
  filter: { after: DomainRow | undefined; limit: number },
): Promise<DomainRow[]> {
  const { after } = filter;
  const query = db
    .selectFrom('organization_domains')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId);
  return keysetPage(query, {
    after: after && { created_at: after.created_at, id: after.domain },
    limit: filter.limit,
    columns: ['created_at', 'domain'],
  }).execute();
}

/** The organization's verified domains, sorted. */
export async function verifiedDomains(db: Executor, projectId: string, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('organization_domains')
    .select('domain')
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .where('status', '=', 'verified')
    .orderBy('domain')
    .execute();
  return rows.map((row) => row.domain);
}

/**
 * Marks a pending domain verified; undefined when it is not pending (any more). A unique violation
 * when another organization of the project has it verified: the partial unique index decides.
 */
export async function markVerified(
  db: Executor,
  input: { projectId: string; organizationId: string; domain: string; now: string },
): Promise<DomainRow | undefined> {
  return db
    .updateTable('organization_domains')
    .set({ status: 'verified', verified_at: input.now })
    .where('project_id', '=', input.projectId)
    .where('organization_id', '=', input.organizationId)
    .where('domain', '=', input.domain)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

export async function deleteDomain(db: Executor, projectId: string, organizationId: string, domain: string): Promise<boolean> {
  const result = await db
    .deleteFrom('organization_domains')
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .where('domain', '=', domain)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
