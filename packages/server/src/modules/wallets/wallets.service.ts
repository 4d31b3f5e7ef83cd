import type { Db } from '../../db/database.js';
import { pageOf, startPage } from '../../db/pagination.js';
import { inTransaction, rowLockFor, type Transaction as DbTransaction } from '../../db/transaction.js';
import { assert } from '../../lib/assert.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { AuditAction, AuditContext, AuditService, AuditValue } from '../audit/audit.service.js';
import type { UserDirectory } from './user-directory.js';
import {
  type Balance,
  type CreateWalletBody,
  type ListWalletsQuery,
  METADATA_KEYS_MAX,
  type UpdateWalletBody,
  type Wallet,
  type WalletList,
  type WalletTransaction,
} from './wallets.schemas.js';
import { parseMetadata, withoutEmptyValues } from '../../lib/metadata.js';
import * as store from './wallets.store.js';
import {
  availableOf,
  availableOfReading,
  categoryBalancesOf,
  recentOfOldestActiveWallet,
  recentOfWallet,
  toWalletTransaction,
  walletClosed,
  walletMissing,
} from '../ledger/ledger.service.js';

export interface WalletsServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly users: UserDirectory;
  readonly audit: AuditService;
}

/**
 * Wallets and their states: create, read, list, settings, freeze, unfreeze, close. Balances move
 * only through the ledger (`LedgerService`).
 */
