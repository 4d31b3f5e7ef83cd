import type { Kysely } from 'kysely';
import type { Database, UserIdentitiesTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type IdentityRow = UserIdentitiesTable;

export async function findIdentity(db: Executor, projectId: string, provider: string, subject: string): Promise<IdentityRow | undefined> {
  return db
    .selectFrom('user_identities')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('provider', '=', provider)
    .where('subject', '=', subject)
    .executeTakeFirst();
}

/** A user's identities, oldest first. */
export async function listIdentities(db: Executor, projectId: string, userId: string): Promise<IdentityRow[]> {
  return db
    .selectFrom('user_identities')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('provider')
    .execute();
}

export async function insertIdentity(db: Executor, row: IdentityRow): Promise<void> {
  await db.insertInto('user_identities').values(row).execute();
}

export async function touchIdentity(
  db: Executor,
  projectId: string,
  provider: string,
  subject: string,
  changes: { email: string | null; last_used_at: string },
): Promise<void> {
  await db
    .updateTable('user_identities')
    .set(changes)
    .where('project_id', '=', projectId)
    .where('provider', '=', provider)
    .where('subject', '=', subject)
    .execute();
}

/** Returns false when the user had no identity of that provider. */
export async function deleteIdentity(db: Executor, projectId: string, userId: string, provider: string): Promise<boolean> {
  const result = await db
    .deleteFrom('user_identities')
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Deletes every identity of a user; returns their providers, oldest first. */
export async function deleteIdentitiesOfUser(db: Executor, projectId: string, userId: string): Promise<string[]> {
  const rows = await db
    .deleteFrom('user_identities')
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .returning(['provider', 'created_at'])
    .execute();
  return rows.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.provider.localeCompare(b.provider)).map((row) => row.provider);
}
