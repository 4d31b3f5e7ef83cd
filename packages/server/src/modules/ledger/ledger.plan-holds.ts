import type { WalletHoldsTable } from '../../db/schema.js';
import { assert } from '../../lib/assert.js';
import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { actorColumns, type AuditContext, SYSTEM_AUDIT_CONTEXT } from '../audit/audit.service.js';
import type { NewEvent } from '../events/events.service.js';
import type { GrantBook } from './ledger.grants.js';
import type { MovementRequest } from './ledger.movements.js';
import { toHold } from './ledger.views.js';
import type { Hold } from './holds.schemas.js';
import type { Source, Transaction } from './ledger.schemas.js';
import { limitText, refuseUnusable } from './ledger.rules.js';
import { categoriesColumn } from './ledger.categories.js';
import type { WalletsTable as WalletRow } from '../../db/schema.js';

export type HoldRow = WalletHoldsTable;

/** The columns that ending a hold changes: what an undone end restores, and what the flush writes back. */
export function endedColumns(hold: HoldRow) {
  return {
    status: hold.status,
    captured_amount: hold.captured_amount,
    transaction_id: hold.transaction_id,
    updated_at: hold.updated_at,
    ended_actor_type: hold.ended_actor_type,
    ended_actor_id: hold.ended_actor_id,
    ended_actor_user_id: hold.ended_actor_user_id,
    ended_request_id: hold.ended_request_id,
    ended_ip: hold.ended_ip,
    ended_user_agent: hold.ended_user_agent,
  };
}

/** What the hold planner needs of the plan (ledger.plan.ts): its wallets, clock and records. */
export interface PlanCore {
  readonly now: string;
  readonly grants: GrantBook;
  wallet(projectId: string, walletId: string): WalletRow | undefined;
  setBalance(projectId: string, wallet: WalletRow, balance: number): void;
  setHeld(projectId: string, wallet: WalletRow, held: number): void;
  /**
   * Draws `amount` on the wallet's free grants and takes what they do not cover as debt, within
   * its credit limit (the caller has checked `available`); the grants drawn on, in order. With
   * `categories`, only grants of those, which the caller has checked cover `amount`.
   */
  borrow(projectId: string, wallet: WalletRow, amount: number, categories: readonly string[] | null): Source[];
  /** Records a movement out of the wallet (a debit or an expiry) with its entries and money event. */
  takeFromWallet(input: {
    projectId: string;
    /** Who made it: the capture's caller, or the system for an expiry. */
    context: AuditContext;
    transactionId: string;
    type: 'debit' | 'expiry';
    wallet: WalletRow;
    amount: number;
    sources: readonly Source[];
    description: string | null;
    metadata: Readonly<Record<string, string>>;
    idempotencyKey: string | null;
  }): Transaction;
  pushEvent(event: NewEvent): void;
  /** Called with a function that undoes a change, while an atomic batch runs. */
  onChange(undo: () => void): void;
}

function holdNotPending(hold: HoldRow, now: string): ApiError {
  const status = hold.status === 'pending' && hold.expires_at <= now ? 'expired' : hold.status;
  return new ApiError('hold_not_pending', `Hold ${hold.id} is ${status}; only a pending hold can be captured or voided.`);
}

/**
 * Holds on the ledger's one write path (docs/adr/0018-holds-and-grants.md): a hold reserves grants
 * (their `held`) and raises the wallet's `held`, so `available` = balance − held; a capture debits
 * from what it reserved and releases the rest; a void or an expiry releases all of it. Hold events
 * carry the hold's id in their idempotency key. Hold movements write no audit entries: the row
 * keeps who made the hold and who ended it, with their requests, IPs and user agents, and the audit
 * log reads them from there (ledger.audit-holds.ts).
 */
export class HoldPlanner {
  readonly #core: PlanCore;
  readonly #holds = new Map<string, HoldRow>();
  readonly #inserted = new Set<string>();
  readonly #changed = new Set<string>();

  constructor(core: PlanCore, rows: readonly HoldRow[]) {
    this.#core = core;
    for (const row of rows) this.#holds.set(row.id, { ...row });
  }

