import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createService, type Service } from '../../main.js';
import { createTestDatabase, describeEachDialect, testConfig, type TestDatabase } from '../../test/database.js';
import { startOtlpReceiver } from '../../test/otlp-receiver.js';
import { useTestService } from '../../test/service.js';
import { errorCode, ledgerViolations, SOUND_LEDGER, walletsClient, type WalletsClient } from '../wallets/wallets.fixtures.js';
import type { Batch, Transaction } from '../wallets/wallets.schemas.js';

describeEachDialect('ledger under concurrency', (dialect) => {
  const current = useTestService(dialect);
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  it('200 concurrent debits of 1 on a wallet holding 100: exactly 100 succeed, 100 get insufficient_credits', async () => {
    const wallet = await client.createWallet();
    await client.credit(wallet.id, 100);
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 1 }, i % 2 === 0 ? { 'idempotency-key': `debit-${i}` } : {}),
      ),
    );
    const outcomes = responses.map((response) => (response.statusCode === 201 ? 'debited' : errorCode(response)));
    expect(outcomes.filter((outcome) => outcome === 'debited')).toHaveLength(100);
    expect(outcomes.filter((outcome) => outcome === 'insufficient_credits')).toHaveLength(100);
    expect(await client.balance(wallet.id)).toBe(0);
    const balancesAfter = responses
      .filter((response) => response.statusCode === 201)
      .map((response) => response.json<{ balance_after: number }>().balance_after);
    expect(new Set(balancesAfter).size).toBe(100); // every debit saw its own balance: no lost update
    expect(await ledgerViolations(current().service.db, current().projectId)).toEqual(SOUND_LEDGER);
  });

  it('transfers in both directions between two wallets at once: none deadlocks, none is lost', async () => {
    // A deadlock is invisible in the answers: PostgreSQL breaks it after deadlock_timeout and the
    // transaction runs again (db/transaction.ts). Each run again is on its trace: the transaction's
    // span carries `svc.db.attempts`. So a second instance of the service on the same database
    // starts traces (one tracer per process: the first instance's spans go out with them), the
    // transfers go through both instances (each groups its own into a few flushes,
    // modules/ledger/group-commit.ts), and no transaction may have run twice.
    const otlp = await startOtlpReceiver();
    const traced = await createService({
      ...current().service.config,
      tracing: { endpoint: otlp.endpoint, protocol: 'http/json', serviceName: 'svc-concurrency-test', scheduleDelayMs: 20 },
    });
    let tracedOpen = true;
    const closeTraced = async () => {
      if (tracedOpen) await traced.close();
      tracedOpen = false;
    };
    try {
      const tracedClient = await walletsClient(traced, { projectId: current().projectId, secretKey: current().secretKey });
      const left = await tracedClient.createWallet();
      const right = await tracedClient.createWallet();
      await tracedClient.credit(left.id, 100);
      await tracedClient.credit(right.id, 100);
      const responses = await Promise.all(
        Array.from({ length: 100 }, (_, i) => {
          const [from, to] = i % 2 === 0 ? [left, right] : [right, left];
          return (Math.floor(i / 2) % 2 === 0 ? client : tracedClient).request('POST', '/v1/wallets/transfer', {
            from_wallet_id: from.id,
            to_wallet_id: to.id,
            amount: 1 + (i % 3),
          });
        }),
      );
      const failures = responses.filter((response) => response.statusCode !== 201).map((response) => response.body);
      expect(failures).toEqual([]);
      // Closing the traced instance sends every span still waiting, both instances' transactions
      // among them: they ended before their answers came back.
      await closeTraced();
      const spans = otlp.spans();
      const transactions = spans.filter((span) => span.name === 'db.transaction');
      expect(transactions.length).toBeGreaterThan(0);
      expect(transactions.filter((span) => span.attributes['svc.db.attempts'] !== undefined)).toEqual([]);
      const moved = responses.reduce((net, _response, i) => net + (i % 2 === 0 ? -1 : 1) * (1 + (i % 3)), 0);
      expect([await client.balance(left.id), await client.balance(right.id)]).toEqual([100 + moved, 100 - moved]);
      expect(await ledgerViolations(current().service.db, current().projectId)).toEqual(SOUND_LEDGER);
    } finally {
      await closeTraced();
      await otlp.close();
    }
  });

  it('credits of two projects at once, one naming a wallet of the other project, never fail each other (a batch keyed by wallet id alone would mix them)', async () => {
    const { service } = current();
    const other = await service.projects.createProject({ name: 'Another tenant' });
    const otherClient = await walletsClient(service, { projectId: other.project.id, secretKey: other.secretKey });
    const mine = await client.createWallet();
    const theirs = await otherClient.createWallet();
    // Interleaved in one turn of the event loop, so that they land in the same group commit
    // (SQLite) or the same wallet batch (PostgreSQL).
    const requests = Array.from({ length: 90 }, (_, i) => {
      if (i % 3 === 0) return { kind: 'mine', response: client.request('POST', `/v1/wallets/${mine.id}/credits`, { amount: 2 }) };
      if (i % 3 === 1) return { kind: 'theirs', response: otherClient.request('POST', `/v1/wallets/${theirs.id}/credits`, { amount: 5 }) };
      // The other project names this project's wallet: 404 for it, and nothing else changes.
      return { kind: 'stray', response: otherClient.request('POST', `/v1/wallets/${mine.id}/credits`, { amount: 7 }) };
    });
    const responses = await Promise.all(requests.map(async (request) => ({ kind: request.kind, response: await request.response })));
    const outcomes = (kind: string) =>
      responses
        .filter((entry) => entry.kind === kind)
        .map((entry) => (entry.response.statusCode === 201 ? 201 : errorCode(entry.response)));
    expect(outcomes('mine')).toEqual(Array(30).fill(201));
    expect(outcomes('theirs')).toEqual(Array(30).fill(201));
    expect(outcomes('stray')).toEqual(Array(30).fill('resource_missing'));
    expect(await client.balance(mine.id)).toBe(60);
    expect(await otherClient.balance(theirs.id)).toBe(150);
    expect(await ledgerViolations(service.db, current().projectId)).toEqual(SOUND_LEDGER);
    expect(await ledgerViolations(service.db, other.project.id)).toEqual(SOUND_LEDGER);
  });

  it('a ring of transfers among four wallets, with credits and debits beside it, keeps the ledger sound', async () => {
    const wallets = [await client.createWallet(), await client.createWallet(), await client.createWallet(), await client.createWallet()];
    for (const wallet of wallets) await client.credit(wallet.id, 20);
    const responses = await Promise.all(
      Array.from({ length: 120 }, (_, i) => {
        const wallet = wallets[i % 4]!;
        const next = wallets[(i + 1 + (i % 3)) % 4]!;
        if (i % 5 === 0) return client.request('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 3 });
        if (i % 5 === 1) return client.request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 4 });
        return client.request('POST', '/v1/wallets/transfer', { from_wallet_id: wallet.id, to_wallet_id: next.id, amount: 2 });
      }),
    );
    const unexpected = responses.filter((response) => response.statusCode !== 201 && errorCode(response) !== 'insufficient_credits');
    expect(unexpected.map((response) => response.body)).toEqual([]);
    expect(await ledgerViolations(current().service.db, current().projectId)).toEqual(SOUND_LEDGER);
  });

  it('one idempotency key in flight in single requests and batches at once: applied once, every answer its transaction', async () => {
    await duplicateKeysInFlight([client], current().service.db, current().projectId);
  });
});

