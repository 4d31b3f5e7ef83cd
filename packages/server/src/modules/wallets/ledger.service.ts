import type { Db } from '../../db/database.js';
import { inTransaction, type Transaction as DbTransaction } from '../../db/transaction.js';
import { completeIdempotentRequest, type IdempotencyLock } from '../../http/idempotency.store.js';
import { AssertionError, assert } from '../../shared/assert.js';
import { type Clock, isoTime } from '../../shared/clock.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { recordEvents } from '../events/events.service.js';
import { GroupCommit } from './group-commit.js';
import { lowBalanceEvents, walletEvent } from './ledger.events.js';
import { jsonWithOpenNumber, moveInOneStatement, writeTransferInOneStatement } from './ledger.postgres.js';
import * as ledger from './ledger.store.js';
import { toTransaction, toTransfer, toWalletTransaction } from './ledger.views.js';
import {
  BALANCE_MAX,
  type ListTransactionsQuery,
  type MovementBody,
  type Transaction,
  type Transfer,
  type TransferBody,
  type WalletTransactionList,
} from './wallets.schemas.js';
import { assertAmount, refuseOutOfRange, refuseTransfer, refuseUnusable, walletMissing } from './wallets.rules.js';
import * as wallets from './wallets.store.js';

export interface LedgerServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
}

/**
 * The idempotency key a ledger request holds. Its response is stored in the same database
 * transaction as the change, so the change and its key commit together or not at all: a retry
 * after a crash either replays the response or runs the operation for the first time.
 */
export interface HeldIdempotencyKey {
  readonly lock: IdempotencyLock;
}

export interface LedgerRequestOptions {
  readonly idempotency?: HeldIdempotencyKey | undefined;
}

const LIST_LIMIT_DEFAULT = 20;
/** Status of a ledger response stored for replay: the operation created a transaction. */
const CREATED = 201;

/** What one credit or debit will write, fixed before any attempt so a retried attempt writes the same. */
interface Movement {
  readonly type: 'credit' | 'debit';
  readonly projectId: string;
  readonly walletId: string;
  readonly amount: number;
  /** Signed: what the wallet's balance changes by. */
  readonly delta: number;
  readonly transactionId: string;
  readonly description: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  readonly createdAt: string;
  readonly idempotency: HeldIdempotencyKey | undefined;
}

/**
 * Credits, debits and transfers on the double-entry ledger (CONTRACT.md section 4, "Ledger rules").
 *
 * Each movement is one database transaction that changes the wallet balances, appends the
 * transaction and its entries (which sum to zero), writes the outbox events and stores the
 * idempotent response. A refusal throws and rolls all of it back. How each dialect runs it:
 * docs/adr (dialect strategy) and the notes on `moveInOneStatement` and `GroupCommit`.
 */
