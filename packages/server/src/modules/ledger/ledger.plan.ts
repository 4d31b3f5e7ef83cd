import { assert } from '../../lib/assert.js';
import { isApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { AuditContext } from '../audit/audit.service.js';
import type { EventData, NewEvent } from '../events/events.service.js';
import { lowBalanceEvents, walletEvent } from './ledger.events.js';
import { GrantBook, type GrantRow } from './ledger.grants.js';
import {
  type BatchOutcome,
  fieldsHash,
  isKeyed,
  keyReused,
  keyScope,
  type LedgerBatch,
  type LedgerValue,
  type MovementOutcome,
  type MovementRequest,
  movementFields,
} from './ledger.movements.js';
import { HoldPlanner, type HoldRow, refuseUnavailable, refuseUnavailableIn } from './ledger.plan-holds.js';
import { type ReversalCore, ReversalPlanner, type ReversibleRow } from './ledger.plan-reversals.js';
import { planTransfer } from './ledger.plan-transfers.js';
import type { BalanceWrite, LedgerKey, LedgerRefusalRow } from './ledger.statements.js';
import { type KeyedAnswer, keyedAnswers, ledgerEntry, ledgerKeyText, transactionRowOf, transactionRow } from './ledger.plan-rows.js';
import { issuanceAccountId, type LedgerTransactionRow, type NewLedgerEntry, type TransactionWithBalance } from './ledger.store.js';
import { toTransaction } from './ledger.views.js';
import { BALANCE_MAX, type Source, type Transaction } from './ledger.schemas.js';
import { refuseOutOfRange, refuseUnusable } from './ledger.rules.js';
import type { WalletsTable as WalletRow } from '../../db/schema.js';

export interface PlanInput {
  /** The batch's wallets, locked. */
  readonly wallets: readonly WalletRow[];
  readonly keyedTransactions: readonly TransactionWithBalance[];
  readonly keyedRefusals: readonly LedgerRefusalRow[];
  /** Holds made under the batch's keys. */
  readonly keyedHolds: readonly HoldRow[];
  /** The holds the batch names and the pending holds of its wallets that expired. */
  readonly holds: readonly HoldRow[];
  /** The grants the batch may draw on, reserve, release or expire (ledger.write.ts loads them). */
  readonly grants: readonly GrantRow[];
  /** The transactions the batch reverses, with what earlier reversals gave back of each. */
  readonly reversible: readonly ReversibleRow[];
  /** The time of every movement of the flush. */
  readonly now: string;
}

function walletKey(projectId: string, walletId: string): string {
  return `${projectId} ${walletId}`;
}

/** The key of a movement, if it carries one. */
export function movementKey(projectId: string, movement: MovementRequest): LedgerKey | undefined {
  if (!isKeyed(movement) || movement.idempotencyKey === undefined) return undefined;
  return { projectId, scope: keyScope(movement), key: movement.idempotencyKey };
}

/**
 * The ledger's rules applied in memory to the locked wallets: every movement of a flush, in order,
 * decided before anything is written, and the rows that record them collected for one write each
 * (ledger.write.ts). A refusal writes no ledger row (only its key, when it has one; the audit log
 * records it after the answer), so nothing needs rolling back in the database; an atomic batch that
 * is refused is undone here, in memory.
 */
export class LedgerPlan implements ReversalCore {
  readonly transactions: LedgerTransactionRow[] = [];
  readonly entries: NewLedgerEntry[] = [];
  readonly events: NewEvent[] = [];
  readonly refusals: LedgerRefusalRow[] = [];
  readonly #wallets = new Map<string, WalletRow>();
  readonly #keys = new Map<string, KeyedAnswer>();
  readonly #changed = new Set<string>();
  readonly #now: string;
  readonly grants: GrantBook;
  readonly holds: HoldPlanner;
  readonly reversals: ReversalPlanner;

  constructor(input: PlanInput) {
    this.#now = input.now;
    this.grants = new GrantBook(input.grants, (undo) => this.onChange(undo));
    this.holds = new HoldPlanner(this, input.holds);
    this.reversals = new ReversalPlanner(this, input.reversible);
    for (const row of input.wallets) this.#wallets.set(walletKey(row.project_id, row.id), { ...row });
    for (const [key, answer] of keyedAnswers(input)) this.#keys.set(key, answer);
  }

  /** Before any movement: what time expired on the locked wallets is settled (never undone). */
  settleExpired(): void {
    for (const wallet of this.#wallets.values()) this.holds.settle(wallet.project_id, wallet);
  }

  get now(): string {
    return this.#now;
  }

  wallet(projectId: string, walletId: string): WalletRow | undefined {
    return this.#wallets.get(walletKey(projectId, walletId));
  }

  pushEvent(event: NewEvent): void {
    this.events.push(event);
  }

  onChange(undo: () => void): void {
    this.#undo?.push(undo);
  }

  setHeld(projectId: string, wallet: WalletRow, held: number): void {
    assert(
      held >= 0 && wallet.balance - held >= -wallet.credit_limit,
      `the held credits of wallet ${wallet.id} stay within its credit limit`,
    );
    const before = wallet.held;
    this.#undo?.push(() => (wallet.held = before));
    wallet.held = held;
    this.#changed.add(walletKey(projectId, wallet.id));
  }

  takeFromWallet(input: Parameters<ReversalCore['takeFromWallet']>[0]): Transaction {
    const { projectId, transactionId: id, wallet, amount } = input;
    this.setBalance(projectId, wallet, wallet.balance - amount);
    const row = transactionRowOf(
      { projectId, context: input.context, id, currency: wallet.currency, now: this.#now },
      {
        type: input.type,
        amount,
        description: input.description,
        metadata: JSON.stringify(input.metadata),
        idempotency_key: input.idempotencyKey,
        idempotency_scope: wallet.id,
        wallet_id: wallet.id,
        from_wallet_id: null,
        to_wallet_id: null,
        sources: JSON.stringify(input.sources),
        priority: null,
        expires_at: null,
        recurring_grant_id: null,
        category: null,
        categories: null,
        repaid: 0,
        reverses: null,
        asked_amount: null,
      },
    );
    this.transactions.push(row);
    this.#walletEntries(projectId, id, wallet, -amount);
    if (input.type === 'expiry') {
      const [source] = input.sources;
      assert(source !== undefined && input.sources.length === 1, 'an expiry removes one grant');
      const data = { wallet_id: wallet.id, grant_id: source.grant_id, amount, balance: wallet.balance };
      this.events.push(walletEvent(projectId, id, 'wallet.credit.expired', data, this.#now));
    } else {
      this.#creditEvents(projectId, id, wallet, 'debit', amount, input.description);
    }
    return toTransaction(row, wallet.balance);
  }

  /** A movement's two entries: the wallet's, with its balance after, and the issuance account's. */
  #walletEntries(projectId: string, id: string, wallet: WalletRow, delta: number): void {
    this.entries.push(
      ledgerEntry(this.#now, projectId, id, wallet.id, delta, wallet.balance),
      ledgerEntry(this.#now, projectId, id, issuanceAccountId(wallet.currency), -delta, null),
    );
  }

  /** `wallet.credit.added` or `wallet.credit.deducted`, and for a debit `wallet.balance.low` when it crosses the threshold. */
  #creditEvents(
    projectId: string,
    id: string,
    wallet: WalletRow,
    type: 'credit' | 'debit',
    amount: number,
    description: string | null,
  ): void {
    const data: EventData<'wallet.credit.added'> = {
      wallet_id: wallet.id,
      transaction_id: id,
      amount,
      balance: wallet.balance,
      description,
    };
    this.events.push(walletEvent(projectId, id, type === 'credit' ? 'wallet.credit.added' : 'wallet.credit.deducted', data, this.#now));
    if (type === 'debit') this.events.push(...lowBalanceEvents(projectId, id, wallet.id, wallet, amount, this.#now));
  }

  /** Applies one request's movements in order; an atomic one is undone whole at its first refusal. */
  apply(batch: LedgerBatch): BatchOutcome {
    const mark = batch.atomic ? this.#mark() : undefined;
    const outcomes: MovementOutcome[] = [];
    for (const [index, movement] of batch.movements.entries()) {
      const outcome = this.#applyOne(batch.projectId, batch.context, movement, batch.atomic);
      outcomes.push(outcome);
      if (mark !== undefined && !outcome.ok) {
        mark.undo();
        return { outcomes, refusedAt: index };
      }
    }
    mark?.done();
    return { outcomes, refusedAt: undefined };
  }

  /** The balances to write: every wallet a movement changed, once. */
  balanceWrites(): BalanceWrite[] {
    return [...this.#changed].map((key) => {
      const row = this.#wallets.get(key);
      assert(row !== undefined, 'a changed wallet was locked');
      assert(row.balance >= -row.credit_limit && row.balance <= BALANCE_MAX, `the balance of wallet ${row.id} is in range`);
      assert(row.debt >= 0 && row.debt <= row.credit_limit, `the debt of wallet ${row.id} is within its credit limit`);
      return { projectId: row.project_id, walletId: row.id, balance: row.balance, held: row.held, debt: row.debt, updatedAt: this.#now };
    });
  }

  borrow(projectId: string, wallet: WalletRow, amount: number, categories: readonly string[] | null): Source[] {
    const sources = this.grants.draw(projectId, wallet.id, amount, { now: this.#now, reserve: false, categories });
    const drawn = sources.reduce((sum, source) => sum + source.amount, 0);
    // A draw restricted to categories was refused before unless their grants cover it: it never borrows.
    assert(categories === null || drawn === amount, 'a draw restricted to categories is covered by their grants');
    if (drawn < amount) this.#setDebt(projectId, wallet, wallet.debt + amount - drawn);
    return sources;
  }

  record(row: LedgerTransactionRow, entries: readonly NewLedgerEntry[]): void {
    this.transactions.push(row);
    this.entries.push(...entries);
  }

  addDebt(projectId: string, wallet: WalletRow, amount: number): void {
    this.#setDebt(projectId, wallet, wallet.debt + amount);
  }

  /** What a credit of `amount` to the wallet repays of its debt first (docs/adr/0023-credit-limits.md); the rest makes grants. */
  repay(projectId: string, wallet: WalletRow, amount: number): number {
    const repaid = Math.min(amount, wallet.debt);
    if (repaid > 0) this.#setDebt(projectId, wallet, wallet.debt - repaid);
    return repaid;
  }

  #setDebt(projectId: string, wallet: WalletRow, debt: number): void {
    assert(debt >= 0 && debt <= wallet.credit_limit, `the debt of wallet ${wallet.id} stays within its credit limit`);
    const before = wallet.debt;
    this.#undo?.push(() => (wallet.debt = before));
    wallet.debt = debt;
    this.#changed.add(walletKey(projectId, wallet.id));
  }

  #applyOne(projectId: string, context: AuditContext, movement: MovementRequest, atomic: boolean): MovementOutcome {
    const key = movementKey(projectId, movement);
    const fields = key === undefined || !isKeyed(movement) ? undefined : movementFields(movement);
    if (key !== undefined && fields !== undefined) {
      const known = this.#keys.get(ledgerKeyText(key));
      if (known !== undefined) {
        if (known.hash !== fieldsHash(fields))
          return { ok: false, replayed: false, error: keyReused(key.key, fields, known.fields), requestId: null };
        return known.outcome.replayed ? known.outcome : { ...known.outcome, replayed: true };
      }
    }
    const transactionId = newId('txn');
    let outcome: MovementOutcome;
    try {
      outcome = { ok: true, replayed: false, value: this.#dispatch(projectId, context, transactionId, movement) };
    } catch (error) {
      if (!isApiError(error) || error.status >= 500) throw error;
      outcome = { ok: false, replayed: false, error, requestId: context.requestId };
      // An atomic batch's refusal keeps nothing: the whole request is refused, its keys stay free.
      if (atomic) return outcome;
      if (key !== undefined && fields !== undefined) {
        this.refusals.push({
          project_id: key.projectId,
          idempotency_scope: key.scope,
          idempotency_key: key.key,
          request_hash: fieldsHash(fields),
          request_fields: JSON.stringify(fields),
          code: error.code,
          message: error.message,
          param: error.param ?? null,
          request_id: context.requestId ?? '',
          created_at: this.#now,
        });
      }
    }
    if (key !== undefined && fields !== undefined) this.#keys.set(ledgerKeyText(key), { fields, hash: fieldsHash(fields), outcome });
    return outcome;
  }

  #dispatch(projectId: string, context: AuditContext, id: string, movement: MovementRequest): LedgerValue {
    switch (movement.type) {
      case 'credit':
      case 'debit':
        return this.#move(projectId, context, id, movement);
      case 'transfer':
        return planTransfer(this, projectId, context, id, movement);
      case 'hold':
        return this.holds.hold(projectId, context, movement);
      case 'capture':
        return this.holds.capture(projectId, context, movement);
      case 'void':
        return this.holds.void(projectId, context, movement);
      case 'reverse':
        return this.reversals.reverse(projectId, context, id, movement);
      case 'settle':
        // Settled when the plan was made; what is left is the wallet's grants.
        return { object: 'settlement' };
    }
  }

  #move(projectId: string, context: AuditContext, id: string, movement: MovementRequest & { type: 'credit' | 'debit' }): Transaction {
    const { walletId, amount } = movement;
    const wallet = this.#wallets.get(walletKey(projectId, walletId));
    refuseUnusable(wallet, walletId);
    const delta = movement.type === 'credit' ? amount : -amount;
    refuseOutOfRange(wallet, delta);
    if (movement.type === 'debit') {
      refuseUnavailable(wallet, amount);
      const { categories } = movement;
      if (categories !== null) refuseUnavailableIn(this.grants, { projectId, wallet, categories, amount, now: this.#now });
    }
    const before = wallet.balance;
    const repaid = movement.type === 'credit' ? this.repay(projectId, wallet, amount) : 0;
    let sources: Source[];
    if (movement.type === 'debit') sources = this.borrow(projectId, wallet, amount, movement.categories);
    else if (repaid === amount) sources = [];
    else {
      sources = [
        this.grants.create({
          projectId,
          walletId,
          transactionId: id,
          amount: amount - repaid,
          priority: movement.priority,
          expiresAt: movement.expiresAt,
          category: movement.category,
          now: this.#now,
        }),
      ];
    }
    this.setBalance(projectId, wallet, before + delta);
    const row = transactionRow({ projectId, context, id, currency: wallet.currency, now: this.#now }, movement, sources, repaid);
    this.transactions.push(row);
    this.#walletEntries(projectId, id, wallet, delta);
    this.#creditEvents(projectId, id, wallet, movement.type, amount, movement.description);
    return toTransaction(row, wallet.balance);
  }

  setBalance(projectId: string, wallet: WalletRow, balance: number): void {
    assert(balance >= -wallet.credit_limit && balance <= BALANCE_MAX, `the balance of wallet ${wallet.id} stays in range`);
    const before = wallet.balance;
    this.#undo?.push(() => (wallet.balance = before));
    wallet.balance = balance;
    this.#changed.add(walletKey(projectId, wallet.id));
  }

  /** Changes to undo (newest last) if the atomic batch running now is refused; undefined otherwise. */
  #undo: (() => void)[] | undefined;

  #mark(): { undo: () => void; done: () => void } {
    const lengths = [this.transactions.length, this.entries.length, this.events.length, this.refusals.length];
    const changedBefore = new Set(this.#changed);
    const keysBefore = new Set(this.#keys.keys());
    this.#undo = [];
    const undoLog = this.#undo;
    return {
      undo: () => {
        for (const undo of undoLog.reverse()) undo();
        const [transactions, entries, events, refusals] = lengths as [number, number, number, number];
        this.transactions.length = transactions;
        this.entries.length = entries;
        this.events.length = events;
        this.refusals.length = refusals;
        for (const key of [...this.#changed]) if (!changedBefore.has(key)) this.#changed.delete(key);
        for (const key of [...this.#keys.keys()]) if (!keysBefore.has(key)) this.#keys.delete(key);
        this.#undo = undefined;
      },
      done: () => {
        this.#undo = undefined;
      },
    };
  }
}
