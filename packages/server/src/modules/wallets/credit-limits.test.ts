import { Migrator, sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { MIGRATIONS } from '../../db/migrations/index.js';
import { inTransaction } from '../../db/transaction.js';
import { describeEachDialect, testConfig, useTestDatabase } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { manualClock } from '../../test/webhook-receiver.js';
import { settleExpired } from './holds.service.js';
import type { GrantList, Hold } from '../ledger/holds.schemas.js';
import { verifyLedger } from '../ledger/ledger.verify.js';
import { errorCode, expectStatus, walletsClient, type WalletsClient } from './wallets.fixtures.js';
import {
  BALANCE_MAX,
  type Balance,
  type Batch,
  type Transaction,
  type Transfer,
  type Wallet,
  type WalletTransactionList,
} from './wallets.schemas.js';

/** Credit limits (docs/api.md section 4, "Credit limits"; docs/adr/0023-credit-limits.md). */
describeEachDialect('credit limits', (dialect) => {
  const clock = manualClock();
  const current = useTestService(dialect, { serviceOptions: { clock } });
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  const wallet = async (walletId: string) => expectStatus<Wallet>(await client.request('GET', `/v1/wallets/${walletId}`), 200);
  const balance = async (walletId: string) => expectStatus<Balance>(await client.request('GET', `/v1/wallets/${walletId}/balance`), 200);
  const grants = async (walletId: string) =>
    expectStatus<GrantList>(await client.request('GET', `/v1/wallets/${walletId}/grants`), 200).data;
  const hold = (walletId: string, amount: number) => client.request('POST', `/v1/wallets/${walletId}/holds`, { amount });
  const capture = (holdId: string, body: Record<string, unknown> = {}) => client.request('POST', `/v1/holds/${holdId}/capture`, body);
  const patch = (walletId: string, body: Record<string, unknown>) => client.request('PATCH', `/v1/wallets/${walletId}`, body);
  const expectSound = async () => {
    const verification = await verifyLedger(current().service.db, { projectId: current().projectId });
    expect(verification.sound, JSON.stringify(verification.checks)).toBe(true);
  };
  const limited = async (creditLimit: number, credits = 0) => {
    const created = await client.createWallet({ credit_limit: creditLimit });
    if (credits > 0) await client.credit(created.id, credits);
    return created.id;
  };

  it('a wallet has credit_limit 0 and debt 0 by default, and shows both', async () => {
    const plain = await client.createWallet();
    expect(plain).toMatchObject({ balance: 0, available: 0, credit_limit: 0, debt: 0 });
    expect(errorCode(await client.request('POST', `/v1/wallets/${plain.id}/debits`, { amount: 1 }))).toBe('insufficient_credits');
    const created = await client.createWallet({ credit_limit: 500 });
    expect(created).toMatchObject({ balance: 0, available: 0, credit_limit: 500, debt: 0 });
    expect(await balance(created.id)).toEqual({ credits: 0, currency: 'USD', available: 0, categories: [], debt: 0, credit_limit: 500 });
    await expectSound();
  });

  it('debits draw on the grants, then go into debt down to −credit_limit; beyond it 422 and nothing changes', async () => {
    const id = await limited(100, 40);
    const [grant] = await grants(id);
    const debit = await client.debit(id, 70);
    expect(debit).toMatchObject({ type: 'debit', amount: 70, balance_after: -30, sources: [{ grant_id: grant?.id, amount: 40 }] });
    expect(debit.repaid).toBe(0);
    expect(await wallet(id)).toMatchObject({ balance: -30, available: -30, debt: 30, credit_limit: 100 });
    expect(await balance(id)).toMatchObject({ credits: -30, available: -30, debt: 30, credit_limit: 100 });

    const refused = await client.request('POST', `/v1/wallets/${id}/debits`, { amount: 71 });
    expect(errorCode(refused)).toBe('insufficient_credits');
    expect(refused.json<{ error: { message: string } }>().error.message).toContain('credit limit of 100');
    expect(await wallet(id)).toMatchObject({ balance: -30, debt: 30 });

    expect(await client.debit(id, 70)).toMatchObject({ balance_after: -100, sources: [] });
    expect(await wallet(id)).toMatchObject({ balance: -100, available: -100, debt: 100 });
    expect(errorCode(await client.request('POST', `/v1/wallets/${id}/debits`, { amount: 1 }))).toBe('insufficient_credits');
    const history = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${id}/transactions`), 200);
    expect(history.data.map((row) => row.balance_after)).toEqual([-100, -30, 40]);
    await expectSound();
  });

  it('a credit repays the debt first and lists `repaid`; only the rest becomes its grant', async () => {
    const id = await limited(100);
    await client.debit(id, 60);
    // Wholly repaid: no grant is made.
    const small = await client.credit(id, 25, { idempotency_key: 'repay-1' });
    expect(small).toMatchObject({ type: 'credit', amount: 25, balance_after: -35, repaid: 25, sources: [] });
    expect(await wallet(id)).toMatchObject({ balance: -35, debt: 35 });
    expect(await grants(id)).toEqual([]);
    // The replay and the transaction read back carry the same `repaid`.
    const replay = await client.request('POST', `/v1/wallets/${id}/credits`, { amount: 25, idempotency_key: 'repay-1' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(small);
    expect(expectStatus<Transaction>(await client.request('GET', `/v1/transactions/${small.id}`), 200)).toEqual({
      ...small,
      reversed_amount: 0,
    });

    const large = await client.credit(id, 50, { priority: 10 });
    expect(large).toMatchObject({ balance_after: 15, repaid: 35 });
    const [grant] = await grants(id);
    expect(large.sources).toEqual([{ grant_id: grant?.id, amount: 15, category: 'default' }]);
    expect(grant).toMatchObject({ amount: 15, remaining: 15, priority: 10 });
    expect(await wallet(id)).toMatchObject({ balance: 15, available: 15, debt: 0 });
    // Out of debt: a credit repays nothing, and says nothing of it.
    expect((await client.credit(id, 5)).repaid).toBe(0);
    const history = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${id}/transactions`), 200);
    expect(history.data.map((row) => row.repaid)).toEqual([0, 35, 25, 0]);
    await expectSound();
  });

  it('holds may reserve beyond the grants into the limit; available never goes below −credit_limit', async () => {
    const id = await limited(100, 50);
    const reserved = expectStatus<Hold>(await hold(id, 120), 201);
    expect(await wallet(id)).toMatchObject({ balance: 50, available: -70, debt: 0 });
    expect(errorCode(await hold(id, 31))).toBe('insufficient_credits');
    expect(errorCode(await client.request('POST', `/v1/wallets/${id}/debits`, { amount: 31 }))).toBe('insufficient_credits');
    // The grants are reserved: a debit within the limit becomes debt while the balance stays positive.
    expect(await client.debit(id, 30)).toMatchObject({ balance_after: 20, sources: [] });
    expect(await wallet(id)).toMatchObject({ balance: 20, available: -100, debt: 30 });
    await expectSound();
    // The capture spends what the hold reserved, and takes the rest on the limit.
    const captured = expectStatus<Hold>(await capture(reserved.id), 200);
    expect(captured).toMatchObject({ status: 'captured', captured_amount: 120 });
    const debit = expectStatus<Transaction>(await client.request('GET', `/v1/transactions/${captured.transaction_id ?? ''}`), 200);
    expect(debit).toMatchObject({ amount: 120, balance_after: -100 });
    expect(debit.sources.reduce((sum, source) => sum + source.amount, 0)).toBe(50);
    expect(await wallet(id)).toMatchObject({ balance: -100, available: -100, debt: 100 });
    expect(errorCode(await hold(id, 1))).toBe('insufficient_credits');
    await expectSound();
  });

  it('a capture into debt draws first on grants credited after the hold; a partial capture releases the rest', async () => {
    const id = await limited(100);
    const reserved = expectStatus<Hold>(await hold(id, 80), 201);
    expect(await wallet(id)).toMatchObject({ balance: 0, available: -80, debt: 0 });
    // No debt yet: the credit makes a grant, which the capture then draws on before going into debt.
    expect((await client.credit(id, 30)).repaid).toBe(0);
    const captured = expectStatus<Hold>(await capture(reserved.id, { amount: 50 }), 200);
    const debit = expectStatus<Transaction>(await client.request('GET', `/v1/transactions/${captured.transaction_id ?? ''}`), 200);
    expect(debit).toMatchObject({ amount: 50, balance_after: -20 });
    expect(debit.sources.map((source) => source.amount)).toEqual([30]);
    expect(await wallet(id)).toMatchObject({ balance: -20, available: -20, debt: 20 });
    await expectSound();
  });

  it('an expired hold gives back what it reserved on the limit, to reads before the job settles it too (found by the property)', async () => {
    const id = await limited(20);
    expectStatus<Hold>(await client.request('POST', `/v1/wallets/${id}/holds`, { amount: 5, expires_in: 1 }), 201);
    await client.credit(id, 1);
    await client.debit(id, 1);
    expect(await wallet(id)).toMatchObject({ balance: 0, available: -5, debt: 0 });
    clock.advance(1000);
    expect(await wallet(id)).toMatchObject({ balance: 0, available: 0 });
    await settleExpired({ db: current().service.db, clock, ledger: current().service.ledger });
    expect(await wallet(id)).toMatchObject({ balance: 0, available: 0, debt: 0 });
    await expectSound();
  });

  it('a transfer out may go into debt; a transfer into a wallet in debt repays it first', async () => {
    const from = await limited(100, 30);
    const to = await limited(50);
    await client.debit(to, 40);
    const transfer = await client.transfer(from, to, 70);
    expect(transfer).toMatchObject({ amount: 70, repaid: 40 });
    expect(transfer.sources.map((source) => source.amount)).toEqual([30]);
    expect(await wallet(from)).toMatchObject({ balance: -40, available: -40, debt: 40 });
    expect(await wallet(to)).toMatchObject({ balance: 30, available: 30, debt: 0 });
    // The receiver keeps 30: the sender's credits, in the order drawn, repaid its 40 of debt first.
    expect((await grants(to)).map((grant) => grant.remaining)).toEqual([30]);
    expect(errorCode(await client.request('POST', '/v1/wallets/transfer', { from_wallet_id: from, to_wallet_id: to, amount: 61 }))).toBe(
      'insufficient_credits',
    );
    const history = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${to}/transactions`), 200);
    expect(history.data[0]).toMatchObject({ type: 'transfer_in', repaid: 40, balance_after: 30 });
    const sent = expectStatus<WalletTransactionList>(await client.request('GET', `/v1/wallets/${from}/transactions`), 200);
    expect(sent.data[0]).toMatchObject({ type: 'transfer_out', balance_after: -40 });
    expect(sent.data[0]?.repaid).toBe(0);
    expect(expectStatus<Transfer>(await client.request('GET', `/v1/transactions/${transfer.id}`), 200)).toMatchObject({ repaid: 40 });
    await expectSound();
  });

  it('wallet.balance.low fires when a debit takes the balance below the threshold, into the negative too', async () => {
    const id = (await client.createWallet({ credit_limit: 100, low_balance_threshold: 0 })).id;
    await client.credit(id, 10);
    const debit = await client.debit(id, 25);
    const events = await current()
      .service.db.kysely.selectFrom('events')
      .select(['type', 'data'])
      .where('project_id', '=', current().projectId)
      .where('type', '=', 'wallet.balance.low')
      .execute();
    const mine = events
      .map((event) => JSON.parse(event.data) as { wallet_id: string; balance: number })
      .filter((data) => data.wallet_id === id);
    expect(mine).toEqual([expect.objectContaining({ balance: -15, threshold: 0 })]);
    expect(debit.balance_after).toBe(-15);
    await expectSound();
  });

  it('PATCH sets the credit limit, never below the debt and what holds reserved on the limit', async () => {
    const id = await limited(100);
    await client.debit(id, 40);
    const refused = await patch(id, { credit_limit: 39 });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ error: { code: 'credit_limit_below_debt', param: 'credit_limit' } });
    expect(await wallet(id)).toMatchObject({ credit_limit: 100, debt: 40 });
    expect(expectStatus<Hold>(await hold(id, 20), 201).amount).toBe(20);
    // 40 owed and 20 reserved on the limit: 60 is the least it may go to.
    expect(errorCode(await patch(id, { credit_limit: 59 }))).toBe('credit_limit_below_debt');
    expect(expectStatus<Wallet>(await patch(id, { credit_limit: 60 }), 200)).toMatchObject({ credit_limit: 60, debt: 40, available: -60 });
    expect(errorCode(await client.request('POST', `/v1/wallets/${id}/debits`, { amount: 1 }))).toBe('insufficient_credits');
    expect(expectStatus<Wallet>(await patch(id, { credit_limit: 200, metadata: { plan: 'pro' } }), 200)).toMatchObject({
      credit_limit: 200,
      metadata: { plan: 'pro' },
    });
    expect(await client.debit(id, 140)).toMatchObject({ balance_after: -180 });
    await expectSound();
  });

  it('refuses a credit limit that is not an integer from 0 to 2^53 - 1, at creation and in PATCH, changing nothing', async () => {
    const id = await limited(10);
    for (const credit_limit of [-1, 1.5, '10', null, BALANCE_MAX + 1]) {
      expect(errorCode(await patch(id, { credit_limit })), JSON.stringify(credit_limit)).toBe('parameter_invalid');
      expect(
        errorCode(await client.request('POST', '/v1/wallets', { user_id: (await wallet(id)).user_id, currency: 'USD', credit_limit })),
      ).toBe('parameter_invalid');
    }
    expect(await wallet(id)).toMatchObject({ credit_limit: 10 });
    expect(expectStatus<Wallet>(await patch(id, { credit_limit: BALANCE_MAX }), 200).credit_limit).toBe(BALANCE_MAX);
    expect(expectStatus<Wallet>(await patch(id, { credit_limit: 0 }), 200).credit_limit).toBe(0);
    await expectSound();
  });

  it('an atomic batch refused after a debit into debt leaves the debt as it was', async () => {
    const id = await limited(50, 10);
    const response = await client.request('POST', '/v1/wallets/batch', {
      atomic: true,
      operations: [
        { type: 'debit', wallet_id: id, amount: 40 },
        { type: 'credit', wallet_id: id, amount: 5 },
        { type: 'debit', wallet_id: id, amount: 30 },
      ],
    });
    expect([response.statusCode, errorCode(response)]).toEqual([422, 'insufficient_credits']);
    expect(await wallet(id)).toMatchObject({ balance: 10, debt: 0 });
    expect((await grants(id)).map((grant) => grant.remaining)).toEqual([10]);
    const applied = expectStatus<Batch>(
      await client.request('POST', '/v1/wallets/batch', {
        atomic: true,
        operations: [
          { type: 'debit', wallet_id: id, amount: 40 },
          { type: 'credit', wallet_id: id, amount: 5 },
        ],
      }),
      201,
    );
    expect(applied.results.map((result) => result.transaction?.repaid)).toEqual([0, 5]);
    expect(await wallet(id)).toMatchObject({ balance: -25, debt: 25 });
    await expectSound();
  });

  describe('svc ledger verify', () => {
    it('names a debt over the credit limit and a balance that is not Σ remaining − debt', async () => {
      const id = await limited(100);
      await client.debit(id, 30);
      await expectSound();
      const k = current().service.db.kysely;
      // The CHECK constraint keeps debt within the limit; the stored balance is what verify compares.
      await k.updateTable('wallets').set({ debt: 31 }).where('id', '=', id).execute();
      const report = await verifyLedger(current().service.db, { projectId: current().projectId });
      expect(report.checks.grants_not_summing_to_balance.examples).toContain(id);
      expect(report.checks.debt_over_credit_limit.violations).toBe(0);
      await k.updateTable('wallets').set({ debt: 30 }).where('id', '=', id).execute();
      await expectSound();
    });
  });
});

describeEachDialect('migration 0039 (credit limits)', (dialect) => {
  const database = useTestDatabase(dialect);

  it('keeps every wallet, its indexes and triggers, and lets the CHECK constraint allow balances down to −credit_limit only', async () => {
    const db = openDatabase(testConfig(database().url).database);
    try {
      const migrateTo = (target: string) =>
        db.dialect === 'sqlite'
          ? inTransaction(db, (trx) =>
              new Migrator({ db: trx, provider: { getMigrations: () => Promise.resolve(MIGRATIONS) } }).migrateTo(target),
            )
          : new Migrator({ db: db.kysely, provider: { getMigrations: () => Promise.resolve(MIGRATIONS) } }).migrateTo(target);
      await migrateTo('0035_webhook_workers');
      const now = '2026-11-01T00:00:00.000Z';
      await sql`insert into projects (id, name, created_at) values ('prj_c', 'c', ${now})`.execute(db.kysely);
      await sql`insert into wallets (id, project_id, user_id, currency, balance, held, status, metadata, low_balance_threshold, created_at, updated_at)
                values ('wlt_c1', 'prj_c', 'usr_c', 'USD', 70, 20, 'active', '{"a":"b"}', 5, ${now}, ${now}),
                       ('wlt_c2', 'prj_c', 'usr_c', 'EUR', 0, 0, 'frozen', '{}', null, ${now}, ${now})`.execute(db.kysely);
      await sql`insert into wallet_grants (id, project_id, wallet_id, transaction_id, amount, remaining, held, expired, priority, expires_at, created_at)
                values ('grt_c', 'prj_c', 'wlt_c1', null, 70, 70, 20, 0, 50, null, ${now})`.execute(db.kysely);
      await migrateToLatest(db);

      const k = db.kysely;
      const wallets = await k.selectFrom('wallets').selectAll().where('project_id', '=', 'prj_c').orderBy('id').execute();
      expect(wallets).toMatchObject([
        {
          id: 'wlt_c1',
          balance: 70,
          held: 20,
          status: 'active',
          metadata: '{"a":"b"}',
          low_balance_threshold: 5,
          credit_limit: 0,
          debt: 0,
        },
        { id: 'wlt_c2', balance: 0, held: 0, status: 'frozen', credit_limit: 0, debt: 0 },
      ]);
      const indexes =
        db.dialect === 'sqlite'
          ? await sql<{
              name: string;
            }>`select name from sqlite_master where tbl_name = 'wallets' and type = 'index' and sql is not null`.execute(k)
          : await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'wallets'`.execute(k);
      expect(indexes.rows.map((row) => row.name)).toEqual(
        expect.arrayContaining(['wallets_project_created_idx', 'wallets_project_user_created_idx']),
      );
      // The triggers counting wallets per project still count, once.
      const counted = async () =>
        Number(
          (await sql<{ wallets: number | string }>`select wallets from project_counts where project_id = 'prj_c'`.execute(k)).rows[0]
            ?.wallets,
        );
      expect(await counted()).toBe(2);
      await sql`insert into wallets (id, project_id, user_id, currency, balance, status, metadata, created_at, updated_at, credit_limit)
                values ('wlt_c3', 'prj_c', 'usr_c', 'USD', 0, 'active', '{}', ${now}, ${now}, 10)`.execute(k);
      expect(await counted()).toBe(3);
      // The CHECK constraint: down to −credit_limit, debt within 0 and credit_limit, nothing beyond.
      await sql`update wallets set balance = -10, debt = 10 where id = 'wlt_c3'`.execute(k);
      await expect(sql`update wallets set balance = -11 where id = 'wlt_c3'`.execute(k)).rejects.toThrow();
      await expect(sql`update wallets set debt = 11 where id = 'wlt_c3'`.execute(k)).rejects.toThrow();
      await expect(sql`update wallets set balance = -1 where id = 'wlt_c2'`.execute(k)).rejects.toThrow();
      await expect(sql`update wallets set credit_limit = -1 where id = 'wlt_c2'`.execute(k)).rejects.toThrow();
      // The grants' foreign key to the rebuilt table still holds.
      await expect(
        sql`insert into wallet_grants (id, project_id, wallet_id, amount, remaining, held, expired, priority, created_at)
            values ('grt_x', 'prj_c', 'wlt_missing', 1, 1, 0, 0, 50, ${now})`.execute(k),
      ).rejects.toThrow();
      const report = await verifyLedger(db, { projectId: 'prj_c' });
      expect(report.checks.debt_over_credit_limit.violations).toBe(0);
      expect(report.checks.balances_below_credit_limit.violations).toBe(0);
    } finally {
      await db.destroy();
    }
  });
});