/**
 * One key in flight at once in single requests and inside batches (and, with two clients, on two
 * instances): applied once, and every request answers with its transaction.
 */
async function duplicateKeysInFlight(clients: readonly WalletsClient[], db: Service['db'], projectId: string): Promise<void> {
  const [first] = clients as [WalletsClient];
  const wallet = await first.createWallet();
  const keyed = { amount: 5, idempotency_key: 'in-flight' };
  const responses = await Promise.all(
    Array.from({ length: 40 }, (_, i) => {
      const via = clients[i % clients.length] ?? first;
      if (i % 2 === 0) return via.request('POST', `/v1/wallets/${wallet.id}/credits`, keyed);
      return via.request('POST', '/v1/wallets/batch', {
        operations: [
          { type: 'credit', wallet_id: wallet.id, amount: 1 },
          { type: 'credit', wallet_id: wallet.id, ...keyed },
        ],
        atomic: i % 4 === 1,
      });
    }),
  );
  const ids = responses.map((response, i) => {
    if (i % 2 === 0) {
      expect(response.statusCode, response.body).toBe(201);
      return response.json<Transaction>().id;
    }
    expect([200, 201], response.body).toContain(response.statusCode);
    const results = response.json<Batch>().results;
    expect(results.map((result) => result.status)).toEqual([201, 201]);
    return results[1]?.transaction?.id;
  });
  expect(new Set(ids).size).toBe(1);
  expect(await first.balance(wallet.id)).toBe(5 + 20);
  expect(await ledgerViolations(db, projectId)).toEqual(SOUND_LEDGER);
}

