import type { Db } from '../../db/database.js';
import { inTransaction, rowLockFor, isUniqueViolation, type Transaction as DbTransaction } from '../../db/transaction.js';
import { renderError } from '../../http/errors.js';
import { findStoredAnswer, type IdempotencyClaim, type StoredAnswer, storeAnswer } from '../../http/idempotency.store.js';
import { AssertionError, assert } from '../../shared/assert.js';
import { type Clock, isoTime } from '../../shared/clock.js';
import { ApiError, isApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { type AuditContext, type AuditRecord, type AuditService, isRefusal } from '../audit/audit.service.js';
import { statementAuditContext } from '../audit/audit.postgres.js';
import type { AuditRow } from '../audit/audit.store.js';
import { type EventData, recordEvents } from '../events/events.service.js';
import { GroupCommit } from './group-commit.js';
import { type BatchOutcome, WalletBatches, type WalletLine } from './wallet-batches.js';
import { WalletQueue } from './wallet-queue.js';
import { lowBalanceEvents, walletEvent } from './ledger.events.js';
import {
  type BatchedMovement,
  jsonWithOpenNumber,
  lockTwoWalletsInIdOrder,
  moveInOneStatement,
  moveManyInOneStatement,
  writeTransferInOneStatement,
} from './ledger.postgres.js';
import * as ledger from './ledger.store.js';
import { toTransaction, toTransfer, toWalletTransaction } from './ledger.views.js';
import {
  BALANCE_MAX,
  type ListTransactionsQuery,
  type MovementBody,
  type Transaction,
  type Transfer,
  type TransferBody,
  type WalletTransaction,
  type WalletTransactionList,
} from './wallets.schemas.js';
import { assertAmount, refuseOutOfRange, refuseTransfer, refuseUnusable, walletMissing } from './wallets.rules.js';
import * as wallets from './wallets.store.js';

export interface LedgerServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly audit: AuditService;
}

export interface LedgerRequestOptions {
  /**
   * The request's idempotency key, claimed in the movement's own database transaction: the key
   * and its answer commit with the change, or not at all. A retry after a crash either replays
   * the answer or runs the operation for the first time.
   */
  readonly idempotency?: IdempotencyClaim | undefined;
  /** Who asked, for the movement's audit entry (written in the movement's transaction, or alone when refused). */
  readonly audit: AuditContext;
}

/** A ledger request's answer: what it made, or what an earlier request with its key answered. */
export type LedgerAnswer<T> = { readonly replayed: false; readonly value: T } | { readonly replayed: true; readonly stored: StoredAnswer };

/** What a ledger operation records when it is refused: its request's context and entry. */
interface RefusalAudit {
  readonly context: AuditContext;
  readonly record: AuditRecord;
}

/** What a keyed operation's transaction ends with; a refusal is thrown once it has committed. */
type Settled<T> = { readonly kind: 'answer'; readonly answer: LedgerAnswer<T> } | { readonly kind: 'refused'; readonly error: ApiError };

const LIST_LIMIT_DEFAULT = 20;
/** Status of a ledger response stored for replay: the operation created a transaction. */
const CREATED = 201;
/**
 * Tries of a keyed operation. A try fails on the key's primary key only when a concurrent request
 * with the same key committed between this try's look-up and its insert; the next try finds that
 * request's answer, so two are enough and a third means a bug.
 */
const SETTLE_ATTEMPTS_MAX = 3;
/**
 * PostgreSQL: transfers touching one wallet that run at once in this process (see WalletQueue).
 * Measured with credits on a hot wallet: with 1, 2 and unbounded, PostgreSQL spent 265, 280 and
 * 560-670 µs of CPU per credit; 2 had the best throughput of the three
 * (docs/adr/0005-ledger-write-path.md).
 */
const TRANSFERS_PER_WALLET_MAX = 2;
/** PostgreSQL: credits and debits of one wallet in one statement at the most (see WalletBatches). */
const MOVEMENTS_PER_BATCH_MAX = 100;

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
  readonly idempotency: IdempotencyClaim | undefined;
  readonly audit: AuditContext;
}

