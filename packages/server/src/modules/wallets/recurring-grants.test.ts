import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/ids.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { manualClock } from '../../test/webhook-receiver.js';
import type { GrantList } from '../ledger/holds.schemas.js';
import { verifyLedger } from '../ledger/ledger.verify.js';
import type { RecurringGrant, RecurringGrantList } from './recurring-grants.schemas.js';
import { grantDuePeriods } from './recurring-grants.service.js';
import { errorCode, expectStatus, walletsClient, type WalletsClient } from './wallets.fixtures.js';
import type { Transaction, WalletTransactionList } from './wallets.schemas.js';

/** Recurring grants (docs/api.md section 4, "Recurring grants"; docs/adr/0022-recurring-grants.md). */
describeEachDialect('recurring grants', (dialect) => {
  const clock = manualClock();
  const current = useTestService(dialect, { serviceOptions: { clock } });
  let client: WalletsClient;
  const DAY_MS = 86_400_000;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  const create = async (walletId: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
    expectStatus<RecurringGrant>(await client.request('POST', `/v1/wallets/${walletId}/recurring-grants`, body, headers), 201);
  const get = async (id: string) => expectStatus<RecurringGrant>(await client.request('GET', `/v1/recurring-grants/${id}`), 200);
  const cancel = async (id: string) => expectStatus<RecurringGrant>(await client.request('DELETE', `/v1/recurring-grants/${id}`), 200);
  const list = async (walletId: string, query = '') =>
    expectStatus<RecurringGrantList>(await client.request('GET', `/v1/wallets/${walletId}/recurring-grants${query}`), 200);
  const run = () => grantDuePeriods({ db: current().service.db, clock, ledger: current().service.ledger });
  /** The wallet's credits, oldest first. */
  const credits = async (walletId: string) => {
    const page = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${walletId}/transactions?limit=100`), 200);
    return page.data.filter((row) => row.type === 'credit').reverse();
  };
  const advance = (milliseconds: number) => clock.advance(milliseconds);
  const at = (offsetMs: number) => new Date(clock.now().getTime() + offsetMs).toISOString();
  const expectSound = async () => {
    const verification = await verifyLedger(current().service.db, { projectId: current().projectId });
    expect(verification.sound, JSON.stringify(verification.checks)).toBe(true);
  };

  describe('the resource', () => {
    it('creates with defaults, reads, lists newest first with a cursor, and cancels', async () => {
      const { id: walletId } = await client.createWallet();
      const first = await create(walletId, { amount: 100, interval: 'month' });
      expect(first).toEqual({
        id: first.id,
        object: 'recurring_grant',
        wallet_id: walletId,
        amount: 100,
        interval: 'month',
        interval_count: 1,
        starts_at: clock.now().toISOString(),
        expires: 'period_end',
        category: 'default',
        priority: 50,
        description: null,
        metadata: {},
        status: 'active',
        next_grant_at: clock.now().toISOString(),
        created_at: clock.now().toISOString(),
        cancelled_at: null,
      });
      expect(first.id).toMatch(/^rgr_/);
      advance(1);
      const second = await create(walletId, {
        amount: 5,
        interval: 'week',
        interval_count: 2,
        starts_at: at(DAY_MS),
        expires: 'never',
        category: 'promotional',
        priority: 10,
        description: 'Pro plan',
        metadata: { plan: 'pro' },
      });
      expect(second).toMatchObject({
        interval_count: 2,
        expires: 'never',
        category: 'promotional',
        priority: 10,
        next_grant_at: at(DAY_MS),
      });
      expect(await get(second.id)).toEqual(second);
      expect((await list(walletId)).data.map((row) => row.id)).toEqual([second.id, first.id]);
      const page = await list(walletId, '?limit=1');
      expect(page).toMatchObject({ has_more: true, data: [{ id: second.id }] });
      expect(await list(walletId, `?limit=1&starting_after=${second.id}`)).toMatchObject({ has_more: false, data: [{ id: first.id }] });

      const cancelled = await cancel(first.id);
      expect(cancelled).toMatchObject({ status: 'cancelled', next_grant_at: null, cancelled_at: clock.now().toISOString() });
      // Cancelling again changes nothing.
      expect(await cancel(first.id)).toEqual(cancelled);
      await cancel(second.id);

      const audit = await client.request('GET', `/v1/audit-logs?resource_id=${first.id}`);
      const actions = expectStatus<{ data: { action: string; outcome: string }[] }>(audit, 200).data.map((entry) => entry.action);
      expect(actions.sort()).toEqual(['recurring_grant.cancel', 'recurring_grant.create']);
    });

    it('replays a create under the same Idempotency-Key and refuses the key with another body', async () => {
      const { id: walletId } = await client.createWallet();
      const headers = { 'idempotency-key': `rg-${walletId}` };
      const first = await client.request('POST', `/v1/wallets/${walletId}/recurring-grants`, { amount: 7, interval: 'day' }, headers);
      const again = await client.request('POST', `/v1/wallets/${walletId}/recurring-grants`, { amount: 7, interval: 'day' }, headers);
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
      const other = await client.request('POST', `/v1/wallets/${walletId}/recurring-grants`, { amount: 8, interval: 'day' }, headers);
      expect(errorCode(other)).toBe('idempotency_key_reused');
      expect((await list(walletId)).data).toHaveLength(1);
      await cancel(first.json<RecurringGrant>().id);
    });

    it('refuses bad input, unknown resources and unusable wallets, changing nothing', async () => {
      const { id: walletId } = await client.createWallet();
      const bad = [
        {},
        { amount: 10 },
        { amount: 0, interval: 'day' },
        { amount: 1.5, interval: 'day' },
        { amount: 10, interval: 'hour' },
        { amount: 10, interval: 'day', interval_count: 0 },
        { amount: 10, interval: 'day', interval_count: 13 },
        { amount: 10, interval: 'day', expires: 'later' },
        { amount: 10, interval: 'day', category: 'Paid' },
        { amount: 10, interval: 'day', category: 'a'.repeat(41) },
        { amount: 10, interval: 'day', priority: 101 },
        { amount: 10, interval: 'day', starts_at: 'tomorrow' },
        { amount: 10, interval: 'day', surprise: true },
      ];
      for (const body of bad) {
        const response = await client.request('POST', `/v1/wallets/${walletId}/recurring-grants`, body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
      }
      expect((await list(walletId)).data).toEqual([]);
      const missingWallet = newId('wlt');
      expect(errorCode(await client.request('POST', `/v1/wallets/${missingWallet}/recurring-grants`, { amount: 1, interval: 'day' }))).toBe(
        'resource_missing',
      );
      expect(errorCode(await client.request('GET', `/v1/wallets/${missingWallet}/recurring-grants`))).toBe('resource_missing');
      expect(errorCode(await client.request('GET', `/v1/recurring-grants/${newId('rgr')}`))).toBe('resource_missing');
      expect(errorCode(await client.request('DELETE', `/v1/recurring-grants/${newId('rgr')}`))).toBe('resource_missing');
      expect(errorCode(await client.request('GET', `/v1/wallets/${walletId}/recurring-grants?starting_after=${newId('rgr')}`))).toBe(
        'resource_missing',
      );

      expectStatus(await client.request('POST', `/v1/wallets/${walletId}/freeze`), 200);
      expect(errorCode(await client.request('POST', `/v1/wallets/${walletId}/recurring-grants`, { amount: 1, interval: 'day' }))).toBe(
        'wallet_frozen',
      );
      expectStatus(await client.request('POST', `/v1/wallets/${walletId}/unfreeze`), 200);
      expectStatus(await client.request('POST', `/v1/wallets/${walletId}/close`), 200);
      expect(errorCode(await client.request('POST', `/v1/wallets/${walletId}/recurring-grants`, { amount: 1, interval: 'day' }))).toBe(
        'wallet_closed',
      );
      expect((await list(walletId)).data).toEqual([]);
    });
  });

  describe('the credits', () => {
    it('credits each period once, at its start, expiring at its end; a late run skips periods already over', async () => {
      const { id: walletId } = await client.createWallet();
      const grant = await create(walletId, { amount: 30, interval: 'day', description: 'daily', metadata: { plan: 'pro' } });
      const start = Date.parse(grant.starts_at);
      await run();
      await run();
      let made = await credits(walletId);
      expect(made).toHaveLength(1);
      expect(made[0]).toMatchObject({
        amount: 30,
        description: 'daily',
        metadata: { plan: 'pro' },
        recurring_grant_id: grant.id,
        idempotency_key: `${grant.id}:0`,
        actor: { type: 'system' },
      });
      const transaction = expectStatus<Transaction>(await client.request('GET', `/v1/transactions/${made[0]?.id ?? ''}`), 200);
      expect(transaction.recurring_grant_id).toBe(grant.id);
      const grants = expectStatus<GrantList>(await client.request('GET', `/v1/wallets/${walletId}/grants`), 200).data;
      expect(grants[0]?.expires_at).toBe(new Date(start + DAY_MS).toISOString());
      expect((await get(grant.id)).next_grant_at).toBe(new Date(start + DAY_MS).toISOString());

      // Just before the next period nothing is due; at its start, its credit.
      advance(DAY_MS - 1);
      await run();
      expect(await credits(walletId)).toHaveLength(1);
      advance(1);
      await run();
      made = await credits(walletId);
      expect(made.map((row) => row.idempotency_key)).toEqual([`${grant.id}:0`, `${grant.id}:1`]);
      // Period 0's credit expired as period 1 began: one period's allowance at a time.
      expect(await client.balance(walletId)).toBe(30);

      // Down for three and a half days: periods 2 and 3 are over (their credits would expire on
      // arrival) and are skipped; period 4, begun half a day ago, is credited.
      advance(3.5 * DAY_MS);
      await run();
      made = await credits(walletId);
      expect(made.map((row) => row.idempotency_key)).toEqual([`${grant.id}:0`, `${grant.id}:1`, `${grant.id}:4`]);
      const grantsNow = expectStatus<GrantList>(await client.request('GET', `/v1/wallets/${walletId}/grants`), 200).data;
      expect(grantsNow[0]?.expires_at).toBe(new Date(start + 5 * DAY_MS).toISOString());
      expect((await get(grant.id)).next_grant_at).toBe(new Date(start + 5 * DAY_MS).toISOString());
      await cancel(grant.id);
      await expectSound();
    });

    it('catches up every missed period when the credits never expire, each once, however many runs at once', async () => {
      const { id: walletId } = await client.createWallet();
      const grant = await create(walletId, { amount: 10, interval: 'day', expires: 'never', starts_at: at(-4 * DAY_MS + 1) });
      await Promise.all([run(), run(), run()]);
      await run();
      const made = await credits(walletId);
      expect(made.map((row) => row.idempotency_key)).toEqual([0, 1, 2, 3].map((index) => `${grant.id}:${index}`));
      expect(made.every((row) => row.recurring_grant_id === grant.id)).toBe(true);
      expect(await client.balance(walletId)).toBe(40);
      const grants = expectStatus<GrantList>(await client.request('GET', `/v1/wallets/${walletId}/grants`), 200).data;
      expect(grants.map((row) => row.expires_at)).toEqual([null, null, null, null]);
      expect((await get(grant.id)).next_grant_at).toBe(at(1));
      await cancel(grant.id);
      await expectSound();
    });

    it('cancel stops further credits; what was granted stays', async () => {
      const { id: walletId } = await client.createWallet();
      const grant = await create(walletId, { amount: 25, interval: 'week', expires: 'never' });
      await run();
      await cancel(grant.id);
      advance(3 * 7 * DAY_MS);
      await run();
      expect((await credits(walletId)).map((row) => row.amount)).toEqual([25]);
      expect(await client.balance(walletId)).toBe(25);
      await expectSound();
    });

    it('a period while the wallet is frozen is refused and not credited later; the next one is', async () => {
      const { id: walletId } = await client.createWallet();
      const grant = await create(walletId, { amount: 5, interval: 'day', expires: 'never' });
      await run();
      expectStatus(await client.request('POST', `/v1/wallets/${walletId}/freeze`), 200);
      advance(DAY_MS);
      await run();
      expectStatus(await client.request('POST', `/v1/wallets/${walletId}/unfreeze`), 200);
      await run();
      expect((await credits(walletId)).map((row) => row.idempotency_key)).toEqual([`${grant.id}:0`]);
      advance(DAY_MS);
      await run();
      expect((await credits(walletId)).map((row) => row.idempotency_key)).toEqual([`${grant.id}:0`, `${grant.id}:2`]);
      await cancel(grant.id);
      await expectSound();
    });

    it('a month from the 31st falls on the last day of shorter months', async () => {
      const { id: walletId } = await client.createWallet();
      // The next 31 January after the test clock's time.
      const now = clock.now();
      const year = now.getUTCMonth() === 0 && now.getUTCDate() < 31 ? now.getUTCFullYear() : now.getUTCFullYear() + 1;
      const startsAt = Date.UTC(year, 0, 31, 8, 0, 0);
      const grant = await create(walletId, { amount: 100, interval: 'month', starts_at: new Date(startsAt).toISOString() });
      const expected = [
        [startsAt, Date.UTC(year, 1, year % 4 === 0 ? 29 : 28, 8)],
        [Date.UTC(year, 1, year % 4 === 0 ? 29 : 28, 8), Date.UTC(year, 2, 31, 8)],
        [Date.UTC(year, 2, 31, 8), Date.UTC(year, 3, 30, 8)],
      ] as const;
      for (const [index, [periodStart, periodEnd]] of expected.entries()) {
        advance(periodStart - clock.now().getTime());
        await run();
        const made = await credits(walletId);
        expect(made).toHaveLength(index + 1);
        expect(made[index]?.idempotency_key).toBe(`${grant.id}:${index}`);
        const grants = expectStatus<GrantList>(await client.request('GET', `/v1/wallets/${walletId}/grants`), 200).data;
        expect(grants[0]?.expires_at).toBe(new Date(periodEnd).toISOString());
        expect((await get(grant.id)).next_grant_at).toBe(new Date(periodEnd).toISOString());
      }
      await cancel(grant.id);
      await expectSound();
    });

    // Last: it damages the project's ledger on purpose.
    it('svc ledger verify names a recurring grant credit without its period key, and a period credited twice', async () => {
      const { id: walletId } = await client.createWallet();
      const grant = await create(walletId, { amount: 3, interval: 'day' });
      await run();
      const k = current().service.db.kysely;
      const credit = await k
        .selectFrom('ledger_transactions')
        .selectAll()
        .where('recurring_grant_id', '=', grant.id)
        .executeTakeFirstOrThrow();
      // The ledger's tables are append-only: the damage is appended.
      await k
        .insertInto('ledger_transactions')
        .values([
          { ...credit, id: `${credit.id}x`, idempotency_key: 'not-a-period' },
          { ...credit, id: `${credit.id}y`, idempotency_scope: '' },
        ])
        .execute();
      const report = await verifyLedger(current().service.db, { projectId: current().projectId });
      expect(report.checks.recurring_grant_periods_not_once.examples).toEqual([credit.id, `${credit.id}x`]);
    });
  });
});
