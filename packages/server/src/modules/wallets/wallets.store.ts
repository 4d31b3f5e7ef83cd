import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import { fixedQuery, runFixedFirst } from '../../db/fixed-query.js';
import type { Database, WalletStatus, WalletsTable } from '../../db/schema.js';
import type { RowLock } from '../../db/transaction.js';

export type { RowLock };

type Executor = Kysely<Database>;

export type WalletRow = WalletsTable;

export async function insertWallet(db: Executor, row: WalletRow): Promise<void> {
  await db.insertInto('wallets').values(row).execute();
}

export async function findWallet(
  db: Executor,
  projectId: string,
  walletId: string,
  lock: RowLock = 'none',
): Promise<WalletRow | undefined> {
  return db
    .selectFrom('wallets')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', walletId)
    .$call((query) => withLock(query, lock))
    .executeTakeFirst();
}

/**
 * Reads several wallets, locking them in id order. Every transaction that locks two wallets
 * locks the lower id first, so two transfers in opposite directions wait for each other instead of
 * deadlocking. (PostgreSQL locks rows as the sorted result is produced.)
 */
export async function findWalletsInIdOrder(
  db: Executor,
  projectId: string,
  walletIds: readonly string[],
  lock: RowLock,
): Promise<WalletRow[]> {
  return db
    .selectFrom('wallets')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', 'in', walletIds)
    .orderBy('id')
    .$call((query) => withLock(query, lock))
    .execute();
}

export interface ListWalletsFilter {
  readonly userId: string | undefined;
  /** Rows after this one in newest-first order. */
  readonly after: Pick<WalletRow, 'created_at' | 'id'> | undefined;
  readonly limit: number;
}

/** Newest first; ties in `created_at` broken by id, so the order is total and the cursor exact. */
export async function listWallets(db: Executor, projectId: string, filter: ListWalletsFilter): Promise<WalletRow[]> {
  const { userId, after } = filter;
  let query = db.selectFrom('wallets').selectAll().where('project_id', '=', projectId);
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  if (after !== undefined) {
    query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.created_at, after.id)));
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
}

/** The user's oldest active wallet (index wallets_project_user_created_idx); a fixed, prepared text. */
const FIND_OLDEST_ACTIVE_WALLET = fixedQuery<WalletRow>(
  `select id, project_id, user_id, currency, balance, held, status, metadata, low_balance_threshold, created_at, updated_at
   from wallets where project_id = ? and user_id = ? and status = 'active'
   order by created_at asc, id asc limit 1`,
);

export async function findOldestActiveWallet(db: Db, projectId: string, userId: string): Promise<WalletRow | undefined> {
  return runFixedFirst(db, FIND_OLDEST_ACTIVE_WALLET, [projectId, userId]);
}

export interface WalletChanges {
  readonly metadata?: string;
  readonly low_balance_threshold?: number | null;
  readonly status?: WalletStatus;
  readonly updated_at: string;
}

/** Changes a wallet's settings or status (never its balance: only the ledger does that). */
export async function updateWallet(
  db: Executor,
  projectId: string,
  walletId: string,
  changes: WalletChanges,
): Promise<WalletRow | undefined> {
  return db
    .updateTable('wallets')
    .set(changes)
    .where('project_id', '=', projectId)
    .where('id', '=', walletId)
    .returningAll()
    .executeTakeFirst();
}

function withLock<O>(query: SelectQueryBuilder<Database, 'wallets', O>, lock: RowLock): SelectQueryBuilder<Database, 'wallets', O> {
  return lock === 'for update' ? query.forUpdate() : query;
}
