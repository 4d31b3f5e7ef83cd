import { assert } from '../../lib/assert.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditContext } from '../audit/audit.service.js';
import { lowBalanceEvents, walletEvent } from './ledger.events.js';
import { isExpired } from './ledger.grants.js';
import { GRANT_PRIORITY_DEFAULT, type MovementRequest } from './ledger.movements.js';
import { type PlanCore, parseSources, refuseUnavailable } from './ledger.plan-holds.js';
import { ledgerEntry, transactionRowOf } from './ledger.plan-rows.js';
import { issuanceAccountId, type LedgerTransactionRow, type NewLedgerEntry } from './ledger.store.js';
import { toTransaction } from './ledger.views.js';
import { CATEGORY_DEFAULT } from './ledger.categories.js';
import { limitText, refuseOutOfRange, refuseUnusable } from './ledger.rules.js';
import type { Source, Transaction } from './ledger.schemas.js';
import type { WalletsTable as WalletRow } from '../../db/schema.js';

/** A transaction a flush may reverse, and how much of it reversals committed before the flush gave back. */
export interface ReversibleRow {
  readonly row: LedgerTransactionRow;
  readonly reversed: number;
}

/** What the reversal planner needs of the plan (ledger.plan.ts) beyond what holds need. */
export interface ReversalCore extends PlanCore {
  /** Repays up to `amount` of the wallet's debt; what it repaid. */
  repay(projectId: string, wallet: WalletRow, amount: number): number;
  /** Raises the wallet's debt by `amount` (checked by the caller to stay within its credit limit). */
  addDebt(projectId: string, wallet: WalletRow, amount: number): void;
  record(row: LedgerTransactionRow, entries: readonly NewLedgerEntry[]): void;
}

/** One part of a movement a reversal gives back: the part taken on the credit limit, or a grant drawn on. */
type Part =
  { readonly kind: 'debt'; readonly amount: number } | { readonly kind: 'grant'; readonly amount: number; readonly source: Source };

/**
 * Reversals on the ledger's one write path (docs/adr/0024-reversals.md). A reversal gives back part
 * or all of what is left of a credit, debit (a capture's too) or transfer; the reversals of one
 * transaction never sum to more than it. Each transaction's parts are given back in one fixed order,
 * so successive partial reversals continue where the previous one stopped:
 *
 * - a credit: first the grant it made (422 `insufficient_credits` when it no longer has those
 *   credits free), then what it repaid of the wallet's debt, which becomes debt again (within the
 *   credit limit);
 * - a debit: first what it took on the credit limit, which repays the wallet's debt (or, once that
 *   debt was repaid otherwise, comes back as a default grant with no expiry), then each grant drawn
 *   on, in order: its credits return to it, or, when it has expired since, come back as a new grant
 *   of its category and priority with no expiry;
 * - a transfer: the receiving wallet gives the credits back as a debit would take them (it must
 *   have them available), and the sending wallet gets them back as a debit's reversal.
 */
export class ReversalPlanner {
  readonly #core: ReversalCore;
  readonly #originals = new Map<string, LedgerTransactionRow>();
  /** Credits given back of each transaction: before the flush, plus this flush's reversals. */
  readonly #reversed = new Map<string, number>();

  constructor(core: ReversalCore, rows: readonly ReversibleRow[]) {
    this.#core = core;
    for (const { row, reversed } of rows) {
      this.#originals.set(originalKey(row.project_id, row.id), row);
      this.#reversed.set(originalKey(row.project_id, row.id), reversed);
    }
  }

  reverse(projectId: string, context: AuditContext, id: string, movement: MovementRequest & { type: 'reverse' }): Transaction {
    const core = this.#core;
    const key = originalKey(projectId, movement.transactionId);
    const original = this.#originals.get(key);
    if (original === undefined) throw new ApiError('resource_missing', `No transaction ${movement.transactionId}.`);
    if (original.type === 'expiry' || original.type === 'reversal') {
      throw new ApiError(
        'transaction_not_reversible',
        `Transaction ${original.id} is ${original.type === 'expiry' ? 'an expiry' : 'a reversal'}; only credits, debits and transfers can be reversed.`,
      );
    }
    const before = this.#reversed.get(key) ?? 0;
    const left = original.amount - before;
    const amount = movement.amount ?? left;
    if (left === 0 || amount > left) {
      throw new ApiError(
        'reversal_exceeds_original',
        `Transaction ${original.id} moved ${original.amount} credits and ${before} of them were reversed; ${left === 0 ? 'nothing is left to reverse' : `${amount} cannot be`}.`,
        { param: movement.amount === undefined ? undefined : 'amount' },
      );
    }
    const common = { projectId, context, id, original, before, amount, movement };
    const transaction =
      original.type === 'credit'
        ? this.#reverseCredit(common)
        : original.type === 'debit'
          ? this.#reverseDebit(common)
          : this.#reverseTransfer(common);
    this.#reversed.set(key, before + amount);
    core.onChange(() => this.#reversed.set(key, before));
    return transaction;
  }

  #wallet(projectId: string, walletId: string | null): WalletRow {
    assert(walletId !== null, 'a reversible transaction names its wallets');
    const wallet = this.#core.wallet(projectId, walletId);
    refuseUnusable(wallet, walletId);
    return wallet;
  }

