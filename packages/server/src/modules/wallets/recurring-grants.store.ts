import type { Kysely } from 'kysely';
import { type KeysetCursor, keysetPage } from '../../db/pagination.js';
import type { Database, RecurringGrantsTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

/**
 * Recurring grants' rows, every statement scoped by project but the job's look-up of what is due
 * across projects (docs/adr/0022-recurring-grants.md). Their credits are the ledger's.
 */

export async function insertRecurringGrant(db: Executor, row: RecurringGrantsTable): Promise<void> {
  await db.insertInto('recurring_grants').values(row).execute();
}

export async function findRecurringGrant(db: Executor, projectId: string, id: string): Promise<RecurringGrantsTable | undefined> {
  return db.selectFrom('recurring_grants').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

/** A wallet's recurring grants, newest first, after the `after` row. */
export async function listRecurringGrants(
  db: Executor,
  projectId: string,
  walletId: string,
  page: { after: KeysetCursor | undefined; limit: number },
): Promise<RecurringGrantsTable[]> {
  const query = db.selectFrom('recurring_grants').selectAll().where('project_id', '=', projectId).where('wallet_id', '=', walletId);
  return keysetPage(query, page).execute();
}

/** Cancels an active recurring grant; false when it was not active (already cancelled). */
export async function cancelRecurringGrant(db: Executor, projectId: string, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('recurring_grants')
    .set({ status: 'cancelled', next_grant_at: null, cancelled_at: now })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Active recurring grants (of every project) whose next period has begun at `now`, the longest due first; at most `limit`. */
export async function dueRecurringGrants(db: Executor, now: string, limit: number): Promise<RecurringGrantsTable[]> {
  return db
    .selectFrom('recurring_grants')
    .selectAll()
    .where('next_grant_at', 'is not', null)
    .where('next_grant_at', '<=', now)
    .orderBy('next_grant_at')
    .limit(limit)
    .execute();
}

/**
 * Moves an active recurring grant on to period `next` (starting `nextGrantAt`), never back: of two
 * workers that credited the same periods, the one that comes second changes nothing, and a
 * cancelled grant stays cancelled.
 */
export async function advanceRecurringGrant(
  db: Executor,
  row: Pick<RecurringGrantsTable, 'project_id' | 'id'>,
  next: { period: number; grantAt: string },
): Promise<void> {
  await db
    .updateTable('recurring_grants')
    .set({ next_period: next.period, next_grant_at: next.grantAt })
    .where('project_id', '=', row.project_id)
    .where('id', '=', row.id)
    .where('status', '=', 'active')
    .where('next_period', '<', next.period)
    .execute();
}
