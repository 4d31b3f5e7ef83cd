import { assert } from '../../lib/assert.js';
import { newId } from '../../lib/ids.js';
import type { WalletGrantsTable } from '../../db/schema.js';
import type { Source } from './ledger.schemas.js';

export type GrantRow = WalletGrantsTable;

/**
 * The grants of a flush's locked wallets, in memory (docs/adr/0018-holds-and-grants.md). A wallet's
 * grants' `remaining` sum to its balance; `held` is the part of `remaining` pending holds reserved.
 * Movements draw on the grants free to spend (unexpired, `remaining - held` above 0) by priority,
 * then earliest expiry (never-expiring last), then age. Every change is recorded through
 * `onChange`, so an atomic batch that is refused can undo it.
 */
export class GrantBook {
  readonly #byId = new Map<string, GrantRow>();
  readonly #byWallet = new Map<string, GrantRow[]>();
  readonly #inserted = new Set<string>();
  readonly #changed = new Set<string>();
  readonly #onChange: (undo: () => void) => void;

  constructor(rows: readonly GrantRow[], onChange: (undo: () => void) => void) {
    this.#onChange = onChange;
    for (const row of rows) if (!this.#byId.has(row.id)) this.#index({ ...row });
  }

  get(grantId: string): GrantRow | undefined {
    return this.#byId.get(grantId);
  }

  /** A new grant of a wallet, made by a credit or a transfer received; its entry in the transaction's `sources`. */
  create(terms: {
    projectId: string;
    walletId: string;
    transactionId: string;
    amount: number;
    priority: number;
    expiresAt: string | null;
    category: string;
    now: string;
  }): Source {
    const id = newId('grt');
    this.add({
      id,
      project_id: terms.projectId,
      wallet_id: terms.walletId,
      transaction_id: terms.transactionId,
      amount: terms.amount,
      remaining: terms.amount,
      held: 0,
      expired: 0,
      priority: terms.priority,
      expires_at: terms.expiresAt,
      created_at: terms.now,
      category: terms.category,
    });
    return { grant_id: id, amount: terms.amount, category: terms.category };
  }

  add(row: GrantRow): void {
    this.#index(row);
    this.#inserted.add(row.id);
    this.#onChange(() => {
      this.#byId.delete(row.id);
      this.#inserted.delete(row.id);
      const list = this.#byWallet.get(walletKey(row.project_id, row.wallet_id));
      list?.splice(list.indexOf(row), 1);
    });
  }

  /**
   * Spends (`reserve` false) or reserves for a hold (`reserve` true) up to `amount` of the wallet's
   * free grants, in spending order; with `categories`, only of grants of those
   * (docs/adr/0021-categories.md). What they fall short of is the caller's to take on the wallet's
   * credit limit (docs/adr/0023-credit-limits.md).
   */
  draw(
    projectId: string,
    walletId: string,
    amount: number,
    options: { now: string; reserve: boolean; categories: readonly string[] | null },
  ): Source[] {
    const sources: Source[] = [];
    let left = amount;
    for (const grant of this.spendable(projectId, walletId, options.now, options.categories)) {
      if (left === 0) break;
      const part = Math.min(left, grant.remaining - grant.held);
      this.#change(grant, options.reserve ? { held: grant.held + part } : { remaining: grant.remaining - part });
      sources.push({ grant_id: grant.id, amount: part, category: grant.category });
      left -= part;
    }
    return sources;
  }

  /** The wallet's grants free to spend now, in spending order; with `categories`, only those of them. */
  spendable(projectId: string, walletId: string, now: string, categories: readonly string[] | null = null): GrantRow[] {
    const list = this.#byWallet.get(walletKey(projectId, walletId)) ?? [];
    return list
      .filter(
        (grant) => grant.remaining > grant.held && !isExpired(grant, now) && (categories === null || categories.includes(grant.category)),
      )
      .sort(spendingOrder);
  }

  /**
   * The credits the wallet's grants of `categories` make available now (their `remaining` less what
   * holds reserved). Exact when every such grant was loaded, and otherwise at least what the flush
   * may draw on them (ledger.statements-holds.ts `loadGrants`), so it refuses no movement wrongly.
   */
  availableIn(projectId: string, walletId: string, now: string, categories: readonly string[]): number {
    let available = 0;
    for (const grant of this.spendable(projectId, walletId, now, categories)) available += grant.remaining - grant.held;
    return available;
  }

  /** Ends a hold's reservations; `spend` of them (in the hold's order) leaves the wallet. The grants spent, in order. */
  settleReservation(sources: readonly Source[], spend: number): Source[] {
    const spent: Source[] = [];
    let left = spend;
    for (const source of sources) {
      const grant = this.#byId.get(source.grant_id);
      assert(grant !== undefined && grant.held >= source.amount, `grant ${source.grant_id} holds what hold reserved`);
      const part = Math.min(left, source.amount);
      this.#change(grant, { held: grant.held - source.amount, remaining: grant.remaining - part });
      if (part > 0) spent.push({ grant_id: grant.id, amount: part, category: grant.category });
      left -= part;
    }
    assert(left === 0, 'a capture spends at most what its hold reserved');
    return spent;
  }

  /**
   * Gives `amount` back to a grant a movement drew on (`amount` > 0), or takes it back from the grant
   * a credit made (`amount` < 0), for a reversal (docs/adr/0024-reversals.md).
   */
  restore(grant: GrantRow, amount: number): void {
    assert(grant.remaining + amount <= grant.amount, `grant ${grant.id} gets back at most what it had`);
    this.#change(grant, { remaining: grant.remaining + amount });
  }

  /** The wallet's expired grants with credits not reserved by a pending hold: what an expiry removes. */
  expiredFree(projectId: string, walletId: string, now: string): GrantRow[] {
    const list = this.#byWallet.get(walletKey(projectId, walletId)) ?? [];
    return list.filter((grant) => grant.remaining > grant.held && isExpired(grant, now)).sort(spendingOrder);
  }

  /** Removes the free part of an expired grant; the amount removed. */
  expire(grant: GrantRow): number {
    const amount = grant.remaining - grant.held;
    this.#change(grant, { remaining: grant.held, expired: grant.expired + amount });
    return amount;
  }

  /** The wallet's grants as loaded and changed (not every grant it has: only those the flush read). */
  ofWallet(projectId: string, walletId: string): readonly GrantRow[] {
    return this.#byWallet.get(walletKey(projectId, walletId)) ?? [];
  }

  inserts(): GrantRow[] {
    return [...this.#inserted].map((id) => this.#required(id));
  }

  updates(): GrantRow[] {
    return [...this.#changed].filter((id) => !this.#inserted.has(id)).map((id) => this.#required(id));
  }

  #required(grantId: string): GrantRow {
    const row = this.#byId.get(grantId);
    assert(row !== undefined, `grant ${grantId} is known`);
    return row;
  }

  #change(grant: GrantRow, changes: Partial<Pick<GrantRow, 'remaining' | 'held' | 'expired'>>): void {
    const before = { remaining: grant.remaining, held: grant.held, expired: grant.expired };
    Object.assign(grant, changes);
    assert(grant.held >= 0 && grant.held <= grant.remaining && grant.remaining >= 0, `grant ${grant.id} stays in range`);
    // Undone, a change that was the grant's first in this flush leaves it unchanged: a grant the
    // refused atomic batch created is gone, and must not be written as an update either.
    const first = !this.#changed.has(grant.id);
    this.#changed.add(grant.id);
    this.#onChange(() => {
      Object.assign(grant, before);
      if (first) this.#changed.delete(grant.id);
    });
  }

  #index(row: GrantRow): void {
    this.#byId.set(row.id, row);
    const key = walletKey(row.project_id, row.wallet_id);
    const list = this.#byWallet.get(key);
    if (list === undefined) this.#byWallet.set(key, [row]);
    else list.push(row);
  }
}

function walletKey(projectId: string, walletId: string): string {
  return `${projectId} ${walletId}`;
}

/** True once the grant's `expires_at` has come: from then on nothing draws on it. */
export function isExpired(grant: Pick<GrantRow, 'expires_at'>, now: string): boolean {
  return grant.expires_at !== null && grant.expires_at <= now;
}

/** Priority (lower first), then earliest expiry (never-expiring last), then oldest, then id. */
export function spendingOrder(a: GrantRow, b: GrantRow): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.expires_at !== b.expires_at) {
    if (a.expires_at === null) return 1;
    if (b.expires_at === null) return -1;
    return a.expires_at < b.expires_at ? -1 : 1;
  }
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
