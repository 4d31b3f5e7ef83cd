import { assert } from '../../lib/assert.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditContext } from '../audit/audit.service.js';
import { lowBalanceEvents, walletEvent } from './ledger.events.js';
import { GRANT_PRIORITY_DEFAULT, type MovementRequest } from './ledger.movements.js';
import { refuseUnavailable, refuseUnavailableIn } from './ledger.plan-holds.js';
import type { ReversalCore } from './ledger.plan-reversals.js';
import { ledgerEntry, transactionRow } from './ledger.plan-rows.js';
import { refuseTransfer } from './ledger.rules.js';
import { CATEGORY_DEFAULT } from './ledger.categories.js';
import type { Transfer } from './ledger.schemas.js';
import { toTransfer } from './ledger.views.js';

/** What a transfer needs of the plan (ledger.plan.ts): its wallets, grants, clock and records. */
export type TransferCore = Pick<ReversalCore, 'now' | 'grants' | 'wallet' | 'setBalance' | 'borrow' | 'repay' | 'record' | 'pushEvent'>;

/**
 * A transfer planned against the locked wallets (ledger.plan.ts applies it in a batch's order):
 * refused unless both wallets are usable, of one unit, and the sender has the credits available;
 * else drawn on the sender's grants and made again as grants of the receiver, its debt repaid first.
 */
export function planTransfer(
  plan: TransferCore,
  projectId: string,
  context: AuditContext,
  id: string,
  movement: MovementRequest & { type: 'transfer' },
): Transfer {
  const { fromWalletId, toWalletId, amount } = movement;
  if (fromWalletId === toWalletId) throw new ApiError('same_wallet', 'A transfer needs two different wallets.', { param: 'to_wallet_id' });
  const source = plan.wallet(projectId, fromWalletId);
  const target = plan.wallet(projectId, toWalletId);
  refuseTransfer(source, target, { fromWalletId, toWalletId, amount });
  assert(target !== undefined, 'a checked transfer has its target');
  refuseUnavailable(source, amount);
  const { categories } = movement;
  if (categories !== null) refuseUnavailableIn(plan.grants, { projectId, wallet: source, categories, amount, now: plan.now });
  const [sourceBefore, targetBefore] = [source.balance, target.balance];
  // The credits keep their grants' terms, category included, in the receiving wallet
  // (docs/adr/0018-holds-and-grants.md, docs/adr/0021-categories.md); the part taken on the
  // sender's credit limit arrives with the default terms. A receiver in debt repays it first, with
  // the credits in the order they were drawn (docs/adr/0023-credit-limits.md).
  const sources = plan.borrow(projectId, source, amount, categories);
  const parts = sources.map((part) => {
    const drawn = plan.grants.get(part.grant_id);
    assert(drawn !== undefined, 'a drawn grant is known');
    return { amount: part.amount, priority: drawn.priority, expiresAt: drawn.expires_at, category: drawn.category };
  });
  const borrowed = amount - sources.reduce((sum, part) => sum + part.amount, 0);
  if (borrowed > 0) parts.push({ amount: borrowed, priority: GRANT_PRIORITY_DEFAULT, expiresAt: null, category: CATEGORY_DEFAULT });
  const repaid = plan.repay(projectId, target, amount);
  let toRepay = repaid;
  for (const part of parts) {
    const kept = part.amount - Math.min(toRepay, part.amount);
    toRepay -= part.amount - kept;
    if (kept === 0) continue;
    plan.grants.create({
      projectId,
      walletId: toWalletId,
      transactionId: id,
      amount: kept,
      priority: part.priority,
      expiresAt: part.expiresAt,
      category: part.category,
      now: plan.now,
    });
  }
  plan.setBalance(projectId, source, sourceBefore - amount);
  plan.setBalance(projectId, target, targetBefore + amount);
  const row = transactionRow({ projectId, context, id, currency: source.currency, now: plan.now }, movement, sources, repaid);
  plan.record(row, [
    ledgerEntry(plan.now, projectId, id, fromWalletId, -amount, source.balance),
    ledgerEntry(plan.now, projectId, id, toWalletId, amount, target.balance),
  ]);
  const transfer = toTransfer(row);
  const data = { transfer_id: id, from: fromWalletId, to: toWalletId, amount, status: transfer.status };
  for (const event of [
    walletEvent(projectId, id, 'wallet.transfer.sent', data, plan.now),
    walletEvent(projectId, id, 'wallet.transfer.received', data, plan.now),
    ...lowBalanceEvents(projectId, id, fromWalletId, source, amount, plan.now),
  ])
    plan.pushEvent(event);
  return transfer;
}
