import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { assert } from '../../lib/assert.js';
import { ApiError, renderError } from '../../lib/errors.js';
import type { RequestAnswer, StoredAnswer } from '../../lib/idempotency.store.js';
import { auditContext } from '../audit/audit.service.js';
import type { BatchOutcome, LedgerService, MovementOutcome, MovementRequest } from '../ledger/ledger.service.js';
import {
  BalanceQuery,
  BalanceSchema,
  BatchBody,
  type BatchOperation,
  type BatchResult,
  BatchSchema,
  CreateWalletBody,
  CreditBody,
  ListTransactionsQuery,
  ListWalletsQuery,
  MovementBody,
  ReverseBody,
  TransactionParams,
  TransactionSchema,
  TransferBody,
  TransferSchema,
  UpdateWalletBody,
  WalletListSchema,
  WalletParams,
  WalletSchema,
  WalletTransactionListSchema,
} from './wallets.schemas.js';
import type { WalletsService } from './wallets.service.js';
import { GRANT_PRIORITY_DEFAULT } from '../ledger/ledger.service.js';
import { CATEGORY_DEFAULT } from '../ledger/ledger.schemas.js';
import { HOLD_EXPIRES_IN_SECONDS_DEFAULT } from '../ledger/holds.schemas.js';

const security = [{ secretKey: [] }, { secretKeyHeader: [] }];
const tags = ['wallets'];

type WithParams = FastifyRequest<{ Params: { id: string } }>;

/**
 * Ledger keys are the ledger's own: the hook only checks the key (header or body); the ledger maps
 * it to the transaction it made, or to the refusal it answered, inside the movement's transaction
 * (docs/adr/0004-idempotency.md). Credit and debit keys are per wallet, transfer keys per project
 * (docs/api.md section 1).
 */
const ledgerKey = { bodyKey: true, claim: 'movement' } as const;
const JSON_TYPE = 'application/json; charset=utf-8';
const TRANSFER_ERRORS = [
  'resource_missing',
  'same_wallet',
  'wallet_frozen',
  'wallet_closed',
  'currency_mismatch',
  'insufficient_credits',
  'balance_limit_exceeded',
] as const;

/**
 * HTTP only: schemas in, the service, schemas out. Ledger responses are sent as the exact JSON text
 * the service stored with the idempotency key, so a replay is byte for byte the original.
 */
