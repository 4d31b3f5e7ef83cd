import type { EventData, EventType, NewEventOf } from '../events/events.service.js';
import type { BalanceAfterChange } from './ledger.store.js';

/**
 * The outbox events of ledger movements (docs/api.md section 5). Each event's idempotency key
 * names its transaction and its type, so the unique index on the key makes a second copy of the
 * same event impossible.
 */

export function eventKey(transactionId: string, type: EventType): string {
  return `${transactionId}.${type}`;
}

export function walletEvent<T extends EventType>(
  projectId: string,
  transactionId: string,
  type: T,
  data: EventData<T>,
  createdAt: string,
): NewEventOf<T> {
  return { projectId, type, data, createdAt, idempotencyKey: eventKey(transactionId, type) };
}

/**
 * `wallet.balance.low` when a movement took the wallet from at or above its threshold to below it
 * (once per crossing: the balance before was not yet below).
 */
export function lowBalanceEvents(
  projectId: string,
  transactionId: string,
  walletId: string,
  after: BalanceAfterChange,
  amountTaken: number,
  createdAt: string,
): NewEventOf<'wallet.balance.low'>[] {
  const threshold = after.low_balance_threshold;
  if (threshold === null) return [];
  const before = after.balance + amountTaken;
  if (!(before >= threshold && after.balance < threshold)) return [];
  const data = { wallet_id: walletId, balance: after.balance, threshold, currency: after.currency };
  return [walletEvent(projectId, transactionId, 'wallet.balance.low', data, createdAt)];
}
