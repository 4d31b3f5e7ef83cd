import { sql } from 'kysely';
import { type Dialect, PREPARED_STATEMENT } from '../../db/database.js';
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

/** Rows per multi-row INSERT on SQLite, well below its limit of 32,766 parameters. */
const SQLITE_ROWS_PER_INSERT = 500;

export function ledgerStatements(dialect: Dialect): LedgerStatements {
  return dialect === 'postgres' ? postgresStatements : sqliteStatements;
}

function chunks<T>(rows: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < rows.length; start += size) out.push(rows.slice(start, start + size));
  return out;
}

/** SQLite: statements run in process, so plain Kysely queries; `IN` over row values. */
const sqliteStatements: LedgerStatements = {
  async lockWallets(trx, wallets) {
    if (wallets.length === 0) return [];
    return trx
      .selectFrom('wallets')
      .selectAll()
      .where((eb) =>
        eb(
          eb.refTuple('project_id', 'id'),
          'in',
          wallets.map((wallet) => eb.tuple(wallet.projectId, wallet.walletId)),
        ),
      )
      .orderBy('id')
      .execute();
  },
  async findKeyedTransactions(trx, keys) {
    if (keys.length === 0) return [];
    return (
      trx
        .selectFrom('ledger_transactions as t')
        .leftJoin('ledger_entries as e', (join) => join.onRef('e.transaction_id', '=', 't.id').onRef('e.account_id', '=', 't.wallet_id'))
        .selectAll('t')
        .select('e.balance_after')
        // Says what the partial unique index on the keys says, so SQLite reads the keys through it
        // instead of every transaction of the project.
        .where('t.idempotency_key', 'is not', null)
        .where((eb) =>
          eb(
            eb.refTuple('t.project_id', 't.idempotency_scope', 't.idempotency_key'),
            'in',
            keys.map((key) => eb.tuple(key.projectId, key.scope, key.key)),
          ),
        )
        .execute()
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
    for (const part of chunks(rows, SQLITE_ROWS_PER_INSERT)) await trx.insertInto('ledger_transactions').values(part).execute();
  },
  async insertEntries(trx, rows) {
    for (const part of chunks(rows, SQLITE_ROWS_PER_INSERT)) await trx.insertInto('ledger_entries').values(part).execute();
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
 * PostgreSQL: each statement is one fixed text over arrays (`unnest`), so it is prepared once per
 * connection (`PREPARED_STATEMENT`) and a batch of 1,000 costs the same round trips as a batch of one.
 */
const postgresStatements: LedgerStatements = {
  async lockWallets(trx, wallets) {
    if (wallets.length === 0) return [];
    const result = await sql<WalletRow>`${sql.raw(PREPARED_STATEMENT)}
      select w.id, w.project_id, w.user_id, w.currency, w.balance, w.held, w.credit_limit, w.debt, w.status, w.metadata, w.low_balance_threshold, w.created_at, w.updated_at
      from wallets w
      where (w.project_id, w.id) in (select * from unnest(${wallets.map((wallet) => wallet.projectId)}::text[],
                                                        ${wallets.map((wallet) => wallet.walletId)}::text[]))
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
      from unnest(${keys.map((key) => key.projectId)}::text[], ${keys.map((key) => key.scope)}::text[],
                  ${keys.map((key) => key.key)}::text[]) as k(project_id, scope, key)
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
    const column = <T>(pick: (write: BalanceWrite) => T) => balances.map(pick);
    await sql`${sql.raw(PREPARED_STATEMENT)}
      update wallets w set balance = v.balance, held = v.held, debt = v.debt, updated_at = v.updated_at
      from unnest(${column((b) => b.projectId)}::text[], ${column((b) => b.walletId)}::text[],
                  ${column((b) => String(b.balance))}::bigint[], ${column((b) => String(b.held))}::bigint[],
                  ${column((b) => String(b.debt))}::bigint[], ${column((b) => b.updatedAt)}::text[])
           as v(project_id, id, balance, held, debt, updated_at)
      where w.project_id = v.project_id and w.id = v.id`.execute(trx);
  },
  async insertTransactions(trx, rows) {
    if (rows.length === 0) return;
    const column = <T>(pick: (row: LedgerTransactionRow) => T) => rows.map(pick);
    await sql`${sql.raw(PREPARED_STATEMENT)}
      insert into ledger_transactions (id, project_id, type, currency, amount, description, metadata, idempotency_key,
                                       idempotency_scope, wallet_id, from_wallet_id, to_wallet_id, created_at, actor_type,
                                       actor_id, actor_user_id, request_id, ip, user_agent, sources, priority, expires_at,
                                       category, categories, recurring_grant_id, repaid, reverses, asked_amount)
      select * from unnest(${column((r) => r.id)}::text[], ${column((r) => r.project_id)}::text[], ${column((r) => r.type)}::text[],
        ${column((r) => r.currency)}::text[], ${column((r) => String(r.amount))}::bigint[], ${column((r) => r.description)}::text[],
        ${column((r) => r.metadata)}::text[], ${column((r) => r.idempotency_key)}::text[], ${column((r) => r.idempotency_scope)}::text[],
        ${column((r) => r.wallet_id)}::text[], ${column((r) => r.from_wallet_id)}::text[], ${column((r) => r.to_wallet_id)}::text[],
        ${column((r) => r.created_at)}::text[], ${column((r) => r.actor_type)}::text[], ${column((r) => r.actor_id)}::text[],
        ${column((r) => r.actor_user_id)}::text[], ${column((r) => r.request_id)}::text[], ${column((r) => r.ip)}::text[],
        ${column((r) => r.user_agent)}::text[], ${column((r) => r.sources)}::text[],
        ${column((r) => r.priority)}::int[], ${column((r) => r.expires_at)}::text[], ${column((r) => r.category)}::text[],
        ${column((r) => r.categories)}::text[], ${column((r) => r.recurring_grant_id)}::text[],
        ${column((r) => String(r.repaid))}::bigint[], ${column((r) => r.reverses)}::text[],
        ${column((r) => (r.asked_amount === null ? null : String(r.asked_amount)))}::bigint[])`.execute(trx);
  },
  async insertEntries(trx, rows) {
    if (rows.length === 0) return;
    const column = <T>(pick: (row: NewLedgerEntry) => T) => rows.map(pick);
    // `with ordinality … order by`: the identity `seq` follows the order given.
    await sql`${sql.raw(PREPARED_STATEMENT)}
      insert into ledger_entries (project_id, transaction_id, account_id, amount, balance_after, created_at)
      select project_id, transaction_id, account_id, amount, balance_after, created_at
      from unnest(${column((r) => r.project_id)}::text[], ${column((r) => r.transaction_id)}::text[],
                  ${column((r) => r.account_id)}::text[], ${column((r) => String(r.amount))}::bigint[],
                  ${column((r) => (r.balance_after === null ? null : String(r.balance_after)))}::bigint[],
                  ${column((r) => r.created_at)}::text[])
           with ordinality as e(project_id, transaction_id, account_id, amount, balance_after, created_at, ord)
      order by ord`.execute(trx);
  },
  async updateGrants(trx, rows) {
    if (rows.length === 0) return;
    const column = <T>(pick: (row: GrantRow) => T) => rows.map(pick);
    await sql`${sql.raw(PREPARED_STATEMENT)}
      update wallet_grants g set remaining = v.remaining, held = v.held, expired = v.expired
      from unnest(${column((g) => g.id)}::text[], ${column((g) => String(g.remaining))}::bigint[],
                  ${column((g) => String(g.held))}::bigint[], ${column((g) => String(g.expired))}::bigint[])
           as v(id, remaining, held, expired)
      where g.id = v.id`.execute(trx);
  },
};
