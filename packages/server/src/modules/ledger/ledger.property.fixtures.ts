import fc from 'fast-check';
import { expect } from 'vitest';
import type { Db } from '../../db/database.js';
import { expectStatus, type WalletsClient } from '../wallets/wallets.fixtures.js';
import type { RecurringGrant } from '../wallets/recurring-grants.schemas.js';
import type { Balance, Transaction, Transfer, WalletTransactionList } from '../wallets/wallets.schemas.js';

/**
 * What the ledger property tests (ledger.property.test.ts, ledger.batch-property.test.ts) add to
 * their movements: categories (docs/adr/0021-categories.md) and recurring grants
 * (docs/adr/0022-recurring-grants.md), with a model of each built only from the service's answers.
 */

export type Movement = Transaction | Transfer;

/** The categories credits take: the default and two others. */
export const CATEGORIES = ['default', 'paid', 'promo'] as const;

/** A credit's category: none (the default) or one of the set. */
export const category: fc.Arbitrary<string | null> = fc.option(fc.constantFrom(...CATEGORIES), { freq: 2 });

/** A draw's restriction: none (every category), or a few categories, now and then `gift`, which no credit has. */
export const restriction: fc.Arbitrary<readonly string[] | null> = fc.option(
  fc.uniqueArray(fc.constantFrom(...CATEGORIES, 'gift'), { minLength: 1, maxLength: 3 }),
  { freq: 2 },
);

/** The request fields of a credit's category or a draw's restriction, none when absent. */
export function categoryFields(credit: string | null, draw: readonly string[] | null): Record<string, unknown> {
  return { ...(credit === null ? {} : { category: credit }), ...(draw === null ? {} : { categories: draw }) };
}

/**
 * Each wallet's credits by category, as the balance gives them (`categories`: Σ `remaining` of
 * its grants), from the start balances (default category) and the sources of every movement: a
 * credit makes its source's grant; a debit spends its sources (the rest is debt); a transfer spends
 * its sources in the sender and gives the receiver the same parts, the part it took on the
 * sender's credit limit in the default category, less what the receiver repaid of its debt, from
 * the first part on (ledger.plan.ts). Movements only: no reversals, no expiries.
 */
export function modelCategories(
  wallets: readonly string[],
  initial: readonly number[],
  applied: Iterable<Movement>,
): Record<string, number>[] {
  const model = new Map(wallets.map((id, index) => [id, new Map([['default', initial[index] ?? 0]])]));
  const add = (id: string, name: string, amount: number) => {
    const categories = model.get(id) ?? new Map<string, number>();
    model.set(id, categories.set(name, (categories.get(name) ?? 0) + amount));
  };
  for (const movement of applied) {
    if (movement.object === 'transaction') {
      expect(['credit', 'debit'], movement.id).toContain(movement.type);
      for (const source of movement.sources)
        add(movement.wallet_id, source.category, movement.type === 'credit' ? source.amount : -source.amount);
      continue;
    }
    const parts = movement.sources.map((source) => ({ category: source.category, amount: source.amount }));
    for (const part of parts) add(movement.from_wallet_id, part.category, -part.amount);
    const borrowed = movement.amount - parts.reduce((sum, part) => sum + part.amount, 0);
    if (borrowed > 0) parts.push({ category: 'default', amount: borrowed });
    let toRepay = movement.repaid;
    for (const part of parts) {
      const repaid = Math.min(toRepay, part.amount);
      toRepay -= repaid;
      add(movement.to_wallet_id, part.category, part.amount - repaid);
    }
  }
  return wallets.map((id) => withoutEmpty(Object.fromEntries(model.get(id) ?? [])));
}

function withoutEmpty(categories: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(categories).filter(([, remaining]) => remaining !== 0));
}

/** A wallet's balance: `credits` and its `categories` as a record, categories with nothing left left out. */
export async function balanceByCategory(
  client: WalletsClient,
  walletId: string,
): Promise<{ credits: number; categories: Record<string, number> }> {
  const balance = expectStatus<Balance>(await client.request('GET', `/v1/wallets/${walletId}/balance`), 200);
  const categories = Object.fromEntries((balance.categories ?? []).map((one) => [one.category, one.remaining]));
  return { credits: balance.credits, categories: withoutEmpty(categories) };
}

/**
 * A restricted draw (a debit or transfer made with `categories`) took only grants of those
 * categories and all of its amount from them: never any of it on the credit limit.
 */
export function expectRestrictedDrawsKept(applied: Iterable<Movement>): void {
  for (const movement of applied) {
    if (movement.categories === undefined) continue;
    for (const source of movement.sources) expect(movement.categories, movement.id).toContain(source.category);
    expect(
      movement.sources.reduce((sum, source) => sum + source.amount, 0),
      movement.id,
    ).toBe(movement.amount);
  }
}

