import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { verifyLedger } from '../ledger/ledger.verify.js';
import { errorCode, expectStatus, walletsClient, type WalletsClient } from './wallets.fixtures.js';
import type { Batch, Transaction, Transfer } from './wallets.schemas.js';

/** `POST /v1/wallets/batch` (docs/api.md section 4, "Batches"). */
describeEachDialect('wallet batches', (dialect) => {
  const current = useTestService(dialect);
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  const batch = (body: unknown, headers: Record<string, string> = {}) => client.request('POST', '/v1/wallets/batch', body, headers);
  const expectSound = async () => expect((await verifyLedger(current().service.db, { projectId: current().projectId })).sound).toBe(true);

  describe('non-atomic', () => {
    it('applies each operation as its single route would, in order, answering 200 with per-operation results', async () => {
      const [a, b] = [await client.createWallet(), await client.createWallet()];
      const response = await batch({
        operations: [
          { type: 'credit', wallet_id: a.id, amount: 10, description: 'top up', metadata: { order: '1' } },
          { type: 'debit', wallet_id: a.id, amount: 4 },
          { type: 'debit', wallet_id: b.id, amount: 1 },
          { type: 'transfer', from_wallet_id: a.id, to_wallet_id: b.id, amount: 5 },
          { type: 'credit', wallet_id: newId('wlt'), amount: 1 },
          { type: 'transfer', from_wallet_id: a.id, to_wallet_id: a.id, amount: 1 },
        ],
      });
      expect(response.statusCode, response.body).toBe(200);
      const { object, results } = response.json<Batch>();
      expect(object).toBe('batch');
      expect(results.map((result) => [result.status, result.error?.code])).toEqual([
        [201, undefined],
        [201, undefined],
        [422, 'insufficient_credits'],
        [201, undefined],
        [404, 'resource_missing'],
        [400, 'same_wallet'],
      ]);
      expect(results[0]?.transaction).toMatchObject({ type: 'credit', amount: 10, balance_after: 10, metadata: { order: '1' } });
      expect(results[1]?.transaction).toMatchObject({ type: 'debit', amount: 4, balance_after: 6 });
      expect(results[3]?.transfer).toMatchObject({ object: 'transfer', from_wallet_id: a.id, to_wallet_id: b.id, amount: 5 });
      expect(results[0]?.transaction?.actor).toEqual({ type: 'secret_key', id: expect.stringMatching(/^key_/) as string });
      expect(results[0]?.transaction?.request_id).toBe(response.headers['request-id']);
      expect([await client.balance(a.id), await client.balance(b.id)]).toEqual([1, 5]);
      await expectSound();
    });

    it('shares the idempotency keys of the single routes, both ways, and refuses a key reused with another request', async () => {
      const wallet = await client.createWallet();
      const single = await client.request('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 7, idempotency_key: 'shared-1' });
      expect(single.statusCode).toBe(201);
      const response = await batch({
        operations: [
          { type: 'credit', wallet_id: wallet.id, amount: 7, idempotency_key: 'shared-1' },
          { type: 'credit', wallet_id: wallet.id, amount: 8, idempotency_key: 'shared-1' },
          { type: 'credit', wallet_id: wallet.id, amount: 2, idempotency_key: 'batch-1' },
          { type: 'credit', wallet_id: wallet.id, amount: 2, idempotency_key: 'batch-1' },
          { type: 'debit', wallet_id: wallet.id, amount: 1000, idempotency_key: 'batch-2' },
        ],
      });
      const { results } = response.json<Batch>();
      expect(results[0]).toEqual({ status: 201, transaction: single.json<Transaction>() });
      expect([results[1]?.status, results[1]?.error?.code, results[1]?.error?.param]).toEqual([422, 'idempotency_key_reused', 'amount']);
      expect(results[3]?.transaction).toEqual(results[2]?.transaction);
      expect(results[4]?.error?.code).toBe('insufficient_credits');
      const replayed = await client.request('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 2, idempotency_key: 'batch-1' });
      expect([replayed.statusCode, replayed.headers['idempotent-replayed']]).toEqual([201, 'true']);
      expect(replayed.json()).toEqual(results[2]?.transaction);
      const refusal = await client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 1000, idempotency_key: 'batch-2' });
      expect([refusal.statusCode, refusal.headers['idempotent-replayed'], errorCode(refusal)]).toEqual([
        422,
        'true',
        'insufficient_credits',
      ]);
      expect(refusal.json<{ error: unknown }>().error).toEqual(results[4]?.error);
      const conflict = await client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 2, idempotency_key: 'batch-1' });
      expect(errorCode(conflict)).toBe('idempotency_key_reused');
      expect(await client.balance(wallet.id)).toBe(9);
      await expectSound();
    });

    it('writes the events of the single routes', async () => {
      const [a, b] = [await client.createWallet({ low_balance_threshold: 5 }), await client.createWallet()];
      await batch({
        operations: [
          { type: 'credit', wallet_id: a.id, amount: 10 },
          { type: 'transfer', from_wallet_id: a.id, to_wallet_id: b.id, amount: 6 },
        ],
      });
      const types = await current()
        .service.db.kysely.selectFrom('events')
        .select('type')
        .where('project_id', '=', current().projectId)
        .where('data', 'like', `%${a.id}%`)
        .orderBy('type')
        .execute();
      expect(types.map((row) => row.type)).toEqual([
        'wallet.balance.low',
        'wallet.credit.added',
        'wallet.transfer.received',
        'wallet.transfer.sent',
      ]);
    });
  });

  describe('atomic', () => {
    it('applies every operation and answers 201, or applies none and answers the refused operation’s error naming it', async () => {
      const [a, b] = [await client.createWallet(), await client.createWallet()];
      const applied = await batch({
        atomic: true,
        operations: [
          { type: 'credit', wallet_id: a.id, amount: 5 },
          { type: 'transfer', from_wallet_id: a.id, to_wallet_id: b.id, amount: 5 },
        ],
      });
      expect(applied.statusCode, applied.body).toBe(201);
      expect(applied.json<Batch>().results.map((result) => result.status)).toEqual([201, 201]);
      const refused = await batch({
        atomic: true,
        operations: [
          { type: 'credit', wallet_id: a.id, amount: 100, idempotency_key: 'atomic-1' },
          { type: 'debit', wallet_id: b.id, amount: 1 },
          { type: 'debit', wallet_id: b.id, amount: 1 },
          { type: 'debit', wallet_id: b.id, amount: 10 },
        ],
      });
      expect([refused.statusCode, errorCode(refused)]).toEqual([422, 'insufficient_credits']);
      expect(refused.json<{ error: { param: string } }>().error.param).toBe('operations[3].amount');
      expect([await client.balance(a.id), await client.balance(b.id)]).toEqual([0, 5]);
      // Nothing was kept of the refused batch: its keys are still free.
      const again = await client.request('POST', `/v1/wallets/${a.id}/credits`, { amount: 3, idempotency_key: 'atomic-1' });
      expect([again.statusCode, again.headers['idempotent-replayed']]).toEqual([201, undefined]);
      const missing = await batch({ atomic: true, operations: [{ type: 'debit', wallet_id: newId('wlt'), amount: 1 }] });
      expect([missing.statusCode, errorCode(missing)]).toEqual([404, 'resource_missing']);
      expect(missing.json<{ error: { param: string } }>().error.param).toBe('operations[0].wallet_id');
      await expectSound();
    });

    it('undoes whole a refused batch that spent the grant its own credit made (found by the property across processes)', async () => {
      const [a, b] = [await client.createWallet(), await client.createWallet()];
      await client.credit(a.id, 28);
      const refused = await batch({
        atomic: true,
        operations: [
          { type: 'credit', wallet_id: a.id, amount: 1 },
          { type: 'debit', wallet_id: a.id, amount: 29 },
          { type: 'transfer', from_wallet_id: b.id, to_wallet_id: b.id, amount: 1 },
        ],
      });
      expect([refused.statusCode, errorCode(refused)]).toEqual([400, 'same_wallet']);
      expect(await client.balance(a.id)).toBe(28);
      const grants = expectStatus<{ data: { amount: number; remaining: number }[] }>(
        await client.request('GET', `/v1/wallets/${a.id}/grants`),
        200,
      );
      expect(grants.data.map((grant) => [grant.amount, grant.remaining])).toEqual([[28, 28]]);
      await expectSound();
    });
  });

  describe('the body', () => {
    it.each([
      ['no operations', { operations: [] }, 'operations'],
      ['operations not an array', { operations: { type: 'credit' } }, 'operations'],
      ['an unknown type', { operations: [{ type: 'refund', wallet_id: 'wlt_x', amount: 1 }] }, 'operations[0].type'],
      [
        'a zero amount',
        {
          operations: [
            { type: 'credit', wallet_id: 'wlt_x', amount: 1 },
            { type: 'credit', wallet_id: 'wlt_x', amount: 0 },
          ],
        },
        'operations[1].amount',
      ],
      ['a credit without its wallet', { operations: [{ type: 'credit', amount: 1 }] }, 'operations[0].wallet_id'],
      [
        'a transfer naming wallet_id',
        { operations: [{ type: 'transfer', wallet_id: 'wlt_x', from_wallet_id: 'wlt_a', to_wallet_id: 'wlt_b', amount: 1 }] },
        'operations[0].wallet_id',
      ],
      [
        'a transfer without its target',
        { operations: [{ type: 'transfer', from_wallet_id: 'wlt_a', amount: 1 }] },
        'operations[0].to_wallet_id',
      ],
      ['an unknown field', { operations: [{ type: 'credit', wallet_id: 'wlt_x', amount: 1, currency: 'USD' }] }, 'operations[0].currency'],
    ])('refuses %s with 400 naming it, and changes nothing', async (_name, body, param) => {
      const response = await batch(body);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json<{ error: { param: string } }>().error.param).toBe(param);
    });

    it('takes at most 1,000 operations', async () => {
      const wallet = await client.createWallet();
      const operations = (count: number) => Array.from({ length: count }, () => ({ type: 'credit', wallet_id: wallet.id, amount: 1 }));
      const over = await batch({ operations: operations(1001) });
      expect([over.statusCode, over.json<{ error: { param: string } }>().error.param]).toEqual([400, 'operations']);
      const full = await batch({ operations: operations(1000) });
      expect(full.statusCode).toBe(200);
      expect(full.json<Batch>().results.every((result) => result.status === 201)).toBe(true);
      expect(await client.balance(wallet.id)).toBe(1000);
      await expectSound();
    });

    it('replays the whole answer for the request’s own Idempotency-Key', async () => {
      const wallet = await client.createWallet();
      const body = { operations: [{ type: 'credit', wallet_id: wallet.id, amount: 3 }] };
      const first = await batch(body, { 'idempotency-key': 'whole-batch' });
      const second = await batch(body, { 'idempotency-key': 'whole-batch' });
      expect([second.statusCode, second.headers['idempotent-replayed'], second.body]).toEqual([200, 'true', first.body]);
      expect(await client.balance(wallet.id)).toBe(3);
      const transfer = first.json<Batch>().results[0]?.transaction as Transaction | Transfer;
      expect(transfer.object).toBe('transaction');
    });
  });
});
