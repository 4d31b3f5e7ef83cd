import type { Kysely } from 'kysely';
import type { Database, SsoCodesTable, SsoConnectionsTable, SsoRequestsTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type ConnectionRow = SsoConnectionsTable;
export type RequestRow = SsoRequestsTable;
export type CodeRow = SsoCodesTable;

export async function insertConnection(db: Executor, row: ConnectionRow, domains: readonly string[]): Promise<void> {
  await db.insertInto('sso_connections').values(row).execute();
  await db
    .insertInto('sso_domains')
    .values(domains.map((domain) => ({ project_id: row.project_id, domain, connection_id: row.id })))
    .execute();
}

export async function findConnection(db: Executor, projectId: string, connectionId: string): Promise<ConnectionRow | undefined> {
  return db.selectFrom('sso_connections').selectAll().where('project_id', '=', projectId).where('id', '=', connectionId).executeTakeFirst();
}

/** A connection by id alone, for the identity provider's public routes; the row names its project. */
export async function findConnectionById(db: Executor, connectionId: string): Promise<ConnectionRow | undefined> {
  return db.selectFrom('sso_connections').selectAll().where('id', '=', connectionId).executeTakeFirst();
}

export async function findConnectionOfOrganization(
  db: Executor,
  projectId: string,
  organizationId: string,
): Promise<ConnectionRow | undefined> {
  return db
    .selectFrom('sso_connections')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
}

export async function findConnectionOfDomain(db: Executor, projectId: string, domain: string): Promise<ConnectionRow | undefined> {
  return db
    .selectFrom('sso_domains')
    .innerJoin('sso_connections', 'sso_connections.id', 'sso_domains.connection_id')
    .selectAll('sso_connections')
    .where('sso_domains.project_id', '=', projectId)
    .where('sso_domains.domain', '=', domain)
    .executeTakeFirst();
}

/** The domains of the given domains that a connection of the project has already. */
export async function takenDomains(db: Executor, projectId: string, domains: readonly string[]): Promise<string[]> {
  if (domains.length === 0) return [];
  const rows = await db
    .selectFrom('sso_domains')
    .select('domain')
    .where('project_id', '=', projectId)
    .where('domain', 'in', [...domains])
    .execute();
  return rows.map((row) => row.domain);
}

export async function listConnections(db: Executor, projectId: string, organizationId: string): Promise<ConnectionRow[]> {
  return db
    .selectFrom('sso_connections')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Domains per connection, each list sorted. */
export async function domainsOf(db: Executor, projectId: string, connectionIds: readonly string[]): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>(connectionIds.map((id) => [id, []]));
  if (connectionIds.length === 0) return result;
  const rows = await db
    .selectFrom('sso_domains')
    .select(['connection_id', 'domain'])
    .where('project_id', '=', projectId)
    .where('connection_id', 'in', [...connectionIds])
    .orderBy('domain')
    .execute();
  for (const row of rows) result.get(row.connection_id)?.push(row.domain);
  return result;
}

/** Takes a domain off the organization's connection, when it has one that names it. */
export async function deleteDomainOfOrganization(
  db: Executor,
  input: { projectId: string; organizationId: string; domain: string },
): Promise<void> {
  const connections = db
    .selectFrom('sso_connections')
    .select('id')
    .where('project_id', '=', input.projectId)
    .where('organization_id', '=', input.organizationId);
  await db
    .deleteFrom('sso_domains')
    .where('project_id', '=', input.projectId)
    .where('domain', '=', input.domain)
    .where('connection_id', 'in', connections)
    .execute();
}

export async function deleteConnection(db: Executor, projectId: string, connectionId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('sso_connections')
    .where('project_id', '=', projectId)
    .where('id', '=', connectionId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function insertRequest(db: Executor, row: RequestRow): Promise<void> {
  await db.insertInto('sso_requests').values(row).execute();
}

/**
 * Uses a request up: marks it used and returns it, when it exists for that connection (and, when
 * given, that project), is unused and has not expired; undefined otherwise.
 */
export async function useRequest(
  db: Executor,
  input: { requestKey: string; connectionId?: string; now: string },
): Promise<RequestRow | undefined> {
  let query = db
    .updateTable('sso_requests')
    .set({ used_at: input.now })
    .where('request_key', '=', input.requestKey)
    .where('used_at', 'is', null)
    .where('expires_at', '>', input.now);
  if (input.connectionId !== undefined) query = query.where('connection_id', '=', input.connectionId);
  return query.returningAll().executeTakeFirst();
}

/** Records an assertion id as used; a unique violation when it was used before (the primary key refuses it). */
export async function insertAssertion(
  db: Executor,
  row: { connection_id: string; assertion_id: string; expires_at: string },
): Promise<void> {
  await db.insertInto('sso_assertions').values(row).execute();
}

export async function insertCode(db: Executor, row: CodeRow): Promise<void> {
  await db.insertInto('sso_codes').values(row).execute();
}

/** Uses a code up; undefined when it is unknown to the project, used or expired. */
export async function useCode(db: Executor, projectId: string, codeHash: string, now: string): Promise<CodeRow | undefined> {
  return db
    .updateTable('sso_codes')
    .set({ used_at: now })
    .where('code_hash', '=', codeHash)
    .where('project_id', '=', projectId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes up to `limit` rows of each table that expired before `before`; returns how many went in all. */
export async function deleteExpired(db: Executor, before: string, limit: number): Promise<number> {
  let deleted = 0;
  const requests = db.selectFrom('sso_requests').select('request_key').where('expires_at', '<', before).limit(limit);
  deleted += Number((await db.deleteFrom('sso_requests').where('request_key', 'in', requests).executeTakeFirst()).numDeletedRows);
  const codes = db.selectFrom('sso_codes').select('code_hash').where('expires_at', '<', before).limit(limit);
  deleted += Number((await db.deleteFrom('sso_codes').where('code_hash', 'in', codes).executeTakeFirst()).numDeletedRows);
  // An assertion's id is kept until the assertion itself expires: after that it is refused as expired anyway.
  const assertions = await db
    .selectFrom('sso_assertions')
    .select(['connection_id', 'assertion_id'])
    .where('expires_at', '<', before)
    .limit(limit)
    .execute();
  for (const row of assertions) {
    await db
      .deleteFrom('sso_assertions')
      .where('connection_id', '=', row.connection_id)
      .where('assertion_id', '=', row.assertion_id)
      .execute();
  }
  return deleted + assertions.length;
}
