import { assert } from '../../lib/assert.js';
import { ApiError } from '../../lib/errors.js';
import { AMOUNT_MAX, BALANCE_MAX } from './ledger.schemas.js';
import type { WalletsTable as WalletRow } from '../../db/schema.js';

/**
 * The rules of a movement, one named refusal each (docs/api.md section 2), checked in this order:
 * the wallet exists, is not closed, is not frozen; then the currencies match (transfers); then the
 * credits suffice and the balance stays within the limit. A refusal changes nothing.
 */

export function walletMissing(walletId: string, param?: string): ApiError {
  return new ApiError('resource_missing', `No wallet ${walletId}.`, { param });
}

export function walletClosed(walletId: string, param?: string): ApiError {
  return new ApiError('wallet_closed', `Wallet ${walletId} is closed.`, { param });
}

export function walletFrozen(walletId: string, param?: string): ApiError {
  return new ApiError('wallet_frozen', `Wallet ${walletId} is frozen; unfreeze it first.`, { param });
}

export function assertAmount(amount: number): void {
  // The request schema guarantees it; a violation here is a bug in a caller, not a client error.
  assert(Number.isSafeInteger(amount) && amount >= 1 && amount <= AMOUNT_MAX, `amount out of range: ${amount}`);
}

/** Throws the refusal for a wallet that cannot move credits, if it cannot. */
export function refuseUnusable(wallet: WalletRow | undefined, walletId: string, param?: string): asserts wallet is WalletRow {
  if (wallet === undefined) throw walletMissing(walletId, param);
  if (wallet.status === 'closed') throw walletClosed(wallet.id, param);
  if (wallet.status === 'frozen') throw walletFrozen(wallet.id, param);
}

/**
 * Throws when adding `delta` (negative to take) would leave the balance outside −`credit_limit` to
 * 2^53 - 1 (docs/adr/0023-credit-limits.md).
 */
export function refuseOutOfRange(wallet: WalletRow, delta: number): void {
  if (delta < 0 && wallet.balance + delta < -wallet.credit_limit) {
    throw new ApiError(
      'insufficient_credits',
      `Wallet ${wallet.id} has ${wallet.balance} credits${limitText(wallet)}; ${-delta} requested.`,
      {
        param: 'amount',
      },
    );
  }
  if (delta > 0 && wallet.balance > BALANCE_MAX - delta) {
    throw new ApiError('balance_limit_exceeded', `The balance of wallet ${wallet.id} would exceed ${BALANCE_MAX} credits.`, {
      param: 'amount',
    });
  }
}

/** How a refusal names the wallet's credit limit, when it has one. */
export function limitText(wallet: Pick<WalletRow, 'credit_limit'>): string {
  return wallet.credit_limit > 0 ? ` and a credit limit of ${wallet.credit_limit}` : '';
}

/** Every rule of a transfer between the two (locked) wallets. */
export function refuseTransfer(
  source: WalletRow | undefined,
  target: WalletRow | undefined,
  input: { fromWalletId: string; toWalletId: string; amount: number },
): asserts source is WalletRow {
  refuseUnusable(source, input.fromWalletId, 'from_wallet_id');
  refuseUnusable(target, input.toWalletId, 'to_wallet_id');
  if (source.currency !== target.currency) {
    throw new ApiError(
      'currency_mismatch',
      `Wallet ${source.id} holds ${source.currency} and wallet ${target.id} holds ${target.currency}; a transfer stays in one currency.`,
      { param: 'to_wallet_id' },
    );
  }
  refuseOutOfRange(source, -input.amount);
  refuseOutOfRange(target, input.amount);
}
