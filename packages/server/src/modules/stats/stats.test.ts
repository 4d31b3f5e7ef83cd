import { expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { AMOUNT_MAX, BALANCE_MAX } from '../wallets/wallets.schemas.js';
import { lastDays } from './stats.service.js';
import { insertTransactions, walletRow } from './stats.fixtures.js';
import { foldStats } from './stats.fold.js';

it('lastDays lists UTC days oldest first, today last', () => {
  expect(lastDays(new Date('2026-03-02T23:59:59.000Z'), 3)).toEqual(['2026-02-28', '2026-03-01', '2026-03-02']);
});

describeEachDialect('stats', (dialect) => {
  const test = useTestService(dialect);

  it('counts users, wallets, credits in circulation and events today; credits added and deducted per day', async () => {
    const { app } = test().service;
    const headers = test().auth;
    const empty = await app.inject({ method: 'GET', url: '/v1/stats/overview', headers });
    expect(empty.json()).toMatchObject({ object: 'stats.overview', users: 0, wallets: 0, credits_in_circulation: 0, events_today: 0 });

    const signup = await app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers,
      payload: { email: 'stats@example.com', password: 'correct horse battery staple', name: 'Stats' },
    });
    expect(signup.statusCode, signup.body).toBe(201);
    const userId = signup.json<{ user: { id: string } }>().user.id;
    const wallet = await app.inject({ method: 'POST', url: '/v1/wallets', headers, payload: { user_id: userId, currency: 'USD' } });
    const walletId = wallet.json<{ id: string }>().id;
    for (const [path, amount] of [
      ['credits', 500],
      ['credits', 250],
      ['debits', 100],
    ] as const) {
      const response = await app.inject({ method: 'POST', url: `/v1/wallets/${walletId}/${path}`, headers, payload: { amount } });
      expect(response.statusCode, response.body).toBe(201);
    }

    const overview = await app.inject({ method: 'GET', url: '/v1/stats/overview', headers });
    expect(overview.json()).toMatchObject({ users: 1, wallets: 1, credits_in_circulation: 650 });
    expect(overview.json().events_today).toBeGreaterThanOrEqual(5);

    const credits = await app.inject({ method: 'GET', url: '/v1/stats/credits?days=7', headers });
    const series = credits.json<{ data: { day: string; added: number; deducted: number; credit_count: number }[] }>().data;
    expect(series).toHaveLength(7);
    expect(series.at(-1)).toEqual({
      day: new Date().toISOString().slice(0, 10),
      added: 750,
      deducted: 100,
      credit_count: 2,
      debit_count: 1,
    });
    expect(series[0]).toMatchObject({ added: 0, deducted: 0 });

    const webhooks = await app.inject({ method: 'GET', url: '/v1/stats/webhooks?days=3', headers });
    expect(webhooks.statusCode).toBe(200);
    expect(webhooks.json().data).toHaveLength(3);
    expect(webhooks.json().data[2]).toMatchObject({ attempts: 0, success_rate: null });

    expect((await app.inject({ method: 'GET', url: '/v1/stats/credits?days=91', headers })).statusCode).toBe(400);
  });

  it('counts reversals in circulation by the way they move credits, before and after the fold', async () => {
    const { app } = test().service;
    const headers = test().auth;
    const post = async (url: string, payload: Record<string, unknown>) => {
      const response = await app.inject({ method: 'POST', url, headers, payload });
      expect(response.statusCode, response.body).toBe(201);
      return response.json<{ id: string }>();
    };
    const signup = await post('/v1/auth/signup', { email: 'reversals@example.com', password: 'correct horse battery staple' });
    const userId = (signup as unknown as { user: { id: string } }).user.id;
    const [from, to] = [
      await post('/v1/wallets', { user_id: userId, currency: 'USD' }),
      await post('/v1/wallets', { user_id: userId, currency: 'USD' }),
    ];
    const before = (await app.inject({ method: 'GET', url: '/v1/stats/overview', headers })).json<{ credits_in_circulation: number }>();
    const credit = await post(`/v1/wallets/${from.id}/credits`, { amount: 500 });
    const debit = await post(`/v1/wallets/${from.id}/debits`, { amount: 100 });
    const transfer = await post('/v1/wallets/transfer', { from_wallet_id: from.id, to_wallet_id: to.id, amount: 50 });
    await post(`/v1/transactions/${credit.id}/reverse`, { amount: 20 });
    await post(`/v1/transactions/${debit.id}/reverse`, { amount: 30 });
    await post(`/v1/transactions/${transfer.id}/reverse`, { amount: 10 });
    // The sum of the balances: 500 - 100 - 20 + 30; the transfer and its reversal stay within the project.
    const circulation = async () =>
      (await app.inject({ method: 'GET', url: '/v1/stats/overview', headers })).json<{ credits_in_circulation: number }>()
        .credits_in_circulation - before.credits_in_circulation;
    expect(await circulation()).toBe(410);
    await foldStats(test().service.db, { now: () => new Date(Date.now() + 24 * 60 * 60 * 1000) });
    expect(await circulation()).toBe(410);
  });

  it('counts only the own project', async () => {
    const other = await test().service.projects.createProject({ name: 'Other' });
    const response = await test().service.app.inject({
      method: 'GET',
      url: '/v1/stats/overview',
      headers: { authorization: `Bearer ${other.secretKey}` },
    });
    expect(response.json()).toMatchObject({ users: 0, wallets: 0, credits_in_circulation: 0 });
  });

  // Each amount and balance is at most 2^53 - 1, but a sum over many rows may
  // not be; it answered 500 on PostgreSQL. Sums are exact below 2^53 - 1 and capped at it above
  // (docs/api.md, "Statistics"). Credits in circulation are the project's credits less its debits
  // (every balance is the sum of its wallet's ledger), so the rows are ledger transactions.
  it('caps sums above 2^53 - 1 at 2^53 - 1 instead of failing, and keeps smaller sums exact', async () => {
    const { service } = test();
    const { project, secretKey } = await service.projects.createProject({ name: 'Rich' });
    const headers = { authorization: `Bearer ${secretKey}` };
    const now = new Date().toISOString();
    const db = service.db.kysely;
    await db
      .insertInto('wallets')
      .values(['wal_a', 'wal_b'].map((id) => walletRow(id, project.id, now)))
      .execute();
    const empty = await service.app.inject({ method: 'GET', url: '/v1/stats/overview', headers });
    expect(empty.json()).toMatchObject({ wallets: 2, credits_in_circulation: 0 });

    // 9,008 credits of the largest amount are above 2^53 - 1.
    const count = Math.ceil(BALANCE_MAX / AMOUNT_MAX) + 1;
    await insertTransactions(service.db.kysely, project.id, 'credit', Array(count).fill(AMOUNT_MAX), now);
    const over = await service.app.inject({ method: 'GET', url: '/v1/stats/overview', headers });
    expect(over.statusCode, over.body).toBe(200);
    expect(over.json()).toMatchObject({ wallets: 2, credits_in_circulation: BALANCE_MAX });
    const credits = await service.app.inject({ method: 'GET', url: '/v1/stats/credits?days=1', headers });
    expect(credits.statusCode, credits.body).toBe(200);
    expect(credits.json().data).toEqual([{ day: now.slice(0, 10), added: BALANCE_MAX, deducted: 0, credit_count: count, debit_count: 0 }]);

    // Credits and debits each above 2^53 whose difference is small: exact, not rounded.
    await insertTransactions(service.db.kysely, project.id, 'debit', [...Array(count - 1).fill(AMOUNT_MAX), AMOUNT_MAX - 7], now);
    const exact = await service.app.inject({ method: 'GET', url: '/v1/stats/overview', headers });
    expect(exact.json()).toMatchObject({ credits_in_circulation: 7 });

    const other = await service.projects.createProject({ name: 'Exact' });
    const remainder = BALANCE_MAX - 3 - 9007 * AMOUNT_MAX;
    await insertTransactions(service.db.kysely, other.project.id, 'credit', [...Array(9007).fill(AMOUNT_MAX), remainder], now);
    const below = await service.app.inject({
      method: 'GET',
      url: '/v1/stats/overview',
      headers: { authorization: `Bearer ${other.secretKey}` },
    });
    expect(below.json()).toMatchObject({ credits_in_circulation: BALANCE_MAX - 3 });
  });
});

