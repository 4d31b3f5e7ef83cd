import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { manualClock } from '../../test/webhook-receiver.js';
import { settleExpired } from './holds.service.js';
import type { GrantList, Hold } from '../ledger/holds.schemas.js';
import { verifyLedger } from '../ledger/ledger.verify.js';
import { errorCode, expectStatus, walletsClient, type WalletsClient } from './wallets.fixtures.js';
import type { Balance, Batch, Transaction, Transfer, WalletTransactionList } from './wallets.schemas.js';

/** Categories of credits (docs/api.md section 4, "Categories"; docs/adr/0021-categories.md). */
describeEachDialect('categories', (dialect) => {
  const clock = manualClock();
  const current = useTestService(dialect, { serviceOptions: { clock } });
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  const balance = async (walletId: string, query = '') =>
    expectStatus<Balance>(await client.request('GET', `/v1/wallets/${walletId}/balance${query}`), 200);
  const grants = async (walletId: string) =>
    expectStatus<GrantList>(await client.request('GET', `/v1/wallets/${walletId}/grants`), 200).data;
  const debit = (walletId: string, body: Record<string, unknown>) => client.request('POST', `/v1/wallets/${walletId}/debits`, body);
  const hold = (walletId: string, body: Record<string, unknown>) => client.request('POST', `/v1/wallets/${walletId}/holds`, body);
  const batch = (body: Record<string, unknown>) => client.request('POST', '/v1/wallets/batch', body);
  const expectSound = async () => {
    const verification = await verifyLedger(current().service.db, { projectId: current().projectId });
    expect(verification.sound, JSON.stringify(verification.checks)).toBe(true);
  };
  /** A wallet with 30 `paid` (spent first), 50 `promotional` and 20 `default` credits. */
  const mixedWallet = async () => {
    const { id } = await client.createWallet();
    await client.credit(id, 30, { category: 'paid', priority: 10 });
    await client.credit(id, 50, { category: 'promotional', priority: 20 });
    await client.credit(id, 20);
    return id;
  };

  describe('credits', () => {
    it('keep their category on the grant, the transaction and its sources; `default` unless asked', async () => {
      const { id } = await client.createWallet();
      const paid = await client.credit(id, 30, { category: 'paid' });
      expect(paid).toMatchObject({ type: 'credit', category: 'paid', sources: [{ amount: 30, category: 'paid' }] });
      const plain = await client.credit(id, 5);
      expect(plain).toMatchObject({ category: 'default', sources: [{ amount: 5, category: 'default' }] });
      expect(plain.categories).toBeUndefined();
      expect(expectStatus<Transaction>(await client.request('GET', `/v1/transactions/${paid.id}`), 200).category).toBe('paid');
      const history = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${id}/transactions`), 200);
      expect(history.data.map((transaction) => transaction.category)).toEqual(['default', 'paid']);
      // Both made at the same instant: listed in id order, which is random.
      expect((await grants(id)).map((grant) => [grant.amount, grant.category]).sort()).toEqual([
        [30, 'paid'],
        [5, 'default'],
      ]);
    });

    it('refuse a category that does not match ^[a-z][a-z0-9_]{0,39}$ with 400, changing nothing', async () => {
      const { id } = await client.createWallet();
      for (const category of ['Paid', '1paid', '', 'a'.repeat(41), 'pa-id', 7]) {
        const response = await client.request('POST', `/v1/wallets/${id}/credits`, { amount: 5, category });
        expect(response.statusCode, JSON.stringify(category)).toBe(400);
        expect(response.json<{ error: { code: string; param: string } }>().error).toMatchObject({
          code: 'parameter_invalid',
          param: 'category',
        });
      }
      expect(await client.credit(id, 5, { category: 'a'.repeat(40) })).toMatchObject({ category: 'a'.repeat(40) });
      expect((await balance(id)).credits).toBe(5);
    });
  });

  describe('the balance', () => {
    it('lists each category with credits left in unexpired grants, by name; not for a balance `?at=` a past time', async () => {
      const empty = await client.createWallet();
      expect(await balance(empty.id)).toEqual({ credits: 0, currency: 'USD', available: 0, categories: [], debt: 0, credit_limit: 0 });
      const id = await mixedWallet();
      const expiresAt = new Date(clock.now().getTime() + 60_000).toISOString();
      await client.credit(id, 7, { category: 'trial', expires_at: expiresAt });
      expect(expectStatus<Hold>(await hold(id, { amount: 10, categories: ['promotional'] }), 201).categories).toEqual(['promotional']);
      expect(await balance(id)).toEqual({
        credits: 107,
        currency: 'USD',
        available: 97,
        // A hold's reservation stays in its grants' remaining, as it stays in the credits.
        categories: [
          { category: 'default', remaining: 20 },
          { category: 'paid', remaining: 30 },
          { category: 'promotional', remaining: 50 },
          { category: 'trial', remaining: 7 },
        ],
        debt: 0,
        credit_limit: 0,
      });
      const past = clock.now().toISOString();
      clock.advance(60_000);
      // Expired but not yet settled: not counted, as it is not available.
      expect((await balance(id)).categories?.map((one) => one.category)).toEqual(['default', 'paid', 'promotional']);
      await settleExpired({ db: current().service.db, clock, ledger: current().service.ledger });
      expect(await balance(id)).toMatchObject({ credits: 100, available: 90 });
      const atPast = await balance(id, `?at=${past}`);
      expect(atPast).toMatchObject({ credits: 107 });
      expect(atPast.categories).toBeUndefined();
      await expectSound();
    });
  });

  describe('debits restricted to categories', () => {
    it('draw only on grants of those categories, in spending order, and their sources name them', async () => {
      const id = await mixedWallet();
      const first = expectStatus<Transaction>(await debit(id, { amount: 60, categories: ['default', 'promotional'] }), 201);
      expect(first).toMatchObject({ amount: 60, balance_after: 40, categories: ['default', 'promotional'] });
      expect(first.sources.map((source) => [source.category, source.amount])).toEqual([
        ['promotional', 50],
        ['default', 10],
      ]);
      // Unrestricted: priority first, whatever the category.
      const second = await client.debit(id, 35);
      expect(second.categories).toBeUndefined();
      expect(second.sources.map((source) => [source.category, source.amount])).toEqual([
        ['paid', 30],
        ['default', 5],
      ]);
      expect((await balance(id)).categories).toEqual([{ category: 'default', remaining: 5 }]);
      await expectSound();
    });

    it('are refused with 422 insufficient_credits when those categories do not have it, whatever the rest of the wallet has', async () => {
      const id = await mixedWallet();
      const refused = await debit(id, { amount: 31, categories: ['paid'] });
      expect(refused.statusCode).toBe(422);
      expect(refused.json<{ error: { code: string; message: string } }>().error.message).toContain('30 credits available in paid');
      expect(errorCode(await debit(id, { amount: 1, categories: ['gift'] }))).toBe('insufficient_credits');
      expect(await balance(id)).toMatchObject({ credits: 100 });
      expect(expectStatus<Transaction>(await debit(id, { amount: 30, categories: ['paid'] }), 201).balance_after).toBe(70);
      await expectSound();
    });

    it("are checked against what the categories' grants have left after holds' reservations", async () => {
      const id = await mixedWallet();
      const held = expectStatus<Hold>(await hold(id, { amount: 45, categories: ['promotional'] }), 201);
      expect(errorCode(await debit(id, { amount: 6, categories: ['promotional'] }))).toBe('insufficient_credits');
      expect(errorCode(await hold(id, { amount: 6, categories: ['promotional'] }))).toBe('insufficient_credits');
      expect(expectStatus<Transaction>(await debit(id, { amount: 5, categories: ['promotional'] }), 201).sources).toEqual([
        expect.objectContaining({ amount: 5, category: 'promotional' }),
      ]);
      const captured = expectStatus<Hold>(await client.request('POST', `/v1/holds/${held.id}/capture`, { amount: 40 }), 200);
      const capture = expectStatus<Transaction>(await client.request('GET', `/v1/transactions/${captured.transaction_id ?? ''}`), 200);
      expect(capture.sources).toEqual([expect.objectContaining({ amount: 40, category: 'promotional' })]);
      expect((await balance(id)).categories).toEqual([
        { category: 'default', remaining: 20 },
        { category: 'paid', remaining: 30 },
        { category: 'promotional', remaining: 5 },
      ]);
      await expectSound();
    });
  });

  describe('a flush that draws on one wallet with and without restrictions', () => {
    it('finds the grants of each restriction past the first page of the wallet’s grants, and refuses nothing wrongly', async () => {
      const { id } = await client.createWallet();
      // 150 promotional grants spent first, more than the write path reads in its first page (100).
      const promotional = Array.from({ length: 150 }, () => ({
        type: 'credit',
        wallet_id: id,
        amount: 1,
        category: 'promotional',
        priority: 10,
      }));
      expectStatus<Batch>(
        await batch({ atomic: true, operations: [...promotional, { type: 'credit', wallet_id: id, amount: 100, category: 'paid' }] }),
        201,
      );
      const result = expectStatus<Batch>(
        await batch({
          atomic: true,
          operations: [
            { type: 'debit', wallet_id: id, amount: 20, categories: ['paid'] },
            { type: 'debit', wallet_id: id, amount: 140 },
            { type: 'debit', wallet_id: id, amount: 10, categories: ['promotional'] },
            { type: 'hold', wallet_id: id, amount: 80, categories: ['paid'] },
          ],
        }),
        201,
      );
      expect(result.results[0]?.transaction?.sources).toEqual([expect.objectContaining({ category: 'paid', amount: 20 })]);
      expect(new Set(result.results[1]?.transaction?.sources.map((source) => source.category))).toEqual(new Set(['promotional']));
      expect(result.results[2]?.transaction?.sources).toHaveLength(10);
      expect((await balance(id)).categories).toEqual([{ category: 'paid', remaining: 80 }]);
      expect(errorCode(await debit(id, { amount: 1, categories: ['paid'] }))).toBe('insufficient_credits');
      await expectSound();
    });
  });

  describe('holds restricted to categories', () => {
    it('reserve only grants of those categories', async () => {
      const id = await mixedWallet();
      const created = expectStatus<Hold>(await hold(id, { amount: 60, categories: ['default', 'promotional'] }), 201);
      expect(created.categories).toEqual(['default', 'promotional']);
      // What is left free is the paid credits and 10 default ones: an unrestricted debit of 40 takes them.
      expect(errorCode(await debit(id, { amount: 41 }))).toBe('insufficient_credits');
      const rest = await client.debit(id, 40);
      expect(rest.sources.map((source) => [source.category, source.amount])).toEqual([
        ['paid', 30],
        ['default', 10],
      ]);
      await expectSound();
    });
  });

  describe('transfers restricted to categories', () => {
    it('move only grants of those categories, which keep their category in the receiving wallet', async () => {
      const from = await mixedWallet();
      const to = await client.createWallet();
      const transfer = await client.transfer(from, to.id, 60, { categories: ['promotional', 'paid'] });
      expect(transfer.categories).toEqual(['promotional', 'paid']);
      expect(transfer.sources.map((source) => [source.category, source.amount])).toEqual([
        ['paid', 30],
        ['promotional', 30],
      ]);
      expect((await balance(to.id)).categories).toEqual([
        { category: 'paid', remaining: 30 },
        { category: 'promotional', remaining: 30 },
      ]);
      expect((await grants(to.id)).map((grant) => grant.category).sort()).toEqual(['paid', 'promotional']);
      const refused = await client.request('POST', '/v1/wallets/transfer', {
        from_wallet_id: from,
        to_wallet_id: to.id,
        amount: 21,
        categories: ['promotional'],
      });
      expect(errorCode(refused)).toBe('insufficient_credits');
      expect(await balance(from)).toMatchObject({ credits: 40 });
      const history = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${to.id}/transactions`), 200);
      expect(history.data[0]).toMatchObject({ type: 'transfer_in', categories: ['promotional', 'paid'] });
      expect(expectStatus<Transfer>(await client.request('GET', `/v1/transactions/${transfer.id}`), 200).categories).toEqual([
        'promotional',
        'paid',
      ]);
      await expectSound();
    });
  });

  describe('the list of categories', () => {
    it('is refused with 400 parameter_invalid when empty, repeated, too long or badly named, changing nothing', async () => {
      const id = await mixedWallet();
      const eleven = Array.from({ length: 11 }, (_, index) => `c${index}`);
      for (const categories of [[], ['paid', 'paid'], eleven, ['Paid'], 'paid']) {
        for (const response of [
          await debit(id, { amount: 1, categories }),
          await hold(id, { amount: 1, categories }),
          await client.request('POST', '/v1/wallets/transfer', { from_wallet_id: id, to_wallet_id: id, amount: 1, categories }),
        ]) {
          expect(response.statusCode, JSON.stringify(categories)).toBe(400);
          expect(response.json<{ error: { code: string; param: string } }>().error).toMatchObject({ code: 'parameter_invalid' });
          expect(response.json<{ error: { param: string } }>().error.param).toMatch(/^categories/);
        }
      }
      expect(expectStatus<Transaction>(await debit(id, { amount: 1, categories: eleven.slice(2).concat('paid') }), 201).amount).toBe(1);
      expect(await balance(id)).toMatchObject({ credits: 99, available: 99 });
    });
  });

  describe('idempotency keys', () => {
    it('replay under the same categories in any order, and are `idempotency_key_reused` under others', async () => {
      const id = await mixedWallet();
      const first = expectStatus<Transaction>(
        await debit(id, { amount: 10, categories: ['paid', 'default'], idempotency_key: 'd-1' }),
        201,
      );
      const again = await debit(id, { amount: 10, categories: ['default', 'paid'], idempotency_key: 'd-1' });
      expect(again.statusCode).toBe(201);
      expect(again.json<Transaction>().id).toBe(first.id);
      for (const body of [
        { amount: 10, categories: ['paid'], idempotency_key: 'd-1' },
        { amount: 10, idempotency_key: 'd-1' },
      ]) {
        expect(errorCode(await debit(id, body))).toBe('idempotency_key_reused');
      }
      const credit = await client.credit(id, 5, { category: 'paid', idempotency_key: 'c-1' });
      expect(
        (
          await client.request('POST', `/v1/wallets/${id}/credits`, { amount: 5, category: 'paid', idempotency_key: 'c-1' })
        ).json<Transaction>().id,
      ).toBe(credit.id);
      const reused = await client.request('POST', `/v1/wallets/${id}/credits`, { amount: 5, idempotency_key: 'c-1' });
      expect(errorCode(reused)).toBe('idempotency_key_reused');
      // A refusal is kept with its key and its categories.
      expect(errorCode(await debit(id, { amount: 500, categories: ['paid'], idempotency_key: 'd-2' }))).toBe('insufficient_credits');
      expect(errorCode(await debit(id, { amount: 500, categories: ['promotional'], idempotency_key: 'd-2' }))).toBe(
        'idempotency_key_reused',
      );
      const heldOnce = expectStatus<Hold>(await hold(id, { amount: 5, categories: ['paid'], idempotency_key: 'h-1' }), 201);
      expect(expectStatus<Hold>(await hold(id, { amount: 5, categories: ['paid'], idempotency_key: 'h-1' }), 201).id).toBe(heldOnce.id);
      expect(errorCode(await hold(id, { amount: 5, idempotency_key: 'h-1' }))).toBe('idempotency_key_reused');
      await expectSound();
    });
  });

  describe('batches', () => {
    it('take category on credits and categories on debits, holds and transfers; each only where it means something', async () => {
      const { id } = await client.createWallet();
      const other = await client.createWallet();
      const result = expectStatus<Batch>(
        await batch({
          atomic: true,
          operations: [
            { type: 'credit', wallet_id: id, amount: 30, category: 'paid', priority: 10 },
            { type: 'credit', wallet_id: id, amount: 50, category: 'promotional' },
            // Unrestricted first: it spends paid credits the restricted debit after it cannot have.
            { type: 'debit', wallet_id: id, amount: 20 },
            { type: 'debit', wallet_id: id, amount: 10, categories: ['paid'] },
            { type: 'hold', wallet_id: id, amount: 20, categories: ['promotional'] },
            { type: 'transfer', from_wallet_id: id, to_wallet_id: other.id, amount: 30, categories: ['promotional'] },
          ],
        }),
        201,
      );
      expect(result.results.map((one) => one.status)).toEqual([201, 201, 201, 201, 201, 201]);
      expect(result.results[3]?.transaction?.sources).toEqual([expect.objectContaining({ category: 'paid', amount: 10 })]);
      expect(result.results[4]?.hold?.categories).toEqual(['promotional']);
      expect(result.results[5]?.transfer?.sources).toEqual([expect.objectContaining({ category: 'promotional', amount: 30 })]);
      expect((await balance(id)).categories).toEqual([{ category: 'promotional', remaining: 20 }]);
      expect((await balance(other.id)).categories).toEqual([{ category: 'promotional', remaining: 30 }]);

      const refused = await batch({
        atomic: true,
        operations: [
          { type: 'credit', wallet_id: id, amount: 5, category: 'paid' },
          { type: 'debit', wallet_id: id, amount: 6, categories: ['paid'] },
        ],
      });
      expect(refused.statusCode).toBe(422);
      expect(errorCode(refused)).toBe('insufficient_credits');
      expect(await balance(id)).toMatchObject({ credits: 20 });

      for (const [operation, param] of [
        [{ type: 'debit', wallet_id: id, amount: 1, category: 'paid' }, 'operations[0].category'],
        [{ type: 'credit', wallet_id: id, amount: 1, categories: ['paid'] }, 'operations[0].categories'],
        [{ type: 'capture', hold_id: 'hld_x', categories: ['paid'] }, 'operations[0].categories'],
      ] as const) {
        const response = await batch({ operations: [operation] });
        expect(response.json<{ error: { code: string; param: string } }>().error).toMatchObject({ code: 'parameter_unknown', param });
      }
      const invalid = await batch({ operations: [{ type: 'debit', wallet_id: id, amount: 1, categories: ['paid', 'paid'] }] });
      expect(invalid.statusCode).toBe(400);
      expect(errorCode(invalid)).toBe('parameter_invalid');
      await expectSound();
    });
  });

  describe('svc ledger verify', () => {
    it("names a credit's grant whose category is not the credit's", async () => {
      const { id } = await client.createWallet();
      const credit = await client.credit(id, 10, { category: 'paid' });
      const grantId = credit.sources[0]?.grant_id ?? '';
      await expectSound();
      await sql`update wallet_grants set category = 'promotional' where id = ${grantId}`.execute(current().service.db.kysely);
      const report = await verifyLedger(current().service.db, { projectId: current().projectId });
      expect(report.checks.grants_not_of_their_credit_category).toEqual({ violations: 1, examples: [grantId] });
      await sql`update wallet_grants set category = 'paid' where id = ${grantId}`.execute(current().service.db.kysely);
    });
  });
});
