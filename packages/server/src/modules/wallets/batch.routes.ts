import { defineRoute, type RouteDeclaration } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { ApiError, renderError } from '../../lib/errors.js';
import type { StoredAnswer } from '../../lib/idempotency.store.js';
import { auditContext } from '../audit/audit.service.js';
import { HOLD_EXPIRES_IN_SECONDS_DEFAULT } from '../ledger/holds.schemas.js';
import type { BatchOutcome, LedgerService, MovementOutcome, MovementRequest } from '../ledger/ledger.service.js';
import { GRANT_PRIORITY_DEFAULT } from '../ledger/ledger.service.js';
import { JSON_TYPE, sendLedgerAnswer } from './movement-answers.js';
import { TRANSFER_ERRORS } from './movements.routes.js';
import { CATEGORY_DEFAULT } from '../ledger/ledger.schemas.js';
import { BatchBody, type BatchOperation, type BatchResult, BatchSchema } from './wallets.schemas.js';

/** `POST /v1/wallets/batch`: many movements in one request, each on its own or all or nothing. */
export function batchRoute(ledger: LedgerService): RouteDeclaration {
  return defineRoute({
    method: 'POST',
    url: '/v1/wallets/batch',
    credential: 'secret',
    // The request's own Idempotency-Key replays the whole answer, like any POST, and is written
    // with it in the flush that applies the batch; each operation's `idempotency_key` is a
    // ledger key, in the single routes' namespace.
    idempotency: { claim: 'ledger', retention: 'forever' },
    operationId: 'batchWalletOperations',
    summary: 'Apply up to 1,000 credits, debits, transfers, holds, captures, voids and reversals, each on its own or all or nothing',
    description:
      "Applies 1 to 1,000 credits, debits, transfers, holds, captures, voids and reversals in request order, each checked as on its own route. By default each stands alone and the answer is 200 with one result per operation; with `atomic: true` all are applied (201) or none, and the answer is then the refused operation's error, with `param` naming it.",
    errors: [...TRANSFER_ERRORS, 'idempotency_key_reused', 'hold_not_pending', 'reversal_exceeds_original', 'transaction_not_reversible'],
    body: BatchBody,
    response: { 200: BatchSchema, 201: BatchSchema },
    handler: async (request, reply) => {
      const body = request.body;
      const movements = body.operations.map((operation, index) => batchMovement(operation, index, ledger));
      const atomic = body.atomic === true;
      const requestKey = request.idempotency?.forLedger((outcome: BatchOutcome) => batchAnswer(outcome, movements, atomic, request.id));
      const outcome = await ledger.batch(requireSecretKey(request).projectId, movements, atomic, auditContext(request), requestKey);
      if (outcome.answer !== undefined) return sendLedgerAnswer(reply, outcome.answer);
      const refusal = batchRefusal(outcome, movements);
      if (refusal !== undefined) throw refusal;
      return reply
        .code(atomic ? 201 : 200)
        .type(JSON_TYPE)
        .send(batchBody(outcome, movements, request.id));
    },
  });
}

/** An atomic batch's refusal: the refused operation's error, its `param` naming the operation. */
function batchRefusal({ outcomes, refusedAt }: BatchOutcome, movements: readonly MovementRequest[]): ApiError | undefined {
  if (refusedAt === undefined) return undefined;
  const refused = outcomes[refusedAt];
  const movement = movements[refusedAt];
  if (refused === undefined || refused.ok || movement === undefined) return undefined;
  const { error } = refused;
  const field =
    error.param ??
    (movement.type === 'transfer' || movement.type === 'settle'
      ? undefined
      : movement.type === 'capture' || movement.type === 'void'
        ? 'hold_id'
        : movement.type === 'reverse'
          ? 'transaction_id'
          : 'wallet_id');
  return new ApiError(error.code, error.message, {
    param: field === undefined ? `operations[${refusedAt}]` : `operations[${refusedAt}].${field}`,
  });
}

function batchBody(outcome: BatchOutcome, movements: readonly MovementRequest[], requestId: string): string {
  const results = outcome.outcomes.map((one, index) => batchResult(one, requestId, movements[index]));
  return JSON.stringify({ object: 'batch', results });
}

