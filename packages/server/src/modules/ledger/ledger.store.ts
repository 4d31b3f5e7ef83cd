import type { Kysely } from 'kysely';
import type { Db } from '../../db/database.js';
import { fixedQuery, runFixed } from '../../db/fixed-query.js';
import type { Database, LedgerEntriesTable, LedgerTransactionsTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type LedgerTransactionRow = LedgerTransactionsTable;
export type NewLedgerEntry = Omit<LedgerEntriesTable, 'seq'>;

export const ISSUANCE_ACCOUNT_PREFIX = 'issuance:';

/**
 * The project's issuance account for a currency: the other side of every credit and debit. It
 * keeps no balance column (every credit would wait on that one row); its balance is the sum of its
 * entries, the negative of all the credits in circulation in that currency.
 */
export function issuanceAccountId(currency: string): string {
  return `${ISSUANCE_ACCOUNT_PREFIX}${currency}`;
}

export interface BalanceAfterChange {
  readonly balance: number;
  readonly currency: string;
  readonly low_balance_threshold: number | null;
}

export type TransactionWithBalance = LedgerTransactionRow & { balance_after: number | null };

/** A transaction and, for a credit or debit, its wallet's balance after it. */
export async function findTransaction(db: Executor, projectId: string, transactionId: string): Promise<TransactionWithBalance | undefined> {
  return db
    .selectFrom('ledger_transactions as t')
    .leftJoin('ledger_entries as e', (join) => join.onRef('e.transaction_id', '=', 't.id').onRef('e.account_id', '=', 't.wallet_id'))
    .selectAll('t')
    .select('e.balance_after')
    .where('t.project_id', '=', projectId)
    .where('t.id', '=', transactionId)
    .executeTakeFirst();
}

/** What the reversals of a transaction gave back of it (docs/adr/0024-reversals.md; index `ledger_transactions_reverses_idx`). */
export async function reversedAmount(db: Executor, projectId: string, transactionId: string): Promise<number> {
  const row = await db
    .selectFrom('ledger_transactions')
    .select((eb) => eb.fn.sum<number | string | null>('amount').as('total'))
    .where('project_id', '=', projectId)
    .where('reverses', '=', transactionId)
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}

/** Whether the project has the wallet, whatever its status. */
export async function walletExists(db: Executor, projectId: string, walletId: string): Promise<boolean> {
  const row = await db.selectFrom('wallets').select('id').where('project_id', '=', projectId).where('id', '=', walletId).executeTakeFirst();
  return row !== undefined;
}

/** Where one transaction sits in a wallet's history; the cursor of that history. */
export async function findWalletEntrySeq(
  db: Executor,
  projectId: string,
  walletId: string,
  transactionId: string,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('ledger_entries')
    .select('seq')
    .where('project_id', '=', projectId)
    .where('transaction_id', '=', transactionId)
    .where('account_id', '=', walletId)
    .executeTakeFirst();
  return row?.seq;
}

/** The columns of a transaction a wallet's history shows (ledger.views.ts, `toWalletTransaction`). */
const HISTORY_COLUMNS = [
  'id',
  'type',
  'amount',
  'description',
  'metadata',
  'idempotency_key',
  'from_wallet_id',
  'to_wallet_id',
  'created_at',
  'actor_type',
  'actor_id',
  'actor_user_id',
  'request_id',
  'sources',
  'recurring_grant_id',
  'category',
  'categories',
  'repaid',
  'reverses',
] as const satisfies readonly (keyof LedgerTransactionRow)[];

/** One entry of a wallet's history: the wallet's side and its transaction. */
export type WalletHistoryRow = Pick<LedgerTransactionRow, (typeof HISTORY_COLUMNS)[number]> & {
  account_id: string;
  entry_amount: number;
  balance_after: number | null;
  seq: number;
};

/** A wallet's entries with their transactions, newest first. */
export async function listWalletHistory(
  db: Executor,
  projectId: string,
  walletId: string,
  page: { beforeSeq: number | undefined; limit: number },
): Promise<WalletHistoryRow[]> {
  let query = db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_transactions as t', 't.id', 'e.transaction_id')
    .select(HISTORY_COLUMNS.map((column) => `t.${column}` as const))
    .select(['e.account_id', 'e.amount as entry_amount', 'e.balance_after', 'e.seq'])
    .where('e.project_id', '=', projectId)
    .where('e.account_id', '=', walletId);
  if (page.beforeSeq !== undefined) query = query.where('e.seq', '<', page.beforeSeq);
  return query.orderBy('e.seq', 'desc').limit(page.limit).execute();
}

const RECENT_HISTORY = `select e.account_id, e.amount as entry_amount, e.balance_after, e.seq,
  ${HISTORY_COLUMNS.map((column) => `t.${column}`).join(', ')}
  from ledger_entries e join ledger_transactions t on t.id = e.transaction_id`;

const RECENT_OF_WALLET = fixedQuery<WalletHistoryRow>(
  `${RECENT_HISTORY} where e.project_id = ? and e.account_id = ? order by e.seq desc limit ?`,
);

/** The oldest active wallet as modules/wallets/wallets.store.ts reads it (index wallets_project_user_created_idx). */
const RECENT_OF_OLDEST_ACTIVE_WALLET = fixedQuery<WalletHistoryRow>(
  `${RECENT_HISTORY} where e.project_id = ? and e.account_id = (
     select w.id from wallets w where w.project_id = ? and w.user_id = ? and w.status = 'active'
     order by w.created_at asc, w.id asc limit 1)
   order by e.seq desc limit ?`,
);

/** A wallet's last `limit` entries, newest first; a fixed, prepared text (the session's balance read). */
export async function recentOfWallet(db: Db, projectId: string, walletId: string, limit: number): Promise<WalletHistoryRow[]> {
  return runFixed(db, RECENT_OF_WALLET, [projectId, walletId, limit]);
}

/** The same for the user's oldest active wallet, found in the same statement. */
export async function recentOfOldestActiveWallet(db: Db, projectId: string, userId: string, limit: number): Promise<WalletHistoryRow[]> {
  return runFixed(db, RECENT_OF_OLDEST_ACTIVE_WALLET, [projectId, projectId, userId, limit]);
}

/**
 * A wallet's currency and its balance after its last entry created at or before `at` (ISO 8601
 * UTC with milliseconds, compared as stored text; null when it had none yet), in one statement;
 * undefined when the project has no such wallet. The balance is one seek on
 * `ledger_entries_account_time_idx` (migration 0027): a wallet's entries are written in the order
 * its movements were applied, under its lock, so the newest entry at or before `at` carries the
 * balance of that moment.
 */
export async function findWalletBalanceAt(
  db: Executor,
  projectId: string,
  walletId: string,
  at: string,
): Promise<{ currency: string; balance: number | null } | undefined> {
  return db
    .selectFrom('wallets as w')
    .select((eb) => [
      'w.currency',
      eb
        .selectFrom('ledger_entries as e')
        .select('e.balance_after')
        .where('e.project_id', '=', projectId)
        .whereRef('e.account_id', '=', 'w.id')
        .where('e.balance_after', 'is not', null)
        .where('e.created_at', '<=', at)
        .orderBy('e.created_at', 'desc')
        .orderBy('e.seq', 'desc')
        .limit(1)
        .as('balance'),
    ])
    .where('w.project_id', '=', projectId)
    .where('w.id', '=', walletId)
    .executeTakeFirst();
}
