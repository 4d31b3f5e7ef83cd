import type { Db } from '../../db/database.js';
import { assert } from '../../lib/assert.js';
import { type Clock, isoTime, parseTimeParam } from '../../lib/clock.js';
import { listOf, startPage } from '../../db/pagination.js';
import { ApiError } from '../../lib/errors.js';
import type { RequestKey } from '../../lib/idempotency.store.js';
import type { AuditContext, AuditService } from '../audit/audit.service.js';
import type { BatchOutcome, MovementOutcome, MovementRequest } from './ledger.movements.js';
import * as ledger from './ledger.store.js';
import { toTransaction, toTransfer, toWalletTransaction } from './ledger.views.js';
import { LedgerWriter } from './ledger.write.js';
import { GRANT_PRIORITY_DEFAULT } from './ledger.movements.js';
import { CATEGORY_DEFAULT } from './ledger.categories.js';
import { type CaptureHoldBody, type CreateHoldBody, HOLD_EXPIRES_IN_SECONDS_DEFAULT } from './holds.schemas.js';
import type {
  Balance,
  CreditBody,
  ListTransactionsQuery,
  MovementBody,
  ReverseBody,
  Transaction,
  Transfer,
  TransferBody,
  WalletTransactionList,
} from './ledger.schemas.js';
import { assertAmount, walletMissing } from './ledger.rules.js';

export type { BatchOutcome, MovementOutcome, MovementRequest } from './ledger.movements.js';

// The ledger's surface for other modules, besides LedgerService: what the wallets API
// (modules/wallets/) reads of the ledger to show wallets, holds and grants, and the refusals it
// shares with the write path.
export { GRANT_PRIORITY_DEFAULT } from './ledger.movements.js';
export { availableOf, availableOfReading, categoryBalancesOf } from './ledger.available.js';
export { recentOfOldestActiveWallet, recentOfWallet } from './ledger.store.js';
export { toGrant, toHold, toWalletTransaction } from './ledger.views.js';
export { refuseUnusable, walletClosed, walletMissing } from './ledger.rules.js';

export interface LedgerServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly audit: AuditService;
}

export interface LedgerRequestOptions {
  /** The request's ledger idempotency key (header or body), checked by the HTTP layer. */
  readonly idempotencyKey?: string | undefined;
  /** Who asked: stored on the transaction (`actor`, `request_id`) and on audit entries. */
  readonly audit: AuditContext;
}

/**
 * Credits, debits and transfers on the double-entry ledger (docs/api.md section 4, "Ledger rules"),
 * and their reads. Every movement, single or batched, goes through the one write path
 * (`LedgerWriter`, docs/adr/0005-ledger-write-path.md): a single request is a batch of one.
 */
