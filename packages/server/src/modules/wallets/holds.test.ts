import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { manualClock } from '../../test/webhook-receiver.js';
import { settleExpired } from './holds.service.js';
import type { Grant, GrantList, Hold, HoldList } from '../ledger/holds.schemas.js';
import { verifyLedger } from '../ledger/ledger.verify.js';
import { errorCode, expectStatus, walletsClient, type WalletsClient } from './wallets.fixtures.js';
import type { Balance, Batch, Transaction, Wallet, WalletTransactionList } from './wallets.schemas.js';

/** Holds and grants (docs/api.md section 4, "Holds and grants"; docs/adr/0018-holds-and-grants.md). */
describeEachDialect('holds and grants', (dialect) => {
  const clock = manualClock();
  const current = useTestService(dialect, { serviceOptions: { clock } });
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  const hold = async (walletId: string, body: Record<string, unknown>) =>
    expectStatus<Hold>(await client.request('POST', `/v1/wallets/${walletId}/holds`, body), 201);
  const capture = (holdId: string, body?: Record<string, unknown>) => client.request('POST', `/v1/holds/${holdId}/capture`, body ?? {});
  const voidHold = (holdId: string) => client.request('POST', `/v1/holds/${holdId}/void`);
  const wallet = async (walletId: string) => expectStatus<Wallet>(await client.request('GET', `/v1/wallets/${walletId}`), 200);
  const grants = async (walletId: string) =>
    expectStatus<GrantList>(await client.request('GET', `/v1/wallets/${walletId}/grants`), 200).data;
  const expectSound = async () => {
    const verification = await verifyLedger(current().service.db, { projectId: current().projectId });
    expect(verification.sound, JSON.stringify(verification.checks)).toBe(true);
  };
  const settle = () => settleExpired({ db: current().service.db, clock, ledger: current().service.ledger });
  const in5s = () => new Date(clock.now().getTime() + 5000).toISOString();

  describe('holds', () => {
    it('reserves credits out of available, not the balance; capture debits part and releases the rest', async () => {
      const { id } = await client.createWallet();
      await client.credit(id, 100);
      const created = await hold(id, { amount: 60, description: 'ride', metadata: { ride: '7' } });
      expect(created).toMatchObject({ object: 'hold', wallet_id: id, amount: 60, captured_amount: 0, status: 'pending' });
      expect(created.id).toMatch(/^hld_/);
      expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(604_800_000);
      expect(await wallet(id)).toMatchObject({ balance: 100, available: 40 });
      expect(expectStatus<Balance>(await client.request('GET', `/v1/wallets/${id}/balance`), 200)).toMatchObject({
        credits: 100,
        available: 40,
      });
      expect(errorCode(await client.request('POST', `/v1/wallets/${id}/debits`, { amount: 41 }))).toBe('insufficient_credits');
      expect(errorCode(await client.request('POST', `/v1/wallets/${id}/holds`, { amount: 41 }))).toBe('insufficient_credits');

      const captured = expectStatus<Hold>(await capture(created.id, { amount: 45 }), 200);
      expect(captured).toMatchObject({ status: 'captured', captured_amount: 45 });
      const debit = expectStatus<Transaction>(await client.request('GET', `/v1/transactions/${captured.transaction_id ?? ''}`), 200);
      expect(debit).toMatchObject({ type: 'debit', amount: 45, balance_after: 55, actor: { type: 'secret_key' } });
      expect(debit.request_id).toMatch(/^req_/);
      expect(debit.sources).toHaveLength(1);
      expect(await wallet(id)).toMatchObject({ balance: 55, available: 55 });
      expect(errorCode(await capture(created.id))).toBe('hold_not_pending');
      expect(errorCode(await voidHold(created.id))).toBe('hold_not_pending');
      await expectSound();
    });

    it('voids, lists by status, refuses bad input and unknown holds', async () => {
      const { id } = await client.createWallet();
      await client.credit(id, 50);
      const first = await hold(id, { amount: 10 });
      const second = await hold(id, { amount: 20, expires_in: 60 });
      expect(expectStatus<Hold>(await voidHold(first.id), 200).status).toBe('voided');
      expect(await wallet(id)).toMatchObject({ balance: 50, available: 30 });
      const pending = expectStatus<HoldList>(await client.request('GET', `/v1/wallets/${id}/holds?status=pending`), 200);
      expect(pending.data.map((row) => row.id)).toEqual([second.id]);
      const all = expectStatus<HoldList>(await client.request('GET', `/v1/wallets/${id}/holds?limit=1`), 200);
      expect(all.has_more).toBe(true);
      expect(expectStatus<Hold>(await client.request('GET', `/v1/holds/${second.id}`), 200).amount).toBe(20);
      expect(errorCode(await client.request('GET', `/v1/holds/${newId('hld')}`))).toBe('resource_missing');
      expect(errorCode(await capture(newId('hld')))).toBe('resource_missing');
      expect(errorCode(await capture(second.id, { amount: 21 }))).toBe('parameter_invalid');
      for (const body of [{ amount: 0 }, { amount: 1, expires_in: 0 }, { amount: 1, expires_in: 2_592_001 }, { amount: 1.5 }]) {
        expect(errorCode(await client.request('POST', `/v1/wallets/${id}/holds`, body)), JSON.stringify(body)).toBe('parameter_invalid');
      }
      expect(errorCode(await client.request('POST', `/v1/wallets/${newId('wlt')}/holds`, { amount: 1 }))).toBe('resource_missing');
      await expectSound();
    });

    it('replays a hold by its key, and names a key reused for another movement', async () => {
      const { id } = await client.createWallet();
      await client.credit(id, 50);
      const first = await client.request('POST', `/v1/wallets/${id}/holds`, { amount: 5, idempotency_key: 'h-1' });
      const again = await client.request('POST', `/v1/wallets/${id}/holds`, { amount: 5, idempotency_key: 'h-1' });
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json<Hold>().id).toBe(first.json<Hold>().id);
      expect(errorCode(await client.request('POST', `/v1/wallets/${id}/holds`, { amount: 6, idempotency_key: 'h-1' }))).toBe(
        'idempotency_key_reused',
      );
      expect(errorCode(await client.request('POST', `/v1/wallets/${id}/debits`, { amount: 5, idempotency_key: 'h-1' }))).toBe(
        'idempotency_key_reused',
      );
      expect(await wallet(id)).toMatchObject({ balance: 50, available: 45 });
    });

    it('is expired from expires_at on: a capture is refused before the job runs, then the job releases it', async () => {
      const { id } = await client.createWallet();
      await client.credit(id, 30);
      const short = await hold(id, { amount: 30, expires_in: 10 });
      expect(await wallet(id)).toMatchObject({ available: 0 });
      clock.advance(10_000);
      expect(expectStatus<Hold>(await client.request('GET', `/v1/holds/${short.id}`), 200).status).toBe('expired');
      expect(await wallet(id)).toMatchObject({ balance: 30, available: 30 });
      expect(errorCode(await capture(short.id))).toBe('hold_not_pending');
      await settle();
      expect(expectStatus<Hold>(await client.request('GET', `/v1/holds/${short.id}`), 200).status).toBe('expired');
      const events = await current()
        .service.db.kysely.selectFrom('events')
        .select('type')
        .where('type', 'like', 'wallet.hold.%')
        .where('data', 'like', `%${short.id}%`)
        .execute();
      expect(events.map((event) => event.type).sort()).toEqual(['wallet.hold.created', 'wallet.hold.expired']);
      await client.debit(id, 30);
      await expectSound();
    });
  });

  describe('grants', () => {
    it('makes every credit a grant, draws by priority, earliest expiry, then age, and lists sources', async () => {
      const { id } = await client.createWallet();
      const plain = await client.credit(id, 10);
      const promo = await client.credit(id, 10, { priority: 10, expires_at: in5s() });
      const later = await client.credit(id, 10, { priority: 10 });
      const [plainGrant, promoGrant, laterGrant] = [plain, promo, later].map((credit) => credit.sources[0]?.grant_id);
      const debit = await client.debit(id, 15);
      expect(debit.sources).toEqual([
        { grant_id: promoGrant, amount: 10, category: 'default' },
        { grant_id: laterGrant, amount: 5, category: 'default' },
      ]);
      const byId = new Map((await grants(id)).map((grant) => [grant.id, grant]));
      expect(byId.get(promoGrant ?? '')).toMatchObject({ remaining: 0, status: 'depleted', priority: 10 });
      expect(byId.get(laterGrant ?? '')).toMatchObject({ remaining: 5, status: 'active' });
      expect(byId.get(plainGrant ?? '')).toMatchObject({ remaining: 10, priority: 50, expires_at: null, status: 'active' });
      await expectSound();
    });

    it('draws across more grants than a debit reads first (100), in order, and from the first of many', async () => {
      const { id } = await client.createWallet();
      // 150 grants of 2: the one with priority 0 first, then the rest by age.
      const operations = Array.from({ length: 150 }, (_, index) => ({
        type: 'credit',
        wallet_id: id,
        amount: 2,
        ...(index === 149 ? { priority: 0 } : {}),
      }));
      const credited = await client.request('POST', '/v1/wallets/batch', { operations });
      expect(credited.statusCode, credited.body).toBe(200);
      // 250 credits: more than the first 100 grants hold, so every grant left is read and ordered.
      const large = await client.debit(id, 250);
      expect(large.sources).toHaveLength(125);
      expect(large.sources.every((source) => source.amount === 2)).toBe(true);
      const prioritized = await current()
        .service.db.kysely.selectFrom('wallet_grants')
        .select('id')
        .where('wallet_id', '=', id)
        .where('priority', '=', 0)
        .executeTakeFirstOrThrow();
      expect(large.sources[0]?.grant_id).toBe(prioritized.id);
      // 3 credits: the first page covers it; the oldest grants left are drawn.
      const small = await client.debit(id, 3);
      expect(small.sources.map((source) => source.amount)).toEqual([2, 1]);
      expect(await wallet(id)).toMatchObject({ balance: 47, available: 47 });
      await expectSound();
    });

    it('refuses an expires_at that is not in the future and a priority out of range', async () => {
      const { id } = await client.createWallet();
      for (const body of [{ expires_at: clock.now().toISOString() }, { expires_at: 'tomorrow' }, { priority: 101 }, { priority: -1 }]) {
        const response = await client.request('POST', `/v1/wallets/${id}/credits`, { amount: 1, ...body });
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
      }
      expect((await wallet(id)).balance).toBe(0);
    });

    it('stops drawing on an expired grant at once, and the job moves its remaining out as an expiry', async () => {
      const { id } = await client.createWallet();
      await client.credit(id, 20, { expires_at: in5s(), priority: 0 });
      await client.credit(id, 5);
      clock.advance(5000);
      expect(await wallet(id)).toMatchObject({ balance: 25, available: 5 });
      expect(errorCode(await client.request('POST', `/v1/wallets/${id}/debits`, { amount: 6 }))).toBe('insufficient_credits');
      await settle();
      const history = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${id}/transactions`), 200);
      expect(history.data[0]).toMatchObject({ type: 'expiry', amount: 20, balance_after: 5 });
      const [expired] = (await grants(id)).filter((grant: Grant) => grant.status === 'expired');
      expect(expired).toMatchObject({ remaining: 0, amount: 20 });
      const event = await current()
        .service.db.kysely.selectFrom('events')
        .select('data')
        .where('type', '=', 'wallet.credit.expired')
        .where('data', 'like', `%${id}%`)
        .executeTakeFirstOrThrow();
      expect(JSON.parse(event.data)).toEqual({ wallet_id: id, grant_id: expired?.id, amount: 20, balance: 5 });
      // The audit log reads it from the ledger, made by the service itself.
      const audit = await client.request('GET', `/v1/audit-logs?resource_id=${id}&action=wallet.expiry`);
      expect(expectStatus<{ data: unknown[] }>(audit, 200).data).toMatchObject([
        {
          action: 'wallet.expiry',
          actor: { type: 'system' },
          outcome: 'success',
          changes: { amount: 20, balance_before: 25, balance_after: 5 },
        },
      ]);
      await expectSound();
    });

    it('keeps credits a pending hold reserved past the grant expiry, and expires them once released', async () => {
      const { id } = await client.createWallet();
      await client.credit(id, 20, { expires_at: in5s() });
      const reserved = await hold(id, { amount: 15, expires_in: 60 });
      clock.advance(5000);
      await settle();
      expect(await wallet(id)).toMatchObject({ balance: 15, available: 0 });
      expect(expectStatus<Hold>(await voidHold(reserved.id), 200).status).toBe('voided');
      expect(await wallet(id)).toMatchObject({ balance: 15, available: 0 });
      await settle();
      expect(await wallet(id)).toMatchObject({ balance: 0, available: 0 });
      await expectSound();
    });

    it('carries the grants of a transfer, with their priority and expiry, to the receiving wallet', async () => {
      const [from, to] = [await client.createWallet(), await client.createWallet()];
      const expiresAt = in5s();
      await client.credit(from.id, 10, { priority: 5, expires_at: expiresAt });
      await client.transfer(from.id, to.id, 10);
      const [received] = await grants(to.id);
      expect(received).toMatchObject({ amount: 10, remaining: 10, priority: 5, expires_at: expiresAt });
      clock.advance(5000);
      await settle();
      expect(await wallet(to.id)).toMatchObject({ balance: 0, available: 0 });
      await expectSound();
    });
  });

  it('takes hold, capture and void operations in batches', async () => {
    const { id } = await client.createWallet();
    await client.credit(id, 100);
    const first = await client.request('POST', '/v1/wallets/batch', {
      operations: [
        { type: 'hold', wallet_id: id, amount: 30 },
        { type: 'hold', wallet_id: id, amount: 80 },
        { type: 'credit', wallet_id: id, amount: 5, priority: 1 },
      ],
    });
    const results = expectStatus<Batch>(first, 200).results;
    expect(results.map((result) => [result.status, result.error?.code])).toEqual([
      [201, undefined],
      [422, 'insufficient_credits'],
      [201, undefined],
    ]);
    const holdId = results[0]?.hold?.id ?? '';
    const other = await hold(id, { amount: 10 });
    const second = await client.request('POST', '/v1/wallets/batch', {
      operations: [
        { type: 'capture', hold_id: holdId, amount: 20 },
        { type: 'void', hold_id: other.id },
        { type: 'void', hold_id: holdId },
      ],
    });
    expect(expectStatus<Batch>(second, 200).results.map((result) => [result.status, result.hold?.status, result.error?.code])).toEqual([
      [200, 'captured', undefined],
      [200, 'voided', undefined],
      [409, undefined, 'hold_not_pending'],
    ]);
    const refused = await client.request('POST', '/v1/wallets/batch', { atomic: true, operations: [{ type: 'void', hold_id: holdId }] });
    expect(refused.statusCode).toBe(409);
    expect(refused.json<{ error: { param: string } }>().error.param).toBe('operations[0].hold_id');
    const unknown = await client.request('POST', '/v1/wallets/batch', { operations: [{ type: 'void', hold_id: holdId, amount: 1 }] });
    expect(unknown.json<{ error: { param: string } }>().error.param).toBe('operations[0].amount');
    expect(await wallet(id)).toMatchObject({ balance: 85, available: 85 });
    await expectSound();
  });

  it('counts expired credits out of the credits in circulation (GET /v1/stats/overview)', async () => {
    const { id } = await client.createWallet();
    await client.credit(id, 40, { expires_at: in5s() });
    clock.advance(5000);
    await settle();
    const overview = expectStatus<{ credits_in_circulation: number }>(await client.request('GET', '/v1/stats/overview'), 200);
    const balances = await current()
      .service.db.kysely.selectFrom('wallets')
      .select('balance')
      .where('project_id', '=', current().projectId)
      .execute();
    expect(overview.credits_in_circulation).toBe(balances.reduce((sum, row) => sum + row.balance, 0));
  });
});
