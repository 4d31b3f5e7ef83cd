import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { AMOUNT_MAX, BALANCE_MAX } from '../wallets/wallets.schemas.js';
import { lastDays } from './stats.service.js';
import { insertTransactions, walletRow } from './stats.fixtures.js';

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
