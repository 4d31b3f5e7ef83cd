import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { manualClock } from '../../test/webhook-receiver.js';
import type { Grant, GrantList, Hold } from './holds.schemas.js';
import { verifyLedger } from './ledger.verify.js';
import { errorCode, expectStatus, walletsClient, type WalletsClient } from '../wallets/wallets.fixtures.js';
import type { Batch, Transaction, Transfer, Wallet, WalletTransactionList } from '../wallets/wallets.schemas.js';

/** Reversals (docs/api.md section 4, "Reversals"; docs/adr/0024-reversals.md). */
describeEachDialect('reversals', (dialect) => {
  const clock = manualClock();
  const current = useTestService(dialect, { serviceOptions: { clock } });
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  const reverse = (transactionId: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    client.request('POST', `/v1/transactions/${transactionId}/reverse`, body, headers);
  const reversed = async (transactionId: string, body: Record<string, unknown> = {}) =>
    expectStatus<Transaction>(await reverse(transactionId, body), 201);
  const wallet = async (walletId: string) => expectStatus<Wallet>(await client.request('GET', `/v1/wallets/${walletId}`), 200);
  const grants = async (walletId: string) =>
    expectStatus<GrantList>(await client.request('GET', `/v1/wallets/${walletId}/grants`), 200).data;
  const transaction = async (id: string) =>
    expectStatus<Transaction | Transfer>(await client.request('GET', `/v1/transactions/${id}`), 200);
  const expectSound = async () => {
    const verification = await verifyLedger(current().service.db, { projectId: current().projectId });
    expect(verification.sound, JSON.stringify(verification.checks)).toBe(true);
  };
  const later = (seconds: number) => new Date(clock.now().getTime() + seconds * 1000).toISOString();

  describe('credits', () => {
    it('takes back from the grant the credit made, in parts, never beyond the original', async () => {
      const { id } = await client.createWallet();
      const credit = await client.credit(id, 100, { category: 'promotional', priority: 10 });
      const first = await reversed(credit.id, { amount: 30, description: 'refund', metadata: { ticket: '9' } });
      expect(first).toMatchObject({
        object: 'transaction',
        type: 'reversal',
        reverses: credit.id,
        wallet_id: id,
        amount: 30,
        balance_after: 70,
        description: 'refund',
        metadata: { ticket: '9' },
        sources: [{ grant_id: credit.sources[0]?.grant_id, amount: 30, category: 'promotional' }],
      });
      expect(first.id).toMatch(/^txn_/);
      expect(errorCode(await reverse(credit.id, { amount: 71 }))).toBe('reversal_exceeds_original');
      expect((await transaction(credit.id)).reversed_amount).toBe(30);
      const rest = await reversed(credit.id);
      expect(rest).toMatchObject({ amount: 70, balance_after: 0 });
      expect(errorCode(await reverse(credit.id))).toBe('reversal_exceeds_original');
      expect(errorCode(await reverse(credit.id, { amount: 1 }))).toBe('reversal_exceeds_original');
      expect((await transaction(credit.id)).reversed_amount).toBe(100);
      expect(await grants(id)).toMatchObject([{ remaining: 0 }]);
      await expectSound();
    });

    it('refuses with insufficient_credits when the grant was spent, and re-creates the debt a credit repaid', async () => {
      const { id } = await client.createWallet();
      const credit = await client.credit(id, 50);
      await client.debit(id, 40);
      const response = await reverse(credit.id, { amount: 11 });
      expect(errorCode(response)).toBe('insufficient_credits');
      expect(await wallet(id)).toMatchObject({ balance: 10 });
      expect((await reversed(credit.id, { amount: 10 })).balance_after).toBe(0);

      const limited = await client.createWallet({ credit_limit: 30 });
      await client.debit(limited.id, 20);
      const repaying = await client.credit(limited.id, 25);
      expect(repaying.repaid).toBe(20);
      // The grant's 5 first, then the 20 it repaid become debt again.
      const back = await reversed(repaying.id, { amount: 15 });
      expect(back).toMatchObject({ balance_after: -10, sources: [{ amount: 5 }] });
      expect(await wallet(limited.id)).toMatchObject({ balance: -10, debt: 10 });
      expectStatus<Wallet>(await client.request('PATCH', `/v1/wallets/${limited.id}`, { credit_limit: 15 }), 200);
      expect(errorCode(await reverse(repaying.id))).toBe('insufficient_credits');
      expect(await wallet(limited.id)).toMatchObject({ balance: -10, debt: 10 });
      expect((await reversed(repaying.id, { amount: 5 })).balance_after).toBe(-15);
      await expectSound();
    });
  });

  describe('debits and captures', () => {
    it('returns each source amount to its grant, and an expired grant as a new one without expiry', async () => {
      const { id } = await client.createWallet();
      const soon = await client.credit(id, 30, { category: 'promotional', priority: 5, expires_at: later(60) });
      const lasting = await client.credit(id, 50, { category: 'paid', priority: 60 });
      const debit = await client.debit(id, 60);
      expect(debit.sources.map((source) => source.amount)).toEqual([30, 30]);
      // Expiry of the first grant, then the reversal of 40: 30 to the expired one (as a new grant), 10 to the other.
      clock.advance(61_000);
      const reversal = await reversed(debit.id, { amount: 40 });
      expect(reversal.balance_after).toBe(60);
      const [returned, restored] = reversal.sources;
      expect(restored).toEqual({ grant_id: lasting.sources[0]?.grant_id, amount: 10, category: 'paid' });
      expect(returned).toMatchObject({ amount: 30, category: 'promotional' });
      expect(returned?.grant_id).not.toBe(soon.sources[0]?.grant_id);
      const made = (await grants(id)).find((grant: Grant) => grant.id === returned?.grant_id);
      expect(made).toMatchObject({ amount: 30, remaining: 30, priority: 5, expires_at: null, category: 'promotional', status: 'active' });
      expect(await wallet(id)).toMatchObject({ balance: 60 });
      await reversed(debit.id);
      expect(await wallet(id)).toMatchObject({ balance: 80 });
      expect(errorCode(await reverse(debit.id))).toBe('reversal_exceeds_original');
      await expectSound();
    });

    it("cancels a debit's debt first, then returns its grants; reverses a capture's debit", async () => {
      const { id } = await client.createWallet({ credit_limit: 50 });
      await client.credit(id, 20);
      const debit = await client.debit(id, 50);
      expect(await wallet(id)).toMatchObject({ balance: -30, debt: 30 });
      const first = await reversed(debit.id, { amount: 40 });
      expect(first).toMatchObject({ balance_after: 10, repaid: 30 });
      expect(await wallet(id)).toMatchObject({ balance: 10, debt: 0 });

      const other = await client.createWallet();
      await client.credit(other.id, 100);
      const hold = expectStatus<Hold>(await client.request('POST', `/v1/wallets/${other.id}/holds`, { amount: 60 }), 201);
      const captured = expectStatus<Hold>(await client.request('POST', `/v1/holds/${hold.id}/capture`, { amount: 45 }), 200);
      const reversal = await reversed(captured.transaction_id ?? '');
      expect(reversal).toMatchObject({ amount: 45, balance_after: 100, reverses: captured.transaction_id });
      await expectSound();
    });
  });

  describe('transfers', () => {
    it('moves credits back while the receiving wallet has them available', async () => {
      const from = await client.createWallet();
      const to = await client.createWallet();
      await client.credit(from.id, 100, { category: 'paid' });
      const transfer = await client.transfer(from.id, to.id, 70);
      await client.debit(to.id, 50);
      expect(errorCode(await reverse(transfer.id, { amount: 21 }))).toBe('insufficient_credits');
      const back = await reversed(transfer.id, { amount: 20 });
      expect(back).toMatchObject({ type: 'reversal', wallet_id: from.id, balance_after: 50, reverses: transfer.id });
      expect(await wallet(to.id)).toMatchObject({ balance: 0 });
      await client.credit(to.id, 100);
      expect(errorCode(await reverse(transfer.id, { amount: 51 }))).toBe('reversal_exceeds_original');
      await reversed(transfer.id);
      expect(await wallet(from.id)).toMatchObject({ balance: 100 });
      expect(await wallet(to.id)).toMatchObject({ balance: 50 });
      expect((await transaction(transfer.id)).reversed_amount).toBe(70);
      const history = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${to.id}/transactions`), 200);
      expect(history.data.filter((row) => row.type === 'reversal')).toMatchObject([
        { amount: 50, counterparty_wallet_id: from.id, reverses: transfer.id },
        { amount: 20, counterparty_wallet_id: from.id, reverses: transfer.id },
      ]);
      await expectSound();
    });
  });

  describe('refusals', () => {
    it('refuses expiries, reversals, unknown transactions and unusable wallets, changing nothing', async () => {
      const { id } = await client.createWallet();
      await client.credit(id, 10, { expires_at: later(5) });
      const credit = await client.credit(id, 10);
      clock.advance(6000);
      await client.debit(id, 1);
      const history = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${id}/transactions`), 200);
      const expiry = history.data.find((row) => row.type === 'expiry');
      expect(errorCode(await reverse(expiry?.id ?? ''))).toBe('transaction_not_reversible');
      const reversal = await reversed(credit.id, { amount: 2 });
      expect(errorCode(await reverse(reversal.id))).toBe('transaction_not_reversible');
      expect(errorCode(await reverse(newId('txn')))).toBe('resource_missing');
      expect(errorCode(await reverse(credit.id, { amount: 0 }))).toBe('parameter_invalid');
      expect(errorCode(await reverse(credit.id, { wallet_id: id }))).toBe('parameter_unknown');
      await client.request('POST', `/v1/wallets/${id}/freeze`);
      expect(errorCode(await reverse(credit.id, { amount: 1 }))).toBe('wallet_frozen');
      await client.request('POST', `/v1/wallets/${id}/unfreeze`);
      expect(await wallet(id)).toMatchObject({ balance: 7 });
      await expectSound();
    });
  });

  describe('keys, events, batches', () => {
    it('replays a key, refuses it for another reversal, and emits wallet.transaction.reversed', async () => {
      const { id } = await client.createWallet();
      const credit = await client.credit(id, 100);
      const key = { 'Idempotency-Key': `rev-${newId('txn')}` };
      const first = await reverse(credit.id, { amount: 10 }, key);
      const again = await reverse(credit.id, { amount: 10 }, key);
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(first.body);
      expect(errorCode(await reverse(credit.id, { amount: 11 }, key))).toBe('idempotency_key_reused');
      const all = { 'Idempotency-Key': `rev-all-${newId('txn')}` };
      const rest = expectStatus<Transaction>(await reverse(credit.id, {}, all), 201);
      expect(rest.amount).toBe(90);
      expect((await reverse(credit.id, {}, all)).body).toBe(JSON.stringify(rest));
      expect(await wallet(id)).toMatchObject({ balance: 0 });
      const events = await current()
        .service.db.kysely.selectFrom('events')
        .select(['type', 'data'])
        .where('type', '=', 'wallet.transaction.reversed')
        .where('data', 'like', `%${credit.id}%`)
        .execute();
      expect(events.map((event) => JSON.parse(event.data) as unknown)).toEqual(
        expect.arrayContaining([
          { wallet_id: id, transaction_id: credit.id, reversal_id: JSON.parse(first.body).id, amount: 10, balance: 90 },
          { wallet_id: id, transaction_id: credit.id, reversal_id: rest.id, amount: 90, balance: 0 },
        ]),
      );
      expect(events).toHaveLength(2);
      await expectSound();
    });

    it('reverses in batches, atomic or not', async () => {
      const { id } = await client.createWallet();
      const credit = await client.credit(id, 100);
      const debit = await client.debit(id, 30);
      const batch = expectStatus<Batch>(
        await client.request('POST', '/v1/wallets/batch', {
          operations: [
            { type: 'reverse', transaction_id: debit.id, amount: 10 },
            { type: 'reverse', transaction_id: debit.id, amount: 30 },
            { type: 'reverse', transaction_id: credit.id, amount: 5, idempotency_key: `b-${credit.id}` },
          ],
        }),
        200,
      );
      expect(batch.results.map((result) => result.status)).toEqual([201, 422, 201]);
      expect(batch.results[1]?.error?.code).toBe('reversal_exceeds_original');
      expect(batch.results[0]?.transaction).toMatchObject({ type: 'reversal', reverses: debit.id, balance_after: 80 });
      const atomic = await client.request('POST', '/v1/wallets/batch', {
        atomic: true,
        operations: [
          { type: 'reverse', transaction_id: debit.id },
          { type: 'reverse', transaction_id: debit.id, amount: 1 },
        ],
      });
      expect(errorCode(atomic)).toBe('reversal_exceeds_original');
      expect(JSON.parse(atomic.body).error.param).toBe('operations[1].amount');
      expect(await wallet(id)).toMatchObject({ balance: 75 });
      expect(
        errorCode(
          await client.request('POST', '/v1/wallets/batch', { operations: [{ type: 'reverse', transaction_id: debit.id, wallet_id: id }] }),
        ),
      ).toBe('parameter_unknown');
      expect(errorCode(await client.request('POST', '/v1/wallets/batch', { operations: [{ type: 'reverse' }] }))).toBe('parameter_missing');
      const done = expectStatus<Batch>(
        await client.request('POST', '/v1/wallets/batch', { atomic: true, operations: [{ type: 'reverse', transaction_id: debit.id }] }),
        201,
      );
      expect(done.results[0]?.transaction?.amount).toBe(20);
      expect(await wallet(id)).toMatchObject({ balance: 95 });
      await expectSound();
    });

    it('never lets concurrent partial reversals exceed the original', async () => {
      const { id } = await client.createWallet();
      const credit = await client.credit(id, 100);
      const responses = await Promise.all(Array.from({ length: 12 }, () => reverse(credit.id, { amount: 10 })));
      const codes = responses.map((response) => (response.statusCode === 201 ? 'ok' : errorCode(response)));
      expect(codes.filter((code) => code === 'ok')).toHaveLength(10);
      expect(codes.filter((code) => code === 'reversal_exceeds_original')).toHaveLength(2);
      expect(await wallet(id)).toMatchObject({ balance: 0 });
      await expectSound();
    });

    it('records reversals in the audit log with the request IP and agent', async () => {
      const { id } = await client.createWallet();
      const credit = await client.credit(id, 10);
      const reversal = expectStatus<Transaction>(
        await reverse(credit.id, { amount: 4 }, { 'X-End-User-IP': '203.0.113.7', 'X-End-User-Agent': 'reversal-test' }),
        201,
      );
      const list = expectStatus<{ data: { id: string; action: string; ip: string | null; user_agent: string | null; changes: unknown }[] }>(
        await client.request('GET', `/v1/audit-logs?action=wallet.reversal&resource_id=${id}`),
        200,
      );
      expect(list.data).toMatchObject([
        {
          action: 'wallet.reversal',
          ip: '203.0.113.7',
          user_agent: 'reversal-test',
          changes: { transaction_id: reversal.id, reverses: credit.id, amount: 4, balance_before: 10, balance_after: 6 },
        },
      ]);
      const balanceBefore = expectStatus<{ credits: number }>(
        await client.request('GET', `/v1/wallets/${id}/balance?at=${encodeURIComponent(reversal.created_at)}`),
        200,
      );
      expect(balanceBefore.credits).toBe(6);
    });
  });
});
