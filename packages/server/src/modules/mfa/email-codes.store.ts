import type { Kysely } from 'kysely';
import type { Database, EmailCodeRequestsTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type EmailCodeRow = EmailCodeRequestsTable;

/** What decides whether an address may be sent another code: its live codes and its latest request. */
export interface AddressCodes {
  /** Requests not used, not expired and below `attemptsMax` (composed or still waiting for their email). */
  readonly live: number;
  /** The address's newest request, live or not, or undefined. */
  readonly latestCreatedAt: string | undefined;
}

export async function addressCodes(
  db: Executor,
  input: { projectId: string; emailKey: string; now: string; attemptsMax: number },
): Promise<AddressCodes> {
  const row = await db
    .selectFrom('email_code_requests')
    .select((eb) => [
      eb.fn.max('created_at').as('latest_created_at'),
      eb.fn
        .countAll<number | string | bigint>()
        .filterWhere((filter) =>
          filter.and([filter('used_at', 'is', null), filter('expires_at', '>', input.now), filter('attempts', '<', input.attemptsMax)]),
        )
        .as('live'),
    ])
    .where('project_id', '=', input.projectId)
    .where('email_key', '=', input.emailKey)
    .executeTakeFirst();
  return { live: Number(row?.live ?? 0), latestCreatedAt: row?.latest_created_at ?? undefined };
}

export async function insertEmailCodeRequest(db: Executor, row: EmailCodeRow): Promise<void> {
  await db.insertInto('email_code_requests').values(row).execute();
}

export async function findEmailCodeRequest(db: Executor, projectId: string, requestRef: string): Promise<EmailCodeRow | undefined> {
  return db
    .selectFrom('email_code_requests')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('request_ref', '=', requestRef)
    .executeTakeFirst();
}

/** Stores the code of a request when its email is composed; false when the request was used meanwhile. */
export async function setEmailCode(
  db: Executor,
  input: { projectId: string; requestRef: string; codeHash: string; expiresAt: string },
): Promise<boolean> {
  const result = await db
    .updateTable('email_code_requests')
    .set({ code_hash: input.codeHash, expires_at: input.expiresAt })
    .where('project_id', '=', input.projectId)
    .where('request_ref', '=', input.requestRef)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Counts one try on every live code of the address (composed, unused, unexpired, below
 * `attemptsMax`), since the code presented is compared with each of them, and answers those rows.
 * The count comes first, in one statement: concurrent guesses cannot exceed it.
 */
export async function countEmailCodeAttempt(
  db: Executor,
  input: { projectId: string; emailKey: string; now: string; attemptsMax: number },
): Promise<EmailCodeRow[]> {
  return db
    .updateTable('email_code_requests')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('project_id', '=', input.projectId)
    .where('email_key', '=', input.emailKey)
    .where('code_hash', 'is not', null)
    .where('used_at', 'is', null)
    .where('expires_at', '>', input.now)
    .where('attempts', '<', input.attemptsMax)
    .returningAll()
    .execute();
}

/** Uses the code of one request; of two concurrent uses exactly one gets true. */
export async function useEmailCode(db: Executor, input: { projectId: string; requestRef: string; now: string }): Promise<boolean> {
  const result = await db
    .updateTable('email_code_requests')
    .set({ used_at: input.now })
    .where('project_id', '=', input.projectId)
    .where('request_ref', '=', input.requestRef)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Ends the address's other codes once one has signed in: they have nothing left to do. */
export async function useAllEmailCodes(db: Executor, input: { projectId: string; emailKey: string; now: string }): Promise<void> {
  await db
    .updateTable('email_code_requests')
    .set({ used_at: input.now })
    .where('project_id', '=', input.projectId)
    .where('email_key', '=', input.emailKey)
    .where('used_at', 'is', null)
    .execute();
}