export function walletsRoutes(wallets: WalletsService, ledger: LedgerService): RouteModule {
  return (app: FastifyInstance) => {
    app.post(
      '/v1/wallets',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'createWallet',
          description:
            'Creates a wallet for a user of the project (404 `resource_missing` for an unknown user) in one unit: `currency` is an ISO 4217 code or a custom unit such as `CREDITS`. Amounts are whole numbers of that unit. A user may hold several wallets, in one unit or several.',
          errors: ['resource_missing'],
          tags,
          security,
          summary: 'Create a wallet',
          body: CreateWalletBody,
          response: { 201: WalletSchema },
        },
      },
      async (request, reply) => {
        const wallet = await wallets.create(requireSecretKey(request).projectId, request.body as CreateWalletBody, auditContext(request));
        return reply.code(201).send(wallet);
      },
    );

    app.get(
      '/v1/wallets',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listWallets',
          description:
            'The wallets of the project, newest first; `user_id` narrows them to one user. Paged with `limit` and `starting_after`.',
          tags,
          security,
          summary: 'List wallets, newest first',
          querystring: ListWalletsQuery,
          response: { 200: WalletListSchema },
        },
      },
      (request) => wallets.list(requireSecretKey(request).projectId, request.query as ListWalletsQuery),
    );

    app.get(
      '/v1/wallets/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'getWallet',
          description:
            'A wallet with its `balance` and `available` (the balance less pending holds and expired grants not yet removed) and its status.',
          tags,
          security,
          summary: 'Retrieve a wallet',
          params: WalletParams,
          response: { 200: WalletSchema },
        },
      },
      (request: WithParams) => wallets.get(requireSecretKey(request).projectId, request.params.id),
    );

    app.patch(
      '/v1/wallets/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'updateWallet',
          errors: ['resource_missing', 'credit_limit_below_debt'],
          description:
            "Changes a wallet's `metadata`, `low_balance_threshold` or `credit_limit`: a debit or transfer that takes the balance from at or above the threshold to below it emits `wallet.balance.low`; a `credit_limit` below what the wallet owes and holds on its limit → 422 `credit_limit_below_debt`. The balance itself changes only through movements.",
          tags,
          security,
          summary: 'Update metadata, the low-balance threshold or the credit limit',
          params: WalletParams,
          body: UpdateWalletBody,
          response: { 200: WalletSchema },
        },
      },
      (request: WithParams) =>
        wallets.update(requireSecretKey(request).projectId, request.params.id, request.body as UpdateWalletBody, auditContext(request)),
    );

    const transitions = [
      [
        'freeze',
        'freezeWallet',
        'Freeze a wallet: it refuses credits, debits and transfers',
        'Freezes an active wallet: until it is unfrozen it refuses credits, debits, transfers and new holds with 409 `wallet_frozen`. Its balance stays as it is.',
        ['wallet_closed'],
      ],
      [
        'unfreeze',
        'unfreezeWallet',
        'Unfreeze a frozen wallet',
        'Makes a frozen wallet active again, so that it takes credits, debits and transfers.',
        ['wallet_closed'],
      ],
      [
        'close',
        'closeWallet',
        'Close an empty wallet for good',
        'Closes a wallet for good; only a wallet whose balance is 0 can be closed (409 `wallet_not_empty`). A closed wallet refuses every movement with 409 `wallet_closed` and cannot be reopened.',
        ['wallet_not_empty'],
      ],
    ] as const;
    for (const [action, operationId, summary, description, errors] of transitions) {
      app.post(
        `/v1/wallets/:id/${action}`,
        {
          config: { credential: 'secret' },
          schema: { operationId, description, errors, tags, security, summary, params: WalletParams, response: { 200: WalletSchema } },
        },
        (request: WithParams) => wallets[action](requireSecretKey(request).projectId, request.params.id, auditContext(request)),
      );
    }

    app.get(
      '/v1/wallets/:id/balance',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'getWalletBalance',
          description:
            "The wallet's balance, `available` and the credits left per category. With `at`, the balance after every movement made at or before that past time instead (0 before the wallet's first), read from the ledger with one index seek.",
          tags,
          security,
          summary: "A wallet's balance, now or at a past time",
          params: WalletParams,
          querystring: BalanceQuery,
          response: { 200: BalanceSchema },
        },
      },
      (request: FastifyRequest<{ Params: { id: string }; Querystring: BalanceQuery }>) => {
        const { projectId } = requireSecretKey(request);
        const { at } = request.query;
        return at === undefined ? wallets.getBalance(projectId, request.params.id) : ledger.balanceAt(projectId, request.params.id, at);
      },
    );

    for (const [action, operationId, summary, description, errors] of [
      [
        'credits',
        'creditWallet',
        'Add credits',
        "Adds credits to a wallet, as a grant with its `priority`, optional `expires_at` and `category`: a ledger transaction whose entries sum to zero against the project's issuance account. A frozen or closed wallet refuses it (409). Emits `wallet.credit.added`.",
        ['wallet_frozen', 'wallet_closed', 'balance_limit_exceeded'],
      ],
      [
        'debits',
        'debitWallet',
        'Deduct credits',
        'Deducts credits from a wallet, drawing its grants by priority, then earliest expiry, then age; with `categories`, only grants of those categories. An amount above what is available is 422 `insufficient_credits` and changes nothing. Emits `wallet.credit.deducted`.',
        ['wallet_frozen', 'wallet_closed', 'insufficient_credits'],
      ],
    ] as const) {
      app.post(
        `/v1/wallets/:id/${action}`,
        {
          config: { credential: 'secret', idempotency: ledgerKey },
          schema: {
            operationId,
            description,
            errors,
            tags,
            security,
            summary,
            params: WalletParams,
            body: action === 'credits' ? CreditBody : MovementBody,
            response: { 201: TransactionSchema },
          },
        },
        async (request: WithParams, reply) => {
          const projectId = requireSecretKey(request).projectId;
          const options = { idempotencyKey: request.idempotencyClaim?.key, audit: auditContext(request) };
          const outcome =
            action === 'credits'
              ? await ledger.credit(projectId, request.params.id, request.body as CreditBody, options)
              : await ledger.debit(projectId, request.params.id, request.body as MovementBody, options);
          return sendOutcome(reply, outcome);
        },
      );
    }

    app.get(
      '/v1/wallets/:id/transactions',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listWalletTransactions',
          description:
            "The wallet's ledger, newest first: credits, debits, expiries and both sides of transfers (`transfer_out`, `transfer_in`), each with the wallet's `balance_after`. Paged with `limit` and `starting_after`.",
          tags,
          security,
          summary: "A wallet's transactions, newest first",
          params: WalletParams,
          querystring: ListTransactionsQuery,
          response: { 200: WalletTransactionListSchema },
        },
      },
      (request: WithParams) =>
        ledger.listWalletTransactions(requireSecretKey(request).projectId, request.params.id, request.query as ListTransactionsQuery),
    );

    app.post(
      '/v1/wallets/transfer',
      {
        config: { credential: 'secret', idempotency: ledgerKey },
        schema: {
          operationId: 'transferCredits',
          description:
            "Moves credits from one wallet to another of the same unit in one ledger transaction; the credits keep their grants' priority, expiry and category in the receiving wallet. Across units it is 422 `currency_mismatch`, to the same wallet 400 `same_wallet`, above what is available 422 `insufficient_credits`.",
          errors: TRANSFER_ERRORS,
          tags,
          security,
          summary: 'Move credits between two wallets',
          body: TransferBody,
          response: { 201: TransferSchema },
        },
      },
      async (request, reply) => {
        const outcome = await ledger.transfer(requireSecretKey(request).projectId, request.body as TransferBody, {
          idempotencyKey: request.idempotencyClaim?.key,
          audit: auditContext(request),
        });
        return sendOutcome(reply, outcome);
      },
    );

    app.post(
      '/v1/wallets/batch',
      {
        // The request's own Idempotency-Key replays the whole answer, like any POST, and is written
        // with it in the flush that applies the batch; each operation's `idempotency_key` is a
        // ledger key, in the single routes' namespace.
        config: { credential: 'secret', idempotency: { claim: 'ledger', retention: 'forever' } },
        schema: {
          operationId: 'batchWalletOperations',
          description:
            "Applies 1 to 1,000 credits, debits, transfers, holds, captures, voids and reversals in request order, each checked as on its own route. By default each stands alone and the answer is 200 with one result per operation; with `atomic: true` all are applied (201) or none, and the answer is then the refused operation's error, with `param` naming it.",
          errors: [
            ...TRANSFER_ERRORS,
            'idempotency_key_reused',
            'hold_not_pending',
            'reversal_exceeds_original',
            'transaction_not_reversible',
          ],
          tags,
          security,
          summary: 'Apply up to 1,000 credits, debits, transfers, holds, captures, voids and reversals, each on its own or all or nothing',
          body: BatchBody,
          response: { 200: BatchSchema, 201: BatchSchema },
        },
      },
      async (request, reply) => {
        const body = request.body as BatchBody;
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
    );

    app.post(
      '/v1/transactions/:id/reverse',
      {
        config: { credential: 'secret', idempotency: ledgerKey },
        schema: {
          operationId: 'reverseTransaction',
          description:
            "Gives back all of a credit, debit, capture or transfer, or `amount` of what is left of it, as a new transaction of type `reversal` naming it in `reverses`. A credit's reversal takes back from the grant it made (422 `insufficient_credits` if spent); a debit's or capture's returns each source to its grant, or as a new grant without expiry where that grant has expired; a transfer's moves the credits back. Reversals of one transaction never exceed it (422 `reversal_exceeds_original`); expiries and reversals are not reversible (422 `transaction_not_reversible`). Emits `wallet.transaction.reversed`.",
          errors: [
            'resource_missing',
            'wallet_frozen',
            'wallet_closed',
            'insufficient_credits',
            'balance_limit_exceeded',
            'reversal_exceeds_original',
            'transaction_not_reversible',
          ],
          tags,
          security,
          summary: 'Reverse all or part of a credit, debit or transfer',
          params: TransactionParams,
          body: ReverseBody,
          response: { 201: TransactionSchema },
        },
      },
      async (request: WithParams, reply) => {
        const outcome = await ledger.reverse(requireSecretKey(request).projectId, request.params.id, request.body ?? {}, {
          idempotencyKey: request.idempotencyClaim?.key,
          audit: auditContext(request),
        });
        return sendOutcome(reply, outcome);
      },
    );

    app.get(
      '/v1/transactions/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'getTransaction',
          description:
            'A credit, debit or expiry (`object: "transaction"`) or a transfer (`object: "transfer"`) of the project, by id, with its actor and the request that made it.',
          tags,
          security,
          summary: 'Retrieve a credit, debit, expiry, reversal or transfer',
          params: TransactionParams,
          response: { 200: Type.Union([TransactionSchema, TransferSchema]) },
        },
      },
      (request: WithParams) => ledger.getTransaction(requireSecretKey(request).projectId, request.params.id),
    );
  };
}

