import { Type } from '@sinclair/typebox';
import { defineRoute, type RouteDeclaration } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { auditContext } from '../audit/audit.service.js';
import type { LedgerService } from '../ledger/ledger.service.js';
import { sendOutcome } from './movement-answers.js';
import {
  CreditBody,
  ListTransactionsQuery,
  MovementBody,
  ReverseBody,
  TransactionParams,
  TransactionSchema,
  TransferBody,
  TransferSchema,
  WalletParams,
  WalletTransactionListSchema,
} from './wallets.schemas.js';

/**
 * Ledger keys are the ledger's own: the hook only checks the key (header or body); the ledger maps
 * it to the transaction it made, or to the refusal it answered, inside the movement's transaction
 * (docs/adr/0004-idempotency.md). Credit and debit keys are per wallet, transfer keys per project
 * (docs/api.md section 1).
 */
const ledgerKey = { bodyKey: true, claim: 'movement' } as const;

/** What a transfer can be refused with; a batch of transfers too (batch.routes.ts). */
export const TRANSFER_ERRORS = [
  'resource_missing',
  'same_wallet',
  'wallet_frozen',
  'wallet_closed',
  'currency_mismatch',
  'insufficient_credits',
  'balance_limit_exceeded',
] as const;

/** Credits, debits, a wallet's transactions and transfers (`/v1/wallets/…`). */
export function movementRoutes(ledger: LedgerService): RouteDeclaration[] {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/wallets/:id/credits',
      credential: 'secret',
      idempotency: ledgerKey,
      operationId: 'creditWallet',
      summary: 'Add credits',
      description:
        "Adds credits to a wallet, as a grant with its `priority`, optional `expires_at` and `category`: a ledger transaction whose entries sum to zero against the project's issuance account. A frozen or closed wallet refuses it (409). Emits `wallet.credit.added`.",
      errors: ['wallet_frozen', 'wallet_closed', 'balance_limit_exceeded'],
      params: WalletParams,
      body: CreditBody,
      response: { 201: TransactionSchema },
      handler: async (request, reply) => {
        const options = { idempotencyKey: request.idempotencyClaim?.key, audit: auditContext(request) };
        return sendOutcome(reply, await ledger.credit(requireSecretKey(request).projectId, request.params.id, request.body, options));
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/wallets/:id/debits',
      credential: 'secret',
      idempotency: ledgerKey,
      operationId: 'debitWallet',
      summary: 'Deduct credits',
      description:
        'Deducts credits from a wallet, drawing its grants by priority, then earliest expiry, then age; with `categories`, only grants of those categories. An amount above what is available is 422 `insufficient_credits` and changes nothing. Emits `wallet.credit.deducted`.',
      errors: ['wallet_frozen', 'wallet_closed', 'insufficient_credits'],
      params: WalletParams,
      body: MovementBody,
      response: { 201: TransactionSchema },
      handler: async (request, reply) => {
        const options = { idempotencyKey: request.idempotencyClaim?.key, audit: auditContext(request) };
        return sendOutcome(reply, await ledger.debit(requireSecretKey(request).projectId, request.params.id, request.body, options));
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/wallets/:id/transactions',
      credential: 'secret',
      operationId: 'listWalletTransactions',
      summary: "A wallet's transactions, newest first",
      description:
        "The wallet's ledger, newest first: credits, debits, expiries and both sides of transfers (`transfer_out`, `transfer_in`), each with the wallet's `balance_after`. Paged with `limit` and `starting_after`.",
      params: WalletParams,
      querystring: ListTransactionsQuery,
      response: { 200: WalletTransactionListSchema },
      handler: (request) => ledger.listWalletTransactions(requireSecretKey(request).projectId, request.params.id, request.query),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/wallets/transfer',
      credential: 'secret',
      idempotency: ledgerKey,
      operationId: 'transferCredits',
      summary: 'Move credits between two wallets',
      description:
        "Moves credits from one wallet to another of the same unit in one ledger transaction; the credits keep their grants' priority, expiry and category in the receiving wallet. Across units it is 422 `currency_mismatch`, to the same wallet 400 `same_wallet`, above what is available 422 `insufficient_credits`.",
      errors: TRANSFER_ERRORS,
      body: TransferBody,
      response: { 201: TransferSchema },
      handler: async (request, reply) => {
        const outcome = await ledger.transfer(requireSecretKey(request).projectId, request.body, {
          idempotencyKey: request.idempotencyClaim?.key,
          audit: auditContext(request),
        });
        return sendOutcome(reply, outcome);
      },
    }),
  ];
}

/** A transaction by id, and its reversal (`/v1/transactions/…`). */
export function transactionRoutes(ledger: LedgerService): RouteDeclaration[] {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/transactions/:id/reverse',
      credential: 'secret',
      idempotency: ledgerKey,
      operationId: 'reverseTransaction',
      summary: 'Reverse all or part of a credit, debit or transfer',
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
      params: TransactionParams,
      body: ReverseBody,
      response: { 201: TransactionSchema },
      handler: async (request, reply) => {
        const outcome = await ledger.reverse(requireSecretKey(request).projectId, request.params.id, request.body ?? {}, {
          idempotencyKey: request.idempotencyClaim?.key,
          audit: auditContext(request),
        });
        return sendOutcome(reply, outcome);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/transactions/:id',
      credential: 'secret',
      operationId: 'getTransaction',
      summary: 'Retrieve a credit, debit, expiry, reversal or transfer',
      description:
        'A credit, debit or expiry (`object: "transaction"`) or a transfer (`object: "transfer"`) of the project, by id, with its actor and the request that made it.',
      params: TransactionParams,
      response: { 200: Type.Union([TransactionSchema, TransferSchema]) },
      handler: (request) => ledger.getTransaction(requireSecretKey(request).projectId, request.params.id),
    }),
  ];
}