/** A batch's answer: the results, or an atomic batch's refusal, as the route sends them. */
function batchAnswer(outcome: BatchOutcome, movements: readonly MovementRequest[], atomic: boolean, requestId: string): StoredAnswer {
  const refusal = batchRefusal(outcome, movements);
  if (refusal !== undefined) return { status: refusal.status, body: JSON.stringify(renderError(refusal, requestId)) };
  return { status: atomic ? 201 : 200, body: batchBody(outcome, movements, requestId) };
}

/** One operation of a batch as the ledger takes it; which fields a type takes is checked here. */
function batchMovement(operation: BatchOperation, index: number, ledger: LedgerService): MovementRequest {
  const at = (field: string) => `operations[${index}].${field}`;
  const allowed: Record<BatchOperation['type'], readonly string[]> = {
    credit: ['wallet_id', 'amount', 'description', 'metadata', 'idempotency_key', 'priority', 'expires_at', 'category'],
    debit: ['wallet_id', 'amount', 'description', 'metadata', 'idempotency_key', 'categories'],
    transfer: ['from_wallet_id', 'to_wallet_id', 'amount', 'description', 'metadata', 'idempotency_key', 'categories'],
    hold: ['wallet_id', 'amount', 'description', 'metadata', 'idempotency_key', 'expires_in', 'categories'],
    capture: ['hold_id', 'amount'],
    void: ['hold_id'],
    reverse: ['transaction_id', 'amount', 'description', 'metadata', 'idempotency_key'],
  };
  for (const field of Object.keys(operation)) {
    if (field !== 'type' && !allowed[operation.type].includes(field)) {
      throw new ApiError('parameter_unknown', `A ${operation.type} takes no ${field}.`, { param: at(field) });
    }
  }
  const need = <K extends 'wallet_id' | 'from_wallet_id' | 'to_wallet_id' | 'hold_id' | 'transaction_id' | 'amount'>(
    field: K,
  ): NonNullable<BatchOperation[K]> => {
    const value = operation[field];
    if (value === undefined) throw new ApiError('parameter_missing', `A ${operation.type} needs ${field}.`, { param: at(field) });
    return value;
  };
  if (operation.type === 'capture') return { type: 'capture', holdId: need('hold_id'), amount: operation.amount };
  if (operation.type === 'void') return { type: 'void', holdId: need('hold_id') };
  if (operation.type === 'reverse') {
    return {
      type: 'reverse',
      transactionId: need('transaction_id'),
      amount: operation.amount,
      description: operation.description ?? null,
      metadata: operation.metadata ?? {},
      idempotencyKey: operation.idempotency_key,
    };
  }
  const common = {
    amount: need('amount'),
    description: operation.description ?? null,
    metadata: operation.metadata ?? {},
    idempotencyKey: operation.idempotency_key,
  };
  switch (operation.type) {
    case 'transfer':
      return {
        type: 'transfer',
        fromWalletId: need('from_wallet_id'),
        toWalletId: need('to_wallet_id'),
        ...common,
        categories: operation.categories ?? null,
      };
    case 'credit':
      return {
        type: 'credit',
        walletId: need('wallet_id'),
        ...common,
        priority: operation.priority ?? GRANT_PRIORITY_DEFAULT,
        expiresAt: ledger.creditExpiry(operation.expires_at, at('expires_at')),
        category: operation.category ?? CATEGORY_DEFAULT,
      };
    case 'hold':
      return {
        type: 'hold',
        walletId: need('wallet_id'),
        ...common,
        expiresInSeconds: operation.expires_in ?? HOLD_EXPIRES_IN_SECONDS_DEFAULT,
        categories: operation.categories ?? null,
      };
    case 'debit':
      return { type: 'debit', walletId: need('wallet_id'), ...common, categories: operation.categories ?? null };
  }
}

function batchResult(outcome: MovementOutcome, requestId: string, movement: MovementRequest | undefined): BatchResult {
  if (outcome.ok) {
    const { value } = outcome;
    switch (value.object) {
      case 'transfer':
        return { status: 201, transfer: value };
      case 'transaction':
        return { status: 201, transaction: value };
      case 'hold':
        // A capture or void answers 200 on its single route, a new hold 201.
        return { status: movement?.type === 'hold' ? 201 : 200, hold: value };
      case 'settlement':
        return { status: 200 };
    }
  }
  return { status: outcome.error.status, error: renderError(outcome.error, outcome.requestId ?? requestId).error };
}
