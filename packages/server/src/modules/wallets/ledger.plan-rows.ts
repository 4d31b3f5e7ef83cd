import { assert } from '../../lib/assert.js';
import { ApiError, type ErrorCode } from '../../lib/errors.js';
import { actorColumns, type AuditContext } from '../audit/audit.service.js';
import { fieldsHash, type KeyedMovement, keyScope, type MovementFields, type MovementOutcome, movementFields } from './ledger.movements.js';
import type { HoldRow } from './ledger.plan-holds.js';
import type { LedgerKey, LedgerRefusalRow } from './ledger.statements.js';
import type { LedgerTransactionRow, NewLedgerEntry, TransactionWithBalance } from './ledger.store.js';
import { movementOfHold, movementOfRow, toHold, toTransaction, toTransfer } from './ledger.views.js';
import type { Source } from './wallets.schemas.js';

/** The rows a plan (ledger.plan.ts) writes, and the answers its idempotency keys already gave. */

/** What a key already answered, and the fingerprint of the request that made it. */
export interface KeyedAnswer {
  readonly fields: MovementFields;
  readonly hash: string;
  readonly outcome: MovementOutcome;
}

export function ledgerKeyText(key: LedgerKey): string {
  return `${key.projectId}\n${key.scope}\n${key.key}`;
}

/** Every keyed answer the flush found: transactions and holds made under a key, refusals stored with one. */
export function keyedAnswers(input: {
  readonly keyedTransactions: readonly TransactionWithBalance[];
  readonly keyedRefusals: readonly LedgerRefusalRow[];
  readonly keyedHolds: readonly HoldRow[];
  readonly now: string;
}): Map<string, KeyedAnswer> {
  const answers = new Map<string, KeyedAnswer>();
  for (const row of input.keyedHolds) {
    const fields = movementFields(movementOfHold(row));
    const key = { projectId: row.project_id, scope: row.idempotency_scope, key: row.idempotency_key ?? '' };
    answers.set(ledgerKeyText(key), {
      fields,
      hash: fieldsHash(fields),
      outcome: { ok: true, replayed: true, value: toHold(row, input.now) },
    });
  }
  for (const row of input.keyedTransactions) {
    assert(row.idempotency_key !== null, 'a keyed transaction has its key');
    const fields = movementFields(movementOfRow(row));
    const value = row.type === 'transfer' ? toTransfer(row) : toTransaction(row);
    const key = { projectId: row.project_id, scope: row.idempotency_scope, key: row.idempotency_key };
    answers.set(ledgerKeyText(key), { fields, hash: fieldsHash(fields), outcome: { ok: true, replayed: true, value } });
  }
  for (const row of input.keyedRefusals) {
    const error = new ApiError(row.code as ErrorCode, row.message, row.param === null ? {} : { param: row.param });
    const key = { projectId: row.project_id, scope: row.idempotency_scope, key: row.idempotency_key };
    const fields = JSON.parse(row.request_fields) as MovementFields;
    answers.set(ledgerKeyText(key), {
      fields,
      hash: row.request_hash,
      outcome: { ok: false, replayed: true, error, requestId: row.request_id },
    });
  }
  return answers;
}

export interface RowContext {
  readonly projectId: string;
  readonly context: AuditContext;
  readonly id: string;
  readonly currency: string;
  readonly now: string;
}

/** The columns every transaction row shares: who made it, when, in which currency. */
export function rowBase(row: RowContext) {
  return {
    id: row.id,
    project_id: row.projectId,
    currency: row.currency,
    from_wallet_id: null,
    to_wallet_id: null,
    created_at: row.now,
    ...actorColumns(row.context.actor),
    request_id: row.context.requestId,
    priority: null,
    expires_at: null,
  };
}

/** The row of a credit, debit or transfer as asked, with the grants it drew on or made. */
export function transactionRow(
  row: RowContext,
  movement: KeyedMovement & { type: 'credit' | 'debit' | 'transfer' },
  sources: readonly Source[],
): LedgerTransactionRow {
  const transfer = movement.type === 'transfer';
  return {
    ...rowBase(row),
    type: movement.type,
    amount: movement.amount,
    description: movement.description,
    metadata: JSON.stringify(movement.metadata),
    idempotency_key: movement.idempotencyKey ?? null,
    idempotency_scope: keyScope(movement),
    wallet_id: transfer ? null : movement.walletId,
    from_wallet_id: transfer ? movement.fromWalletId : null,
    to_wallet_id: transfer ? movement.toWalletId : null,
    sources: JSON.stringify(sources),
    priority: movement.type === 'credit' ? movement.priority : null,
    expires_at: movement.type === 'credit' ? movement.expiresAt : null,
  };
}

export function ledgerEntry(
  now: string,
  projectId: string,
  transactionId: string,
  accountId: string,
  amount: number,
  balanceAfter: number | null,
): NewLedgerEntry {
  return {
    project_id: projectId,
    transaction_id: transactionId,
    account_id: accountId,
    amount,
    balance_after: balanceAfter,
    created_at: now,
  };
}
