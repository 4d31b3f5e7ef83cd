import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { BrowserAccess, RouteModule } from '../../lib/routes.js';
import { StrictObject } from '../../lib/schemas.js';
import { ApiError } from '../../lib/errors.js';
import type { LedgerService } from '../wallets/ledger.service.js';
import { BalanceSchema, type Wallet, WalletTransactionSchema } from '../wallets/wallets.schemas.js';
import type { WalletsService } from '../wallets/wallets.service.js';

/** The transactions `GET /wallet/balance` shows (docs/api.md section 4). */
const RECENT_TRANSACTIONS = 20;

const SessionBalanceQuery = StrictObject({
  wallet_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'Another wallet of the session user; default: their oldest active wallet.' }),
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
  readonly ledger: LedgerService;
  readonly browser: BrowserAccess;
}

/**
 * `GET /v1/wallet/balance` with a session token: the end user's own balance and recent history.
 * The wallets module owns wallets; this route reads them only through its exported services.
 */
export function walletBalanceRoutes(options: WalletBalanceRoutesOptions): RouteModule {
  const { wallets, ledger } = options;

  async function ownWallet(projectId: string, userId: string, walletId: string): Promise<Wallet> {
    const missing = new ApiError('resource_missing', `No wallet ${walletId} of this user.`, { param: 'wallet_id' });
    let wallet: Wallet;
    try {
      wallet = await wallets.get(projectId, walletId);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'resource_missing') throw missing;
      throw error;
    }
    // Another user's wallet answers as if it did not exist.
    if (wallet.user_id !== userId) throw missing;
    return wallet;
  }

  return (app: FastifyInstance) => {
    app.get(
      '/v1/wallet/balance',
      {
        config: { credential: 'session' },
        onSend: options.browser.onSend,
        schema: {
          operationId: 'getCurrentUserBalance',
          errors: ['resource_missing'],
          tags: ['wallets'],
          security: [{ sessionToken: [] }],
          summary: "The session user's balance and last 20 transactions",
          querystring: SessionBalanceQuery,
          response: { 200: SessionBalanceSchema },
        },
      },
      async (request) => {
        const principal = request.principal;
        if (principal?.kind !== 'session') throw new Error('GET /v1/wallet/balance ran without a session principal');
        const query = request.query as Static<typeof SessionBalanceQuery>;
        const wallet =
          query.wallet_id === undefined
            ? await wallets.oldestActiveWallet(principal.projectId, principal.userId)
            : await ownWallet(principal.projectId, principal.userId, query.wallet_id);
        if (wallet === undefined) throw new ApiError('resource_missing', 'This user has no active wallet.', { param: 'wallet_id' });
        const transactions = await ledger.recentWalletTransactions(principal.projectId, wallet.id, RECENT_TRANSACTIONS);
        // Read after the history, so the balance is never older than the newest transaction shown.
        const balance = await wallets.getBalance(principal.projectId, wallet.id);
        return { balance, transactions };
      },
    );
    options.browser.preflight(app, '/v1/wallet/balance', ['GET']);
  };
}
