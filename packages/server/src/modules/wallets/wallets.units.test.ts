import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import type { Hold } from '../ledger/holds.schemas.js';
import { verifyLedger } from '../ledger/ledger.verify.js';
import { errorCode, expectStatus, walletsClient, type WalletsClient } from './wallets.fixtures.js';
import type { Batch, Transaction, Wallet, WalletList } from './wallets.schemas.js';

/** Units and several wallets per user (docs/api.md section 4, "Units"). */
describeEachDialect('units', (dialect) => {
  const current = useTestService(dialect);
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  const expectSound = async () => {
    const verification = await verifyLedger(current().service.db, { projectId: current().projectId });
    expect(verification.sound, JSON.stringify(verification.checks)).toBe(true);
  };

  describe('a wallet unit', () => {
    it('is an ISO 4217 code or a custom unit of 2 to 16 upper-case letters, digits and underscores', async () => {
      for (const currency of ['USD', 'CREDITS', 'GPU_HOURS', 'AB', 'T2', `A${'B'.repeat(15)}`]) {
        expect((await client.createWallet({ currency })).currency).toBe(currency);
      }
      for (const currency of ['usd', 'C', '1CREDITS', '_CREDITS', 'GPU-HOURS', 'GPU HOURS', `A${'B'.repeat(16)}`, '']) {
        const response = await client.request('POST', '/v1/wallets', { user_id: client.userId, currency });
        expect(errorCode(response), currency).toBe('parameter_invalid');
        expect(response.json<{ error: { param: string } }>().error.param).toBe('currency');
      }
    });

    it('counts amounts as whole numbers of the unit: credits, debits, holds and captures stay in it', async () => {
      const { id } = await client.createWallet({ currency: 'GPU_HOURS' });
      expect(await client.credit(id, 1_000)).toMatchObject({ type: 'credit', amount: 1_000, balance_after: 1_000 });
      expect(await client.debit(id, 250)).toMatchObject({ type: 'debit', amount: 250, balance_after: 750 });
      const hold = expectStatus<Hold>(await client.request('POST', `/v1/wallets/${id}/holds`, { amount: 100 }), 201);
      const captured = expectStatus<Hold>(await client.request('POST', `/v1/holds/${hold.id}/capture`, { amount: 60 }), 200);
      const debit = expectStatus<Transaction>(await client.request('GET', `/v1/transactions/${captured.transaction_id ?? ''}`), 200);
      expect(debit).toMatchObject({ type: 'debit', amount: 60, balance_after: 690 });
      expect(expectStatus<Wallet>(await client.request('GET', `/v1/wallets/${id}`), 200)).toMatchObject({
        currency: 'GPU_HOURS',
        balance: 690,
        available: 690,
      });
      expect(await client.request('GET', `/v1/wallets/${id}/balance`).then((response) => response.json<unknown>())).toMatchObject({
        credits: 690,
        currency: 'GPU_HOURS',
      });
      await expectSound();
    });
  });

  it('lets one user hold several wallets: two units, and two wallets of one unit, each with its own balance', async () => {
    const first = await client.createWallet({ currency: 'CREDITS' });
    const second = await client.createWallet({ currency: 'CREDITS' });
    const dollars = await client.createWallet({ currency: 'USD' });
    await client.credit(first.id, 10);
    await client.credit(second.id, 20);
    await client.credit(dollars.id, 30);
    const transfer = await client.transfer(second.id, first.id, 5);
    expect(transfer).toMatchObject({ amount: 5 });
    const listed = expectStatus<WalletList>(await client.request('GET', `/v1/wallets?user_id=${client.userId}&limit=100`), 200);
    const mine = new Map(listed.data.map((wallet) => [wallet.id, wallet]));
    expect(mine.get(first.id)).toMatchObject({ user_id: client.userId, currency: 'CREDITS', balance: 15 });
    expect(mine.get(second.id)).toMatchObject({ user_id: client.userId, currency: 'CREDITS', balance: 15 });
    expect(mine.get(dollars.id)).toMatchObject({ user_id: client.userId, currency: 'USD', balance: 30 });
    await expectSound();
  });

  it('refuses a movement between wallets of different units with 422 currency_mismatch, changing nothing', async () => {
    const credits = await client.createWallet({ currency: 'CREDITS' });
    const gpuHours = await client.createWallet({ currency: 'GPU_HOURS' });
    const dollars = await client.createWallet({ currency: 'USD' });
    await client.credit(credits.id, 100);
    await client.credit(dollars.id, 100);
    for (const [from, to] of [
      [credits.id, gpuHours.id],
      [dollars.id, credits.id],
      [credits.id, dollars.id],
    ] as const) {
      const response = await client.request('POST', '/v1/wallets/transfer', { from_wallet_id: from, to_wallet_id: to, amount: 10 });
      expect(response.statusCode).toBe(422);
      expect(response.json<{ error: { code: string; param: string } }>().error).toMatchObject({
        code: 'currency_mismatch',
        param: 'to_wallet_id',
      });
    }
    const operation = { type: 'transfer', from_wallet_id: credits.id, to_wallet_id: gpuHours.id, amount: 10 };
    const batch = expectStatus<Batch>(await client.request('POST', '/v1/wallets/batch', { operations: [operation] }), 200);
    expect(batch.results[0]).toMatchObject({ status: 422, error: { code: 'currency_mismatch' } });
    const atomic = await client.request('POST', '/v1/wallets/batch', {
      atomic: true,
      operations: [{ type: 'credit', wallet_id: gpuHours.id, amount: 5 }, operation],
    });
    expect(atomic.statusCode).toBe(422);
    expect(atomic.json<{ error: { code: string; param: string } }>().error).toMatchObject({
      code: 'currency_mismatch',
      param: 'operations[1].to_wallet_id',
    });
    for (const [id, balance] of [
      [credits.id, 100],
      [gpuHours.id, 0],
      [dollars.id, 100],
    ] as const) {
      expect(await client.balance(id)).toBe(balance);
    }
    await expectSound();
  });
});
