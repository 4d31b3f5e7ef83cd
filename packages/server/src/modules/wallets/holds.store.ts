import type { Kysely } from 'kysely';
import { type KeysetCursor, keysetPage } from '../../db/pagination.js';
import type { Database, HoldStatus, WalletGrantsTable, WalletHoldsTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

/** Reads of holds and grants, every one scoped by project; their writes are the ledger's (modules/ledger/ledger.statements-holds.ts). */

export async function findHold(db: Executor, projectId: string, holdId: string): Promise<WalletHoldsTable | undefined> {
  return db.selectFrom('wallet_holds').selectAll().where('project_id', '=', projectId).where('id', '=', holdId).executeTakeFirst();
}

export async function findGrant(db: Executor, projectId: string, grantId: string): Promise<WalletGrantsTable | undefined> {
  return db.selectFrom('wallet_grants').selectAll().where('project_id', '=', projectId).where('id', '=', grantId).executeTakeFirst();
}

export interface ListPage {
  /** Rows after this one in newest-first order. */
  readonly after: KeysetCursor | undefined;
  readonly limit: number;
}

/**
 * A wallet's holds, newest first. `status` as a read sees it at `now`: a stored `pending` past
 * `expires_at` is `expired`.
 */
export async function listHolds(
  db: Executor,
  projectId: string,
  walletId: string,
  filter: ListPage & { status: HoldStatus | undefined; now: string },
): Promise<WalletHoldsTable[]> {
  const { status, now } = filter;
  let query = db.selectFrom('wallet_holds').selectAll().where('project_id', '=', projectId).where('wallet_id', '=', walletId);
  if (status === 'pending') query = query.where('status', '=', 'pending').where('expires_at', '>', now);
  else if (status === 'expired')
    query = query.where((eb) => eb.or([eb('status', '=', 'expired'), eb.and([eb('status', '=', 'pending'), eb('expires_at', '<=', now)])]));
  else if (status !== undefined) query = query.where('status', '=', status);
  return keysetPage(query, filter).execute();
}

/** A wallet's grants, newest first. */
export async function listGrants(db: Executor, projectId: string, walletId: string, filter: ListPage): Promise<WalletGrantsTable[]> {
  return keysetPage(
    db.selectFrom('wallet_grants').selectAll().where('project_id', '=', projectId).where('wallet_id', '=', walletId),
    filter,
  ).execute();
}

/** Wallets (with their projects) where time expired something the write path has not settled yet; at most `limit`. */
export async function walletsToSettle(db: Executor, now: string, limit: number): Promise<{ project_id: string; wallet_id: string }[]> {
  const holds = await db
    .selectFrom('wallet_holds')
    .select(['project_id', 'wallet_id'])
    .distinct()
    .where('status', '=', 'pending')
    .where('expires_at', '<=', now)
    .limit(limit)
    .execute();
  const grants = await db
    .selectFrom('wallet_grants')
    .select(['project_id', 'wallet_id'])
    .distinct()
    .where('remaining', '>', 0)
    .where('expires_at', 'is not', null)
    .where('expires_at', '<=', now)
    .whereRef('remaining', '>', 'held')
    .limit(limit)
    .execute();
  const unique = new Map([...holds, ...grants].map((row) => [`${row.project_id} ${row.wallet_id}`, row]));
  return [...unique.values()].slice(0, limit);
}
