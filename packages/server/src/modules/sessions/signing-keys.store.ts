import type { Kysely } from 'kysely';
import type { Database, SessionSigningKeysTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type SigningKeyRow = SessionSigningKeysTable;

/** The project's key that signs now: activated and not retired (at most one, by a partial unique index). */
export async function findSigningKey(db: Executor, projectId: string): Promise<SigningKeyRow | undefined> {
  return db
    .selectFrom('session_signing_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('retired_at', 'is', null)
    .where('activated_at', 'is not', null)
    .executeTakeFirst();
}

/** The project's next key: published, not signing yet (at most one). */
export async function findNextKey(db: Executor, projectId: string): Promise<SigningKeyRow | undefined> {
  return db
    .selectFrom('session_signing_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('activated_at', 'is', null)
    .executeTakeFirst();
}

/** Makes the next key the signing key; answers false when the project has no next key. */
export async function activateNextKey(db: Executor, projectId: string, nowIso: string): Promise<boolean> {
  const result = await db
    .updateTable('session_signing_keys')
    .set({ activated_at: nowIso })
    .where('project_id', '=', projectId)
    .where('activated_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Inserts a key; when the project already has a signing key (a concurrent first sign-in made one),
 * inserts nothing and answers false: the caller reads the winner's.
 */
export async function insertSigningKeyIfNone(db: Executor, row: SigningKeyRow): Promise<boolean> {
  const result = await db
    .insertInto('session_signing_keys')
    .values(row)
    .onConflict((conflict) => conflict.doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/** Retires the signing key, if any; answers the retired key's id. */
export async function retireSigningKey(db: Executor, projectId: string, nowIso: string): Promise<string | undefined> {
  const row = await db
    .updateTable('session_signing_keys')
    .set({ retired_at: nowIso })
    .where('project_id', '=', projectId)
    .where('retired_at', 'is', null)
    .where('activated_at', 'is not', null)
    .returning('kid')
    .executeTakeFirst();
  return row?.kid;
}

/** The keys a verifier may meet: the signing key, the next one, and those retired after `retiredAfter`. */
export async function listPublishedKeys(
  db: Executor,
  projectId: string,
  retiredAfter: string,
): Promise<Array<Omit<SigningKeyRow, 'private_key_sealed'>>> {
  return db
    .selectFrom('session_signing_keys')
    .select(['kid', 'project_id', 'alg', 'public_jwk', 'created_at', 'activated_at', 'retired_at'])
    .where('project_id', '=', projectId)
    .where((where) => where.or([where('retired_at', 'is', null), where('retired_at', '>', retiredAfter)]))
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .execute();
}
