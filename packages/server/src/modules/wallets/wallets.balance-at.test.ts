import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { errorCode, expectStatus, schemaErrors, walletsClient, type WalletsClient } from './wallets.fixtures.js';
import { type Balance, BalanceSchema } from './wallets.schemas.js';

const START = Date.parse('2026-03-01T10:00:00.000Z');

/** `GET /v1/wallets/{id}/balance?at=` (docs/api.md section 4): the balance at a past time, from the ledger. */
describeEachDialect('wallet balance at a time', (dialect) => {
  let nowMs = START;
  const current = useTestService(dialect, { serviceOptions: { clock: { now: () => new Date(nowMs) } } });
  let client: WalletsClient;
  let otherProject: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
    const other = await service.projects.createProject({ name: 'Other project' });
    otherProject = await walletsClient(service, { projectId: other.project.id, secretKey: other.secretKey });
  });

  const iso = (ms: number) => new Date(ms).toISOString();
  async function balanceAt(walletId: string, at: string, as = client): Promise<Balance> {
    const response = await as.request('GET', `/v1/wallets/${walletId}/balance?at=${encodeURIComponent(at)}`);
    const balance = expectStatus<Balance>(response, 200);
    expect(schemaErrors(BalanceSchema, balance)).toEqual([]);
    return balance;
  }

  it('answers the balance after every movement made at or before the time, 0 before the first', async () => {
    nowMs = START;
    const a = await client.createWallet();
    const b = await client.createWallet();
    nowMs = START + 1000;
    await client.credit(a.id, 100);
    nowMs = START + 2000;
    await client.debit(a.id, 30);
    nowMs = START + 3000;
    await client.transfer(a.id, b.id, 20);
    await client.credit(a.id, 5); // the same millisecond: both count at START + 3000
    const refused = await client.request('POST', `/v1/wallets/${a.id}/debits`, { amount: 1000 });
    expect(errorCode(refused)).toBe('insufficient_credits');
    nowMs = START + 10_000;

    expect(await balanceAt(a.id, iso(START))).toEqual({ credits: 0, currency: 'USD', at: iso(START) });
    expect((await balanceAt(a.id, iso(START + 999))).credits).toBe(0);
    expect((await balanceAt(a.id, iso(START + 1000))).credits).toBe(100);
    expect((await balanceAt(a.id, iso(START + 1500))).credits).toBe(100);
    expect((await balanceAt(a.id, iso(START + 2000))).credits).toBe(70);
    expect((await balanceAt(a.id, iso(START + 3000))).credits).toBe(55);
    expect((await balanceAt(b.id, iso(START + 2999))).credits).toBe(0);
    expect((await balanceAt(b.id, iso(START + 3000))).credits).toBe(20);
    expect((await balanceAt(a.id, iso(nowMs))).credits).toBe(await client.balance(a.id));
    // Before the wallet existed, and long before: nothing.
    expect((await balanceAt(a.id, '2000-01-01T00:00:00.000Z')).credits).toBe(0);
  });

  it('matches a model of the balance at every time of a long history, ties and batches included', async () => {
    nowMs = START + 100_000;
    const wallet = await client.createWallet();
    const other = await client.createWallet();
    await client.credit(other.id, 1_000_000);
    const model: { at: number; balance: number }[] = [];
    let balance = 0;
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let step = 0; step < 40; step += 1) {
      nowMs += random(3) * 250; // 0 ms apart now and then: movements in the same millisecond
      const amount = 1 + random(50);
      const kind = random(4);
      if (kind === 0 && balance >= amount) {
        await client.debit(wallet.id, amount);
        balance -= amount;
      } else if (kind === 1 && balance >= amount) {
        await client.transfer(wallet.id, other.id, amount);
        balance -= amount;
      } else if (kind === 2) {
        const response = await client.request('POST', '/v1/wallets/batch', {
          operations: [
            { type: 'credit', wallet_id: wallet.id, amount },
            { type: 'transfer', from_wallet_id: other.id, to_wallet_id: wallet.id, amount: 1 },
          ],
        });
        expectStatus(response, 200);
        balance += amount + 1;
      } else {
        await client.credit(wallet.id, amount);
        balance += amount;
      }
      model.push({ at: nowMs, balance });
    }
    nowMs += 1000;
    for (const [index, point] of model.entries()) {
      const last = model.findLast((later) => later.at === point.at);
      expect((await balanceAt(wallet.id, iso(point.at))).credits, `step ${index}`).toBe(last?.balance);
      const before = model.findLast((earlier) => earlier.at < point.at)?.balance ?? 0;
      expect((await balanceAt(wallet.id, iso(point.at - 1))).credits, `just before step ${index}`).toBe(before);
    }
  });

  it('takes any ISO 8601 time and answers it in UTC with milliseconds', async () => {
    nowMs = START + 200_000;
    const wallet = await client.createWallet();
    await client.credit(wallet.id, 42);
    nowMs += 1000;
    const at = new Date(START + 200_000);
    const local = `${iso(at.getTime() + 2 * 3600_000).slice(0, 19)}+02:00`;
    expect(await balanceAt(wallet.id, local)).toEqual({ credits: 42, currency: 'USD', at: iso(at.getTime()) });
    // Without `at` the answer is today's balance, as before.
    const now = expectStatus<Balance>(await client.request('GET', `/v1/wallets/${wallet.id}/balance`), 200);
    expect(now).toEqual({
      credits: 42,
      currency: 'USD',
      available: 42,
      categories: [{ category: 'default', remaining: 42 }],
      debt: 0,
      credit_limit: 0,
    });
  });

  describe('refusals', () => {
    let walletId: string;
    beforeAll(async () => {
      walletId = (await client.createWallet()).id;
    });

    it('refuses a time in the future: its answer could still change', async () => {
      const response = await client.request('GET', `/v1/wallets/${walletId}/balance?at=${iso(nowMs + 60_000)}`);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'parameter_invalid', param: 'at' } });
    });

    it.each(['yesterday', '2026-13-01T00:00:00Z', '', '1700000000'])('refuses at=%j', async (at) => {
      const response = await client.request('GET', `/v1/wallets/${walletId}/balance?at=${encodeURIComponent(at)}`);
      expect(response.statusCode).toBe(400);
      expect(errorCode(response)).toBe('parameter_invalid');
    });

    it('refuses an unknown query parameter', async () => {
      const response = await client.request('GET', `/v1/wallets/${walletId}/balance?when=${iso(START)}`);
      expect(response.statusCode).toBe(400);
      expect(errorCode(response)).toBe('parameter_unknown');
    });

    it("answers 404 for a missing wallet and for another project's wallet", async () => {
      const missing = await client.request('GET', `/v1/wallets/wlt_missing/balance?at=${iso(START)}`);
      expect(missing.statusCode).toBe(404);
      expect(errorCode(missing)).toBe('resource_missing');
      const foreign = await otherProject.request('GET', `/v1/wallets/${walletId}/balance?at=${iso(START)}`);
      expect(foreign.statusCode).toBe(404);
      expect(errorCode(foreign)).toBe('resource_missing');
    });
  });
});
