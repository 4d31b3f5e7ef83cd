import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { bearer, signup, testClock } from '../auth/auth.testing.js';

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code }).toEqual({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

interface SessionBalance {
  balance: { credits: number; currency: string; available: number; categories: { category: string; remaining: number }[] };
  transactions: Array<{ id: string; type: string; amount: number; balance_after: number }>;
}

describeEachDialect('GET /v1/wallet/balance with a session token', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { serviceOptions: { clock }, env: { CORS_ORIGINS: 'https://app.example.com' } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const api = (url: string, payload: object) => call({ method: 'POST', url, headers: ctx().auth, payload });
  const createWallet = async (userId: string, currency = 'USD') => {
    clock.advance(1000);
    const response = await api('/v1/wallets', { user_id: userId, currency });
    expect(response.statusCode).toBe(201);
    return response.json<{ id: string }>().id;
  };
  const balance = (token: string, query = '') => call({ method: 'GET', url: `/v1/wallet/balance${query}`, headers: bearer(token) });

  it("answers the oldest active wallet's {balance: {credits, currency}, transactions: [last 20]}", async () => {
    const account = await signup(call, ctx().secretKey);
    const oldest = await createWallet(account.userId);
    const newer = await createWallet(account.userId);
    for (let credit = 1; credit <= 22; credit += 1) {
      expect((await api(`/v1/wallets/${oldest}/credits`, { amount: credit })).statusCode).toBe(201);
    }
    await api(`/v1/wallets/${newer}/credits`, { amount: 5 });
    const response = await balance(account.token);
    expect(response.statusCode).toBe(200);
    const body = response.json<SessionBalance>();
    expect(Object.keys(body).sort()).toEqual(['balance', 'transactions']);
    expect(body.balance).toEqual({
      credits: (22 * 23) / 2,
      currency: 'USD',
      available: (22 * 23) / 2,
      categories: [{ category: 'default', remaining: (22 * 23) / 2 }],
      debt: 0,
      credit_limit: 0,
    });
    expect(body.transactions).toHaveLength(20);
    expect(body.transactions[0]).toMatchObject({ type: 'credit', amount: 22, balance_after: 253 });

    const picked = await balance(account.token, `?wallet_id=${newer}`);
    expect(picked.json<SessionBalance>()).toMatchObject({ balance: { credits: 5, currency: 'USD' } });
    expect(picked.json<SessionBalance>().transactions).toHaveLength(1);
  });

  it('counts what expired before the expiry job ran: an expired credit is not available, an expired hold holds nothing', async () => {
    const account = await signup(call, ctx().secretKey);
    const id = await createWallet(account.userId);
    const empty = await balance(account.token);
    expect(empty.json<SessionBalance>()).toEqual({
      balance: { credits: 0, currency: 'USD', available: 0, categories: [], debt: 0, credit_limit: 0 },
      transactions: [],
    });
    const expiresAt = new Date(clock.now().getTime() + 60_000).toISOString();
    expect((await api(`/v1/wallets/${id}/credits`, { amount: 40, expires_at: expiresAt })).statusCode).toBe(201);
    expect((await api(`/v1/wallets/${id}/credits`, { amount: 10 })).statusCode).toBe(201);
    expect((await api(`/v1/wallets/${id}/holds`, { amount: 5, expires_in: 30 })).statusCode).toBe(201);
    const categories = [{ category: 'default', remaining: 50 }];
    expect((await balance(account.token)).json<SessionBalance>().balance).toEqual({
      credits: 50,
      currency: 'USD',
      available: 45,
      categories,
      debt: 0,
      credit_limit: 0,
    });
    clock.advance(30_000);
    expect((await balance(account.token)).json<SessionBalance>().balance).toEqual({
      credits: 50,
      currency: 'USD',
      available: 50,
      categories,
      debt: 0,
      credit_limit: 0,
    });
    clock.advance(30_000);
    const after = (await balance(account.token, `?wallet_id=${id}`)).json<SessionBalance>();
    // The expired credit is neither available nor counted in its category before the expiry job removes it.
    expect(after.balance).toEqual({
      credits: 50,
      currency: 'USD',
      available: 10,
      categories: [{ category: 'default', remaining: 10 }],
      debt: 0,
      credit_limit: 0,
    });
    expect(after.transactions.map((transaction) => transaction.amount)).toEqual([10, 40]);
  });

  it('skips frozen wallets when choosing; 404 when the user has no active wallet', async () => {
    const account = await signup(call, ctx().secretKey);
    expectError(await balance(account.token), 404, 'resource_missing');
    const first = await createWallet(account.userId);
    const second = await createWallet(account.userId);
    await api(`/v1/wallets/${second}/credits`, { amount: 7 });
    expect((await api(`/v1/wallets/${first}/freeze`, {})).statusCode).toBe(200);
    expect((await balance(account.token)).json<SessionBalance>().balance.credits).toBe(7);
    expect((await balance(account.token, `?wallet_id=${first}`)).json<SessionBalance>().balance.credits).toBe(0);
  });

  it("takes ?currency=: the user's oldest active wallet in that unit; with wallet_id, the two must agree", async () => {
    const account = await signup(call, ctx().secretKey);
    const dollars = await createWallet(account.userId, 'USD');
    const olderCredits = await createWallet(account.userId, 'CREDITS');
    const newerCredits = await createWallet(account.userId, 'CREDITS');
    await api(`/v1/wallets/${dollars}/credits`, { amount: 3 });
    await api(`/v1/wallets/${olderCredits}/credits`, { amount: 40 });
    await api(`/v1/wallets/${newerCredits}/credits`, { amount: 9 });

    expect((await balance(account.token)).json<SessionBalance>().balance).toMatchObject({ credits: 3, currency: 'USD' });
    const inCredits = (await balance(account.token, '?currency=CREDITS')).json<SessionBalance>();
    expect(inCredits.balance).toEqual({
      credits: 40,
      currency: 'CREDITS',
      available: 40,
      categories: [{ category: 'default', remaining: 40 }],
      debt: 0,
      credit_limit: 0,
    });
    expect(inCredits.transactions.map((transaction) => transaction.amount)).toEqual([40]);
    expect((await balance(account.token, `?wallet_id=${newerCredits}&currency=CREDITS`)).json<SessionBalance>().balance.credits).toBe(9);

    expectError(await balance(account.token, '?currency=GPU_HOURS'), 404, 'resource_missing', 'currency');
    expectError(await balance(account.token, `?wallet_id=${dollars}&currency=CREDITS`), 400, 'parameter_invalid', 'currency');
    for (const unit of ['credits', 'C', 'GPU-HOURS', `A${'B'.repeat(16)}`]) {
      expectError(await balance(account.token, `?currency=${unit}`), 400, 'parameter_invalid', 'currency');
    }
    // A frozen wallet is skipped, as without a unit.
    expect((await api(`/v1/wallets/${olderCredits}/freeze`, {})).statusCode).toBe(200);
    expect((await balance(account.token, '?currency=CREDITS')).json<SessionBalance>().balance.credits).toBe(9);
  });

  it("answers 404 for another user's wallet, and refuses secret keys and dead sessions", async () => {
    const owner = await signup(call, ctx().secretKey);
    const other = await signup(call, ctx().secretKey);
    const wallet = await createWallet(owner.userId);
    expectError(await balance(other.token, `?wallet_id=${wallet}`), 404, 'resource_missing', 'wallet_id');
    expectError(await balance(other.token, '?wallet_id=wlt_0000000000000000000000'), 404, 'resource_missing', 'wallet_id');
    expectError(await call({ method: 'GET', url: '/v1/wallet/balance', headers: ctx().auth }), 403, 'session_token_required');
    await call({ method: 'POST', url: '/v1/auth/logout', headers: bearer(owner.token) });
    expectError(await balance(owner.token), 401, 'session_revoked');
  });

  it('answers browsers from an allowed origin', async () => {
    const preflight = await call({
      method: 'OPTIONS',
      url: '/v1/wallet/balance',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.com');
  });
});
