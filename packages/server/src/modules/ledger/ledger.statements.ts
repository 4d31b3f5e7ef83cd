import { sql } from 'kysely';
import { type Dialect, PREPARED_STATEMENT } from '../../db/database.js';
import { type ArrayColumn, columnNames, insertInChunks, selectByKeys, unnestArrays } from '../../db/list-statements.js';
import type { LedgerRefusalsTable } from '../../db/schema.js';
import type { Transaction as DbTransaction } from '../../db/transaction.js';
import { findKeys } from '../../lib/idempotency.store.js';
import { movementKeyScope, refusalOfKeyRow } from './ledger.plan-rows.js';
import type { LedgerTransactionRow, NewLedgerEntry, TransactionWithBalance } from './ledger.store.js';
import type { GrantRow } from './ledger.grants.js';
import type { WalletsTable as WalletRow } from '../../db/schema.js';

/**
 * The statements of the ledger's one write path (ledger.write.ts), one implementation per dialect
 * behind this interface. Every method runs inside the caller's transaction and takes whole lists,
 * so a batch of any size costs the same handful of statements.
 */
export interface LedgerStatements {
  /**
   * The named wallets (of their projects), locked for the rest of the transaction: on PostgreSQL
   * `FOR UPDATE` in id order, so two transactions locking overlapping sets wait instead of
   * deadlocking; on SQLite `BEGIN IMMEDIATE` already holds the only write lock.
   */
  lockWallets(trx: DbTransaction, wallets: readonly WalletRef[]): Promise<WalletRow[]>;
  /** Transactions made under the given keys, each with its wallet's balance after it (credits and debits). */
  findKeyedTransactions(trx: DbTransaction, keys: readonly LedgerKey[]): Promise<TransactionWithBalance[]>;
  /** Refusals stored under the given keys. */
  findKeyedRefusals(trx: DbTransaction, keys: readonly LedgerKey[]): Promise<LedgerRefusalRow[]>;
  /** Sets the balances the batch computed (rows locked by `lockWallets`). */
  writeBalances(trx: DbTransaction, balances: readonly BalanceWrite[]): Promise<void>;
  insertTransactions(trx: DbTransaction, rows: readonly LedgerTransactionRow[]): Promise<void>;
  /** In the order given: a wallet's entries are its history, in `seq` order. */
  insertEntries(trx: DbTransaction, rows: readonly NewLedgerEntry[]): Promise<void>;
  /** The grants the flush drew on, reserved, released or expired: their new `remaining`, `held` and `expired`. */
  updateGrants(trx: DbTransaction, rows: readonly GrantRow[]): Promise<void>;
}

export interface WalletRef {
  readonly projectId: string;
  readonly walletId: string;
}

export interface LedgerKey {
  readonly projectId: string;
  readonly scope: string;
  readonly key: string;
}

export type LedgerRefusalRow = LedgerRefusalsTable;

/** The refusals stored under these movement keys: rows of `idempotency_keys` (docs/adr/0004-idempotency.md). */
async function findKeyedRefusalRows(trx: DbTransaction, keys: readonly LedgerKey[]): Promise<LedgerRefusalRow[]> {
  const rows = await findKeys(
    trx,
    keys.map((key) => ({ projectId: key.projectId, scope: movementKeyScope(key.scope), key: key.key })),
  );
  return rows.map(refusalOfKeyRow).filter((row) => row !== undefined);
}

export interface BalanceWrite {
  readonly projectId: string;
  readonly walletId: string;
  readonly balance: number;
  readonly held: number;
  readonly debt: number;
  readonly updatedAt: string;
}

export function ledgerStatements(dialect: Dialect): LedgerStatements {
  return dialect === 'postgres' ? postgresStatements : sqliteStatements;
}

