import type { TSchema } from '@sinclair/typebox';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import type { Service } from '../../main.js';
import { randomBase62 } from '../../lib/ids.js';
import { normalizeEmail } from '../users/users.service.js';
import type { Transaction, Transfer, Wallet } from './wallets.schemas.js';

/** Test helpers for the wallets module: requests through `app.inject` and ledger invariant checks. */
export interface WalletsClient {
  /** A user of the project, the owner of wallets created without a `user_id`. */
  readonly userId: string;
  request(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  createWallet(body?: Record<string, unknown>): Promise<Wallet>;
  credit(walletId: string, amount: number, body?: Record<string, unknown>): Promise<Transaction>;
  debit(walletId: string, amount: number, body?: Record<string, unknown>): Promise<Transaction>;
  transfer(fromWalletId: string, toWalletId: string, amount: number, body?: Record<string, unknown>): Promise<Transfer>;
  balance(walletId: string): Promise<number>;
}

/**
 * The wallets of one property-test run: one per start balance (the fourth in EUR, the rest USD, so
 * currency mismatches occur), each credited its start balance when above zero, each with its
 * credit limit from `creditLimits` (default 0).
 */
export async function walletsWithBalances(
  client: WalletsClient,
  initial: readonly number[],
  creditLimits: readonly number[] = [],
): Promise<string[]> {
  const wallets: string[] = [];
  for (const [index, amount] of initial.entries()) {
    const wallet = await client.createWallet({
      currency: index === 3 ? 'EUR' : 'USD',
      low_balance_threshold: 25,
      credit_limit: creditLimits[index] ?? 0,
    });
    if (amount > 0) await client.credit(wallet.id, amount);
    wallets.push(wallet.id);
  }
  return wallets;
}

/** The balances a model ledger holds: the start balances plus every applied movement. */
export function modelBalances(wallets: readonly string[], initial: readonly number[], applied: Iterable<Transaction | Transfer>): number[] {
  const model = new Map(wallets.map((id, index) => [id, initial[index] ?? 0]));
  const add = (id: string, amount: number) => model.set(id, (model.get(id) ?? 0) + amount);
  for (const movement of applied) {
    if (movement.object === 'transfer') {
      add(movement.from_wallet_id, -movement.amount);
      add(movement.to_wallet_id, movement.amount);
    } else {
      add(movement.wallet_id, movement.type === 'credit' ? movement.amount : -movement.amount);
    }
  }
  return wallets.map((id) => model.get(id) ?? 0);
}

/** Creates a user in the project directly through the users module (no password, so no hashing). */
export async function createUser(service: Service, projectId: string): Promise<string> {
  const user = await inTransaction(service.db, (trx) =>
    service.auth.users.createInTransaction(trx, {
      projectId,
      email: normalizeEmail(`wallet-owner-${randomBase62(12)}@example.com`),
      name: 'Wallet owner',
      passwordHash: null,
      now: new Date(),
    }),
  );
  return user.id;
}

/** A client of one project, with one user of it to own wallets. */
export async function walletsClient(service: Service, project: { projectId: string; secretKey: string }): Promise<WalletsClient> {
  const authorization = `Bearer ${project.secretKey}`;
  const userId = await createUser(service, project.projectId);
  const client: WalletsClient = {
    userId,
    request: (method, url, payload, headers = {}) =>
      service.app.inject({
        method,
        url,
        headers: { authorization, ...headers },
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      }),
    async createWallet(body = {}) {
      return expectStatus<Wallet>(await client.request('POST', '/v1/wallets', { user_id: userId, currency: 'USD', ...body }), 201);
    },
    async credit(walletId, amount, body = {}) {
      return expectStatus<Transaction>(await client.request('POST', `/v1/wallets/${walletId}/credits`, { amount, ...body }), 201);
    },
    async debit(walletId, amount, body = {}) {
      return expectStatus<Transaction>(await client.request('POST', `/v1/wallets/${walletId}/debits`, { amount, ...body }), 201);
    },
    async transfer(fromWalletId, toWalletId, amount, body = {}) {
      const response = await client.request('POST', '/v1/wallets/transfer', {
        from_wallet_id: fromWalletId,
        to_wallet_id: toWalletId,
        amount,
        ...body,
      });
      return expectStatus<Transfer>(response, 201);
    },
    async balance(walletId) {
      return expectStatus<{ credits: number }>(await client.request('GET', `/v1/wallets/${walletId}/balance`), 200).credits;
    },
  };
  return client;
}

/** Errors of `value` against a response schema (the OpenAPI document's), or [] when it conforms. */
export function schemaErrors(schema: TSchema, value: unknown): string[] {
  // A fresh validator each time: the schemas carry $ids, which one Ajv instance accepts only once.
  const validate = addFormats.default(new Ajv.default({ strict: false })).compile(schema as object);
  return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
}

// The caller names the body it expects; what is checked here is the status.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
export function expectStatus<T>(response: LightMyRequestResponse, status: number): T {
  if (response.statusCode !== status) throw new Error(`expected ${status}, got ${response.statusCode}: ${response.body}`);
  return response.json<T>();
}

/** The error code of an error response, or undefined for a success. */
export function errorCode(response: LightMyRequestResponse): string | undefined {
  return response.statusCode < 400 ? undefined : response.json<{ error: { code: string } }>().error.code;
}

export interface LedgerViolations {
  /** Wallets whose balance column differs from the sum of their entries. */
  readonly balanceMismatches: readonly { id: string; balance: number; entries: number }[];
  /** Transactions whose entries do not sum to zero. */
  readonly unbalancedTransactions: readonly string[];
  /** Wallets below −`credit_limit` (docs/adr/0023-credit-limits.md). */
  readonly negativeBalances: readonly string[];
  /** Sum of every entry of the project; zero in a sound ledger. */
  readonly entriesTotal: number;
  /** (scope, key) pairs applied more than once. */
  readonly keysAppliedTwice: readonly string[];
  /** Transactions whose outbox events are not exactly the ones their change calls for. */
  readonly eventMismatches: readonly string[];
  /** Events that report a transaction that does not exist. */
  readonly orphanEvents: readonly string[];
  /**
   * Wallets whose `wallet.balance.low` events differ from the crossings of their current threshold
   * in their history (meaningful while thresholds are not changed between movements).
   */
  readonly lowBalanceMismatches: readonly string[];
  /** Wallets whose history does not chain (an entry's balance_after is not the previous one plus its amount): a lost update. */
  readonly brokenChains: readonly string[];
}

/**
 * Reads the whole ledger of a project and lists every broken invariant. A sound ledger has all
 * lists empty and `entriesTotal` 0.
 */
export async function ledgerViolations(db: Db, projectId: string): Promise<LedgerViolations> {
  const k = db.kysely;
  const wallets = await k
    .selectFrom('wallets')
    .select(['id', 'balance', 'low_balance_threshold', 'credit_limit'])
    .where('project_id', '=', projectId)
    .execute();
  const sums = await k
    .selectFrom('ledger_entries')
    .select(['account_id', sql<number>`sum(amount)`.as('total')])
    .where('project_id', '=', projectId)
    .groupBy('account_id')
    .execute();
  const sumByAccount = new Map(sums.map((row) => [row.account_id, row.total]));
  const unbalanced = await k
    .selectFrom('ledger_entries')
    .select('transaction_id')
    .where('project_id', '=', projectId)
    .groupBy('transaction_id')
    .having(sql`sum(amount)`, '<>', 0)
    .execute();
  const twice = await k
    .selectFrom('ledger_transactions')
    .select(['idempotency_scope', 'idempotency_key'])
    .where('project_id', '=', projectId)
    .where('idempotency_key', 'is not', null)
    .groupBy(['idempotency_scope', 'idempotency_key'])
    .having(sql`count(*)`, '>', 1)
    .execute();
  const transactions = await k
    .selectFrom('ledger_transactions')
    .select(['id', 'type', 'wallet_id', 'from_wallet_id'])
    .where('project_id', '=', projectId)
    .execute();
  const events = await k.selectFrom('events').select(['type', 'data']).where('project_id', '=', projectId).execute();
  const eventsByTransaction = new Map<string, string[]>();
  const orphanEvents: string[] = [];
  const lowEventsByWallet = new Map<string, number>();
  const transactionIds = new Set(transactions.map((row) => row.id));
  for (const event of events) {
    const data = JSON.parse(event.data) as { transaction_id?: string; transfer_id?: string; reversal_id?: string; wallet_id?: string };
    // A reversal's event names the transaction reversed too; it is the reversal's event.
    const transactionId = data.reversal_id ?? data.transaction_id ?? data.transfer_id;
    if (!event.type.startsWith('wallet.')) continue;
    if (event.type === 'wallet.balance.low') {
      lowEventsByWallet.set(data.wallet_id ?? '', (lowEventsByWallet.get(data.wallet_id ?? '') ?? 0) + 1);
      continue;
    }
    if (transactionId === undefined || !transactionIds.has(transactionId)) {
      orphanEvents.push(`${event.type} ${event.data}`);
      continue;
    }
    eventsByTransaction.set(transactionId, [...(eventsByTransaction.get(transactionId) ?? []), event.type]);
  }
  const eventMismatches: string[] = [];
  for (const transaction of transactions) {
    const expected =
      transaction.type === 'credit'
        ? ['wallet.credit.added']
        : transaction.type === 'debit'
          ? ['wallet.credit.deducted']
          : transaction.type === 'reversal'
            ? ['wallet.transaction.reversed']
            : ['wallet.transfer.received', 'wallet.transfer.sent'];
    const actual = (eventsByTransaction.get(transaction.id) ?? []).sort();
    if (JSON.stringify(actual) !== JSON.stringify(expected)) eventMismatches.push(`${transaction.id}: ${actual.join(',')}`);
  }
  // Each wallet's history chains: every entry's balance_after is the one before plus its amount.
  const walletEntries = await k
    .selectFrom('ledger_entries')
    .select(['account_id', 'amount', 'balance_after'])
    .where('project_id', '=', projectId)
    .where('balance_after', 'is not', null)
    .orderBy('account_id')
    .orderBy('seq')
    .execute();
  const brokenChains = new Set<string>();
  const crossingsByWallet = new Map<string, number>();
  const thresholds = new Map(wallets.map((wallet) => [wallet.id, wallet.low_balance_threshold]));
  let previous = { account: '', balance: 0 };
  for (const entry of walletEntries) {
    const before = previous.account === entry.account_id ? previous.balance : 0;
    const after = entry.balance_after ?? 0;
    if (before + entry.amount !== after) brokenChains.add(entry.account_id);
    const threshold = thresholds.get(entry.account_id) ?? null;
    if (threshold !== null && entry.amount < 0 && before >= threshold && after < threshold) {
      crossingsByWallet.set(entry.account_id, (crossingsByWallet.get(entry.account_id) ?? 0) + 1);
    }
    previous = { account: entry.account_id, balance: after };
  }
  const lowBalanceMismatches: string[] = [];
  for (const wallet of wallets) {
    const crossings = crossingsByWallet.get(wallet.id) ?? 0;
    const events = lowEventsByWallet.get(wallet.id) ?? 0;
    if (crossings !== events) lowBalanceMismatches.push(`${wallet.id}: ${crossings} crossings, ${events} events`);
  }
  return {
    brokenChains: [...brokenChains],
    lowBalanceMismatches,
    balanceMismatches: wallets
      .map((wallet) => ({ id: wallet.id, balance: wallet.balance, entries: sumByAccount.get(wallet.id) ?? 0 }))
      .filter((row) => row.balance !== row.entries),
    unbalancedTransactions: unbalanced.map((row) => row.transaction_id),
    negativeBalances: wallets.filter((wallet) => wallet.balance < -wallet.credit_limit).map((wallet) => wallet.id),
    entriesTotal: [...sumByAccount.values()].reduce((total, value) => total + value, 0),
    keysAppliedTwice: twice.map((row) => `${row.idempotency_scope}/${row.idempotency_key ?? ''}`),
    eventMismatches,
    orphanEvents,
  };
}

export const SOUND_LEDGER: LedgerViolations = {
  balanceMismatches: [],
  unbalancedTransactions: [],
  negativeBalances: [],
  entriesTotal: 0,
  keysAppliedTwice: [],
  eventMismatches: [],
  orphanEvents: [],
  lowBalanceMismatches: [],
  brokenChains: [],
};