export class LedgerService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #groupCommit: GroupCommit | undefined;

  constructor(options: LedgerServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#groupCommit = options.db.dialect === 'sqlite' ? new GroupCommit(options.db) : undefined;
  }

  /** Adds credits, with the counter-entry on the issuance account. */
  async credit(projectId: string, walletId: string, input: MovementBody, options: LedgerRequestOptions = {}): Promise<Transaction> {
    return this.#move(this.#movement('credit', projectId, walletId, input, options));
  }

  /** Takes credits; refuses with `insufficient_credits` (and changes nothing) when the balance is short. */
  async debit(projectId: string, walletId: string, input: MovementBody, options: LedgerRequestOptions = {}): Promise<Transaction> {
    return this.#move(this.#movement('debit', projectId, walletId, input, options));
  }

  async transfer(projectId: string, input: TransferBody, options: LedgerRequestOptions = {}): Promise<Transfer> {
    assertAmount(input.amount);
    const { from_wallet_id: fromWalletId, to_wallet_id: toWalletId, amount } = input;
    if (fromWalletId === toWalletId)
      throw new ApiError('same_wallet', 'A transfer needs two different wallets.', { param: 'to_wallet_id' });
    const transfer: Transfer = {
      id: newId('txn'),
      object: 'transfer',
      status: 'completed',
      from_wallet_id: fromWalletId,
      to_wallet_id: toWalletId,
      amount,
      description: input.description ?? null,
      idempotency_key: options.idempotency?.lock.key ?? null,
      created_at: isoTime(this.#clock.now()),
    };

    return this.#write(async (trx) => {
      // Both wallets locked, lower id first (see findWalletsInIdOrder): what is checked here still
      // holds when the balances change.
      const rows = await wallets.findWalletsInIdOrder(trx, projectId, [fromWalletId, toWalletId], this.#lock());
      const source = rows.find((row) => row.id === fromWalletId);
      refuseTransfer(
        source,
        rows.find((row) => row.id === toWalletId),
        { fromWalletId, toWalletId, amount },
      );
      const sourceAfter =
        this.#db.dialect === 'postgres'
          ? await this.#writeTransferPostgres(trx, projectId, transfer, source.currency, options.idempotency)
          : await this.#writeTransfer(trx, projectId, transfer, rows, source.currency, options.idempotency);
      assert(sourceAfter.balance === source.balance - amount, `transfer ${transfer.id} took exactly its amount`);
      return transfer;
    });
  }

  /** A credit or debit as a transaction, or a transfer. */
  async getTransaction(projectId: string, transactionId: string): Promise<Transaction | Transfer> {
    const row = await ledger.findTransaction(this.#db.kysely, projectId, transactionId);
    if (row === undefined) throw new ApiError('resource_missing', `No transaction ${transactionId}.`);
    return row.type === 'transfer' ? toTransfer(row) : toTransaction(row);
  }

  /** A wallet's history, newest first; transfers appear as `transfer_out` or `transfer_in`. */
  async listWalletTransactions(projectId: string, walletId: string, query: ListTransactionsQuery): Promise<WalletTransactionList> {
    const limit = query.limit ?? LIST_LIMIT_DEFAULT;
    const db = this.#db.kysely;
    if ((await wallets.findWallet(db, projectId, walletId)) === undefined) throw walletMissing(walletId);
    let beforeSeq: number | undefined;
    if (query.starting_after !== undefined) {
      beforeSeq = await ledger.findWalletEntrySeq(db, projectId, walletId, query.starting_after);
      if (beforeSeq === undefined) {
        throw new ApiError('resource_missing', `Wallet ${walletId} has no transaction ${query.starting_after} to start after.`, {
          param: 'starting_after',
        });
      }
    }
    // One row more than asked tells whether there is a next page.
    const rows = await ledger.listWalletHistory(db, projectId, walletId, { beforeSeq, limit: limit + 1 });
    return { object: 'list', data: rows.slice(0, limit).map((row) => toWalletTransaction(row, walletId)), has_more: rows.length > limit };
  }

  #movement(type: Movement['type'], projectId: string, walletId: string, input: MovementBody, options: LedgerRequestOptions): Movement {
    assertAmount(input.amount);
    return {
      type,
      projectId,
      walletId,
      amount: input.amount,
      delta: type === 'credit' ? input.amount : -input.amount,
      transactionId: newId('txn'),
      description: input.description ?? null,
      metadata: input.metadata ?? {},
      createdAt: isoTime(this.#clock.now()),
      idempotency: options.idempotency,
    };
  }

  async #move(movement: Movement): Promise<Transaction> {
    if (this.#db.dialect === 'postgres') {
      // The common case in one round trip. When it changes nothing, the general path below runs
      // the same movement in a transaction that locks the wallet and names the reason.
      const after = await moveInOneStatement(this.#db.kysely, {
        projectId: movement.projectId,
        walletId: movement.walletId,
        transactionId: movement.transactionId,
        type: movement.type,
        amount: movement.amount,
        description: movement.description,
        createdAt: movement.createdAt,
        metadataJson: JSON.stringify(movement.metadata),
        event: { id: newId('evt'), type: movementEventType(movement), data: jsonWithOpenNumber(movementEventData(movement, 0), 'balance') },
        lowBalanceEventId: movement.type === 'debit' ? newId('evt') : undefined,
        idempotency:
          movement.idempotency === undefined
            ? undefined
            : { lock: movement.idempotency.lock, response: jsonWithOpenNumber(movementResponse(movement, 0), 'balance_after') },
      });
      if (after !== undefined) {
        assert(after.balance >= 0 && after.balance <= BALANCE_MAX, 'a wallet balance is in range');
        return movementResponse(movement, after.balance);
      }
    }
    return this.#write((trx) => this.#moveInTransaction(trx, movement));
  }

  /** A credit or debit statement by statement, inside the caller's transaction. */
  async #moveInTransaction(trx: DbTransaction, movement: Movement): Promise<Transaction> {
    const { projectId, walletId, transactionId, delta, createdAt } = movement;
    const after = await this.#changeBalanceOrRefuse(trx, movement);
    const transaction = movementResponse(movement, after.balance);
    await ledger.insertTransaction(trx, {
      id: transactionId,
      project_id: projectId,
      type: movement.type,
      currency: after.currency,
      amount: movement.amount,
      description: movement.description,
      metadata: JSON.stringify(movement.metadata),
      idempotency_key: transaction.idempotency_key,
      idempotency_scope: walletId,
      wallet_id: walletId,
      from_wallet_id: null,
      to_wallet_id: null,
      created_at: createdAt,
    });
    await insertBalancedEntries(trx, [
      entry(projectId, transactionId, walletId, delta, after.balance, createdAt),
      entry(projectId, transactionId, ledger.issuanceAccountId(after.currency), -delta, null, createdAt),
    ]);
    await recordEvents(trx, [
      walletEvent(projectId, transactionId, movementEventType(movement), movementEventData(movement, after.balance), createdAt),
      ...(movement.type === 'debit' ? lowBalanceEvents(projectId, transactionId, walletId, after, movement.amount, createdAt) : []),
    ]);
    await storeResponse(trx, movement.idempotency, transaction);
    return transaction;
  }

  /**
   * The conditional update, and when it changes nothing, the reason why. The reason is read with
   * the row locked, so it is the state the refusal is about; if that state would in fact allow the
   * change (it moved between the two statements), the update runs again and cannot fail now.
   */
  async #changeBalanceOrRefuse(trx: DbTransaction, movement: Movement): Promise<ledger.BalanceAfterChange> {
    const { projectId, walletId, delta } = movement;
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      const after = await ledger.changeBalance(trx, { projectId, walletId, delta, updatedAt: movement.createdAt });
      if (after !== undefined) return after;
      const wallet = await wallets.findWallet(trx, projectId, walletId, this.#lock());
      refuseUnusable(wallet, walletId);
      refuseOutOfRange(wallet, delta);
    }
    throw new AssertionError(`wallet ${walletId} allows the change but the update did not apply`);
  }

  /** A checked transfer's writes statement by statement (SQLite). Returns the source's balance after. */
  async #writeTransfer(
    trx: DbTransaction,
    projectId: string,
    transfer: Transfer,
    lockedInIdOrder: readonly wallets.WalletRow[],
    currency: string,
    idempotency: HeldIdempotencyKey | undefined,
  ): Promise<ledger.BalanceAfterChange> {
    const { id: transactionId, from_wallet_id: fromWalletId, amount, created_at: createdAt } = transfer;
    const after = new Map<string, ledger.BalanceAfterChange>();
    for (const row of lockedInIdOrder) {
      const delta = row.id === fromWalletId ? -amount : amount;
      const changed = await ledger.changeBalance(trx, { projectId, walletId: row.id, delta, updatedAt: createdAt });
      if (changed === undefined) throw new AssertionError(`the balance of locked wallet ${row.id} did not change as checked`);
      after.set(row.id, changed);
    }
    const sourceAfter = after.get(fromWalletId);
    const targetAfter = after.get(transfer.to_wallet_id);
    assert(sourceAfter !== undefined && targetAfter !== undefined, 'both wallets of a transfer changed');
    await ledger.insertTransaction(trx, {
      id: transactionId,
      project_id: projectId,
      type: 'transfer',
      currency,
      amount,
      description: transfer.description,
      metadata: '{}',
      idempotency_key: transfer.idempotency_key,
      idempotency_scope: '',
      wallet_id: null,
      from_wallet_id: fromWalletId,
      to_wallet_id: transfer.to_wallet_id,
      created_at: createdAt,
    });
    await insertBalancedEntries(trx, [
      entry(projectId, transactionId, fromWalletId, -amount, sourceAfter.balance, createdAt),
      entry(projectId, transactionId, transfer.to_wallet_id, amount, targetAfter.balance, createdAt),
    ]);
    const data = transferEventData(transfer);
    await recordEvents(trx, [
      walletEvent(projectId, transactionId, 'wallet.transfer.sent', data, createdAt),
      walletEvent(projectId, transactionId, 'wallet.transfer.received', data, createdAt),
      ...lowBalanceEvents(projectId, transactionId, fromWalletId, sourceAfter, amount, createdAt),
    ]);
    await storeResponse(trx, idempotency, transfer);
    return sourceAfter;
  }

  /** A checked transfer's writes in one statement (PostgreSQL). Returns the source's balance after. */
  async #writeTransferPostgres(
    trx: DbTransaction,
    projectId: string,
    transfer: Transfer,
    currency: string,
    idempotency: HeldIdempotencyKey | undefined,
  ): Promise<ledger.BalanceAfterChange> {
    const written = await writeTransferInOneStatement(trx, {
      projectId,
      transactionId: transfer.id,
      fromWalletId: transfer.from_wallet_id,
      toWalletId: transfer.to_wallet_id,
      amount: transfer.amount,
      currency,
      description: transfer.description,
      createdAt: transfer.created_at,
      events: { sentId: newId('evt'), receivedId: newId('evt'), dataJson: JSON.stringify(transferEventData(transfer)) },
      lowBalanceEventId: newId('evt'),
      idempotency: idempotency === undefined ? undefined : { lock: idempotency.lock, responseJson: JSON.stringify(transfer) },
    });
    if (!written.responseStored) throw keyTakenOver(idempotency);
    assert(written.changed.length === 2, `transfer ${transfer.id} changed both locked wallets`);
    const sourceAfter = written.changed.find((row) => row.id === transfer.from_wallet_id);
    assert(sourceAfter !== undefined, `transfer ${transfer.id} changed its source`);
    return sourceAfter;
  }

  /** One movement's database transaction: shared with its neighbours' on SQLite (group commit). */
  #write<T>(work: (trx: DbTransaction) => Promise<T>): Promise<T> {
    return this.#groupCommit === undefined ? inTransaction(this.#db, work) : this.#groupCommit.run(work);
  }

  #lock(): wallets.RowLock {
    return this.#db.dialect === 'postgres' ? 'for update' : 'none';
  }
}

