import { assert } from '../../lib/assert.js';
import type { WalletGrantsTable, WalletHoldsTable } from '../../db/schema.js';
import type { LedgerTransactionRow, WalletHistoryRow } from './ledger.store.js';
import type { Source, Transaction, Transfer, WalletTransaction } from './ledger.schemas.js';
import type { Grant, Hold } from './holds.schemas.js';
import { parseMetadata } from '../../lib/metadata.js';
import { CATEGORY_DEFAULT, parseCategories } from './ledger.categories.js';
import { actorFromColumns } from '../audit/audit.service.js';
import { GRANT_PRIORITY_DEFAULT, type KeyedMovement } from './ledger.movements.js';

/**
 * Ledger rows as the API shows them (docs/api.md section 4, Wallets). Each object is written out
 * field by field: V8 builds an object with a spread in it through a slow path, and a batch makes a
 * thousand of these.
 */

/** A credit or debit; `balanceAfter` is its wallet's balance after it, when the row does not carry it. */
export function toTransaction(
  row: LedgerTransactionRow & { balance_after?: number | null },
  balanceAfter = row.balance_after,
): Transaction {
  assert(row.type !== 'transfer', `${row.id} is a credit or debit`);
  assert(balanceAfter !== null && balanceAfter !== undefined && row.wallet_id !== null, `${row.type} ${row.id} has its wallet entry`);
  const transaction: Transaction = {
    id: row.id,
    object: 'transaction',
    type: row.type,
    wallet_id: row.wallet_id,
    amount: row.amount,
    balance_after: balanceAfter,
    description: row.description,
    metadata: parseMetadata(row.metadata),
    idempotency_key: row.idempotency_key,
    status: 'completed',
    created_at: row.created_at,
    actor: actorFromColumns(row),
    request_id: row.request_id,
    sources: sourcesOf(row),
    recurring_grant_id: row.recurring_grant_id,
    repaid: row.repaid,
  };
  addCategories(transaction, row);
  if (row.reverses !== null) transaction.reverses = row.reverses;
  return transaction;
}

/** A credit's `category` (`default` for credits made before categories), a restricted movement's `categories`. */
function addCategories(
  view: { category?: string; categories?: string[] },
  row: Pick<LedgerTransactionRow, 'type' | 'category' | 'categories'>,
): void {
  if (row.type === 'credit') view.category = row.category ?? CATEGORY_DEFAULT;
  const categories = parseCategories(row.categories);
  if (categories !== null) view.categories = categories;
}

/** A hold as the API shows it at `now`: a pending hold past `expires_at` is `expired` before the job settles it. */
export function toHold(row: WalletHoldsTable, now: string): Hold {
  const hold: Hold = {
    id: row.id,
    object: 'hold',
    wallet_id: row.wallet_id,
    amount: row.amount,
    captured_amount: row.captured_amount,
    status: row.status === 'pending' && row.expires_at <= now ? 'expired' : row.status,
    description: row.description,
    metadata: parseMetadata(row.metadata),
    transaction_id: row.transaction_id,
    expires_at: row.expires_at,
    created_at: row.created_at,
  };
  const categories = parseCategories(row.categories);
  if (categories !== null) hold.categories = categories;
  return hold;
}

/** A grant at `now`: `expired` from its `expires_at` on (or once expiry removed credits of it), `depleted` when spent. */
export function toGrant(row: WalletGrantsTable, now: string): Grant {
  const expired = row.expired > 0 || (row.expires_at !== null && row.expires_at <= now && row.remaining > 0);
  return {
    id: row.id,
    object: 'grant',
    wallet_id: row.wallet_id,
    amount: row.amount,
    remaining: row.remaining,
    priority: row.priority,
    expires_at: row.expires_at,
    status: expired ? 'expired' : row.remaining === 0 ? 'depleted' : 'active',
    created_at: row.created_at,
    category: row.category,
  };
}

/** The hold a key made, as asked: the fingerprint of its key is rebuilt from it. */
export function movementOfHold(row: WalletHoldsTable): KeyedMovement {
  return {
    type: 'hold',
    walletId: row.wallet_id,
    amount: row.amount,
    description: row.description,
    metadata: parseMetadata(row.metadata),
    idempotencyKey: row.idempotency_key ?? undefined,
    expiresInSeconds: Math.round((Date.parse(row.expires_at) - Date.parse(row.created_at)) / 1000),
    categories: parseCategories(row.categories),
  };
}