/** SQLite: statements run in process, so plain Kysely queries; `IN` over row values. */
const sqliteStatements: LedgerStatements = {
  async lockWallets(trx, wallets) {
    return selectByKeys(
      trx.selectFrom('wallets').selectAll().orderBy('id'),
      ['project_id', 'id'],
      wallets.map((wallet) => [wallet.projectId, wallet.walletId]),
    );
  },
  async findKeyedTransactions(trx, keys) {
    const query = trx
      .selectFrom('ledger_transactions as t')
      .leftJoin('ledger_entries as e', (join) => join.onRef('e.transaction_id', '=', 't.id').onRef('e.account_id', '=', 't.wallet_id'))
      .selectAll('t')
      .select('e.balance_after')
      // Says what the partial unique index on the keys says, so SQLite reads the keys through it
      // instead of every transaction of the project.
      .where('t.idempotency_key', 'is not', null);
    return selectByKeys(
      query,
      ['t.project_id', 't.idempotency_scope', 't.idempotency_key'],
      keys.map((key) => [key.projectId, key.scope, key.key]),
    );
  },
  findKeyedRefusals: findKeyedRefusalRows,
  async writeBalances(trx, balances) {
    for (const write of balances) {
      await trx
        .updateTable('wallets')
        .set({ balance: write.balance, held: write.held, debt: write.debt, updated_at: write.updatedAt })
        .where('project_id', '=', write.projectId)
        .where('id', '=', write.walletId)
        .execute();
    }
  },
  async insertTransactions(trx, rows) {
    await insertInChunks(trx, 'ledger_transactions', rows);
  },
  async insertEntries(trx, rows) {
    await insertInChunks(trx, 'ledger_entries', rows);
  },
  async updateGrants(trx, rows) {
    for (const grant of rows) {
      await trx
        .updateTable('wallet_grants')
        .set({ remaining: grant.remaining, held: grant.held, expired: grant.expired })
        .where('id', '=', grant.id)
        .execute();
    }
  },
};

/**
 * The arrays of PostgreSQL's statements, one per column: each list names a column and its array
 * once, so an `unnest` and the columns it fills or names cannot disagree on the order.
 */
const WALLET_REF_COLUMNS: readonly ArrayColumn<WalletRef>[] = [
  ['project_id', 'text', (wallet) => wallet.projectId],
  ['id', 'text', (wallet) => wallet.walletId],
];

const KEY_COLUMNS: readonly ArrayColumn<LedgerKey>[] = [
  ['project_id', 'text', (key) => key.projectId],
  ['scope', 'text', (key) => key.scope],
  ['key', 'text', (key) => key.key],
];

const BALANCE_COLUMNS: readonly ArrayColumn<BalanceWrite>[] = [
  ['project_id', 'text', (write) => write.projectId],
  ['id', 'text', (write) => write.walletId],
  ['balance', 'bigint', (write) => write.balance],
  ['held', 'bigint', (write) => write.held],
  ['debt', 'bigint', (write) => write.debt],
  ['updated_at', 'text', (write) => write.updatedAt],
];

const TRANSACTION_COLUMNS: readonly ArrayColumn<LedgerTransactionRow>[] = [
  ['id', 'text', (row) => row.id],
  ['project_id', 'text', (row) => row.project_id],
  ['type', 'text', (row) => row.type],
  ['currency', 'text', (row) => row.currency],
  ['amount', 'bigint', (row) => row.amount],
  ['description', 'text', (row) => row.description],
  ['metadata', 'text', (row) => row.metadata],
  ['idempotency_key', 'text', (row) => row.idempotency_key],
  ['idempotency_scope', 'text', (row) => row.idempotency_scope],
  ['wallet_id', 'text', (row) => row.wallet_id],
  ['from_wallet_id', 'text', (row) => row.from_wallet_id],
  ['to_wallet_id', 'text', (row) => row.to_wallet_id],
  ['created_at', 'text', (row) => row.created_at],
  ['actor_type', 'text', (row) => row.actor_type],
  ['actor_id', 'text', (row) => row.actor_id],
  ['actor_user_id', 'text', (row) => row.actor_user_id],
  ['request_id', 'text', (row) => row.request_id],
  ['ip', 'text', (row) => row.ip],
  ['user_agent', 'text', (row) => row.user_agent],
  ['sources', 'text', (row) => row.sources],
  ['priority', 'int', (row) => row.priority],
  ['expires_at', 'text', (row) => row.expires_at],
  ['category', 'text', (row) => row.category],
  ['categories', 'text', (row) => row.categories],
  ['recurring_grant_id', 'text', (row) => row.recurring_grant_id],
  ['repaid', 'bigint', (row) => row.repaid],
  ['reverses', 'text', (row) => row.reverses],
  ['asked_amount', 'bigint', (row) => row.asked_amount],
];