function movementResponse(movement: Movement, balanceAfter: number): Transaction {
  return {
    id: movement.transactionId,
    object: 'transaction',
    type: movement.type,
    wallet_id: movement.walletId,
    amount: movement.amount,
    balance_after: balanceAfter,
    description: movement.description,
    metadata: movement.metadata,
    idempotency_key: movement.idempotency?.lock.key ?? null,
    status: 'completed',
    created_at: movement.createdAt,
  };
}

function movementEventType(movement: Movement): 'wallet.credit.added' | 'wallet.credit.deducted' {
  return movement.type === 'credit' ? 'wallet.credit.added' : 'wallet.credit.deducted';
}

function movementEventData(movement: Movement, balance: number) {
  return {
    wallet_id: movement.walletId,
    transaction_id: movement.transactionId,
    amount: movement.amount,
    balance,
    description: movement.description,
  };
}

function transferEventData(transfer: Transfer) {
  return {
    transfer_id: transfer.id,
    from: transfer.from_wallet_id,
    to: transfer.to_wallet_id,
    amount: transfer.amount,
    status: transfer.status,
  };
}

function entry(
  projectId: string,
  transactionId: string,
  accountId: string,
  amount: number,
  balanceAfter: number | null,
  createdAt: string,
): ledger.NewLedgerEntry {
  return {
    project_id: projectId,
    transaction_id: transactionId,
    account_id: accountId,
    amount,
    balance_after: balanceAfter,
    created_at: createdAt,
  };
}

