import type { Insertable, Kysely, Selectable } from 'kysely';
import { type KeysetCursor, keysetPage } from '../../db/pagination.js';
import type { ApiKeysTable, Database, ProjectsTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type ProjectRow = Selectable<ProjectsTable>;
export type ApiKeyRow = ApiKeysTable;

export async function insertProject(db: Executor, row: Insertable<ProjectsTable>): Promise<void> {
  await db.insertInto('projects').values(row).execute();
}

export async function findProject(db: Executor, projectId: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
}

/** Changes a project's name and relying party, each only when given (null clears the relying party). */
export async function updateProject(db: Executor, projectId: string, changes: { name?: string; webauthn?: string | null }): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  await db.updateTable('projects').set(changes).where('id', '=', projectId).execute();
}

export async function countProjects(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('projects')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return row.count;
}

export async function insertApiKey(db: Executor, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

/** The one lookup that is not scoped by project: it is how a request finds its project. */
export async function findApiKeyByHash(
  db: Executor,
  keyHash: string,
): Promise<
  | {
      key_id: string;
      revoked_at: string | null;
      project_id: string;
      project_name: string;
      project_created_at: string;
      project_webauthn: string | null;
    }
  | undefined
> {
  return db
    .selectFrom('api_keys')
    .innerJoin('projects', 'projects.id', 'api_keys.project_id')
    .select([
      'api_keys.id as key_id',
      'api_keys.revoked_at',
      'projects.id as project_id',
      'projects.name as project_name',
      'projects.created_at as project_created_at',
      'projects.webauthn as project_webauthn',
    ])
    .where('api_keys.key_hash', '=', keyHash)
    .executeTakeFirst();
}

export async function listApiKeys(db: Executor, projectId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function findApiKey(db: Executor, projectId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('project_id', '=', projectId).where('id', '=', keyId).executeTakeFirst();
}

/** Marks a key revoked; returns false when the project has no such live key. */
export async function revokeApiKey(db: Executor, projectId: string, keyId: string, revokedAt: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: revokedAt })
    .where('project_id', '=', projectId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Keys newest first, after the (created_at, id) cursor when given. */
export async function listApiKeysPage(
  db: Executor,
  projectId: string,
  page: { limit: number; after: KeysetCursor | undefined },
): Promise<ApiKeyRow[]> {
  return keysetPage(db.selectFrom('api_keys').selectAll().where('project_id', '=', projectId), page).execute();
}