  #reverseCredit(input: ReversalInput): Transaction {
    const core = this.#core;
    const { projectId, original, before, amount } = input;
    const wallet = this.#wallet(projectId, original.wallet_id);
    const granted = original.amount - original.repaid;
    const fromGrant = Math.min(before + amount, granted) - Math.min(before, granted);
    const toDebt = amount - fromGrant;
    const [made] = parseSources(original.sources);
    const grant = made === undefined ? undefined : core.grants.get(made.grant_id);
    if (fromGrant > 0) {
      const free = grant === undefined || isExpired(grant, core.now) ? 0 : grant.remaining - grant.held;
      if (free < fromGrant) {
        throw new ApiError(
          'insufficient_credits',
          `The grant credit ${original.id} made has ${free} credits left to take back; ${fromGrant} requested.`,
          { param: 'amount' },
        );
      }
    }
    if (wallet.debt + toDebt > wallet.credit_limit) {
      throw new ApiError(
        'insufficient_credits',
        `Reversing what credit ${original.id} repaid would take wallet ${wallet.id} beyond its debt of ${wallet.debt}${limitText(wallet)}; ${toDebt} requested.`,
        { param: 'amount' },
      );
    }
    refuseUnavailable(wallet, amount);
    const sources: Source[] = [];
    if (fromGrant > 0 && grant !== undefined) {
      core.grants.restore(grant, -fromGrant);
      sources.push({ grant_id: grant.id, amount: fromGrant, category: grant.category });
    }
    if (toDebt > 0) core.addDebt(projectId, wallet, toDebt);
    core.setBalance(projectId, wallet, wallet.balance - amount);
    const row = this.#row(input, { walletId: wallet.id, fromWalletId: null, sources, repaid: 0 });
    core.record(row, [
      ledgerEntry(core.now, projectId, input.id, wallet.id, -amount, wallet.balance),
      ledgerEntry(core.now, projectId, input.id, issuanceAccountId(wallet.currency), amount, null),
    ]);
    this.#event(input, wallet);
    for (const event of lowBalanceEvents(projectId, input.id, wallet.id, wallet, amount, core.now)) core.pushEvent(event);
    return toTransaction(row, wallet.balance);
  }

  #reverseDebit(input: ReversalInput): Transaction {
    const core = this.#core;
    const { projectId, original, amount } = input;
    const wallet = this.#wallet(projectId, original.wallet_id);
    refuseOutOfRange(wallet, amount);
    const { sources, repaid } = this.#giveBack(input, wallet);
    core.setBalance(projectId, wallet, wallet.balance + amount);
    const row = this.#row(input, { walletId: wallet.id, fromWalletId: null, sources, repaid });
    core.record(row, [
      ledgerEntry(core.now, projectId, input.id, wallet.id, amount, wallet.balance),
      ledgerEntry(core.now, projectId, input.id, issuanceAccountId(wallet.currency), -amount, null),
    ]);
    this.#event(input, wallet);
    return toTransaction(row, wallet.balance);
  }

  #reverseTransfer(input: ReversalInput): Transaction {
    const core = this.#core;
    const { projectId, original, amount } = input;
    // The credits go back from the wallet that received them to the one that sent them.
    const giver = this.#wallet(projectId, original.to_wallet_id);
    const taker = this.#wallet(projectId, original.from_wallet_id);
    refuseOutOfRange(giver, -amount);
    refuseUnavailable(giver, amount);
    refuseOutOfRange(taker, amount);
    core.borrow(projectId, giver, amount, null);
    const { sources, repaid } = this.#giveBack(input, taker);
    core.setBalance(projectId, giver, giver.balance - amount);
    core.setBalance(projectId, taker, taker.balance + amount);
    const row = this.#row(input, { walletId: taker.id, fromWalletId: giver.id, sources, repaid });
    core.record(row, [
      ledgerEntry(core.now, projectId, input.id, giver.id, -amount, giver.balance),
      ledgerEntry(core.now, projectId, input.id, taker.id, amount, taker.balance),
    ]);
    this.#event(input, taker);
    for (const event of lowBalanceEvents(projectId, input.id, giver.id, giver, amount, core.now)) core.pushEvent(event);
    return toTransaction(row, taker.balance);
  }

  /**
   * Gives `amount` back to the wallet a debit or transfer took it from, continuing after the `before`
   * credits earlier reversals gave back: the part taken on the credit limit first, then the grants
   * drawn on, in order. The grants given back to or made, and what was repaid of the wallet's debt.
   */
  #giveBack(input: ReversalInput, wallet: WalletRow): { sources: Source[]; repaid: number } {
    const core = this.#core;
    const { projectId, original, before, amount } = input;
    const drawn = parseSources(original.sources);
    const onLimit = original.amount - drawn.reduce((sum, source) => sum + source.amount, 0);
    const parts: Part[] = [
      { kind: 'debt', amount: onLimit },
      ...drawn.map((source) => ({ kind: 'grant' as const, amount: source.amount, source })),
    ];
    const sources: Source[] = [];
    let repaid = 0;
    let offset = 0;
    for (const part of parts) {
      const given = Math.max(0, Math.min(offset + part.amount, before + amount) - Math.max(offset, before));
      offset += part.amount;
      if (given === 0) continue;
      if (part.kind === 'debt') {
        const repaying = core.repay(projectId, wallet, given);
        repaid += repaying;
        if (given > repaying) sources.push(this.#newGrant(input, wallet, given - repaying, GRANT_PRIORITY_DEFAULT, CATEGORY_DEFAULT));
        continue;
      }
      const grant = core.grants.get(part.source.grant_id);
      assert(grant !== undefined, `grant ${part.source.grant_id} of transaction ${original.id} is loaded`);
      if (isExpired(grant, core.now)) {
        sources.push(this.#newGrant(input, wallet, given, grant.priority, grant.category));
      } else {
        core.grants.restore(grant, given);
        sources.push({ grant_id: grant.id, amount: given, category: grant.category });
      }
    }
    return { sources, repaid };
  }

  #newGrant(input: ReversalInput, wallet: WalletRow, amount: number, priority: number, category: string): Source {
    const core = this.#core;
    return core.grants.create({
      projectId: input.projectId,
      walletId: wallet.id,
      transactionId: input.id,
      amount,
      priority,
      expiresAt: null,
      category,
      now: core.now,
    });
  }

  #row(
    input: ReversalInput,
    columns: { walletId: string; fromWalletId: string | null; sources: readonly Source[]; repaid: number },
  ): LedgerTransactionRow {
    const { movement, original } = input;
    return transactionRowOf(
      { projectId: input.projectId, context: input.context, id: input.id, currency: original.currency, now: this.#core.now },
      {
        type: 'reversal',
        amount: input.amount,
        description: movement.description,
        metadata: JSON.stringify(movement.metadata),
        idempotency_key: movement.idempotencyKey ?? null,
        idempotency_scope: '',
        wallet_id: columns.walletId,
        from_wallet_id: columns.fromWalletId,
        to_wallet_id: columns.fromWalletId === null ? null : columns.walletId,
        sources: JSON.stringify(columns.sources),
        priority: null,
        expires_at: null,
        recurring_grant_id: null,
        category: null,
        categories: null,
        repaid: columns.repaid,
        reverses: original.id,
        asked_amount: movement.amount ?? null,
      },
    );
  }

  #event(input: ReversalInput, wallet: WalletRow): void {
    const data = {
      wallet_id: wallet.id,
      transaction_id: input.original.id,
      reversal_id: input.id,
      amount: input.amount,
      balance: wallet.balance,
    };
    this.#core.pushEvent(walletEvent(input.projectId, input.id, 'wallet.transaction.reversed', data, this.#core.now));
  }
}

interface ReversalInput {
  readonly projectId: string;
  readonly context: AuditContext;
  readonly id: string;
  readonly original: LedgerTransactionRow;
  /** What earlier reversals gave back. */
  readonly before: number;
  readonly amount: number;
  readonly movement: MovementRequest & { type: 'reverse' };
}

function originalKey(projectId: string, transactionId: string): string {
  return `${projectId} ${transactionId}`;
}
