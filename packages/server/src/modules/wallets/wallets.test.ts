import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { createUser, errorCode, expectStatus, schemaErrors, walletsClient, type WalletsClient } from './wallets.fixtures.js';
import { type Wallet, type WalletList, WalletListSchema, WalletSchema } from './wallets.schemas.js';

describeEachDialect('wallets', (dialect) => {
  const current = useTestService(dialect);
  let client: WalletsClient;
  /** A client of a second project, whose wallets the first must never see. */
  let otherProject: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
    const other = await service.projects.createProject({ name: 'Other project' });
    otherProject = await walletsClient(service, { projectId: other.project.id, secretKey: other.secretKey });
  });

  describe('POST /v1/wallets', () => {
    it('creates an active wallet with balance 0', async () => {
      const userId = client.userId;
      const response = await client.request('POST', '/v1/wallets', {
        user_id: userId,
        currency: 'USD',
        metadata: { plan: 'pro' },
        low_balance_threshold: 10,
      });
      const wallet = expectStatus<Wallet>(response, 201);
      expect(schemaErrors(WalletSchema, wallet)).toEqual([]);
      expect(wallet).toMatchObject({
        object: 'wallet',
        user_id: userId,
        currency: 'USD',
        balance: 0,
        status: 'active',
        metadata: { plan: 'pro' },
        low_balance_threshold: 10,
      });
      expect(wallet.id).toMatch(/^wlt_[0-9A-Za-z]{22}$/);
      expect(wallet.created_at).toBe(wallet.updated_at);
      expect(Object.keys(wallet)).toEqual([
        'id',
        'object',
        'user_id',
        'currency',
        'balance',
        'available',
        'credit_limit',
        'debt',
        'status',
        'metadata',
        'low_balance_threshold',
        'created_at',
        'updated_at',
      ]);
    });

    it('defaults metadata to {} and the threshold to null', async () => {
      const wallet = await client.createWallet();
      expect(wallet.metadata).toEqual({});
      expect(wallet.low_balance_threshold).toBeNull();
    });

    it("answers 404 for a user that does not exist or is another project's", async () => {
      for (const userId of [newId('usr'), otherProject.userId]) {
        const response = await client.request('POST', '/v1/wallets', { user_id: userId, currency: 'USD' });
        expect(response.statusCode).toBe(404);
        expect(response.json()).toMatchObject({ error: { code: 'resource_missing', param: 'user_id' } });
      }
    });

    const user = newId('usr');
    it.each([
      ['no user_id', { currency: 'USD' }, 'parameter_missing', 'user_id'],
      ['no currency', { user_id: user }, 'parameter_missing', 'currency'],
      ['a short user id', { user_id: 'usr_short', currency: 'USD' }, 'parameter_invalid', 'user_id'],
      ['a wallet id as user id', { user_id: newId('wlt'), currency: 'USD' }, 'parameter_invalid', 'user_id'],
      ['a number as user id', { user_id: 42, currency: 'USD' }, 'parameter_invalid', 'user_id'],
      ['a lower-case currency', { user_id: user, currency: 'usd' }, 'parameter_invalid', 'currency'],
      ['a 17-character unit', { user_id: user, currency: 'GPU_HOURS_PER_DAY' }, 'parameter_invalid', 'currency'],
      ['a unit with a hyphen', { user_id: user, currency: 'GPU-HOURS' }, 'parameter_invalid', 'currency'],
      ['an unknown field', { user_id: user, currency: 'USD', balance: 5 }, 'parameter_unknown', 'balance'],
      ['a negative threshold', { user_id: user, currency: 'USD', low_balance_threshold: -1 }, 'parameter_invalid', 'low_balance_threshold'],
      ['a threshold as text', { user_id: user, currency: 'USD', low_balance_threshold: '5' }, 'parameter_invalid', 'low_balance_threshold'],
      ['a number in metadata', { user_id: user, currency: 'USD', metadata: { plan: 5 } }, 'parameter_invalid', 'metadata.plan'],
      [
        'a 501-character value',
        { user_id: user, currency: 'USD', metadata: { plan: 'x'.repeat(501) } },
        'parameter_invalid',
        'metadata.plan',
      ],
      ['a 41-character key', { user_id: user, currency: 'USD', metadata: { ['k'.repeat(41)]: 'v' } }, 'parameter_invalid', 'metadata'],
      ['an array as metadata', { user_id: user, currency: 'USD', metadata: ['a'] }, 'parameter_invalid', 'metadata'],
      [
        '51 metadata keys',
        { user_id: user, currency: 'USD', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
        'parameter_invalid',
        'metadata',
      ],
    ])('refuses %s with 400', async (_label, body, code, param) => {
      const status = 400;
      const response = await client.request('POST', '/v1/wallets', body);
      expect(response.statusCode).toBe(status);
      expect(response.json()).toMatchObject({ error: { code, param } });
    });

    it('accepts the limits: 50 metadata keys of 40 characters with 500-character values', async () => {
      const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${i}`.padStart(40, 'k'), 'v'.repeat(500)]));
      const wallet = await client.createWallet({ metadata });
      expect(wallet.metadata).toEqual(metadata);
    });

    it('needs a secret key', async () => {
      const response = await current().service.app.inject({ method: 'POST', url: '/v1/wallets', payload: { currency: 'USD' } });
      expect(response.statusCode).toBe(401);
      expect(errorCode(response)).toBe('credential_missing');
    });
  });

  describe('GET /v1/wallets/:id', () => {
    it('returns the wallet', async () => {
      const wallet = await client.createWallet();
      expect(expectStatus(await client.request('GET', `/v1/wallets/${wallet.id}`), 200)).toEqual(wallet);
    });

    it("answers 404 for an unknown id and for another project's wallet alike", async () => {
      const foreign = await otherProject.createWallet();
      for (const id of [newId('wlt'), foreign.id, 'nonsense']) {
        const response = await client.request('GET', `/v1/wallets/${id}`);
        expect(response.statusCode).toBe(404);
        expect(errorCode(response)).toBe('resource_missing');
      }
    });

    it('returns the balance as {credits, currency, available, categories}', async () => {
      const wallet = await client.createWallet({ currency: 'EUR' });
      await client.credit(wallet.id, 7);
      expect(expectStatus(await client.request('GET', `/v1/wallets/${wallet.id}/balance`), 200)).toEqual({
        credits: 7,
        currency: 'EUR',
        available: 7,
        categories: [{ category: 'default', remaining: 7 }],
        debt: 0,
        credit_limit: 0,
      });
      const foreign = await otherProject.createWallet();
      expect((await client.request('GET', `/v1/wallets/${foreign.id}/balance`)).statusCode).toBe(404);
    });
  });

  describe('GET /v1/wallets', () => {
    it('lists newest first, page by page, with a user filter', async () => {
      const userId = await createUser(current().service, current().projectId);
      const created: Wallet[] = [];
      for (let i = 0; i < 5; i += 1) created.push(await client.createWallet({ user_id: userId }));
      await client.createWallet();
      // Newest first, and among wallets created in the same millisecond by id, descending: the
      // list's documented order (a regression test for this test assuming creation order).
      const newestFirst = [...created]
        .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1))
        .map((wallet) => wallet.id);

      const all = expectStatus<WalletList>(await client.request('GET', `/v1/wallets?user_id=${userId}`), 200);
      expect(schemaErrors(WalletListSchema, all)).toEqual([]);
      expect(all.data.map((wallet) => wallet.id)).toEqual(newestFirst);
      expect(all.has_more).toBe(false);

      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 3; page += 1) {
        const query = `user_id=${userId}&limit=2${cursor === undefined ? '' : `&starting_after=${cursor}`}`;
        const list = expectStatus<WalletList>(await client.request('GET', `/v1/wallets?${query}`), 200);
        seen.push(...list.data.map((wallet) => wallet.id));
        expect(list.has_more).toBe(page < 2);
        cursor = list.data.at(-1)?.id;
      }
      expect(seen).toEqual(newestFirst);
    });

    it("lists the project's wallets only, 20 by default", async () => {
      for (let i = 0; i < 21; i += 1) await client.createWallet();
      const foreign = await otherProject.createWallet();
      const list = expectStatus<WalletList>(await client.request('GET', '/v1/wallets'), 200);
      expect(list.data).toHaveLength(20);
      expect(list.has_more).toBe(true);
      expect(list.data.map((wallet) => wallet.id)).not.toContain(foreign.id);
    });

    it.each([
      ['limit=0', 'parameter_invalid', 'limit'],
      ['limit=101', 'parameter_invalid', 'limit'],
      ['limit=ten', 'parameter_invalid', 'limit'],
      ['colour=red', 'parameter_unknown', 'colour'],
    ])('refuses ?%s', async (query, code, param) => {
      const response = await client.request('GET', `/v1/wallets?${query}`);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: { code, param } });
    });

    it("answers 404 for a cursor that is not one of the project's wallets", async () => {
      const foreign = await otherProject.createWallet();
      for (const cursor of [newId('wlt'), foreign.id]) {
        const response = await client.request('GET', `/v1/wallets?starting_after=${cursor}`);
        expect(response.statusCode).toBe(404);
        expect(response.json()).toMatchObject({ error: { code: 'resource_missing', param: 'starting_after' } });
      }
    });
  });

  describe('PATCH /v1/wallets/:id', () => {
    it('merges metadata, removes keys set to "", and sets or clears the threshold', async () => {
      const wallet = await client.createWallet({ metadata: { a: '1', b: '2' } });
      const patched = expectStatus<Wallet>(
        await client.request('PATCH', `/v1/wallets/${wallet.id}`, { metadata: { b: '', c: '3' }, low_balance_threshold: 50 }),
        200,
      );
      expect(patched.metadata).toEqual({ a: '1', c: '3' });
      expect(patched.low_balance_threshold).toBe(50);
      expect(patched.updated_at >= wallet.updated_at).toBe(true);
      const cleared = expectStatus<Wallet>(await client.request('PATCH', `/v1/wallets/${wallet.id}`, { low_balance_threshold: null }), 200);
      expect(cleared).toMatchObject({ metadata: { a: '1', c: '3' }, low_balance_threshold: null });
      expect(expectStatus(await client.request('PATCH', `/v1/wallets/${wallet.id}`, {}), 200)).toMatchObject({
        metadata: { a: '1', c: '3' },
      });
    });

    it('refuses a merge that would leave more than 50 keys, and changes nothing', async () => {
      const metadata = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`a${i}`, 'v']));
      const wallet = await client.createWallet({ metadata });
      const more = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`b${i}`, 'v']));
      const response = await client.request('PATCH', `/v1/wallets/${wallet.id}`, { metadata: more });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'parameter_invalid', param: 'metadata' } });
      expect(expectStatus<Wallet>(await client.request('GET', `/v1/wallets/${wallet.id}`), 200).metadata).toEqual(metadata);
    });

    it.each([
      [{ balance: 5 }, 'parameter_unknown', 'balance'],
      [{ status: 'frozen' }, 'parameter_unknown', 'status'],
      [{ metadata: { a: 1 } }, 'parameter_invalid', 'metadata.a'],
      [{ low_balance_threshold: 1.5 }, 'parameter_invalid', 'low_balance_threshold'],
    ])('refuses %j', async (body, code, param) => {
      const wallet = await client.createWallet();
      const response = await client.request('PATCH', `/v1/wallets/${wallet.id}`, body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: { code, param } });
    });

    it("answers 404 for another project's wallet and leaves it alone", async () => {
      const foreign = await otherProject.createWallet({ metadata: { a: '1' } });
      const response = await client.request('PATCH', `/v1/wallets/${foreign.id}`, { metadata: { a: '2' } });
      expect(response.statusCode).toBe(404);
      expect(expectStatus<Wallet>(await otherProject.request('GET', `/v1/wallets/${foreign.id}`), 200).metadata).toEqual({ a: '1' });
    });
  });

  describe('freeze, unfreeze, close', () => {
    const post = (id: string, action: string) => client.request('POST', `/v1/wallets/${id}/${action}`);

    it('moves active → frozen → active, and frozen wallets refuse every movement with 409 wallet_frozen', async () => {
      const wallet = await client.createWallet();
      const other = await client.createWallet();
      await client.credit(wallet.id, 10);
      await client.credit(other.id, 10);
      const frozen = expectStatus<Wallet>(await post(wallet.id, 'freeze'), 200);
      expect(frozen.status).toBe('frozen');
      expect(expectStatus<Wallet>(await post(wallet.id, 'freeze'), 200).status).toBe('frozen');

      const refusals = [
        await client.request('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 1 }),
        await client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 1 }),
        await client.request('POST', '/v1/wallets/transfer', { from_wallet_id: wallet.id, to_wallet_id: other.id, amount: 1 }),
        await client.request('POST', '/v1/wallets/transfer', { from_wallet_id: other.id, to_wallet_id: wallet.id, amount: 1 }),
      ];
      expect(refusals.map((response) => [response.statusCode, errorCode(response)])).toEqual(Array(4).fill([409, 'wallet_frozen']));
      expect(refusals[2]?.json()).toMatchObject({ error: { param: 'from_wallet_id' } });
      expect(refusals[3]?.json()).toMatchObject({ error: { param: 'to_wallet_id' } });
      expect(await client.balance(wallet.id)).toBe(10);
      expect(await client.balance(other.id)).toBe(10);

      expect(expectStatus<Wallet>(await post(wallet.id, 'unfreeze'), 200).status).toBe('active');
      expect(expectStatus<Wallet>(await post(wallet.id, 'unfreeze'), 200).status).toBe('active');
      await client.debit(wallet.id, 1);
    });

    it('closes only an empty wallet, for good, and a closed wallet refuses everything with 409 wallet_closed', async () => {
      const wallet = await client.createWallet();
      const other = await client.createWallet();
      await client.credit(wallet.id, 5);
      await client.credit(other.id, 5);
      const notEmpty = await post(wallet.id, 'close');
      expect([notEmpty.statusCode, errorCode(notEmpty)]).toEqual([409, 'wallet_not_empty']);
      await client.debit(wallet.id, 5);

      expect(expectStatus<Wallet>(await post(wallet.id, 'close'), 200).status).toBe('closed');
      expect(expectStatus<Wallet>(await post(wallet.id, 'close'), 200).status).toBe('closed');
      const refusals = [
        await post(wallet.id, 'freeze'),
        await post(wallet.id, 'unfreeze'),
        await client.request('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 1 }),
        await client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 1 }),
        await client.request('POST', '/v1/wallets/transfer', { from_wallet_id: other.id, to_wallet_id: wallet.id, amount: 1 }),
      ];
      expect(refusals.map((response) => [response.statusCode, errorCode(response)])).toEqual(Array(5).fill([409, 'wallet_closed']));
      expect(await client.balance(other.id)).toBe(5);
    });

    it('closes a frozen wallet at balance 0', async () => {
      const wallet = await client.createWallet();
      await post(wallet.id, 'freeze');
      expect(expectStatus<Wallet>(await post(wallet.id, 'close'), 200).status).toBe('closed');
    });

    it("answers 404 for another project's wallet and leaves it alone", async () => {
      const foreign = await otherProject.createWallet();
      for (const action of ['freeze', 'unfreeze', 'close']) {
        const response = await post(foreign.id, action);
        expect([response.statusCode, errorCode(response)]).toEqual([404, 'resource_missing']);
      }
      expect(expectStatus<Wallet>(await otherProject.request('GET', `/v1/wallets/${foreign.id}`), 200).status).toBe('active');
    });
  });
});
