import type { Kysely } from 'kysely';
import type { Database, EmailOutboxTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type EmailRow = EmailOutboxTable;

export async function insertEmail(db: Executor, row: EmailRow): Promise<void> {
  await db.insertInto('email_outbox').values(row).execute();
}

/**
 * Pending emails whose next attempt is due and that no live worker holds, oldest first. A candidate
 * list only: `claimEmail` decides who sends each one. This is the job's scan across all projects.
 */
export async function findDueEmails(db: Executor, nowIso: string, limit: number): Promise<EmailRow[]> {
  return db
    .selectFrom('email_outbox')
    .selectAll()
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', nowIso)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', nowIso)]))
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
}

/**
 * Takes an email for one attempt, until `lockedUntilIso`. One conditional UPDATE: of several workers
 * in several processes exactly one succeeds, and a worker that died holding it loses it when the
 * lease passes. Returns the attempt number, or undefined when another worker has it.
 */
export async function claimEmail(
  db: Executor,
  email: Pick<EmailRow, 'id' | 'attempts'>,
  nowIso: string,
  lockedUntilIso: string,
): Promise<number | undefined> {
  const result = await db
    .updateTable('email_outbox')
    .set({ locked_until: lockedUntilIso, attempts: email.attempts + 1 })
    .where('id', '=', email.id)
    .where('status', '=', 'pending')
    .where('attempts', '=', email.attempts)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', nowIso)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n ? email.attempts + 1 : undefined;
}

export type EmailOutcome =
  | { readonly status: 'sent'; readonly at: string }
  | { readonly status: 'cancelled'; readonly reason: string }
  | { readonly status: 'failed'; readonly error: string }
  | { readonly status: 'pending'; readonly error: string; readonly nextAttemptAt: string };

/** Records how an attempt ended and releases the email. */
export async function settleEmail(db: Executor, emailId: string, outcome: EmailOutcome): Promise<void> {
  await db
    .updateTable('email_outbox')
    .set({
      status: outcome.status,
      locked_until: null,
      ...(outcome.status === 'sent' ? { sent_at: outcome.at, last_error: null } : {}),
      ...(outcome.status === 'cancelled' ? { last_error: outcome.reason } : {}),
      ...(outcome.status === 'failed' ? { last_error: outcome.error } : {}),
      ...(outcome.status === 'pending' ? { last_error: outcome.error, next_attempt_at: outcome.nextAttemptAt } : {}),
    })
    .where('id', '=', emailId)
    .execute();
}
