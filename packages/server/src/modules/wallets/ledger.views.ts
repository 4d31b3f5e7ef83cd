import { assert } from '../../lib/assert.js';
import type { LedgerTransactionRow, TransactionWithBalance, WalletHistoryRow } from './ledger.store.js';
import type { Transaction, Transfer, WalletTransaction } from './wallets.schemas.js';
import { parseMetadata } from './metadata.js';
import { actorFromColumns } from '../audit/audit.service.js';
import type { MovementRequest } from './ledger.movements.js';

/** Ledger rows as the API shows them (docs/api.md section 4, Wallets). */

export function toTransaction(row: TransactionWithBalance): Transaction {
  assert(row.type !== 'transfer', `${row.id} is a credit or debit`);
  assert(row.balance_after !== null && row.wallet_id !== null, `${row.type} ${row.id} has its wallet entry`);
  return {
    id: row.id,
    object: 'transaction',
    type: row.type,
    wallet_id: row.wallet_id,
    amount: row.amount,
    balance_after: row.balance_after,
    description: row.description,
    metadata: parseMetadata(row.metadata),
    idempotency_key: row.idempotency_key,
    status: 'completed',
    created_at: row.created_at,
    ...madeBy(row),
  };
}

export function toTransfer(row: LedgerTransactionRow): Transfer {
  assert(row.from_wallet_id !== null && row.to_wallet_id !== null, `transfer ${row.id} names both wallets`);
  return {
    id: row.id,
    object: 'transfer',
    status: 'completed',
    from_wallet_id: row.from_wallet_id,
    to_wallet_id: row.to_wallet_id,
    amount: row.amount,
    description: row.description,
    idempotency_key: row.idempotency_key,
    created_at: row.created_at,
    ...madeBy(row),
  };
}

/** One wallet's side of a movement: a transfer shows as `transfer_out` or `transfer_in`. */
export function toWalletTransaction(row: WalletHistoryRow, walletId: string): WalletTransaction {
  assert(row.balance_after !== null, `wallet entry of ${row.id} has a balance`);
  const outgoing = row.entry_amount < 0;
  const type = row.type !== 'transfer' ? row.type : outgoing ? 'transfer_out' : 'transfer_in';
  const counterparty = row.type !== 'transfer' ? undefined : outgoing ? row.to_wallet_id : row.from_wallet_id;
  assert(row.type !== 'transfer' || counterparty !== null, `transfer ${row.id} names both wallets`);
  return {
    id: row.id,
    object: 'transaction',
    type,
    wallet_id: walletId,
    amount: row.amount,
    balance_after: row.balance_after,
    description: row.description,
    metadata: parseMetadata(row.metadata),
    idempotency_key: row.idempotency_key,
    status: 'completed',
    created_at: row.created_at,
    ...madeBy(row),
    ...(counterparty === undefined || counterparty === null ? {} : { counterparty_wallet_id: counterparty }),
  };
}

/** `actor` and `request_id` of a transaction object. */
function madeBy(row: LedgerTransactionRow): Pick<Transaction, 'actor' | 'request_id'> {
  return { actor: actorFromColumns(row), request_id: row.request_id };
}

/** The movement a stored transaction made, as asked: the fingerprint of a key is rebuilt from it. */
export function movementOfRow(row: LedgerTransactionRow): MovementRequest {
  const common = {
    amount: row.amount,
    description: row.description,
    metadata: parseMetadata(row.metadata),
    idempotencyKey: row.idempotency_key ?? undefined,
  };
  if (row.type === 'transfer') {
    assert(row.from_wallet_id !== null && row.to_wallet_id !== null, `transfer ${row.id} names both wallets`);
    return { type: 'transfer', fromWalletId: row.from_wallet_id, toWalletId: row.to_wallet_id, ...common };
  }
  assert(row.wallet_id !== null, `${row.type} ${row.id} names its wallet`);
  return { type: row.type, walletId: row.wallet_id, ...common };
}