  inserts(): HoldRow[] {
    return [...this.#inserted].map((id) => this.#required(id));
  }

  updates(): HoldRow[] {
    return [...this.#changed].filter((id) => !this.#inserted.has(id)).map((id) => this.#required(id));
  }

  hold(projectId: string, context: AuditContext, movement: MovementRequest & { type: 'hold' }): Hold {
    const core = this.#core;
    const wallet = core.wallet(projectId, movement.walletId);
    refuseUnusable(wallet, movement.walletId);
    refuseUnavailable(wallet, movement.amount);
    const { categories } = movement;
    if (categories !== null) refuseUnavailableIn(core.grants, { projectId, wallet, categories, amount: movement.amount, now: core.now });
    // What the free grants do not cover is reserved on the credit limit: it counts in `held` alone.
    // A hold restricted to categories was refused above unless their grants cover it.
    const sources = core.grants.draw(projectId, wallet.id, movement.amount, { now: core.now, reserve: true, categories });
    core.setHeld(projectId, wallet, wallet.held + movement.amount);
    const expiresAt = new Date(Date.parse(core.now) + movement.expiresInSeconds * 1000).toISOString();
    const actor = actorColumns(context.actor);
    // Written out column by column, as transaction rows are (ledger.plan-rows.ts `transactionRowOf`).
    const row: HoldRow = {
      id: newId('hld'),
      project_id: projectId,
      wallet_id: wallet.id,
      amount: movement.amount,
      captured_amount: 0,
      status: 'pending',
      sources: JSON.stringify(sources),
      categories: categoriesColumn(categories),
      description: movement.description,
      metadata: JSON.stringify(movement.metadata),
      idempotency_key: movement.idempotencyKey ?? null,
      idempotency_scope: wallet.id,
      transaction_id: null,
      expires_at: expiresAt,
      created_at: core.now,
      updated_at: core.now,
      actor_type: actor.actor_type,
      actor_id: actor.actor_id,
      actor_user_id: actor.actor_user_id,
      request_id: context.requestId,
      ip: context.ip,
      user_agent: context.userAgent,
      ended_actor_type: null,
      ended_actor_id: null,
      ended_actor_user_id: null,
      ended_request_id: null,
      ended_ip: null,
      ended_user_agent: null,
    };
    this.#holds.set(row.id, row);
    this.#inserted.add(row.id);
    core.onChange(() => {
      this.#holds.delete(row.id);
      this.#inserted.delete(row.id);
    });
    const hold = toHold(row, core.now);
    core.pushEvent(holdEvent(projectId, 'wallet.hold.created', hold, core.now));
    return hold;
  }

  capture(projectId: string, context: AuditContext, movement: MovementRequest & { type: 'capture' }): Hold {
    const core = this.#core;
    const { hold, wallet } = this.#pending(projectId, movement.holdId);
    refuseUnusable(wallet, wallet.id);
    const amount = movement.amount ?? hold.amount;
    if (amount > hold.amount) {
      throw new ApiError('parameter_invalid', `Hold ${hold.id} holds ${hold.amount} credits; ${amount} cannot be captured.`, {
        param: 'amount',
      });
    }
    // The grants the hold reserved first; a part it reserved on the credit limit draws on the grants
    // free now, and what they do not cover becomes debt (docs/adr/0023-credit-limits.md).
    const reserved = parseSources(hold.sources);
    const fromReserved = Math.min(
      amount,
      reserved.reduce((sum, source) => sum + source.amount, 0),
    );
    const spent = core.grants.settleReservation(reserved, fromReserved);
    // A hold restricted to categories reserved all of its amount on their grants, so it never borrows.
    if (amount > fromReserved) spent.push(...core.borrow(projectId, wallet, amount - fromReserved, null));
    core.setHeld(projectId, wallet, wallet.held - hold.amount);
    const transactionId = newId('txn');
    core.takeFromWallet({
      projectId,
      context,
      transactionId,
      type: 'debit',
      wallet,
      amount,
      sources: spent,
      description: hold.description,
      metadata: {},
      idempotencyKey: null,
    });
    const captured = this.#end(hold, context, { status: 'captured', captured_amount: amount, transaction_id: transactionId });
    core.pushEvent(holdEvent(projectId, 'wallet.hold.captured', captured, core.now));
    return captured;
  }

  void(projectId: string, context: AuditContext, movement: MovementRequest & { type: 'void' }): Hold {
    const { hold, wallet } = this.#pending(projectId, movement.holdId);
    this.#release(projectId, hold, wallet);
    const voided = this.#end(hold, context, { status: 'voided' });
    this.#core.pushEvent(holdEvent(projectId, 'wallet.hold.voided', voided, this.#core.now));
    return voided;
  }

  /**
   * What time expired on a locked wallet, settled before any movement of the flush: its holds past
   * `expires_at` release their grants (`wallet.hold.expired`), then its expired grants' free credits
   * leave it as `expiry` transactions (`wallet.credit.expired`).
   */
  settle(projectId: string, wallet: WalletRow): void {
    const core = this.#core;
    for (const hold of this.#holds.values()) {
      if (hold.project_id !== projectId || hold.wallet_id !== wallet.id || hold.status !== 'pending' || hold.expires_at > core.now)
        continue;
      this.#release(projectId, hold, wallet);
      const expired = this.#end(hold, SYSTEM_AUDIT_CONTEXT, { status: 'expired' });
      core.pushEvent(holdEvent(projectId, 'wallet.hold.expired', expired, core.now));
    }
    for (const grant of core.grants.expiredFree(projectId, wallet.id, core.now)) {
      const amount = core.grants.expire(grant);
      const transactionId = newId('txn');
      core.takeFromWallet({
        projectId,
        context: SYSTEM_AUDIT_CONTEXT,
        transactionId,
        type: 'expiry',
        wallet,
        amount,
        sources: [{ grant_id: grant.id, amount, category: grant.category }],
        description: null,
        metadata: {},
        idempotencyKey: null,
      });
    }
  }

  #pending(projectId: string, holdId: string): { hold: HoldRow; wallet: WalletRow } {
    const hold = this.#holds.get(holdId);
    if (hold?.project_id !== projectId) throw new ApiError('resource_missing', `No hold ${holdId}.`);
    if (hold.status !== 'pending' || hold.expires_at <= this.#core.now) throw holdNotPending(hold, this.#core.now);
    const wallet = this.#core.wallet(projectId, hold.wallet_id);
    assert(wallet !== undefined, `the wallet of hold ${hold.id} is locked`);
    return { hold, wallet };
  }

  #release(projectId: string, hold: HoldRow, wallet: WalletRow): void {
    this.#core.grants.settleReservation(parseSources(hold.sources), 0);
    this.#core.setHeld(projectId, wallet, wallet.held - hold.amount);
  }

  /** Ends a pending hold: its new status, and who ended it, with which request and from where. */
  #end(hold: HoldRow, context: AuditContext, changes: Partial<Pick<HoldRow, 'status' | 'captured_amount' | 'transaction_id'>>): Hold {
    const before = endedColumns(hold);
    const actor = actorColumns(context.actor);
    Object.assign(hold, changes, {
      updated_at: this.#core.now,
      ended_actor_type: actor.actor_type,
      ended_actor_id: actor.actor_id,
      ended_actor_user_id: actor.actor_user_id,
      ended_request_id: context.requestId,
      ended_ip: context.ip,
      ended_user_agent: context.userAgent,
    });
    // As for grants (ledger.grants.ts): an undone first change leaves the hold unchanged.
    const first = !this.#changed.has(hold.id);
    this.#changed.add(hold.id);
    this.#core.onChange(() => {
      Object.assign(hold, before);
      if (first) this.#changed.delete(hold.id);
    });
    return toHold(hold, this.#core.now);
  }

  #required(holdId: string): HoldRow {
    const row = this.#holds.get(holdId);
    assert(row !== undefined, `hold ${holdId} is known`);
    return row;
  }
}