export class WalletsService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #users: UserDirectory;
  readonly #audit: AuditService;

  constructor(options: WalletsServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#users = options.users;
    this.#audit = options.audit;
  }

  async create(projectId: string, input: CreateWalletBody, context: AuditContext): Promise<Wallet> {
    const record = {
      projectId,
      action: 'wallet.create',
      resource: { type: 'wallet', id: null },
      changes: { user_id: input.user_id, currency: input.currency },
    } as const;
    return this.#audit.recordingRefusals(context, record, async () => {
      if (!(await this.#users.userExists(projectId, input.user_id))) {
        throw new ApiError('resource_missing', `No user ${input.user_id}.`, { param: 'user_id' });
      }
      const now = isoTime(this.#clock.now());
      const row: store.WalletRow = {
        id: newId('wlt'),
        project_id: projectId,
        user_id: input.user_id,
        currency: input.currency,
        balance: 0,
        held: 0,
        credit_limit: input.credit_limit ?? 0,
        debt: 0,
        status: 'active',
        metadata: JSON.stringify(withoutEmptyValues(input.metadata ?? {})),
        low_balance_threshold: input.low_balance_threshold ?? null,
        created_at: now,
        updated_at: now,
      };
      await inTransaction(this.#db, async (trx) => {
        await store.insertWallet(trx, row);
        await this.#audit.record(trx, context, { ...record, resource: { type: 'wallet', id: row.id }, createdAt: now });
      });
      return toWallet(row);
    });
  }

  async get(projectId: string, walletId: string): Promise<Wallet> {
    const now = isoTime(this.#clock.now());
    const row = await this.#read(projectId, walletId, now);
    return { ...toWallet(row), available: await availableOfReading(this.#db.kysely, projectId, row, now) };
  }

  /** Wallets as the API shows them, `available` as of now (modules/ledger/ledger.available.ts). */
  async #views(projectId: string, rows: readonly store.WalletRow[]): Promise<Wallet[]> {
    const available = await availableOf(this.#db.kysely, projectId, rows, isoTime(this.#clock.now()));
    return rows.map((row) => ({ ...toWallet(row), available: available.get(row.id) ?? row.balance - row.held }));
  }

  async getBalance(projectId: string, walletId: string): Promise<Balance> {
    const now = isoTime(this.#clock.now());
    return this.#balance(projectId, await this.#read(projectId, walletId, now), now);
  }

  /**
   * A user's own wallet's balance and last `limit` transactions (`GET /wallet/balance`): the wallet
   * `walletId` (400 `parameter_invalid` when `currency` names another unit), or else the user's
   * oldest active wallet in `currency`, or else their oldest active wallet. The history is read first and the wallet
   * after it, so the balance is never older than the newest transaction shown; another user's
   * wallet answers as if it did not exist.
   */
  async userStatement(
    projectId: string,
    userId: string,
    choice: { readonly walletId?: string | undefined; readonly currency?: string | undefined },
    limit: number,
  ): Promise<{ balance: Balance; transactions: WalletTransaction[] }> {
    const now = isoTime(this.#clock.now());
    const { walletId, currency } = choice;
    if (walletId === undefined && currency !== undefined) {
      const wallet = await store.readOldestActiveWalletInUnit(this.#db, projectId, userId, currency, now);
      if (wallet === undefined)
        throw new ApiError('resource_missing', `This user has no active wallet in ${currency}.`, { param: 'currency' });
      return this.userStatement(projectId, userId, { walletId: wallet.id, currency }, limit);
    }
    if (walletId === undefined) {
      const rows = await recentOfOldestActiveWallet(this.#db, projectId, userId, limit);
      const wallet = await store.readOldestActiveWallet(this.#db, projectId, userId, now);
      if (wallet === undefined) throw new ApiError('resource_missing', 'This user has no active wallet.', { param: 'wallet_id' });
      // An empty history, or another wallet's (the oldest active one changed between the two
      // statements): read again, naming the wallet.
      if (rows[0]?.account_id !== wallet.id) return this.userStatement(projectId, userId, { walletId: wallet.id }, limit);
      return { balance: await this.#balance(projectId, wallet, now), transactions: rows.map((row) => toWalletTransaction(row, wallet.id)) };
    }
    const rows = await recentOfWallet(this.#db, projectId, walletId, limit);
    const wallet = await store.readWallet(this.#db, projectId, walletId, now);
    if (wallet === undefined || wallet.user_id !== userId) {
      throw new ApiError('resource_missing', `No wallet ${walletId} of this user.`, { param: 'wallet_id' });
    }
    if (currency !== undefined && wallet.currency !== currency) {
      throw new ApiError(
        'parameter_invalid',
        `Wallet ${walletId} holds ${wallet.currency}, not ${currency}; name one of the two or both alike.`,
        {
          param: 'currency',
        },
      );
    }
    return { balance: await this.#balance(projectId, wallet, now), transactions: rows.map((row) => toWalletTransaction(row, walletId)) };
  }

  /** The wallet and whether something on it expired unsettled (wallets.store.ts `readWallet`). */
  async #read(projectId: string, walletId: string, now: string): Promise<store.WalletReading> {
    const row = await store.readWallet(this.#db, projectId, walletId, now);
    if (row === undefined) throw walletMissing(walletId);
    return row;
  }

  async #balance(projectId: string, row: store.WalletReading, now: string): Promise<Balance> {
    const db = this.#db.kysely;
    return {
      credits: row.balance,
      currency: row.currency,
      available: await availableOfReading(db, projectId, row, now),
      categories: await categoryBalancesOf(db, projectId, row.id, now),
      debt: row.debt,
      credit_limit: row.credit_limit,
    };
  }

  async list(projectId: string, query: ListWalletsQuery): Promise<WalletList> {
    const page = await startPage(query, {
      find: (id) => store.findWallet(this.#db.kysely, projectId, id),
      missing: (id) => `No wallet ${id} to start after.`,
    });
    const rows = await store.listWallets(this.#db.kysely, projectId, { userId: query.user_id, after: page.after, limit: page.rowsToRead });
    const { rows: shown, has_more } = pageOf(rows, page.limit);
    return { object: 'list', data: await this.#views(projectId, shown), has_more };
  }

  /**
   * Merges metadata (a key set to "" is removed), sets or clears the low-balance threshold, and sets
   * the credit limit: never below what the wallet already uses of it (docs/adr/0023-credit-limits.md).
   */
  async update(projectId: string, walletId: string, input: UpdateWalletBody, context: AuditContext): Promise<Wallet> {
    return this.#change(context, projectId, walletId, 'wallet.update', async (trx, current) => {
      let metadata: string | undefined;
      if (input.metadata !== undefined) {
        const merged = withoutEmptyValues({ ...parseMetadata(current.metadata), ...input.metadata });
        if (Object.keys(merged).length > METADATA_KEYS_MAX) {
          throw new ApiError(
            'parameter_invalid',
            `A wallet holds at most ${METADATA_KEYS_MAX} metadata keys; this update would leave more.`,
            {
              param: 'metadata',
            },
          );
        }
        metadata = JSON.stringify(merged);
      }
      if (input.credit_limit !== undefined && input.credit_limit < current.credit_limit) {
        await refuseLimitBelowUse(trx, current, input.credit_limit);
      }
      const wallet = await this.#update(trx, projectId, walletId, {
        ...(metadata === undefined ? {} : { metadata }),
        ...(input.low_balance_threshold === undefined ? {} : { low_balance_threshold: input.low_balance_threshold }),
        ...(input.credit_limit === undefined ? {} : { credit_limit: input.credit_limit }),
      });
      return {
        wallet,
        changes: {
          metadata_changed: metadata !== undefined && metadata !== current.metadata,
          low_balance_threshold_before: current.low_balance_threshold,
          low_balance_threshold_after: wallet.low_balance_threshold,
          credit_limit_before: current.credit_limit,
          credit_limit_after: wallet.credit_limit,
        },
      };
    });
  }

  /** active → frozen. Freezing a frozen wallet changes nothing; a closed wallet stays closed. */
  async freeze(projectId: string, walletId: string, context: AuditContext): Promise<Wallet> {
    return this.#changeStatus(context, projectId, walletId, 'wallet.freeze', async (trx, current) => {
      if (current.status === 'closed') throw walletClosed(walletId);
      if (current.status === 'frozen') return toWallet(current);
      return this.#update(trx, projectId, walletId, { status: 'frozen' });
    });
  }

  /** frozen → active. Unfreezing an active wallet changes nothing; a closed wallet stays closed. */
  async unfreeze(projectId: string, walletId: string, context: AuditContext): Promise<Wallet> {
    return this.#changeStatus(context, projectId, walletId, 'wallet.unfreeze', async (trx, current) => {
      if (current.status === 'closed') throw walletClosed(walletId);
      if (current.status === 'active') return toWallet(current);
      return this.#update(trx, projectId, walletId, { status: 'active' });
    });
  }

  /**
   * Closes a wallet for good; only at balance 0. The row is locked while the balance is checked, so
   * no credit can land between the check and the close. Closing a closed wallet changes nothing.
   */
  async close(projectId: string, walletId: string, context: AuditContext): Promise<Wallet> {
    return this.#changeStatus(context, projectId, walletId, 'wallet.close', async (trx, current) => {
      if (current.status === 'closed') return toWallet(current);
      if (current.balance !== 0) {
        throw new ApiError('wallet_not_empty', `Wallet ${walletId} holds ${current.balance} credits; only an empty wallet can be closed.`);
      }
      return this.#update(trx, projectId, walletId, { status: 'closed' });
    });
  }

  async #changeStatus(
    context: AuditContext,
    projectId: string,
    walletId: string,
    action: AuditAction,
    change: (trx: DbTransaction, current: store.WalletRow) => Promise<Wallet>,
  ): Promise<Wallet> {
    return this.#change(context, projectId, walletId, action, async (trx, current) => {
      const wallet = await change(trx, current);
      return { wallet, changes: { status_before: current.status, status_after: wallet.status } };
    });
  }

  /**
   * One change of a wallet, with the row locked, and its audit entry in the same transaction; a
   * refusal is recorded on its own after the rollback.
   */
  async #change(
    context: AuditContext,
    projectId: string,
    walletId: string,
    action: AuditAction,
    change: (trx: DbTransaction, current: store.WalletRow) => Promise<{ wallet: Wallet; changes: Readonly<Record<string, AuditValue>> }>,
  ): Promise<Wallet> {
    const record = { projectId, action, resource: { type: 'wallet', id: walletId } } as const;
    const wallet = await this.#audit.recordingRefusals(context, record, () =>
      inTransaction(this.#db, async (trx) => {
        const current = await this.#find(trx, projectId, walletId, rowLockFor(this.#db.dialect));
        const { wallet, changes } = await change(trx, current);
        await this.#audit.record(trx, context, { ...record, changes });
        return wallet;
      }),
    );
    const available = await availableOf(
      this.#db.kysely,
      projectId,
      [{ ...wallet, held: wallet.balance - wallet.available }],
      isoTime(this.#clock.now()),
    );
    return { ...wallet, available: available.get(wallet.id) ?? wallet.available };
  }

  async #find(db: DbTransaction, projectId: string, walletId: string, lock: store.RowLock = 'none'): Promise<store.WalletRow> {
    const row = await store.findWallet(db, projectId, walletId, lock);
    if (row === undefined) throw walletMissing(walletId);
    return row;
  }

  async #update(
    trx: DbTransaction,
    projectId: string,
    walletId: string,
    changes: Omit<store.WalletChanges, 'updated_at'>,
  ): Promise<Wallet> {
    const row = await store.updateWallet(trx, projectId, walletId, { ...changes, updated_at: isoTime(this.#clock.now()) });
    assert(row !== undefined, `wallet ${walletId} vanished while locked`);
    return toWallet(row);
  }
}

/**
 * 422 `credit_limit_below_debt` when the wallet (locked) uses more of its credit limit than `limit`:
 * its debt, and what pending holds reserved beyond its grants, which a capture turns into debt.
 */
async function refuseLimitBelowUse(trx: DbTransaction, wallet: store.WalletRow, limit: number): Promise<void> {
  const onLimit = wallet.held - (await store.heldOnGrants(trx, wallet.project_id, wallet.id));
  const used = wallet.debt + onLimit;
  if (used <= limit) return;
  const held = onLimit > 0 ? ` and pending holds reserve ${onLimit} more on its credit limit` : '';
  throw new ApiError(
    'credit_limit_below_debt',
    `Wallet ${wallet.id} owes ${wallet.debt} credits${held}; its credit limit cannot go below ${used}.`,
    { param: 'credit_limit' },
  );
}

export function toWallet(row: store.WalletRow): Wallet {
  return {
    id: row.id,
    object: 'wallet',
    user_id: row.user_id,
    currency: row.currency,
    balance: row.balance,
    // Without unsettled expiries; reads that show it correct it (modules/ledger/ledger.available.ts).
    available: row.balance - row.held,
    credit_limit: row.credit_limit,
    debt: row.debt,
    status: row.status,
    metadata: parseMetadata(row.metadata),
    low_balance_threshold: row.low_balance_threshold,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
