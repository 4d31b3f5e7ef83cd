import { assert } from '../../lib/assert.js';
import { ApiError, type ErrorCode, isApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { actorColumns, type AuditContext } from '../audit/audit.service.js';
import type { EventData, NewEvent } from '../events/events.service.js';
import { lowBalanceEvents, walletEvent } from './ledger.events.js';
import {
  type BatchOutcome,
  fieldsHash,
  keyReused,
  keyScope,
  type LedgerBatch,
  type MovementFields,
  type MovementOutcome,
  type MovementRequest,
  movementFields,
} from './ledger.movements.js';
import type { BalanceWrite, LedgerKey, LedgerRefusalRow } from './ledger.statements.js';
import { issuanceAccountId, type LedgerTransactionRow, type NewLedgerEntry, type TransactionWithBalance } from './ledger.store.js';
import { movementOfRow, toTransaction, toTransfer } from './ledger.views.js';
import { BALANCE_MAX, type Transaction, type Transfer } from './wallets.schemas.js';
import { refuseOutOfRange, refuseTransfer, refuseUnusable } from './wallets.rules.js';
import type { WalletRow } from './wallets.store.js';

/** What a key already answered, and the fingerprint of the request that made it. */
interface KeyedAnswer {
  readonly fields: MovementFields;
  readonly hash: string;
  readonly outcome: MovementOutcome;
}

export interface PlanInput {
  /** The batch's wallets, locked. */
  readonly wallets: readonly WalletRow[];
  readonly keyedTransactions: readonly TransactionWithBalance[];
  readonly keyedRefusals: readonly LedgerRefusalRow[];
  /** The time of every movement of the flush. */
  readonly now: string;
}

function walletKey(projectId: string, walletId: string): string {
  return `${projectId} ${walletId}`;
}

function ledgerKeyText(key: LedgerKey): string {
  return `${key.projectId}\n${key.scope}\n${key.key}`;
}

/** The key of a movement, if it carries one. */
export function movementKey(projectId: string, movement: MovementRequest): LedgerKey | undefined {
  return movement.idempotencyKey === undefined ? undefined : { projectId, scope: keyScope(movement), key: movement.idempotencyKey };
}

/**
 * The ledger's rules applied in memory to the locked wallets: every movement of a flush, in order,
 * decided before anything is written, and the rows that record them collected for one write each
 * (ledger.write.ts). A refusal writes no ledger row (only its key, when it has one, and its audit
 * entry), so nothing needs rolling back in the database; an atomic batch that is refused is undone
 * here, in memory.
 */
export class LedgerPlan {
  readonly transactions: LedgerTransactionRow[] = [];
  readonly entries: NewLedgerEntry[] = [];
  readonly events: NewEvent[] = [];
  readonly refusals: LedgerRefusalRow[] = [];
  readonly #wallets = new Map<string, WalletRow>();
  readonly #keys = new Map<string, KeyedAnswer>();
  readonly #changed = new Set<string>();
  readonly #now: string;

  constructor(input: PlanInput) {
    this.#now = input.now;
    for (const row of input.wallets) this.#wallets.set(walletKey(row.project_id, row.id), { ...row });
    for (const row of input.keyedTransactions) {
      assert(row.idempotency_key !== null, 'a keyed transaction has its key');
      const fields = movementFields(movementOfRow(row));
      const value = row.type === 'transfer' ? toTransfer(row) : toTransaction(row);
      const key = { projectId: row.project_id, scope: row.idempotency_scope, key: row.idempotency_key };
      this.#keys.set(ledgerKeyText(key), { fields, hash: fieldsHash(fields), outcome: { ok: true, replayed: true, value } });
    }
    for (const row of input.keyedRefusals) {
      const error = new ApiError(row.code as ErrorCode, row.message, row.param === null ? {} : { param: row.param });
      const key = { projectId: row.project_id, scope: row.idempotency_scope, key: row.idempotency_key };
      const fields = JSON.parse(row.request_fields) as MovementFields;
      this.#keys.set(ledgerKeyText(key), {
        fields,
        hash: row.request_hash,
        outcome: { ok: false, replayed: true, error, requestId: row.request_id },
      });
    }
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
      assert(row.balance >= 0 && row.balance <= BALANCE_MAX, `the balance of wallet ${row.id} is in range`);
      return { projectId: row.project_id, walletId: row.id, balance: row.balance, updatedAt: this.#now };
    });
  }

  #applyOne(projectId: string, context: AuditContext, movement: MovementRequest, atomic: boolean): MovementOutcome {
    const key = movementKey(projectId, movement);
    const fields = key === undefined ? undefined : movementFields(movement);
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
      const value =
        movement.type === 'transfer'
          ? this.#transfer(projectId, context, transactionId, movement)
          : this.#move(projectId, context, transactionId, movement);
      outcome = { ok: true, replayed: false, value };
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

  #move(projectId: string, context: AuditContext, id: string, movement: MovementRequest & { type: 'credit' | 'debit' }): Transaction {
    const { walletId, amount } = movement;
    const wallet = this.#wallets.get(walletKey(projectId, walletId));
    refuseUnusable(wallet, walletId);
    const delta = movement.type === 'credit' ? amount : -amount;
    refuseOutOfRange(wallet, delta);
    const before = wallet.balance;
    this.#setBalance(projectId, wallet, before + delta);
    const row = this.#transactionRow(projectId, context, id, movement, wallet.currency);
    this.transactions.push(row);
    this.entries.push(
      this.#entry(projectId, id, walletId, delta, wallet.balance),
      this.#entry(projectId, id, issuanceAccountId(wallet.currency), -delta, null),
    );
    const data: EventData<'wallet.credit.added'> = {
      wallet_id: walletId,
      transaction_id: id,
      amount,
      balance: wallet.balance,
      description: movement.description,
    };
    const type = movement.type === 'credit' ? 'wallet.credit.added' : 'wallet.credit.deducted';
    this.events.push(walletEvent(projectId, id, type, data, this.#now));
    if (movement.type === 'debit') this.events.push(...lowBalanceEvents(projectId, id, walletId, wallet, amount, this.#now));
    return toTransaction({ ...row, balance_after: wallet.balance });
  }

  #transfer(projectId: string, context: AuditContext, id: string, movement: MovementRequest & { type: 'transfer' }): Transfer {
    const { fromWalletId, toWalletId, amount } = movement;
    if (fromWalletId === toWalletId)
      throw new ApiError('same_wallet', 'A transfer needs two different wallets.', { param: 'to_wallet_id' });
    const source = this.#wallets.get(walletKey(projectId, fromWalletId));
    const target = this.#wallets.get(walletKey(projectId, toWalletId));
    refuseTransfer(source, target, { fromWalletId, toWalletId, amount });
    assert(target !== undefined, 'a checked transfer has its target');
    const [sourceBefore, targetBefore] = [source.balance, target.balance];
    this.#setBalance(projectId, source, sourceBefore - amount);
    this.#setBalance(projectId, target, targetBefore + amount);
    const row = this.#transactionRow(projectId, context, id, movement, source.currency);
    this.transactions.push(row);
    this.entries.push(
      this.#entry(projectId, id, fromWalletId, -amount, source.balance),
      this.#entry(projectId, id, toWalletId, amount, target.balance),
    );
    const transfer = toTransfer(row);
    const data = { transfer_id: id, from: fromWalletId, to: toWalletId, amount, status: transfer.status };
    this.events.push(
      walletEvent(projectId, id, 'wallet.transfer.sent', data, this.#now),
      walletEvent(projectId, id, 'wallet.transfer.received', data, this.#now),
      ...lowBalanceEvents(projectId, id, fromWalletId, source, amount, this.#now),
    );
    return transfer;
  }

  #transactionRow(projectId: string, context: AuditContext, id: string, movement: MovementRequest, currency: string): LedgerTransactionRow {
    const actor = actorColumns(context.actor);
    const transfer = movement.type === 'transfer';
    return {
      id,
      project_id: projectId,
      type: movement.type,
      currency,
      amount: movement.amount,
      description: movement.description,
      metadata: JSON.stringify(movement.metadata),
      idempotency_key: movement.idempotencyKey ?? null,
      idempotency_scope: keyScope(movement),
      wallet_id: transfer ? null : movement.walletId,
      from_wallet_id: transfer ? movement.fromWalletId : null,
      to_wallet_id: transfer ? movement.toWalletId : null,
      created_at: this.#now,
      ...actor,
      request_id: context.requestId,
    };
  }

  #entry(projectId: string, transactionId: string, accountId: string, amount: number, balanceAfter: number | null): NewLedgerEntry {
    return {
      project_id: projectId,
      transaction_id: transactionId,
      account_id: accountId,
      amount,
      balance_after: balanceAfter,
      created_at: this.#now,
    };
  }

  #setBalance(projectId: string, wallet: WalletRow, balance: number): void {
    assert(balance >= 0 && balance <= BALANCE_MAX, `the balance of wallet ${wallet.id} stays in range`);
    this.#undo?.push([wallet, wallet.balance]);
    wallet.balance = balance;
    this.#changed.add(walletKey(projectId, wallet.id));
  }

  /** Balance changes to undo if the atomic batch running now is refused; undefined otherwise. */
  #undo: [WalletRow, number][] | undefined;

  #mark(): { undo: () => void; done: () => void } {
    const lengths = [this.transactions.length, this.entries.length, this.events.length, this.refusals.length];
    const changedBefore = new Set(this.#changed);
    const keysBefore = new Set(this.#keys.keys());
    this.#undo = [];
    const undoLog = this.#undo;
    return {
      undo: () => {
        for (const [wallet, balance] of undoLog.reverse()) wallet.balance = balance;
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
