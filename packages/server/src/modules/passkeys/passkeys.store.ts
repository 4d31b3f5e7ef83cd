import type { Kysely } from 'kysely';
import { type KeysetCursor, keysetPage } from '../../db/pagination.js';
import type { Database, PasskeyChallengePurpose, PasskeyChallengesTable, PasskeysTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type PasskeyRow = PasskeysTable;
export type ChallengeRow = PasskeyChallengesTable;

export async function insertPasskey(db: Executor, row: PasskeyRow): Promise<void> {
  await db.insertInto('passkeys').values(row).execute();
}

/** The passkey of a user, by its `pk_` id; never another user's or another project's. */
export async function findUserPasskey(db: Executor, projectId: string, userId: string, passkeyId: string): Promise<PasskeyRow | undefined> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .where('id', '=', passkeyId)
    .executeTakeFirst();
}

/** The project's passkey with this authenticator credential id: how a sign-in finds its passkey. */
export async function findPasskeyByCredential(db: Executor, projectId: string, credentialId: string): Promise<PasskeyRow | undefined> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
}

/** A user's passkeys, newest first, after the (created_at, id) cursor when given. */
export async function listUserPasskeys(
  db: Executor,
  projectId: string,
  userId: string,
  page: { limit: number; after: KeysetCursor | undefined },
): Promise<PasskeyRow[]> {
  return keysetPage(
    db.selectFrom('passkeys').selectAll().where('project_id', '=', projectId).where('user_id', '=', userId),
    page,
  ).execute();
}

/** Every credential id of a user, for `excludeCredentials` and `allowCredentials`; a user has few. */
export async function listUserCredentials(
  db: Executor,
  projectId: string,
  userId: string,
): Promise<Pick<PasskeyRow, 'credential_id' | 'transports'>[]> {
  return db
    .selectFrom('passkeys')
    .select(['credential_id', 'transports'])
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .orderBy('created_at', 'asc')
    .execute();
}

/** Every passkey of a user (at most PASSKEYS_PER_USER_MAX), oldest first. */
export async function listAllUserPasskeys(db: Executor, projectId: string, userId: string): Promise<PasskeyRow[]> {
  return db
    .selectFrom('passkeys')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .orderBy('created_at', 'asc')
    .execute();
}

export async function deletePasskey(db: Executor, projectId: string, passkeyId: string): Promise<boolean> {
  const result = await db.deleteFrom('passkeys').where('project_id', '=', projectId).where('id', '=', passkeyId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Records an accepted sign-in: the counter only moves forward (two sign-ins verified at once
 * against the same stored value both pass, and the higher counter stays).
 */
export async function recordPasskeyUse(
  db: Executor,
  projectId: string,
  passkeyId: string,
  use: { signCount: number; backedUp: boolean; usedAt: string },
): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set((eb) => ({
      sign_count: eb.case().when('sign_count', '<', use.signCount).then(use.signCount).else(eb.ref('sign_count')).end(),
      backed_up: use.backedUp ? 1 : 0,
      last_used_at: use.usedAt,
    }))
    .where('project_id', '=', projectId)
    .where('id', '=', passkeyId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertChallenge(db: Executor, row: ChallengeRow): Promise<void> {
  await db.insertInto('passkey_challenges').values(row).execute();
}

/** A challenge of this project and ceremony, by its id (sign-in) or by its hash (registration). */
export async function findChallenge(
  db: Executor,
  projectId: string,
  purpose: PasskeyChallengePurpose,
  by: { id: string } | { hash: string },
): Promise<ChallengeRow | undefined> {
  let query = db.selectFrom('passkey_challenges').selectAll().where('project_id', '=', projectId).where('purpose', '=', purpose);
  query = 'id' in by ? query.where('id', '=', by.id) : query.where('challenge_hash', '=', by.hash);
  return query.executeTakeFirst();
}

/** Marks a challenge used; false when it was used already (by a request that got there first). */
export async function useChallenge(db: Executor, challengeId: string, usedAt: string): Promise<boolean> {
  const result = await db
    .updateTable('passkey_challenges')
    .set({ used_at: usedAt })
    .where('id', '=', challengeId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes up to `limit` challenges that expired before `before`; returns how many. */
export async function deleteExpiredChallenges(db: Executor, before: string, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('passkey_challenges')
    .where('id', 'in', (eb) => eb.selectFrom('passkey_challenges').select('id').where('expires_at', '<', before).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