const ENTRY_COLUMNS: readonly ArrayColumn<NewLedgerEntry>[] = [
  ['project_id', 'text', (row) => row.project_id],
  ['transaction_id', 'text', (row) => row.transaction_id],
  ['account_id', 'text', (row) => row.account_id],
  ['amount', 'bigint', (row) => row.amount],
  ['balance_after', 'bigint', (row) => row.balance_after],
  ['created_at', 'text', (row) => row.created_at],
];

const GRANT_COLUMNS: readonly ArrayColumn<GrantRow>[] = [
  ['id', 'text', (grant) => grant.id],
  ['remaining', 'bigint', (grant) => grant.remaining],
  ['held', 'bigint', (grant) => grant.held],
  ['expired', 'bigint', (grant) => grant.expired],
];

/**
 * PostgreSQL: each statement is one fixed text over arrays (`unnest`), so it is prepared once per
 * connection (`PREPARED_STATEMENT`) and a batch of 1,000 costs the same round trips as a batch of one.
 */
const postgresStatements: LedgerStatements = {
  async lockWallets(trx, wallets) {
    if (wallets.length === 0) return [];
    const result = await sql<WalletRow>`${sql.raw(PREPARED_STATEMENT)}
      select w.id, w.project_id, w.user_id, w.currency, w.balance, w.held, w.credit_limit, w.debt, w.status, w.metadata, w.low_balance_threshold, w.created_at, w.updated_at
      from wallets w
      where (w.project_id, w.id) in (select * from ${unnestArrays(wallets, WALLET_REF_COLUMNS)})
      order by w.id
      for update`.execute(trx);
    return result.rows;
  },
  async findKeyedTransactions(trx, keys) {
    if (keys.length === 0) return [];
    const result = await sql<TransactionWithBalance>`${sql.raw(PREPARED_STATEMENT)}
      select t.id, t.project_id, t.type, t.currency, t.amount, t.description, t.metadata, t.idempotency_key, t.idempotency_scope,
             t.wallet_id, t.from_wallet_id, t.to_wallet_id, t.created_at, t.actor_type, t.actor_id, t.actor_user_id, t.request_id,
             t.sources, t.priority, t.expires_at, t.category, t.categories, t.recurring_grant_id, t.repaid, t.reverses,
             t.asked_amount, e.balance_after
      from ${unnestArrays(keys, KEY_COLUMNS)} as k(${columnNames(KEY_COLUMNS)})
      cross join lateral (
        select * from ledger_transactions t
        where t.project_id = k.project_id and t.idempotency_scope = k.scope and t.idempotency_key = k.key
        limit 1
      ) t
      left join ledger_entries e on e.transaction_id = t.id and e.account_id = t.wallet_id`.execute(trx);
    return result.rows;
  },
  findKeyedRefusals: findKeyedRefusalRows,
  async writeBalances(trx, balances) {
    if (balances.length === 0) return;
    await sql`${sql.raw(PREPARED_STATEMENT)}
      update wallets w set balance = v.balance, held = v.held, debt = v.debt, updated_at = v.updated_at
      from ${unnestArrays(balances, BALANCE_COLUMNS)} as v(${columnNames(BALANCE_COLUMNS)})
      where w.project_id = v.project_id and w.id = v.id`.execute(trx);
  },
  async insertTransactions(trx, rows) {
    if (rows.length === 0) return;
    await sql`${sql.raw(PREPARED_STATEMENT)}
      insert into ledger_transactions (${columnNames(TRANSACTION_COLUMNS)})
      select * from ${unnestArrays(rows, TRANSACTION_COLUMNS)}`.execute(trx);
  },
  async insertEntries(trx, rows) {
    if (rows.length === 0) return;
    const columns = columnNames(ENTRY_COLUMNS);
    // `with ordinality … order by`: the identity `seq` follows the order given.
    await sql`${sql.raw(PREPARED_STATEMENT)}
      insert into ledger_entries (${columns})
      select ${columns}
      from ${unnestArrays(rows, ENTRY_COLUMNS)} with ordinality as e(${columns}, ord)
      order by ord`.execute(trx);
  },
  async updateGrants(trx, rows) {
    if (rows.length === 0) return;
    await sql`${sql.raw(PREPARED_STATEMENT)}
      update wallet_grants g set remaining = v.remaining, held = v.held, expired = v.expired
      from ${unnestArrays(rows, GRANT_COLUMNS)} as v(${columnNames(GRANT_COLUMNS)})
      where g.id = v.id`.execute(trx);
  },
};