export function toTransfer(row: LedgerTransactionRow): Transfer {
  assert(row.from_wallet_id !== null && row.to_wallet_id !== null, `transfer ${row.id} names both wallets`);
  const transfer: Transfer = {
    id: row.id,
    object: 'transfer',
    status: 'completed',
    from_wallet_id: row.from_wallet_id,
    to_wallet_id: row.to_wallet_id,
    amount: row.amount,
    description: row.description,
    idempotency_key: row.idempotency_key,
    created_at: row.created_at,
    actor: actorFromColumns(row),
    request_id: row.request_id,
    sources: sourcesOf(row),
    repaid: row.repaid,
  };
  addCategories(transfer, row);
  return transfer;
}

/** One wallet's side of a movement: a transfer shows as `transfer_out` or `transfer_in`. */
export function toWalletTransaction(row: WalletHistoryRow, walletId: string): WalletTransaction {
  assert(row.balance_after !== null, `wallet entry of ${row.id} has a balance`);
  const outgoing = row.entry_amount < 0;
  const type = row.type !== 'transfer' ? row.type : outgoing ? 'transfer_out' : 'transfer_in';
  // A transfer and a transfer's reversal name both wallets; the other movements neither.
  const betweenWallets = row.from_wallet_id !== null && row.to_wallet_id !== null;
  const counterparty = !betweenWallets ? undefined : outgoing ? row.to_wallet_id : row.from_wallet_id;
  assert(row.type !== 'transfer' || counterparty !== null, `transfer ${row.id} names both wallets`);
  const transaction: WalletTransaction = {
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
    actor: actorFromColumns(row),
    request_id: row.request_id,
    sources: sourcesOf(row),
    recurring_grant_id: row.recurring_grant_id,
    // A transfer (or its reversal) repays the receiving wallet's debt only.
    repaid: outgoing ? 0 : row.repaid,
    ...(counterparty === undefined || counterparty === null ? {} : { counterparty_wallet_id: counterparty }),
  };
  addCategories(transaction, row);
  if (row.reverses !== null) transaction.reverses = row.reverses;
  return transaction;
}

/** The grants a transaction drew on or made; those recorded before categories were all `default`. */
function sourcesOf(row: Pick<LedgerTransactionRow, 'sources'>): Source[] {
  if (row.sources === null) return [];
  const sources = JSON.parse(row.sources) as (Omit<Source, 'category'> & { category?: string })[];
  return sources.map((source) => (source.category === undefined ? { ...source, category: CATEGORY_DEFAULT } : (source as Source)));
}

/** The movement a stored transaction made, as asked: the fingerprint of a key is rebuilt from it. */
export function movementOfRow(row: LedgerTransactionRow): KeyedMovement {
  const common = {
    amount: row.amount,
    description: row.description,
    metadata: parseMetadata(row.metadata),
    idempotencyKey: row.idempotency_key ?? undefined,
  };
  if (row.type === 'transfer') {
    assert(row.from_wallet_id !== null && row.to_wallet_id !== null, `transfer ${row.id} names both wallets`);
    return {
      type: 'transfer',
      fromWalletId: row.from_wallet_id,
      toWalletId: row.to_wallet_id,
      ...common,
      categories: parseCategories(row.categories),
    };
  }
  if (row.type === 'reversal') {
    assert(row.reverses !== null, `reversal ${row.id} names what it reverses`);
    return { type: 'reverse', transactionId: row.reverses, ...common, amount: row.asked_amount ?? undefined };
  }
  assert(row.wallet_id !== null && row.type !== 'expiry', `${row.type} ${row.id} names its wallet and a key`);
  if (row.type === 'debit') return { type: 'debit', walletId: row.wallet_id, ...common, categories: parseCategories(row.categories) };
  return {
    type: 'credit',
    walletId: row.wallet_id,
    ...common,
    priority: row.priority ?? GRANT_PRIORITY_DEFAULT,
    expiresAt: row.expires_at,
    recurringGrantId: row.recurring_grant_id ?? undefined,
    category: row.category ?? CATEGORY_DEFAULT,
  };
}
