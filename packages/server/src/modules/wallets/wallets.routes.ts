import { defineRoute, type RouteDeclaration, type RouteModule, routeModule } from '../../lib/routes.js';
import type { ErrorCode } from '../../lib/errors.js';
import { requireSecretKey } from '../../lib/principal.js';
import { auditContext } from '../audit/audit.service.js';
import { batchRoute } from './batch.routes.js';
import type { LedgerService } from '../ledger/ledger.service.js';
import { movementRoutes, transactionRoutes } from './movements.routes.js';
import {
  BalanceQuery,
  BalanceSchema,
  CreateWalletBody,
  ListWalletsQuery,
  UpdateWalletBody,
  WalletListSchema,
  WalletParams,
  WalletSchema,
} from './wallets.schemas.js';
import type { WalletsService } from './wallets.service.js';

/**
 * HTTP only: schemas in, the service, schemas out. The wallets themselves here; their movements in
 * movements.routes.ts, batches in batch.routes.ts (listed in the order of the OpenAPI document).
 */
export function walletsRoutes(wallets: WalletsService, ledger: LedgerService): RouteModule {
  return routeModule('wallets', [
    ...walletRoutes(wallets, ledger),
    ...movementRoutes(ledger),
    batchRoute(ledger),
    ...transactionRoutes(ledger),
  ]);
}

function walletRoutes(wallets: WalletsService, ledger: LedgerService): RouteDeclaration[] {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/wallets',
      credential: 'secret',
      operationId: 'createWallet',
      summary: 'Create a wallet',
      description:
        'Creates a wallet for a user of the project (404 `resource_missing` for an unknown user) in one unit: `currency` is an ISO 4217 code or a custom unit such as `CREDITS`. Amounts are whole numbers of that unit. A user may hold several wallets, in one unit or several.',
      errors: ['resource_missing'],
      body: CreateWalletBody,
      response: { 201: WalletSchema },
      handler: async (request, reply) => {
        const wallet = await wallets.create(requireSecretKey(request).projectId, request.body, auditContext(request));
        return reply.code(201).send(wallet);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/wallets',
      credential: 'secret',
      operationId: 'listWallets',
      summary: 'List wallets, newest first',
      description: 'The wallets of the project, newest first; `user_id` narrows them to one user. Paged with `limit` and `starting_after`.',
      querystring: ListWalletsQuery,
      response: { 200: WalletListSchema },
      handler: (request) => wallets.list(requireSecretKey(request).projectId, request.query),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/wallets/:id',
      credential: 'secret',
      operationId: 'getWallet',
      summary: 'Retrieve a wallet',
      description:
        'A wallet with its `balance` and `available` (the balance less pending holds and expired grants not yet removed) and its status.',
      params: WalletParams,
      response: { 200: WalletSchema },
      handler: (request) => wallets.get(requireSecretKey(request).projectId, request.params.id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/wallets/:id',
      credential: 'secret',
      operationId: 'updateWallet',
      summary: 'Update metadata, the low-balance threshold or the credit limit',
      description:
        "Changes a wallet's `metadata`, `low_balance_threshold` or `credit_limit`: a debit or transfer that takes the balance from at or above the threshold to below it emits `wallet.balance.low`; a `credit_limit` below what the wallet owes and holds on its limit → 422 `credit_limit_below_debt`. The balance itself changes only through movements.",
      errors: ['resource_missing', 'credit_limit_below_debt'],
      params: WalletParams,
      body: UpdateWalletBody,
      response: { 200: WalletSchema },
      handler: (request) => wallets.update(requireSecretKey(request).projectId, request.params.id, request.body, auditContext(request)),
    }),
    transition(wallets, 'freeze', {
      operationId: 'freezeWallet',
      summary: 'Freeze a wallet: it refuses credits, debits and transfers',
      description:
        'Freezes an active wallet: until it is unfrozen it refuses credits, debits, transfers and new holds with 409 `wallet_frozen`. Its balance stays as it is.',
      errors: ['wallet_closed'],
    }),
    transition(wallets, 'unfreeze', {
      operationId: 'unfreezeWallet',
      summary: 'Unfreeze a frozen wallet',
      description: 'Makes a frozen wallet active again, so that it takes credits, debits and transfers.',
      errors: ['wallet_closed'],
    }),
    transition(wallets, 'close', {
      operationId: 'closeWallet',
      summary: 'Close an empty wallet for good',
      description:
        'Closes a wallet for good; only a wallet whose balance is 0 can be closed (409 `wallet_not_empty`). A closed wallet refuses every movement with 409 `wallet_closed` and cannot be reopened.',
      errors: ['wallet_not_empty'],
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/wallets/:id/balance',
      credential: 'secret',
      operationId: 'getWalletBalance',
      summary: "A wallet's balance, now or at a past time",
      description:
        "The wallet's balance, `available` and the credits left per category. With `at`, the balance after every movement made at or before that past time instead (0 before the wallet's first), read from the ledger with one index seek.",
      params: WalletParams,
      querystring: BalanceQuery,
      response: { 200: BalanceSchema },
      handler: (request) => {
        const { projectId } = requireSecretKey(request);
        const { at } = request.query;
        return at === undefined ? wallets.getBalance(projectId, request.params.id) : ledger.balanceAt(projectId, request.params.id, at);
      },
    }),
  ];
}

/** `POST /v1/wallets/{id}/freeze`, `/unfreeze`, `/close`: a change of the wallet's status. */
function transition(
  wallets: WalletsService,
  action: 'freeze' | 'unfreeze' | 'close',
  doc: { operationId: string; summary: string; description: string; errors: readonly ErrorCode[] },
): RouteDeclaration {
  return defineRoute({
    method: 'POST',
    url: `/v1/wallets/:id/${action}`,
    credential: 'secret',
    ...doc,
    params: WalletParams,
    response: { 200: WalletSchema },
    handler: (request) => wallets[action](requireSecretKey(request).projectId, request.params.id, auditContext(request)),
  });
}
