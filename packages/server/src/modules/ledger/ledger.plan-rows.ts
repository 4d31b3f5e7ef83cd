import type { IdempotencyKeysTable } from '../../db/schema.js';
import { assert } from '../../lib/assert.js';
import { ApiError, type ErrorCode } from '../../lib/errors.js';
import { actorColumns, type AuditContext } from '../audit/audit.service.js';
import { fieldsHash, type KeyedMovement, keyScope, type MovementFields, type MovementOutcome, movementFields } from './ledger.movements.js';
import type { HoldRow } from './ledger.plan-holds.js';
import type { LedgerKey, LedgerRefusalRow } from './ledger.statements.js';
import type { LedgerTransactionRow, NewLedgerEntry, TransactionWithBalance } from './ledger.store.js';
import { movementOfHold, movementOfRow, toHold, toTransaction, toTransfer } from './ledger.views.js';
import type { Source } from './ledger.schemas.js';
import { categoriesColumn } from './ledger.categories.js';

/** The rows a plan (ledger.plan.ts) writes, and the answers its idempotency keys already gave. */

/** What a key already answered, and the fingerprint of the request that made it. */
export interface KeyedAnswer {
  readonly fields: MovementFields;
  readonly hash: string;
  readonly outcome: MovementOutcome;
}

/**
 * A movement's key lives in `idempotency_keys` under its own scope, `ledger:` and the movement's
 * (a wallet id for credits, debits and holds, empty for transfers), apart from the keys of whole
 * requests: a transfer's key and a batch's Idempotency-Key may be the same text without meeting.
 */
export function movementKeyScope(scope: string): string {
  return `${MOVEMENT_KEY_SCOPE_PREFIX}${scope}`;
}
export const MOVEMENT_KEY_SCOPE_PREFIX = 'ledger:';

/**
 * The key rows of what a flush made or refused under movement keys, written in its transaction
 * (docs/adr/0004-idempotency.md): one per key, with the movement's fingerprint in clear (nothing in
 * a movement is secret), and what it answered: the transaction or hold it made (the replay is
 * rebuilt from the ledger) or the refusal, with the id of the request first answered with it.
 */
export function movementKeyRows(input: {
  readonly transactions: readonly LedgerTransactionRow[];
  readonly holds: readonly HoldRow[];
  readonly refusals: readonly LedgerRefusalRow[];
  readonly now: string;
}): IdempotencyKeysTable[] {
  const rows = new Map<string, IdempotencyKeysTable>();
  const add = (key: LedgerKey, fields: MovementFields, status: number, body: unknown) => {
    rows.set(ledgerKeyText(key), {
      project_id: key.projectId,
      scope: movementKeyScope(key.scope),
      key: key.key,
      request_hash: fieldsHash(fields),
      request_fields: JSON.stringify(fields),
      state: 'completed',
      lock_id: null,
      locked_until: null,
      response_status: status,
      response_body: JSON.stringify(body),
      created_at: input.now,
      expires_at: null,
    });
  };
  for (const row of input.transactions) {
    if (row.idempotency_key === null) continue;
    const key = { projectId: row.project_id, scope: row.idempotency_scope, key: row.idempotency_key };
    add(key, movementFields(movementOfRow(row)), 201, { transaction_id: row.id });
  }
  for (const row of input.holds) {
    if (row.idempotency_key === null) continue;
    const key = { projectId: row.project_id, scope: row.idempotency_scope, key: row.idempotency_key };
    add(key, movementFields(movementOfHold(row)), 201, { hold_id: row.id });
  }
  for (const row of input.refusals) {
    const key = { projectId: row.project_id, scope: row.idempotency_scope, key: row.idempotency_key };
    const error = new ApiError(row.code as ErrorCode, row.message);
    add(key, JSON.parse(row.request_fields) as MovementFields, error.status, {
      code: row.code,
      message: row.message,
      param: row.param,
      request_id: row.request_id,
    });
  }
  return [...rows.values()];
}

/** A movement key's stored refusal, read back from its `idempotency_keys` row. */
export function refusalOfKeyRow(row: IdempotencyKeysTable): LedgerRefusalRow | undefined {
  if ((row.response_status ?? 0) < 400 || row.response_body === null) return undefined;
  const body = JSON.parse(row.response_body) as { code: string; message: string; param: string | null; request_id: string };
  return {
    project_id: row.project_id,
    idempotency_scope: row.scope.slice(MOVEMENT_KEY_SCOPE_PREFIX.length),
    idempotency_key: row.key,
    request_hash: row.request_hash,
    request_fields: row.request_fields,
    code: body.code,
    message: body.message,
    param: body.param,
    request_id: body.request_id,
    created_at: row.created_at,
  };
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

/** The columns that tell one kind of transaction row from another. */
export type TransactionColumns = Pick<
  LedgerTransactionRow,
  | 'type'
  | 'amount'
  | 'description'
  | 'metadata'
  | 'idempotency_key'
  | 'idempotency_scope'
  | 'wallet_id'
  | 'from_wallet_id'
  | 'to_wallet_id'
  | 'sources'
  | 'priority'
  | 'expires_at'
  | 'recurring_grant_id'
  | 'category'
  | 'categories'
  | 'repaid'
  | 'reverses'
  | 'asked_amount'
>;

/**
 * A transaction row: the columns every row shares (who made it, with which request and from where,
 * when, in which currency) and the row's own. Written out column by column, not spread: V8 copies
 * an object built with a spread through its slow path, which cost tens of microseconds per row, a
 * batch's largest cost.
 */
export function transactionRowOf(row: RowContext, columns: TransactionColumns): LedgerTransactionRow {
  const actor = actorColumns(row.context.actor);
  return {
    id: row.id,
    project_id: row.projectId,
    currency: row.currency,
    created_at: row.now,
    actor_type: actor.actor_type,
    actor_id: actor.actor_id,
    actor_user_id: actor.actor_user_id,
    request_id: row.context.requestId,
    ip: row.context.ip,
    user_agent: row.context.userAgent,
    type: columns.type,
    amount: columns.amount,
    description: columns.description,
    metadata: columns.metadata,
    idempotency_key: columns.idempotency_key,
    idempotency_scope: columns.idempotency_scope,
    wallet_id: columns.wallet_id,
    from_wallet_id: columns.from_wallet_id,
    to_wallet_id: columns.to_wallet_id,
    sources: columns.sources,
    priority: columns.priority,
    expires_at: columns.expires_at,
    recurring_grant_id: columns.recurring_grant_id,
    category: columns.category,
    categories: columns.categories,
    repaid: columns.repaid,
    reverses: columns.reverses,
    asked_amount: columns.asked_amount,
  };
}

/**
 * The row of a credit, debit or transfer as asked, with the grants it drew on or made and what it
 * repaid of the receiving wallet's debt (docs/adr/0023-credit-limits.md; 0 for a debit).
 */
export function transactionRow(
  row: RowContext,
  movement: KeyedMovement & { type: 'credit' | 'debit' | 'transfer' },
  sources: readonly Source[],
  repaid: number,
): LedgerTransactionRow {
  const transfer = movement.type === 'transfer';
  return transactionRowOf(row, {
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
    recurring_grant_id: movement.type === 'credit' ? (movement.recurringGrantId ?? null) : null,
    category: movement.type === 'credit' ? movement.category : null,
    categories: movement.type === 'credit' ? null : categoriesColumn(movement.categories),
    repaid,
    reverses: null,
    asked_amount: null,
  });
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
