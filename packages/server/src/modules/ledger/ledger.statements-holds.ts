import { sql } from 'kysely';
import { insertInChunks, selectByKeys } from '../../db/list-statements.js';
import type { Transaction as DbTransaction } from '../../db/transaction.js';
import { type GrantRow, isExpired } from './ledger.grants.js';
import { endedColumns, type HoldRow } from './ledger.plan-holds.js';
import type { LedgerKey, WalletRef } from './ledger.statements.js';

/**
 * The write path's statements for holds and grants (docs/adr/0018-holds-and-grants.md), the same
 * on both dialects. They run inside the flush's transaction, after its wallets are locked (except
 * `holdWallets`, which finds which wallets to lock: a hold never changes wallet).
 */

export interface HoldRef {
  readonly projectId: string;
  readonly holdId: string;
}

/** The wallets of the named holds (missing holds are left out). */
export async function holdWallets(trx: DbTransaction, holds: readonly HoldRef[]): Promise<WalletRef[]> {
  const rows = await selectByKeys(
    trx.selectFrom('wallet_holds').select(['project_id', 'wallet_id']),
    ['project_id', 'id'],
    holdKeys(holds),
  );
  return rows.map((row) => ({ projectId: row.project_id, walletId: row.wallet_id }));
}

/** Holds made under the given keys. */
export async function findKeyedHolds(trx: DbTransaction, keys: readonly LedgerKey[]): Promise<HoldRow[]> {
  return selectByKeys(
    trx.selectFrom('wallet_holds').selectAll(),
    ['project_id', 'idempotency_scope', 'idempotency_key'],
    keys.map((key) => [key.projectId, key.scope, key.key]),
  );
}

/** The named holds, and the pending holds of the locked wallets that `now` has expired. */
export async function loadHolds(trx: DbTransaction, input: { named: readonly HoldRef[]; wallets: readonly WalletRef[]; now: string }) {
  const named = await selectByKeys(trx.selectFrom('wallet_holds').selectAll(), ['project_id', 'id'], holdKeys(input.named));
  const expired = await selectByKeys(
    trx.selectFrom('wallet_holds').selectAll().where('status', '=', 'pending').where('expires_at', '<=', input.now),
    ['project_id', 'wallet_id'],
    walletKeys(input.wallets),
  );
  return [...named, ...expired];
}

function holdKeys(holds: readonly HoldRef[]): string[][] {
  return holds.map((hold) => [hold.projectId, hold.holdId]);
}

function walletKeys(wallets: readonly WalletRef[]): string[][] {
  return wallets.map((wallet) => [wallet.projectId, wallet.walletId]);
}

export interface GrantNeed extends WalletRef {
  /** The most credits the flush's movements may draw on the wallet's grants. */
  readonly amount: number;
  /**
   * The restrictions they draw under: null for none, or the categories of one (docs/adr/0021-categories.md).
   * Each is loaded to cover the whole `amount`: the movements before one may draw on any grant of
   * its categories, but all of them together draw at most `amount`.
   */
  readonly restrictions: readonly (readonly string[] | null)[];
}

/**
 * The grants a flush may touch: for each wallet that may draw, its free grants in spending order
 * up to the first that covers `amount`; the expired grants of the locked wallets with credits left;
 * and the grants named (reserved by the holds the flush captures, voids or expires).
 */
export async function loadGrants(
  trx: DbTransaction,
  input: { needs: readonly GrantNeed[]; wallets: readonly WalletRef[]; grantIds: readonly string[]; now: string },
): Promise<GrantRow[]> {
  const rows: GrantRow[] = [];
  for (const need of input.needs) {
    for (const categories of need.restrictions) rows.push(...(await grantsCovering(trx, need, categories, input.now)));
  }
  const expired = trx
    .selectFrom('wallet_grants')
    .selectAll()
    .where('remaining', '>', 0)
    .where('expires_at', 'is not', null)
    .where('expires_at', '<=', input.now);
  rows.push(...(await selectByKeys(expired, ['project_id', 'wallet_id'], walletKeys(input.wallets))));
  if (input.grantIds.length > 0)
    rows.push(...(await trx.selectFrom('wallet_grants').selectAll().where('id', 'in', input.grantIds).execute()));
  return rows;
}

/** Grants read per wallet first, in spending order; nearly always enough to cover a flush's need. */
const GRANTS_PAGE = 100;

/**
 * The wallet's free grants (credits left beyond what holds reserved, not expired), only those of
 * `categories` unless it is null, in spending order, up to the first that covers `need.amount`.
 * The first `GRANTS_PAGE` grants with credits left come from `wallet_grants_spending_idx`
 * (migration 0028), whatever the number the wallet has; only when they do not cover the need is
 * every grant read and ordered.
 */
async function grantsCovering(trx: DbTransaction, need: GrantNeed, categories: readonly string[] | null, now: string): Promise<GrantRow[]> {
  const ofCategories = categories === null ? sql`` : sql`and category in (${sql.join(categories)})`;
  const page = await sql<GrantRow>`
    select id, project_id, wallet_id, transaction_id, amount, remaining, held, expired, priority, expires_at, created_at, category
    from wallet_grants
    where project_id = ${need.projectId} and wallet_id = ${need.walletId} and remaining > 0 ${ofCategories}
    order by priority, case when expires_at is null then 1 else 0 end, expires_at, created_at, id
    limit ${GRANTS_PAGE}`.execute(trx);
  const covering: GrantRow[] = [];
  let drawn = 0;
  for (const grant of page.rows) {
    if (drawn >= need.amount) return covering;
    if (grant.remaining <= grant.held || isExpired(grant, now)) continue;
    covering.push(grant);
    drawn += grant.remaining - grant.held;
  }
  if (drawn >= need.amount || page.rows.length < GRANTS_PAGE) return covering;
  const all = await sql<GrantRow>`
    select id, project_id, wallet_id, transaction_id, amount, remaining, held, expired, priority, expires_at, created_at, category
    from (
      select g.*, sum(g.remaining - g.held) over (
               order by g.priority, case when g.expires_at is null then 1 else 0 end, g.expires_at, g.created_at, g.id
               rows unbounded preceding) as drawn_through
      from wallet_grants g
      where g.project_id = ${need.projectId} and g.wallet_id = ${need.walletId} and g.remaining > 0
        and g.remaining > g.held and (g.expires_at is null or g.expires_at > ${now}) ${ofCategories}
    ) ordered
    where drawn_through - (remaining - held) < ${need.amount}`.execute(trx);
  return all.rows;
}

/** New grants; their later changes go through `LedgerStatements.updateGrants`, one statement per flush on PostgreSQL. */
export async function insertGrants(trx: DbTransaction, rows: readonly GrantRow[]): Promise<void> {
  await insertInChunks(trx, 'wallet_grants', rows);
}

export async function writeHolds(trx: DbTransaction, writes: { inserts: readonly HoldRow[]; updates: readonly HoldRow[] }): Promise<void> {
  await insertInChunks(trx, 'wallet_holds', writes.inserts);
  for (const hold of writes.updates) {
    await trx.updateTable('wallet_holds').set(endedColumns(hold)).where('id', '=', hold.id).execute();
  }
}