describe.skipIf(inject('postgresAdminUrl') === '')('ledger across two service instances on one PostgreSQL', () => {
  let database: TestDatabase | undefined;
  const services: Service[] = [];
  const clients: WalletsClient[] = [];
  let projectId = '';

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    const config = testConfig(database.url, { RATE_LIMIT_KEY_PER_SECOND: '0', RATE_LIMIT_IP_PER_SECOND: '0' });
    services.push(await createService(config), await createService(config));
    const [first, second] = services as [Service, Service];
    const { project, secretKey } = await first.projects.createProject({ name: 'Two nodes' });
    projectId = project.id;
    clients.push(await walletsClient(first, { projectId, secretKey }), await walletsClient(second, { projectId, secretKey }));
  });

  afterAll(async () => {
    for (const service of services) await service.close();
    await database?.drop();
  });

  it('200 concurrent debits split over both instances: exactly 100 succeed; transfers both ways do not deadlock', async () => {
    const [first, second] = clients as [WalletsClient, WalletsClient];
    const wallet = await first.createWallet();
    await first.credit(wallet.id, 100);
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (i % 2 === 0 ? first : second).request('POST', `/v1/wallets/${wallet.id}/debits`, { amount: 1 }),
      ),
    );
    expect(responses.filter((response) => response.statusCode === 201)).toHaveLength(100);
    expect(responses.filter((response) => errorCode(response) === 'insufficient_credits')).toHaveLength(100);
    expect(await second.balance(wallet.id)).toBe(0);

    const left = await first.createWallet();
    const right = await second.createWallet();
    await first.credit(left.id, 50);
    await second.credit(right.id, 50);
    const transfers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => {
        // Request i and i + 50 are twins (same key, same body), sent to different instances.
        const twin = i % 50;
        return (i < 50 ? first : second).request('POST', '/v1/wallets/transfer', {
          from_wallet_id: twin % 2 === 0 ? left.id : right.id,
          to_wallet_id: twin % 2 === 0 ? right.id : left.id,
          amount: 1,
          idempotency_key: `two-nodes-${twin}`,
        });
      }),
    );
    // Keys repeat once across the two instances: each is applied once, the twin replays or is in use.
    const outcomes = transfers.map((response) => (response.statusCode === 201 ? 'ok' : errorCode(response)));
    expect(outcomes.filter((outcome) => outcome !== 'ok' && outcome !== 'idempotency_key_in_use')).toEqual([]);
    expect((await first.balance(left.id)) + (await first.balance(right.id))).toBe(100);
    expect(await ledgerViolations(services[0]!.db, projectId)).toEqual(SOUND_LEDGER);
  });

  // The credit statement claims its key with a plain INSERT: of two twins racing on two processes,
  // the second must wait for the first, fail on the key and replay its answer, never apply twice.
  it('keyed credits sent to both instances at once: each key applied once, both twins answer with its transaction', async () => {
    const [first, second] = clients as [WalletsClient, WalletsClient];
    const wallet = await first.createWallet();
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        (i < 50 ? first : second).request('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 3, idempotency_key: `twin-${i % 50}` }),
      ),
    );
    expect(responses.map((response) => response.statusCode)).toEqual(Array(100).fill(201));
    for (let twin = 0; twin < 50; twin += 1) {
      const pair = [responses[twin], responses[twin + 50]].map((response) => response?.json<Transaction>().id);
      expect(pair[0]).toBe(pair[1]);
    }
    expect(responses.filter((response) => response.headers['idempotent-replayed'] === 'true')).toHaveLength(50);
    expect(await second.balance(wallet.id)).toBe(150);
    expect(await ledgerViolations(services[0]!.db, projectId)).toEqual(SOUND_LEDGER);
  });

  it('one idempotency key in flight in single requests and batches on both instances: applied once', async () => {
    await duplicateKeysInFlight(clients, services[0]!.db, projectId);
  });
});
