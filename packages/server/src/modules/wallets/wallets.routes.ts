import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteModule } from '../../shared/routes.js';
import { requireSecretKey } from '../../shared/principal.js';
import { auditContext } from '../audit/audit.service.js';
import type { LedgerAnswer, LedgerService } from './ledger.service.js';
import {
  BalanceSchema,
  CreateWalletBody,
  ListTransactionsQuery,
  ListWalletsQuery,
  MovementBody,
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

const security = [{ secretKey: [] }, { secretKeyHeader: [] }];
const tags = ['wallets'];

type WithParams = FastifyRequest<{ Params: { id: string } }>;

/**
 * Ledger keys are kept forever and claimed by the ledger inside the movement's own transaction
 * (docs/adr/0005-ledger-write-path.md); credit and debit keys are per project and wallet, transfer
 * keys per project (docs/api.md section 1).
 */
const ledgerKey = { retention: 'forever', bodyKey: true, claim: 'transaction' } as const;
const perWalletLedgerKey = { ...ledgerKey, scope: (request: FastifyRequest) => (request.params as { id: string }).id } as const;

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
          tags,
          security,
          summary: 'Update metadata or the low-balance threshold',
          params: WalletParams,
          body: UpdateWalletBody,
          response: { 200: WalletSchema },
        },
      },
      (request: WithParams) =>
        wallets.update(requireSecretKey(request).projectId, request.params.id, request.body as UpdateWalletBody, auditContext(request)),
    );

    const transitions = [
      ['freeze', 'freezeWallet', 'Freeze a wallet: it refuses credits, debits and transfers', ['wallet_closed']],
      ['unfreeze', 'unfreezeWallet', 'Unfreeze a frozen wallet', ['wallet_closed']],
      ['close', 'closeWallet', 'Close an empty wallet for good', ['wallet_not_empty']],
    ] as const;
    for (const [action, operationId, summary, errors] of transitions) {
      app.post(
        `/v1/wallets/:id/${action}`,
        {
          config: { credential: 'secret' },
          schema: { operationId, errors, tags, security, summary, params: WalletParams, response: { 200: WalletSchema } },
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
          tags,
          security,
          summary: "A wallet's balance",
          params: WalletParams,
          response: { 200: BalanceSchema },
        },
      },
      (request: WithParams) => wallets.getBalance(requireSecretKey(request).projectId, request.params.id),
    );

    for (const [action, operationId, summary, errors] of [
      ['credits', 'creditWallet', 'Add credits', ['wallet_frozen', 'wallet_closed', 'balance_limit_exceeded']],
      ['debits', 'debitWallet', 'Deduct credits', ['wallet_frozen', 'wallet_closed', 'insufficient_credits']],
    ] as const) {
      app.post(
        `/v1/wallets/:id/${action}`,
        {
          config: { credential: 'secret', idempotency: perWalletLedgerKey },
          schema: {
            operationId,
            errors,
            tags,
            security,
            summary,
            params: WalletParams,
            body: MovementBody,
            response: { 201: TransactionSchema },
          },
        },
        async (request: WithParams, reply) => {
          const projectId = requireSecretKey(request).projectId;
          const body = request.body as MovementBody;
          const options = { idempotency: request.idempotencyClaim, audit: auditContext(request) };
          const answer =
            action === 'credits'
              ? await ledger.credit(projectId, request.params.id, body, options)
              : await ledger.debit(projectId, request.params.id, body, options);
          return sendAnswer(reply, answer);
        },
      );
    }

    app.get(
      '/v1/wallets/:id/transactions',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listWalletTransactions',
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
          errors: [
            'resource_missing',
            'same_wallet',
            'wallet_frozen',
            'wallet_closed',
            'currency_mismatch',
            'insufficient_credits',
            'balance_limit_exceeded',
          ],
          tags,
          security,
          summary: 'Move credits between two wallets',
          body: TransferBody,
          response: { 201: TransferSchema },
        },
      },
      async (request, reply) => {
        const answer = await ledger.transfer(requireSecretKey(request).projectId, request.body as TransferBody, {
          idempotency: request.idempotencyClaim,
          audit: auditContext(request),
        });
        return sendAnswer(reply, answer);
      },
    );

    app.get(
      '/v1/transactions/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'getTransaction',
          tags,
          security,
          summary: 'Retrieve a credit, debit or transfer',
          params: TransactionParams,
          response: { 200: Type.Union([TransactionSchema, TransferSchema]) },
        },
      },
      (request: WithParams) => ledger.getTransaction(requireSecretKey(request).projectId, request.params.id),
    );
  };
}

/**
 * Sends a ledger answer as the exact JSON text stored with its idempotency key (`JSON.stringify`
 * of the same object), so a replay is byte for byte the original.
 */
function sendAnswer(reply: FastifyReply, answer: LedgerAnswer<object>): FastifyReply {
  const json = 'application/json; charset=utf-8';
  if (answer.replayed) return reply.code(answer.stored.status).header('Idempotent-Replayed', 'true').type(json).send(answer.stored.body);
  return reply.code(201).type(json).send(JSON.stringify(answer.value));
}