/** The balances and categories of `wallets` as the service answers them. */
export async function expectCategoriesModel(
  client: WalletsClient,
  wallets: readonly string[],
  model: Record<string, number>[],
): Promise<void> {
  const balances = await Promise.all(wallets.map((wallet) => balanceByCategory(client, wallet)));
  expect(balances.map((balance) => balance.categories)).toEqual(model);
  // A sound wallet's grants hold its credits when it has any, nothing while it owes.
  for (const balance of balances) {
    expect(Object.values(balance.categories).reduce((sum, remaining) => sum + remaining, 0)).toBe(Math.max(balance.credits, 0));
  }
}

// ---- Recurring grants ------------------------------------------------------------------------

const INTERVAL_MS = { day: 86_400_000, week: 7 * 86_400_000 } as const;

/** A recurring grant on wallet `wallet` whose `periods` first periods have begun when it is made. */
export interface RecurringSpec {
  readonly wallet: number;
  readonly amount: number;
  readonly interval: keyof typeof INTERVAL_MS;
  readonly periods: number;
  readonly category: string | null;
}

export function recurringSpec(wallets: number): fc.Arbitrary<RecurringSpec> {
  return fc.record({
    wallet: fc.integer({ min: 0, max: wallets - 1 }),
    amount: fc.integer({ min: 1, max: 30 }),
    interval: fc.constantFrom('day' as const, 'week' as const),
    periods: fc.integer({ min: 1, max: 4 }),
    category,
  });
}

/** A recurring grant made, and how many of its periods have begun (so many credits are due). */
export interface MadeRecurringGrant {
  readonly grant: RecurringGrant;
  readonly periods: number;
}

/**
 * Makes the recurring grants, each starting in the past so that `periods` periods have begun, the
 * last a quarter of an interval ago (no period begins while the run lasts). Their credits never
 * expire, so every begun period is due (docs/adr/0022-recurring-grants.md, catch-up).
 */
export async function makeRecurringGrants(
  client: WalletsClient,
  wallets: readonly string[],
  specs: readonly RecurringSpec[],
): Promise<MadeRecurringGrant[]> {
  const now = Date.now();
  const made: MadeRecurringGrant[] = [];
  for (const spec of specs) {
    const intervalMs = INTERVAL_MS[spec.interval];
    const startsAt = new Date(now - (spec.periods - 1) * intervalMs - intervalMs / 4).toISOString();
    const body = {
      amount: spec.amount,
      interval: spec.interval,
      starts_at: startsAt,
      expires: 'never',
      ...categoryFields(spec.category, null),
    };
    const response = await client.request('POST', `/v1/wallets/${wallets[spec.wallet] ?? ''}/recurring-grants`, body);
    made.push({ grant: expectStatus<RecurringGrant>(response, 201), periods: spec.periods });
  }
  return made;
}

/** Runs the recurring-grants job (`grantDuePeriods`) until a run finds nothing due: every begun period is then credited. */
export async function catchUp(job: () => Promise<number>): Promise<void> {
  while ((await job()) > 0);
}

/** Every credit of a recurring grant in `wallets`' histories, as the service lists them. */
export async function recurringCredits(client: WalletsClient, wallets: readonly string[]): Promise<Transaction[]> {
  const credits: Transaction[] = [];
  for (const wallet of wallets) {
    let after: string | undefined;
    for (;;) {
      const query = after === undefined ? '?limit=100' : `?limit=100&starting_after=${after}`;
      const page = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${wallet}/transactions${query}`), 200);
      for (const entry of page.data) {
        if (entry.recurring_grant_id !== null) {
          expect(entry.type).toBe('credit');
          credits.push({ ...entry, type: 'credit' });
        }
      }
      if (!page.has_more) break;
      after = page.data.at(-1)?.id;
    }
  }
  return credits;
}

/**
 * Each begun period of each recurring grant was credited exactly once, under its key
 * `<recurring grant id>:<period>`, in the grant's wallet, as the service lists the credits and as
 * the ledger stores them.
 */
export async function expectPeriodsCreditedOnce(
  db: Db,
  projectId: string,
  made: readonly MadeRecurringGrant[],
  credits: readonly Transaction[],
): Promise<void> {
  const expected = made.flatMap(({ grant, periods }) =>
    Array.from({ length: periods }, (_, period) => ({ key: `${grant.id}:${period}`, wallet: grant.wallet_id, amount: grant.amount })),
  );
  const listed = credits.map((credit) => ({ key: credit.idempotency_key, wallet: credit.wallet_id, amount: credit.amount }));
  const byKey = (a: { key: string | null }, b: { key: string | null }) => (a.key ?? '').localeCompare(b.key ?? '');
  expect(listed.sort(byKey)).toEqual(expected.sort(byKey));
  if (made.length === 0) return;
  const stored = await db.kysely
    .selectFrom('ledger_transactions')
    .select(['idempotency_key', (eb) => eb.fn.countAll<number | string>().as('count')])
    .where('project_id', '=', projectId)
    .where(
      'recurring_grant_id',
      'in',
      made.map(({ grant }) => grant.id),
    )
    .groupBy('idempotency_key')
    .execute();
  expect(stored.map((row) => [row.idempotency_key, Number(row.count)]).sort()).toEqual(expected.map(({ key }) => [key, 1]).sort());
}