/**
 * 422 `insufficient_credits` when taking `amount` would leave the wallet's available credits
 * (balance − held) below −`credit_limit` (docs/adr/0023-credit-limits.md).
 */
export function refuseUnavailable(wallet: WalletRow, amount: number): void {
  const available = wallet.balance - wallet.held;
  if (available - amount < -wallet.credit_limit) {
    const held = wallet.held > 0 ? ` (${wallet.balance} less ${wallet.held} held)` : '';
    throw new ApiError(
      'insufficient_credits',
      `Wallet ${wallet.id} has ${available} credits available${held}${limitText(wallet)}; ${amount} requested.`,
      { param: 'amount' },
    );
  }
}

/**
 * 422 `insufficient_credits` when the wallet's grants of `categories` make less than `amount`
 * available (docs/adr/0021-categories.md); the wallet's own check (`refuseUnavailable`) comes first.
 */
export function refuseUnavailableIn(
  grants: GrantBook,
  input: { projectId: string; wallet: WalletRow; categories: readonly string[]; amount: number; now: string },
): void {
  const { wallet, categories, amount } = input;
  const available = grants.availableIn(input.projectId, wallet.id, input.now, categories);
  if (available < amount) {
    throw new ApiError(
      'insufficient_credits',
      `Wallet ${wallet.id} has ${available} credits available in ${categories.join(', ')}; ${amount} requested.`,
      { param: 'amount' },
    );
  }
}

export function parseSources(text: string | null): Source[] {
  return text === null ? [] : (JSON.parse(text) as Source[]);
}

function holdEvent(
  projectId: string,
  type: 'wallet.hold.created' | 'wallet.hold.captured' | 'wallet.hold.voided' | 'wallet.hold.expired',
  hold: Hold,
  createdAt: string,
): NewEvent {
  const data = {
    hold_id: hold.id,
    wallet_id: hold.wallet_id,
    amount: hold.amount,
    captured_amount: hold.captured_amount,
    status: hold.status,
    transaction_id: hold.transaction_id,
    expires_at: hold.expires_at,
  };
  return { projectId, type, data, createdAt, idempotencyKey: `${hold.id}.${type}` };
}