// Deleting an endpoint deletes its deliveries and their attempts (ON DELETE CASCADE); the webhook
// statistics still count them, folded or not yet folded (stats.fold.ts, foldEndpointAttempts).
describeEachDialect('stats of a deleted webhook endpoint', (dialect) => {
  const test = useTestService(dialect, { env: { WEBHOOK_ALLOW_PRIVATE: '1' } });

  it('keeps the attempts of its deliveries, before and after every fold, counted once', async () => {
    const { service, auth: headers } = test();
    const { app } = service;
    const created = await app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers,
      payload: { url: 'http://127.0.0.1:9/hooks', events: ['*'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const endpointId = created.json<{ id: string }>().id;
    const kept = await app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers,
      payload: { url: 'http://127.0.0.1:9/kept', events: ['*'] },
    });
    const keptId = kept.json<{ id: string }>().id;
    const deliveryOf = async (id: string) => {
      expect((await app.inject({ method: 'POST', url: `/v1/webhooks/${id}/test`, headers })).statusCode).toBe(201);
      const list = await app.inject({ method: 'GET', url: `/v1/webhooks/${id}/deliveries`, headers });
      return list.json<{ data: { id: string }[] }>().data[0]!.id;
    };
    const deleted = await deliveryOf(endpointId);
    const other = await deliveryOf(keptId);
    const attempt = (deliveryId: string, number: number, createdAt: string, statusCode: number, latencyMs: number) => ({
      delivery_id: deliveryId,
      attempt_number: number,
      project_id: test().projectId,
      kind: 'scheduled' as const,
      created_at: createdAt,
      status_code: statusCode,
      latency_ms: latencyMs,
      error: null,
      response_body: null,
    });
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000).toISOString();
    const now = new Date().toISOString();
    await service.db.kysely
      .insertInto('webhook_attempts')
      .values([
        attempt(deleted, 1, twoDaysAgo, 500, 100),
        attempt(deleted, 2, twoDaysAgo, 200, 300),
        attempt(deleted, 3, now, 200, 40),
        attempt(other, 1, now, 503, 60),
      ])
      .execute();
    const stats = async () => {
      const response = await app.inject({ method: 'GET', url: '/v1/stats/webhooks?days=3', headers });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{ data: Record<string, unknown>[] }>().data;
    };
    const before = await stats();
    expect(before[0]).toMatchObject({ attempts: 2, succeeded: 1, latency_ms_avg: 200, latency_ms_max: 300 });
    expect(before[2]).toMatchObject({ attempts: 2, succeeded: 1, latency_ms_avg: 50, latency_ms_max: 60 });
    // The old attempts are folded, today's are not (the fold stays minutes behind the clock).
    expect(await foldStats(service.db, systemClock)).toBe(true);
    expect(await stats()).toEqual(before);

    const removal = await app.inject({ method: 'DELETE', url: `/v1/webhooks/${endpointId}`, headers });
    expect(removal.statusCode, removal.body).toBe(200);
    expect((await service.db.kysely.selectFrom('webhook_attempts').select('delivery_id').execute()).map((row) => row.delivery_id)).toEqual([
      other,
    ]);
    expect(await stats()).toEqual(before);
    await foldStats(service.db, systemClock);
    expect(await stats()).toEqual(before);
    // A fold a day ahead takes today's remaining attempt too, and still counts the deleted ones once.
    await foldStats(service.db, { now: () => new Date(Date.now() + 24 * 60 * 60 * 1000) });
    expect(await stats()).toEqual(before);
  });
});
