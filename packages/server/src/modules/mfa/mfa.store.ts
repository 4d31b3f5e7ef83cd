import type { Kysely } from 'kysely';
import type { Database, MfaTokensTable, MfaTotpTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type TotpRow = MfaTotpTable;
export type MfaTokenRow = MfaTokensTable;

export async function findTotp(db: Executor, projectId: string, userId: string): Promise<TotpRow | undefined> {
  return db.selectFrom('mfa_totp').selectAll().where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
}

/** A new pending enrolment in place of any earlier pending one (an active factor is never replaced here). */
export async function replacePendingTotp(db: Executor, row: TotpRow): Promise<void> {
  await db
    .deleteFrom('mfa_totp')
    .where('project_id', '=', row.project_id)
    .where('user_id', '=', row.user_id)
    .where('status', '=', 'pending')
    .execute();
  await db.insertInto('mfa_totp').values(row).execute();
}

/**
 * Records `step` as accepted when it is later than every step accepted before: of two uses of one
 * code, concurrent or not, exactly one gets true. `pending` confirms an enrolment in the same step.
 */
export async function acceptStep(
  db: Executor,
  input: { projectId: string; userId: string; step: number; status: MfaTotpTable['status']; activatedAt?: string },
): Promise<boolean> {
  const result = await db
    .updateTable('mfa_totp')
    .set({ last_used_step: input.step, status: 'active', ...(input.activatedAt === undefined ? {} : { activated_at: input.activatedAt }) })
    .where('project_id', '=', input.projectId)
    .where('user_id', '=', input.userId)
    .where('status', '=', input.status)
    .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', input.step)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Removes the user's authenticator (pending or active) and recovery codes; true when a factor was active. */
export async function deleteFactors(db: Executor, projectId: string, userId: string): Promise<boolean> {
  const removed = await db
    .deleteFrom('mfa_totp')
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .returning('status')
    .execute();
  await db.deleteFrom('mfa_recovery_codes').where('project_id', '=', projectId).where('user_id', '=', userId).execute();
  await deleteMfaTokensOfUser(db, projectId, userId);
  return removed.some((row) => row.status === 'active');
}

export async function replaceRecoveryCodes(
  db: Executor,
  input: { projectId: string; userId: string; codeHashes: readonly string[]; now: string },
): Promise<void> {
  await db.deleteFrom('mfa_recovery_codes').where('project_id', '=', input.projectId).where('user_id', '=', input.userId).execute();
  await db
    .insertInto('mfa_recovery_codes')
    .values(
      input.codeHashes.map((codeHash) => ({
        project_id: input.projectId,
        user_id: input.userId,
        code_hash: codeHash,
        used_at: null,
        created_at: input.now,
      })),
    )
    .execute();
}

/** Uses a recovery code; of two concurrent uses of one code exactly one gets true. */
export async function useRecoveryCode(
  db: Executor,
  input: { projectId: string; userId: string; codeHash: string; now: string },
): Promise<boolean> {
  const result = await db
    .updateTable('mfa_recovery_codes')
    .set({ used_at: input.now })
    .where('project_id', '=', input.projectId)
    .where('user_id', '=', input.userId)
    .where('code_hash', '=', input.codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function countRecoveryCodesLeft(db: Executor, projectId: string, userId: string): Promise<number> {
  const row = await db
    .selectFrom('mfa_recovery_codes')
    .select((eb) => eb.fn.countAll<string | number>().as('left'))
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.left);
}

export async function insertMfaToken(db: Executor, row: MfaTokenRow): Promise<void> {
  await db.insertInto('mfa_tokens').values(row).execute();
}

export async function findMfaToken(db: Executor, projectId: string, tokenHash: string): Promise<MfaTokenRow | undefined> {
  return db.selectFrom('mfa_tokens').selectAll().where('project_id', '=', projectId).where('token_hash', '=', tokenHash).executeTakeFirst();
}

/**
 * Counts one attempt on a live token (unused, unexpired, below `attemptsMax`) and answers it, or
 * undefined when the token is not live. The count comes first, in one statement, so concurrent
 * guesses cannot exceed the limit.
 */
export async function countMfaAttempt(
  db: Executor,
  input: { projectId: string; tokenHash: string; now: string; attemptsMax: number },
): Promise<MfaTokenRow | undefined> {
  return db
    .updateTable('mfa_tokens')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('project_id', '=', input.projectId)
    .where('token_hash', '=', input.tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', input.now)
    .where('attempts', '<', input.attemptsMax)
    .returningAll()
    .executeTakeFirst();
}

/** Uses a token; of two concurrent uses exactly one gets true. */
export async function useMfaToken(db: Executor, projectId: string, tokenHash: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('mfa_tokens')
    .set({ used_at: now })
    .where('project_id', '=', projectId)
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteMfaTokensOfUser(db: Executor, projectId: string, userId: string): Promise<void> {
  await db.deleteFrom('mfa_tokens').where('project_id', '=', projectId).where('user_id', '=', userId).execute();
}

/** The clean-up job: tokens and email codes past their lifetime, a bounded number per call. */
export async function deleteExpired(db: Executor, before: string, limit: number): Promise<number> {
  const tokens = await db
    .deleteFrom('mfa_tokens')
    .where('token_hash', 'in', (eb) => eb.selectFrom('mfa_tokens').select('token_hash').where('expires_at', '<', before).limit(limit))
    .executeTakeFirst();
  const codes = await db
    .deleteFrom('email_code_requests')
    .where('expires_at', '<', before)
    .where('request_ref', 'in', (eb) =>
      eb.selectFrom('email_code_requests').select('request_ref').where('expires_at', '<', before).limit(limit),
    )
    .executeTakeFirst();
  return Number(tokens.numDeletedRows) + Number(codes.numDeletedRows);
}
