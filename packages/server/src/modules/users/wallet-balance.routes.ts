import { Type } from '@sinclair/typebox';
import { type BrowserAccess, defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { StrictObject } from '../../lib/schemas.js';
import { BalanceSchema, CURRENCY_PATTERN, WalletTransactionSchema } from '../wallets/wallets.schemas.js';
import type { WalletsService } from '../wallets/wallets.service.js';

/** The transactions `GET /wallet/balance` shows (docs/api.md section 4). */
const RECENT_TRANSACTIONS = 20;

const SessionBalanceQuery = StrictObject({
  wallet_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'A wallet of the session user; default: their oldest active wallet (in `currency` when given).',
    }),
  ),
  currency: Type.Optional(
    Type.String({
      pattern: CURRENCY_PATTERN,
      description:
        "The session user's oldest active wallet in this unit (404 `resource_missing` when they have none). With `wallet_id`, it must be that wallet's unit (else 400 `parameter_invalid`).",
    }),
  ),
});

const SessionBalanceSchema = Type.Object(
  {
    balance: BalanceSchema,
    transactions: Type.Array(WalletTransactionSchema, { description: 'The last 20 transactions of the wallet, newest first.' }),
  },
  { $id: 'SessionBalance' },
);

export interface WalletBalanceRoutesOptions {
  readonly wallets: WalletsService;
  readonly browser: BrowserAccess;
}

/**
 * `GET /v1/wallet/balance` with a session token: the end user's own balance and recent history.
 * The wallets module owns wallets; this route reads them only through its exported services.
 */
export function walletBalanceRoutes(options: WalletBalanceRoutesOptions): RouteModule {
  const { wallets } = options;
  return routeModule('wallets', [
    defineRoute({
      method: 'GET',
      url: '/v1/wallet/balance',
      credential: 'session',
      operationId: 'getCurrentUserBalance',
      summary: "The session user's balance and last 20 transactions",
      description:
        "The session user's balance and their last 20 transactions: their oldest active wallet by default, the oldest in a unit with `currency`, or one of theirs with `wallet_id`. A user without such a wallet is 404.",
      errors: ['parameter_invalid', 'resource_missing'],
      querystring: SessionBalanceQuery,
      response: { 200: SessionBalanceSchema },
      browser: options.browser,
      handler: async (request) => {
        const principal = request.principal;
        if (principal?.kind !== 'session') throw new Error('GET /v1/wallet/balance ran without a session principal');
        const query = request.query;
        return wallets.userStatement(
          principal.projectId,
          principal.userId,
          { walletId: query.wallet_id, currency: query.currency },
          RECENT_TRANSACTIONS,
        );
      },
    }),
  ]);
}