/** A movement's audit entry when refused, and the head of its entry when done. */
function movementAuditRecord(movement: Movement): AuditRecord {
  return {
    projectId: movement.projectId,
    action: movement.type === 'credit' ? 'wallet.credit' : 'wallet.debit',
    resource: { type: 'wallet', id: movement.walletId },
    changes: { transaction_id: movement.transactionId, amount: movement.amount },
    createdAt: movement.createdAt,
  };
}

/**
 * Credits, debits and transfers on the double-entry ledger (docs/api.md section 4, "Ledger rules").
 *
 * Each movement is one database transaction that changes the wallet balances, appends the
 * transaction and its entries (which sum to zero), writes the outbox events and stores the
 * idempotent response. A refusal throws and rolls all of it back. How each dialect runs it:
 * docs/adr (dialect strategy) and the notes on `moveInOneStatement` and `GroupCommit`.
 */
export class LedgerService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #audit: AuditService;
  readonly #groupCommit: GroupCommit | undefined;
  readonly #walletQueue: WalletQueue | undefined;
  readonly #movementBatches: WalletBatches<Movement, LedgerAnswer<Transaction>> | undefined;

  constructor(options: LedgerServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#audit = options.audit;
    this.#groupCommit = options.db.dialect === 'sqlite' ? new GroupCommit(options.db) : undefined;
    this.#walletQueue = options.db.dialect === 'postgres' ? new WalletQueue({ perWalletMax: TRANSFERS_PER_WALLET_MAX }) : undefined;
    this.#movementBatches =
      options.db.dialect === 'postgres'
        ? new WalletBatches<Movement, LedgerAnswer<Transaction>>({
            flush: (line, movements) => this.#flushMovements(line, movements),
            batchSizeMax: MOVEMENTS_PER_BATCH_MAX,
          })
        : undefined;
  }

  /** Adds credits, with the counter-entry on the issuance account. */
  async credit(
    projectId: string,
    walletId: string,
    input: MovementBody,
    options: LedgerRequestOptions,
  ): Promise<LedgerAnswer<Transaction>> {
    return this.#move(this.#movement('credit', projectId, walletId, input, options));
  }

  /** Takes credits; refuses with `insufficient_credits` (and changes nothing) when the balance is short. */
  async debit(projectId: string, walletId: string, input: MovementBody, options: LedgerRequestOptions): Promise<LedgerAnswer<Transaction>> {
    return this.#move(this.#movement('debit', projectId, walletId, input, options));
  }

  async transfer(projectId: string, input: TransferBody, options: LedgerRequestOptions): Promise<LedgerAnswer<Transfer>> {
    assertAmount(input.amount);
    const { from_wallet_id: fromWalletId, to_wallet_id: toWalletId, amount } = input;
    const transfer: Transfer = {
      id: newId('txn'),
      object: 'transfer',
      status: 'completed',
      from_wallet_id: fromWalletId,
      to_wallet_id: toWalletId,
      amount,
      description: input.description ?? null,
      idempotency_key: options.idempotency?.key ?? null,
      created_at: isoTime(this.#clock.now()),
    };

    const audit: AuditRecord = {
      projectId,
      action: 'wallet.transfer',
      resource: { type: 'wallet', id: fromWalletId },
      changes: { transaction_id: transfer.id, to_wallet_id: toWalletId, amount },
      createdAt: transfer.created_at,
    };
    return this.#serialized(projectId, [fromWalletId, toWalletId], () =>
      this.#settle(options.idempotency, { context: options.audit, record: audit }, async (trx) => {
        // Inside the settled transaction, so that a keyed retry replays this refusal like any other.
        if (fromWalletId === toWalletId)
          throw new ApiError('same_wallet', 'A transfer needs two different wallets.', { param: 'to_wallet_id' });
        // Both wallets locked, lower id first (see findWalletsInIdOrder): what is checked here still
        // holds when the balances change. Checks first, writes after: a refusal has written nothing.
        const rows =
          this.#db.dialect === 'postgres'
            ? await lockTwoWalletsInIdOrder(trx, projectId, [fromWalletId, toWalletId])
            : await wallets.findWalletsInIdOrder(trx, projectId, [fromWalletId, toWalletId], 'none');
        const source = rows.find((row) => row.id === fromWalletId);
        refuseTransfer(
          source,
          rows.find((row) => row.id === toWalletId),
          { fromWalletId, toWalletId, amount },
        );
        const target = rows.find((row) => row.id === toWalletId);
        assert(target !== undefined, 'a checked transfer has its target');
        const done = this.#audit.recording
          ? this.#audit.row(options.audit, {
              ...audit,
              changes: {
                ...audit.changes,
                from_balance_before: source.balance,
                from_balance_after: source.balance - amount,
                to_balance_before: target.balance,
                to_balance_after: target.balance + amount,
              },
            })
          : undefined;
        const sourceAfter =
          this.#db.dialect === 'postgres'
            ? await this.#writeTransferPostgres(trx, projectId, transfer, source.currency, done)
            : await this.#writeTransfer(trx, projectId, transfer, rows, source.currency, done);
        assert(sourceAfter.balance === source.balance - amount, `transfer ${transfer.id} took exactly its amount`);
        return transfer;
      }),
    );
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

  /** The newest `limit` transactions of a wallet the caller has just read (no existence check, no cursor). */
  async recentWalletTransactions(projectId: string, walletId: string, limit: number): Promise<WalletTransaction[]> {
    const rows = await ledger.listWalletHistory(this.#db.kysely, projectId, walletId, { beforeSeq: undefined, limit });
    return rows.map((row) => toWalletTransaction(row, walletId));
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
      audit: options.audit,
    };
  }

  async #move(movement: Movement): Promise<LedgerAnswer<Transaction>> {
    if (this.#movementBatches !== undefined) {
      return this.#movementBatches.run({ projectId: movement.projectId, walletId: movement.walletId }, movement);
    }
    return this.#settle(movement.idempotency, { context: movement.audit, record: movementAuditRecord(movement) }, (trx) =>
      this.#moveInTransaction(trx, movement),
    );
  }

  /**
   * PostgreSQL: the movements of one wallet of one project that arrived together (WalletBatches). Two or more go
   * in one statement; if that changes nothing (one of them is refused, or a key is taken), each
   * runs on its own and gets its own answer.
   */
  async #flushMovements(line: WalletLine, movements: readonly Movement[]): Promise<BatchOutcome<LedgerAnswer<Transaction>>[]> {
    if (movements.length >= 2) {
      const balances = await this.#moveManyInOneStatement(line, movements);
      if (balances !== undefined) {
        return movements.map((movement, index) => {
          const balance = balances[index];
          assert(balance !== undefined && balance >= 0 && balance <= BALANCE_MAX, 'a wallet balance is in range');
          return { ok: true, value: { replayed: false, value: movementResponse(movement, balance) } };
        });
      }
    }
    const outcomes: BatchOutcome<LedgerAnswer<Transaction>>[] = [];
    for (const movement of movements) {
      try {
        outcomes.push({ ok: true, value: await this.#moveOnPostgres(movement) });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  }

  async #moveOnPostgres(movement: Movement): Promise<LedgerAnswer<Transaction>> {
    // The common case in one round trip. When it changes nothing, the general path below runs the
    // same movement in a transaction that locks the wallet and names the reason (or finds the
    // answer stored with the key).
    try {
      const after = await moveInOneStatement(this.#db.kysely, {
        projectId: movement.projectId,
        walletId: movement.walletId,
        ...this.#statementMovement(movement),
      });
      if (after !== undefined) {
        assert(after.balance >= 0 && after.balance <= BALANCE_MAX, 'a wallet balance is in range');
        return { replayed: false, value: movementResponse(movement, after.balance) };
      }
    } catch (error) {
      // A concurrent request with the same key committed first; the general path finds its answer.
      if (movement.idempotency === undefined || !isUniqueViolation(error)) throw error;
    }
    return this.#settle(movement.idempotency, { context: movement.audit, record: movementAuditRecord(movement) }, (trx) =>
      this.#moveInTransaction(trx, movement),
    );
  }

  /** `moveManyInOneStatement`; undefined when it changed nothing, also when a key was taken meanwhile. */
  async #moveManyInOneStatement(line: WalletLine, movements: readonly Movement[]): Promise<number[] | undefined> {
    const { projectId, walletId } = line;
    // WalletBatches keys its lines by project and wallet, so this holds by construction.
    assert(
      movements.every(
        (movement) =>
          movement.projectId === projectId &&
          movement.walletId === walletId &&
          (movement.idempotency === undefined || movement.idempotency.scope === walletId),
      ),
      'a batch is one wallet of one project, whose keys are per wallet',
    );
    try {
      return await moveManyInOneStatement(this.#db.kysely, {
        projectId,
        walletId,
        movements: movements.map((movement) => this.#statementMovement(movement)),
      });
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
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
    const audit = movementAuditRecord(movement);
    await this.#audit.record(trx, movement.audit, {
      ...audit,
      changes: { ...audit.changes, balance_before: after.balance - delta, balance_after: after.balance },
    });
    return transaction;
  }

  /** What the PostgreSQL statements write for a movement, with its audit entry's id and request columns. */
  #statementMovement(movement: Movement): BatchedMovement {
    return {
      ...statementMovement(movement),
      audit: this.#audit.recording ? { id: newId('aud'), ...statementAuditContext(movement.audit) } : undefined,
    };
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
      const wallet = await wallets.findWallet(trx, projectId, walletId, rowLockFor(this.#db.dialect));
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
    audit: AuditRow | undefined,
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
    if (audit !== undefined) await this.#audit.recordRow(trx, audit);
    return sourceAfter;
  }

  /** A checked transfer's writes in one statement (PostgreSQL). Returns the source's balance after. */
  async #writeTransferPostgres(
    trx: DbTransaction,
    projectId: string,
    transfer: Transfer,
    currency: string,
    audit: AuditRow | undefined,
  ): Promise<ledger.BalanceAfterChange> {
    const written = await writeTransferInOneStatement(trx, {
      projectId,
      transactionId: transfer.id,
      fromWalletId: transfer.from_wallet_id,
      toWalletId: transfer.to_wallet_id,
      amount: transfer.amount,
      currency,
      description: transfer.description,
      idempotencyKey: transfer.idempotency_key,
      createdAt: transfer.created_at,
      events: { sentId: newId('evt'), receivedId: newId('evt'), dataJson: JSON.stringify(transferEventData(transfer)) },
      lowBalanceEventId: newId('evt'),
      audit,
    });
    assert(written.changed.length === 2, `transfer ${transfer.id} changed both locked wallets`);
    const sourceAfter = written.changed.find((row) => row.id === transfer.from_wallet_id);
    assert(sourceAfter !== undefined, `transfer ${transfer.id} changed its source`);
    return sourceAfter;
  }

  /**
   * Runs `operation` in one write with the request's idempotency key, if it has one: the answer
   * stored with the key, or else the operation and its answer (its result, or the refusal it threw)
   * stored with the key in that same transaction. A refusal is thrown once that has committed, so
   * a retry with the key gets the same refusal. Operations decide a refusal before their first
   * write (a conditional update that changed nothing; a transfer's checks), so a stored refusal
   * never keeps half a change. A bug (anything but a 4xx ApiError) rolls everything back, the key
   * included.
   */
  async #settle<T>(
    claim: IdempotencyClaim | undefined,
    audit: RefusalAudit,
    operation: (trx: DbTransaction) => Promise<T>,
  ): Promise<LedgerAnswer<T>> {
    if (claim === undefined) {
      try {
        return { replayed: false, value: await this.#write(operation) };
      } catch (error) {
        // The refusal's transaction rolled back; its entry goes in a write of its own.
        if (isRefusal(error)) await this.#write((trx) => this.#audit.record(trx, audit.context, { ...audit.record, outcome: error.code }));
        throw error;
      }
    }
    for (let attempt = 1; ; attempt += 1) {
      let settled: Settled<T>;
      try {
        settled = await this.#write((trx) => this.#settleInTransaction(trx, claim, audit, operation));
      } catch (error) {
        if (attempt < SETTLE_ATTEMPTS_MAX && isUniqueViolation(error)) continue;
        throw error;
      }
      if (settled.kind === 'refused') throw settled.error;
      return settled.answer;
    }
  }

  async #settleInTransaction<T>(
    trx: DbTransaction,
    claim: IdempotencyClaim,
    audit: RefusalAudit,
    operation: (trx: DbTransaction) => Promise<T>,
  ): Promise<Settled<T>> {
    const now = this.#clock.now();
    const stored = await findStoredAnswer(trx, claim, now);
    if (stored !== undefined) return { kind: 'answer', answer: { replayed: true, stored } };
    let value: T;
    try {
      value = await operation(trx);
    } catch (error) {
      if (!isApiError(error) || error.status >= 500) throw error;
      await storeAnswer(trx, claim, { status: error.status, body: JSON.stringify(renderError(error, claim.requestId)) }, now);
      // Stored with the key, so a replay answers the refusal without a second entry.
      await this.#audit.record(trx, audit.context, { ...audit.record, outcome: error.code });
      return { kind: 'refused', error };
    }
    await storeAnswer(trx, claim, { status: CREATED, body: JSON.stringify(value) }, now);
    return { kind: 'answer', answer: { replayed: false, value } };
  }

  /** One movement's database transaction: shared with its neighbours' on SQLite (group commit). */
  #write<T>(work: (trx: DbTransaction) => Promise<T>): Promise<T> {
    return this.#groupCommit === undefined ? inTransaction(this.#db, work) : this.#groupCommit.run(work);
  }

  /**
   * On PostgreSQL, at most TRANSFERS_PER_WALLET_MAX transfers per wallet at a time in this process
   * (see `WalletQueue`). The lines are per project and wallet: a request naming another project's
   * wallet (answered 404) never takes a place in its owner's line.
   */
  #serialized<T>(projectId: string, walletIds: readonly string[], work: () => Promise<T>): Promise<T> {
    if (this.#walletQueue === undefined) return work();
    return this.#walletQueue.run(
      walletIds.map((walletId) => `${projectId} ${walletId}`),
      work,
    );
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
    idempotency_key: movement.idempotency?.key ?? null,
    status: 'completed',
    created_at: movement.createdAt,
  };
}