export class LedgerService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #writer: LedgerWriter;

  constructor(options: LedgerServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#writer = new LedgerWriter(options);
  }

  /** Adds credits as a grant (`priority`, `expires_at`, `category`), with the counter-entry on the issuance account. */
  async credit(projectId: string, walletId: string, input: CreditBody, options: LedgerRequestOptions): Promise<MovementOutcome> {
    const expiresAt = this.creditExpiry(input.expires_at, 'expires_at');
    const priority = input.priority ?? GRANT_PRIORITY_DEFAULT;
    const category = input.category ?? CATEGORY_DEFAULT;
    return this.#one(projectId, options, { type: 'credit', walletId, ...movementOf(input, options), priority, expiresAt, category });
  }

  /**
   * A credit's `expires_at` as stored (ISO 8601 UTC with milliseconds), or null for none; a time not
   * in the future is a client's mistake (400 `parameter_invalid` naming `param`).
   */
  creditExpiry(expiresAt: string | undefined, param: string): string | null {
    if (expiresAt === undefined) return null;
    const time = parseTimeParam(expiresAt, param);
    if (time <= this.#clock.now().getTime()) {
      throw new ApiError('parameter_invalid', `${param} must be a time in the future.`, { param });
    }
    return isoTime(new Date(time));
  }

  /** Reserves credits: they leave `available`, not the balance, until captured, voided or expired. */
  async hold(projectId: string, walletId: string, input: CreateHoldBody, options: LedgerRequestOptions): Promise<MovementOutcome> {
    const expiresInSeconds = input.expires_in ?? HOLD_EXPIRES_IN_SECONDS_DEFAULT;
    const categories = input.categories ?? null;
    return this.#one(projectId, options, { type: 'hold', walletId, ...movementOf(input, options), expiresInSeconds, categories });
  }

  /**
   * Debits all or part of a pending hold and releases the rest. With the request's key, the answer
   * is stored with it in the same transaction (`BatchOutcome.answer`).
   */
  async capture(
    projectId: string,
    holdId: string,
    input: CaptureHoldBody,
    context: AuditContext,
    requestKey?: RequestKey<BatchOutcome>,
  ): Promise<BatchOutcome> {
    return this.#writer.apply({
      projectId,
      context,
      movements: [{ type: 'capture', holdId, amount: input.amount }],
      atomic: false,
      requestKey,
    });
  }

  /** Releases a pending hold; with the request's key, as `capture`. */
  async void(projectId: string, holdId: string, context: AuditContext, requestKey?: RequestKey<BatchOutcome>): Promise<BatchOutcome> {
    return this.#writer.apply({ projectId, context, movements: [{ type: 'void', holdId }], atomic: false, requestKey });
  }

  /** Settles what time expired on the wallets (the expiry job): holds past `expires_at`, expired grants. */
  async settle(projectId: string, walletIds: readonly string[], context: AuditContext): Promise<void> {
    const movements = walletIds.map((walletId) => ({ type: 'settle', walletId }) as const);
    if (movements.length > 0) await this.#writer.apply({ projectId, context, movements, atomic: false });
  }

  /** Takes credits; refuses with `insufficient_credits` (and changes nothing) when the balance is short. */
  async debit(projectId: string, walletId: string, input: MovementBody, options: LedgerRequestOptions): Promise<MovementOutcome> {
    return this.#one(projectId, options, { type: 'debit', walletId, ...movementOf(input, options), categories: input.categories ?? null });
  }

  async transfer(projectId: string, input: TransferBody, options: LedgerRequestOptions): Promise<MovementOutcome> {
    const { from_wallet_id: fromWalletId, to_wallet_id: toWalletId } = input;
    const categories = input.categories ?? null;
    return this.#one(projectId, options, { type: 'transfer', fromWalletId, toWalletId, ...movementOf(input, options), categories });
  }

  /**
   * Gives back `amount` (default: all that is left) of a credit, debit or transfer, as a transaction
   * of type `reversal` (docs/adr/0024-reversals.md).
   */
  async reverse(projectId: string, transactionId: string, input: ReverseBody, options: LedgerRequestOptions): Promise<MovementOutcome> {
    return this.#one(projectId, options, {
      type: 'reverse',
      transactionId,
      amount: input.amount,
      description: input.description ?? null,
      metadata: input.metadata ?? {},
      idempotencyKey: options.idempotencyKey,
    });
  }

  /** Up to 1,000 movements of one request, in order; `atomic`: all of them or none (`POST /v1/wallets/batch`). */
  async batch(
    projectId: string,
    movements: readonly MovementRequest[],
    atomic: boolean,
    context: AuditContext,
    requestKey?: RequestKey<BatchOutcome>,
  ): Promise<BatchOutcome> {
    for (const movement of movements) assertMovement(movement);
    return this.#writer.apply({ projectId, context, movements, atomic, requestKey });
  }

  /** A credit, debit, expiry or reversal as a transaction, or a transfer; what can be reversed with `reversed_amount`. */
  async getTransaction(projectId: string, transactionId: string): Promise<Transaction | Transfer> {
    const row = await ledger.findTransaction(this.#db.kysely, projectId, transactionId);
    if (row === undefined) throw new ApiError('resource_missing', `No transaction ${transactionId}.`);
    const view = row.type === 'transfer' ? toTransfer(row) : toTransaction(row);
    if (row.type === 'expiry' || row.type === 'reversal') return view;
    return { ...view, reversed_amount: await ledger.reversedAmount(this.#db.kysely, projectId, transactionId) };
  }

  /**
   * The balance after every movement made at or before `at` (`GET /v1/wallets/{id}/balance?at=`),
   * read from the ledger's entries: 0 before the wallet's first movement. A time in the future is
   * refused: its answer could still change.
   */
  async balanceAt(projectId: string, walletId: string, at: string): Promise<Balance> {
    const time = parseTimeParam(at, 'at');
    if (time > this.#clock.now().getTime()) {
      throw new ApiError('parameter_invalid', `at must not be in the future; it is ${at}.`, { param: 'at' });
    }
    const normalized = isoTime(new Date(time));
    const found = await ledger.findWalletBalanceAt(this.#db.kysely, projectId, walletId, normalized);
    if (found === undefined) throw walletMissing(walletId);
    return { credits: found.balance ?? 0, currency: found.currency, at: normalized };
  }

  /** A wallet's history, newest first; transfers appear as `transfer_out` or `transfer_in`. */
  async listWalletTransactions(projectId: string, walletId: string, query: ListTransactionsQuery): Promise<WalletTransactionList> {
    const db = this.#db.kysely;
    if (!(await ledger.walletExists(db, projectId, walletId))) throw walletMissing(walletId);
    const page = await startPage(query, {
      find: (id) => ledger.findWalletEntrySeq(db, projectId, walletId, id),
      missing: (id) => `Wallet ${walletId} has no transaction ${id} to start after.`,
    });
    const rows = await ledger.listWalletHistory(db, projectId, walletId, { beforeSeq: page.after, limit: page.rowsToRead });
    return listOf(rows, page.limit, (row) => toWalletTransaction(row, walletId));
  }

  /** The newest `limit` transactions of a wallet the caller has just read (no existence check, no cursor). */
  async #one(projectId: string, options: LedgerRequestOptions, movement: MovementRequest): Promise<MovementOutcome> {
    assertMovement(movement);
    const { outcomes } = await this.#writer.apply({ projectId, context: options.audit, movements: [movement], atomic: false });
    const [outcome] = outcomes;
    assert(outcome !== undefined && outcomes.length === 1, 'a batch of one has one outcome');
    return outcome;
  }
}

function assertMovement(movement: MovementRequest): void {
  if (movement.type === 'capture' || movement.type === 'reverse') {
    if (movement.amount !== undefined) assertAmount(movement.amount);
  } else if (movement.type !== 'void' && movement.type !== 'settle') {
    assertAmount(movement.amount);
  }
}

function movementOf(
  input: { amount: number; description?: string; metadata?: Record<string, string> },
  options: LedgerRequestOptions,
): { amount: number; description: string | null; metadata: Record<string, string>; idempotencyKey: string | undefined } {
  return {
    amount: input.amount,
    description: input.description ?? null,
    metadata: input.metadata ?? {},
    idempotencyKey: options.idempotencyKey,
  };
}
