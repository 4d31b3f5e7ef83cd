import type { Kysely } from 'kysely';
import type { Database, EmailTokenPurpose, EmailTokensTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type EmailTokenRow = EmailTokensTable;

export async function insertEmailToken(db: Executor, row: EmailTokenRow): Promise<void> {
  await db.insertInto('email_tokens').values(row).execute();
}

/**
 * A token by its hash. `projectId` is given on secret-key routes; the public verification link
 * (`GET /v1/auth/verify-email`) has no other way to find its project than the token itself.
 */
export async function findEmailToken(
  db: Executor,
  tokenHash: string,
  purpose: EmailTokenPurpose,
  projectId: string | undefined,
): Promise<EmailTokenRow | undefined> {
  let query = db.selectFrom('email_tokens').selectAll().where('token_hash', '=', tokenHash).where('purpose', '=', purpose);
  if (projectId !== undefined) query = query.where('project_id', '=', projectId);
  return query.executeTakeFirst();
}

/** Uses a token; of two concurrent uses exactly one gets true. */
export async function useEmailToken(db: Executor, projectId: string, tokenHash: string, nowIso: string): Promise<boolean> {
  const result = await db
    .updateTable('email_tokens')
    .set({ used_at: nowIso })
    .where('project_id', '=', projectId)
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Uses up every outstanding token of a user for one purpose (a reset makes the other reset links dead). */
export async function useAllEmailTokens(
  db: Executor,
  projectId: string,
  userId: string,
  purpose: EmailTokenPurpose,
  nowIso: string,
): Promise<void> {
  await db
    .updateTable('email_tokens')
    .set({ used_at: nowIso })
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
}
