import type { Kysely } from 'kysely';
import type { Database, WalletsTable as WalletRow } from '../../db/schema.js';
import { parseSources } from './ledger.plan-holds.js';
import type { CategoryBalance } from './ledger.categories.js';

/** A wallet as modules/wallets/wallets.store.ts `readWallet` reads it: its row, and whether something on it is unsettled. */
type WalletReading = WalletRow & { readonly unsettled: number };

/**
 * `available` as a read sees it at `now` (docs/adr/0018-holds-and-grants.md): balance − held, where
 * what the write path has not settled yet counts as settled. A pending hold past `expires_at`
 * holds nothing (its reservations on unexpired grants, and what it reserved on the credit limit,
 * are available again, docs/adr/0023-credit-limits.md); an expired grant's
 * credits not reserved by a pending hold are not available. Two index reads for any number of
 * wallets, both usually empty.
 */
export async function availableOf(
  db: Kysely<Database>,
  projectId: string,
  wallets: readonly Pick<WalletRow, 'id' | 'balance' | 'held'>[],
  now: string,
): Promise<Map<string, number>> {
  const available = new Map(wallets.map((wallet) => [wallet.id, wallet.balance - wallet.held]));
  if (wallets.length === 0) return available;
  const ids = wallets.map((wallet) => wallet.id);
  const expiredGrants = await db
    .selectFrom('wallet_grants')
    .select(['id', 'wallet_id', 'remaining', 'held'])
    .where('project_id', '=', projectId)
    .where('wallet_id', 'in', ids)
    .where('remaining', '>', 0)
    .where('expires_at', 'is not', null)
    .where('expires_at', '<=', now)
    .execute();
  const expiredHolds = await db
    .selectFrom('wallet_holds')
    .select(['wallet_id', 'amount', 'sources'])
    .where('project_id', '=', projectId)
    .where('wallet_id', 'in', ids)
    .where('status', '=', 'pending')
    .where('expires_at', '<=', now)
    .execute();
  const add = (walletId: string, amount: number) => available.set(walletId, (available.get(walletId) ?? 0) + amount);
  const expiredGrantIds = new Set(expiredGrants.map((grant) => grant.id));
  for (const grant of expiredGrants) add(grant.wallet_id, -(grant.remaining - grant.held));
  for (const hold of expiredHolds) {
    let onExpiredGrants = 0;
    for (const source of parseSources(hold.sources)) if (expiredGrantIds.has(source.grant_id)) onExpiredGrants += source.amount;
    add(hold.wallet_id, hold.amount - onExpiredGrants);
  }
  return available;
}

/** `available` of one wallet read with its `unsettled` flag: no further read unless something expired. */
export async function availableOfReading(db: Kysely<Database>, projectId: string, wallet: WalletReading, now: string): Promise<number> {
  const settled = wallet.balance - wallet.held;
  if (wallet.unsettled === 0) return settled;
  return (await availableOf(db, projectId, [wallet], now)).get(wallet.id) ?? settled;
}

/**
 * A wallet's credits by category at `now` (docs/adr/0021-categories.md): Σ `remaining` of its
 * unexpired grants of each category with credits left, pending holds' reservations included, by
 * name. Grants past `expires_at` count for nothing, as they do for `available`. One read of the
 * wallet's grants with credits left (`wallet_grants_spending_idx`).
 */
export async function categoryBalancesOf(
  db: Kysely<Database>,
  projectId: string,
  walletId: string,
  now: string,
): Promise<CategoryBalance[]> {
  const rows = await db
    .selectFrom('wallet_grants')
    .select((eb) => ['category', eb.fn.sum<number | string>('remaining').as('remaining')])
    .where('project_id', '=', projectId)
    .where('wallet_id', '=', walletId)
    .where('remaining', '>', 0)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .groupBy('category')
    .orderBy('category')
    .execute();
  return rows.map((row) => ({ category: row.category, remaining: Number(row.remaining) }));
}