/** Double entry: a transaction's entries sum to zero, always. */
async function insertBalancedEntries(trx: DbTransaction, entries: readonly ledger.NewLedgerEntry[]): Promise<void> {
  assert(entries.length >= 2, 'a ledger transaction has at least two entries');
  assert(
    entries.reduce((sum, line) => sum + line.amount, 0) === 0,
    `the entries of transaction ${entries[0]?.transaction_id ?? '?'} do not sum to zero`,
  );
  for (const line of entries) {
    assert(line.balance_after === null || (line.balance_after >= 0 && line.balance_after <= BALANCE_MAX), 'a wallet balance is in range');
  }
  await ledger.insertEntries(trx, entries);
}

/** Stores the response for replay in the operation's own transaction; a lost lock rolls it back. */
async function storeResponse(trx: DbTransaction, idempotency: HeldIdempotencyKey | undefined, body: Transaction | Transfer): Promise<void> {
  if (idempotency === undefined) return;
  if (!(await completeIdempotentRequest(trx, idempotency.lock, CREATED, JSON.stringify(body)))) throw keyTakenOver(idempotency);
}

function keyTakenOver(idempotency: HeldIdempotencyKey | undefined): ApiError {
  return new ApiError(
    'idempotency_key_in_use',
    `Idempotency key "${idempotency?.lock.key ?? ''}" was taken over by another request while this one ran; nothing was applied.`,
  );
}
