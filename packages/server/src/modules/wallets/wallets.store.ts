import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import { type KeysetCursor, keysetPage } from '../../db/pagination.js';
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
  readonly after: KeysetCursor | undefined;
  readonly limit: number;
}

/** Newest first; ties in `created_at` broken by id, so the order is total and the cursor exact. */
export async function listWallets(db: Executor, projectId: string, filter: ListWalletsFilter): Promise<WalletRow[]> {
  let query = db.selectFrom('wallets').selectAll().where('project_id', '=', projectId);
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  return keysetPage(query, filter).execute();
}

/**
 * A wallet as a read sees it: its row, and whether a grant of it has expired or a pending hold of
 * it has passed `expires_at` without the write path having settled it yet (then `available` needs
 * the reads of modules/ledger/ledger.available.ts; usually it does not). One statement.
 */
export type WalletReading = WalletRow & { readonly unsettled: number };

const READING_COLUMNS = `w.id, w.project_id, w.user_id, w.currency, w.balance, w.held, w.credit_limit, w.debt, w.status, w.metadata,
  w.low_balance_threshold, w.created_at, w.updated_at,
  case when exists (select 1 from wallet_grants g where g.project_id = w.project_id and g.wallet_id = w.id
      and g.remaining > 0 and g.expires_at is not null and g.expires_at <= ?)
    or exists (select 1 from wallet_holds h where h.project_id = w.project_id and h.wallet_id = w.id
      and h.status = 'pending' and h.expires_at <= ?)
  then 1 else 0 end as unsettled`;

const READ_WALLET = fixedQuery<WalletReading>(`select ${READING_COLUMNS} from wallets w where w.project_id = ? and w.id = ?`);

/** The user's oldest active wallet (index wallets_project_user_created_idx). */
const READ_OLDEST_ACTIVE_WALLET = fixedQuery<WalletReading>(
  `select ${READING_COLUMNS} from wallets w where w.project_id = ? and w.user_id = ? and w.status = 'active'
   order by w.created_at asc, w.id asc limit 1`,
);

/** `now`: ISO 8601 UTC with milliseconds, compared with the stored `expires_at` texts. */
export async function readWallet(db: Db, projectId: string, walletId: string, now: string): Promise<WalletReading | undefined> {
  return runFixedFirst(db, READ_WALLET, [now, now, projectId, walletId]);
}

export async function readOldestActiveWallet(db: Db, projectId: string, userId: string, now: string): Promise<WalletReading | undefined> {
  return runFixedFirst(db, READ_OLDEST_ACTIVE_WALLET, [now, now, projectId, userId]);
}

/** The user's oldest active wallet in one unit (the same index; a user has a handful of wallets). */
const READ_OLDEST_ACTIVE_WALLET_IN_UNIT = fixedQuery<WalletReading>(
  `select ${READING_COLUMNS} from wallets w where w.project_id = ? and w.user_id = ? and w.status = 'active' and w.currency = ?
   order by w.created_at asc, w.id asc limit 1`,
);

export async function readOldestActiveWalletInUnit(
  db: Db,
  projectId: string,
  userId: string,
  currency: string,
  now: string,
): Promise<WalletReading | undefined> {
  return runFixedFirst(db, READ_OLDEST_ACTIVE_WALLET_IN_UNIT, [now, now, projectId, userId, currency]);
}

export interface WalletChanges {
  readonly metadata?: string;
  readonly low_balance_threshold?: number | null;
  readonly status?: WalletStatus;
  readonly credit_limit?: number;
  readonly updated_at: string;
}

/** Changes a wallet's settings or status (never its balance or debt: only the ledger does that). */
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

/**
 * The credits of the wallet's grants that pending holds reserved. `held` beyond it is what holds
 * reserved on the credit limit (docs/adr/0023-credit-limits.md). Grants with credits left only
 * (index wallet_grants_live_idx): a grant a hold reserved has some.
 */
export async function heldOnGrants(db: Executor, projectId: string, walletId: string): Promise<number> {
  const row = await db
    .selectFrom('wallet_grants')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('held'), eb.lit(0)).as('held'))
    .where('project_id', '=', projectId)
    .where('wallet_id', '=', walletId)
    .where('remaining', '>', 0)
    .executeTakeFirst();
  return Number(row?.held ?? 0);
}

function withLock<O>(query: SelectQueryBuilder<Database, 'wallets', O>, lock: RowLock): SelectQueryBuilder<Database, 'wallets', O> {
  return lock === 'for update' ? query.forUpdate() : query;
}
