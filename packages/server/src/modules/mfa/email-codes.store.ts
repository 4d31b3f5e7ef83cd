import type { Kysely } from 'kysely';
import type { Database, EmailCodesTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type EmailCodeRow = EmailCodesTable;

export async function findEmailCode(db: Executor, projectId: string, emailKey: string): Promise<EmailCodeRow | undefined> {
  return db.selectFrom('email_codes').selectAll().where('project_id', '=', projectId).where('email_key', '=', emailKey).executeTakeFirst();
}

/** The address's new request, in place of its earlier one: the earlier code dies with it. */
export async function replaceEmailCode(db: Executor, row: EmailCodeRow): Promise<void> {
  await db.deleteFrom('email_codes').where('project_id', '=', row.project_id).where('email_key', '=', row.email_key).execute();
  await db.insertInto('email_codes').values(row).execute();
}

/** Stores the code of a request when its email is composed; false when a newer request replaced it or it was used. */
export async function setEmailCode(
  db: Executor,
  input: { projectId: string; emailKey: string; requestRef: string; codeHash: string; expiresAt: string },
): Promise<boolean> {
  const result = await db
    .updateTable('email_codes')
    .set({ code_hash: input.codeHash, expires_at: input.expiresAt })
    .where('project_id', '=', input.projectId)
    .where('email_key', '=', input.emailKey)
    .where('request_ref', '=', input.requestRef)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Counts one try on a live code (composed, unused, unexpired, below `attemptsMax`) and answers the
 * row, or undefined. The count comes first, in one statement: concurrent guesses cannot exceed it.
 */
export async function countEmailCodeAttempt(
  db: Executor,
  input: { projectId: string; emailKey: string; now: string; attemptsMax: number },
): Promise<EmailCodeRow | undefined> {
  return db
    .updateTable('email_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('project_id', '=', input.projectId)
    .where('email_key', '=', input.emailKey)
    .where('code_hash', 'is not', null)
    .where('used_at', 'is', null)
    .where('expires_at', '>', input.now)
    .where('attempts', '<', input.attemptsMax)
    .returningAll()
    .executeTakeFirst();
}

/** Uses the code of one request; of two concurrent uses exactly one gets true. */
export async function useEmailCode(
  db: Executor,
  input: { projectId: string; emailKey: string; requestRef: string; now: string },
): Promise<boolean> {
  const result = await db
    .updateTable('email_codes')
    .set({ used_at: input.now })
    .where('project_id', '=', input.projectId)
    .where('email_key', '=', input.emailKey)
    .where('request_ref', '=', input.requestRef)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
