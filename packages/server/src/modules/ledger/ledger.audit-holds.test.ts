import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { manualClock } from '../../test/webhook-receiver.js';
import type { AuditEntry, AuditList } from '../audit/audit.schemas.js';
import { settleExpired } from '../wallets/holds.service.js';
import type { Hold } from './holds.schemas.js';
import { expectStatus, walletsClient, type WalletsClient } from '../wallets/wallets.fixtures.js';
import type { Transaction } from '../wallets/wallets.schemas.js';

/**
 * Holds and money movements in the audit log, read from the ledger with the end user's address and
 * agent (docs/adr/0019-audit-reads-the-ledger.md; docs/api.md, "Audit log").
 */
describeEachDialect('audit log of holds and movements', (dialect) => {
  const clock = manualClock();
  const current = useTestService(dialect, { serviceOptions: { clock } });
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  const endUser = (n: number) => ({ 'x-end-user-ip': `203.0.113.${n}`, 'x-end-user-agent': `agent/${n}` });
  const log = async (query: string) => expectStatus<AuditList>(await client.request('GET', `/v1/audit-logs?${query}`), 200);
  const hold = async (walletId: string, body: Record<string, unknown>, headers: Record<string, string>) =>
    expectStatus<Hold>(await client.request('POST', `/v1/wallets/${walletId}/holds`, body, headers), 201);

  it('shows a credit with the end user IP and user agent of its request', async () => {
    const { id } = await client.createWallet();
    const credit = expectStatus<Transaction>(await client.request('POST', `/v1/wallets/${id}/credits`, { amount: 70 }, endUser(1)), 201);
    const entries = (await log(`resource_id=${id}&action=wallet.credit`)).data;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'wallet.credit',
      ip: '203.0.113.1',
      user_agent: 'agent/1',
      request_id: credit.request_id,
      resource: { type: 'wallet', id },
      changes: { transaction_id: credit.id, amount: 70, balance_before: 0, balance_after: 70 },
    });
    // Without the headers, the connection's own address (the test client's) and no agent header.
    await client.request('POST', `/v1/wallets/${id}/debits`, { amount: 5 });
    const [debit] = (await log(`resource_id=${id}&action=wallet.debit`)).data;
    expect(debit?.ip).not.toBe('203.0.113.1');
    expect(debit?.user_agent).not.toBe('agent/1');
  });

  it("shows each of a hold's events (created, captured, voided, expired) with who ended it and from where", async () => {
    const { id } = await client.createWallet();
    await client.credit(id, 100);
    const captured = await hold(id, { amount: 30 }, endUser(2));
    const voided = await hold(id, { amount: 20 }, endUser(3));
    const expiring = await hold(id, { amount: 10, expires_in: 10 }, endUser(4));
    const capture = expectStatus<Hold>(await client.request('POST', `/v1/holds/${captured.id}/capture`, { amount: 25 }, endUser(5)), 200);
    expectStatus<Hold>(await client.request('POST', `/v1/holds/${voided.id}/void`, undefined, endUser(6)), 200);
    clock.advance(10_000);
    await settleExpired({ db: current().service.db, clock, ledger: current().service.ledger });

    const entries = (await log(`resource_id=${id}&limit=100`)).data;
    const of = (action: string, holdId: string) => entries.find((entry) => entry.action === action && entry.changes['hold_id'] === holdId);
    expect(of('wallet.hold.created', captured.id)).toMatchObject({
      ip: '203.0.113.2',
      user_agent: 'agent/2',
      actor: { type: 'secret_key' },
      outcome: 'success',
      resource: { type: 'wallet', id },
      changes: { amount: 30, expires_at: captured.expires_at },
    });
    expect(of('wallet.hold.created', voided.id)).toMatchObject({ ip: '203.0.113.3' });
    expect(of('wallet.hold.created', expiring.id)).toMatchObject({ ip: '203.0.113.4' });
    expect(of('wallet.hold.captured', captured.id)).toMatchObject({
      ip: '203.0.113.5',
      user_agent: 'agent/5',
      changes: { amount: 30, captured_amount: 25, transaction_id: capture.transaction_id },
    });
    expect(of('wallet.hold.voided', voided.id)).toMatchObject({ ip: '203.0.113.6', user_agent: 'agent/6', actor: { type: 'secret_key' } });
    expect(of('wallet.hold.expired', expiring.id)).toMatchObject({ ip: null, user_agent: null, actor: { type: 'system' } });
    // The capture's money movement is a debit of the same request.
    const debit = entries.find((entry) => entry.changes['transaction_id'] === capture.transaction_id && entry.action === 'wallet.debit');
    expect(debit).toMatchObject({ ip: '203.0.113.5', user_agent: 'agent/5', changes: { amount: 25, balance_after: 75 } });
    expect(entries.filter((entry) => entry.action.startsWith('wallet.hold.'))).toHaveLength(6);

    // Each entry is fetched by its id, filtered by its action, and pages like any other.
    const voidEntry = of('wallet.hold.voided', voided.id);
    expect(expectStatus<AuditEntry>(await client.request('GET', `/v1/audit-logs/${voidEntry?.id ?? ''}`), 200)).toEqual(voidEntry);
    expect((await log(`resource_id=${id}&action=wallet.hold.expired`)).data.map((entry) => entry.changes['hold_id'])).toEqual([
      expiring.id,
    ]);
    const paged: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await log(`resource_id=${id}&limit=2${after === undefined ? '' : `&starting_after=${after}`}`);
      paged.push(...page.data.map((entry) => entry.id));
      after = page.data[page.data.length - 1]?.id;
      if (!page.has_more) break;
    }
    expect(paged).toEqual(entries.map((entry) => entry.id));
    const exported = (await client.request('GET', '/v1/audit-logs/export')).body
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as AuditEntry).id);
    expect(exported.filter((entryId) => paged.includes(entryId))).toEqual([...paged].reverse());
  });
});