/** What the PostgreSQL statements write for a movement; the balances are filled in by the database. */
function statementMovement(movement: Movement): Omit<BatchedMovement, 'audit'> {
  const claim = movement.idempotency;
  return {
    transactionId: movement.transactionId,
    type: movement.type,
    amount: movement.amount,
    description: movement.description,
    createdAt: movement.createdAt,
    metadataJson: JSON.stringify(movement.metadata),
    event: { id: newId('evt'), type: movementEventType(movement), data: jsonWithOpenNumber(movementEventData(movement, 0), 'balance') },
    lowBalanceEventId: movement.type === 'debit' ? newId('evt') : undefined,
    idempotency: claim === undefined ? undefined : { claim, response: jsonWithOpenNumber(movementResponse(movement, 0), 'balance_after') },
  };
}

function movementEventType(movement: Movement): 'wallet.credit.added' | 'wallet.credit.deducted' {
  return movement.type === 'credit' ? 'wallet.credit.added' : 'wallet.credit.deducted';
}

function movementEventData(movement: Movement, balance: number): EventData<'wallet.credit.added'> {
  return {
    wallet_id: movement.walletId,
    transaction_id: movement.transactionId,
    amount: movement.amount,
    balance,
    description: movement.description,
  };
}

function transferEventData(transfer: Transfer): EventData<'wallet.transfer.sent'> {
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