/**
 * Sends a movement's outcome: 201 and the transaction, or the refusal. A replay (`Idempotent-Replayed:
 * true`) is rebuilt from the ledger: the same transaction, or the same refusal with the id of the
 * request first answered with it, byte for byte what that request got.
 */
export function sendOutcome(reply: FastifyReply, outcome: MovementOutcome, status = 201): FastifyReply {
  if (outcome.replayed) void reply.header('Idempotent-Replayed', 'true');
  if (outcome.ok) return reply.code(status).type(JSON_TYPE).send(JSON.stringify(outcome.value));
  if (!outcome.replayed) throw outcome.error;
  return reply
    .code(outcome.error.status)
    .type(JSON_TYPE)
    .send(JSON.stringify(renderError(outcome.error, outcome.requestId ?? reply.request.id)));
}

/**
 * A keyed ledger request's answer (docs/adr/0004-idempotency.md): the one its flush stored with its
 * key, or the one stored under the key before (`Idempotent-Replayed`), or the refusal of a key
 * used for another request.
 */
export function sendLedgerAnswer(reply: FastifyReply, answer: RequestAnswer): FastifyReply {
  if (answer.kind === 'refused') throw answer.error;
  if (answer.kind === 'replayed') void reply.header('Idempotent-Replayed', 'true');
  return reply.code(answer.answer.status).type(JSON_TYPE).send(answer.answer.body);
}

/** A single movement's answer as `sendOutcome` sends it, for a request key to keep. */
export function outcomeAnswer(outcome: BatchOutcome, requestId: string, status: number): StoredAnswer {
  const [one] = outcome.outcomes;
  assert(one !== undefined && outcome.outcomes.length === 1, 'a request of one movement has one outcome');
  if (one.ok) return { status, body: JSON.stringify(one.value) };
  return { status: one.error.status, body: JSON.stringify(renderError(one.error, one.requestId ?? requestId)) };
}

/** A keyed single-movement request (capture, void): its stored answer, or the outcome as `sendOutcome` sends it. */
export function sendKeyedOutcome(reply: FastifyReply, outcome: BatchOutcome, status: number): FastifyReply {
  if (outcome.answer !== undefined) return sendLedgerAnswer(reply, outcome.answer);
  const [one] = outcome.outcomes;
  assert(one !== undefined && outcome.outcomes.length === 1, 'a request of one movement has one outcome');
  return sendOutcome(reply, one, status);
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
