import { type ChildProcess, execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Db } from '../../db/database.js';
import { createService, type Service } from '../../main.js';
import { systemClock } from '../../lib/clock.js';
import { randomBase62 } from '../../lib/ids.js';
import { createTestDatabase, describeEachDialect, testConfig, type TestDatabase } from '../../test/database.js';
import { SVC, startServeProcess } from '../../test/serve-process.js';
import { useTestService } from '../../test/service.js';
import { verifyLedger } from './ledger.verify.js';
import {
  catchUp,
  category,
  categoryFields,
  expectCategoriesModel,
  expectPeriodsCreditedOnce,
  expectRestrictedDrawsKept,
  makeRecurringGrants,
  modelCategories,
  type Movement,
  recurringCredits,
  recurringSpec,
  restriction,
} from './ledger.property.fixtures.js';
import { grantDuePeriods } from '../wallets/recurring-grants.service.js';
import {
  createUser,
  errorCode,
  expectStatus,
  ledgerViolations,
  modelBalances,
  SOUND_LEDGER,
  walletsClient,
  type WalletsClient,
  walletsWithBalances,
} from '../wallets/wallets.fixtures.js';
import type { Batch, Transaction, Transfer, Wallet } from '../wallets/wallets.schemas.js';

/**
 * Random requests sent all at once: single credits, debits and transfers mixed with batches,
 * atomic and not, with keys that repeat (same movement) and conflict (same key, another movement)
 * within a batch, across batches and between batches and single routes, credits of random
 * categories and draws restricted to random categories (docs/adr/0021-categories.md), while the
 * recurring-grants job credits the begun periods of random recurring grants
 * (docs/adr/0022-recurring-grants.md); then every keyed movement once more on its single route.
 * Checked against a model built only from the answers, and then by `svc ledger verify`'s checks. On
 * PostgreSQL also across two service instances, and two `svc serve` processes, on one database.
 */

const WALLETS = 4; // wallets 0-2 hold USD, wallet 3 EUR
const KEYS = 5;

type Op =
  | {
      readonly type: 'credit';
      readonly wallet: number;
      readonly amount: number;
      readonly key: number | null;
      readonly category: string | null;
    }
  | {
      readonly type: 'debit';
      readonly wallet: number;
      readonly amount: number;
      readonly key: number | null;
      readonly categories: readonly string[] | null;
    }
  | {
      readonly type: 'transfer';
      readonly from: number;
      readonly to: number;
      readonly amount: number;
      readonly key: number | null;
      readonly categories: readonly string[] | null;
    };
type Request = { readonly single: Op } | { readonly batch: readonly Op[]; readonly atomic: boolean };

const key = fc.option(fc.integer({ min: 0, max: KEYS - 1 }), { freq: 2 });
const amount = fc.integer({ min: 1, max: 40 });
const wallet = fc.integer({ min: 0, max: WALLETS - 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ type: fc.constant('credit' as const), wallet, amount, key, category }),
  fc.record({ type: fc.constant('debit' as const), wallet, amount, key, categories: restriction }),
  fc.record({ type: fc.constant('transfer' as const), from: wallet, to: wallet, amount, key, categories: restriction }),
);
const request: fc.Arbitrary<Request> = fc.oneof(
  fc.record({ single: op }),
  fc.record({ batch: fc.array(op, { minLength: 1, maxLength: 6 }), atomic: fc.boolean() }),
);

const REFUSALS = new Set(['insufficient_credits', 'same_wallet', 'currency_mismatch', 'idempotency_key_reused']);

/**
 * The property, with requests spread over `clients`, while each of `jobs` (a service's
 * recurring-grants job, `grantDuePeriods`) runs until nothing is due.
 */
async function checkProperty(
  clients: readonly WalletsClient[],
  db: Db,
  projectId: string,
  jobs: readonly (() => Promise<number>)[],
  afterRun: () => Promise<void> = async () => undefined,
): Promise<void> {
  const [client] = clients as [WalletsClient];
  await fc.assert(
    fc.asyncProperty(
      fc.array(request, { minLength: 1, maxLength: 12 }),
      fc.array(fc.integer({ min: 0, max: 60 }), { minLength: WALLETS, maxLength: WALLETS }),
      // Some wallets may go below 0 (docs/adr/0023-credit-limits.md): atomic batches must undo debt too.
      fc.array(fc.constantFrom(0, 0, 30), { minLength: WALLETS, maxLength: WALLETS }),
      fc.array(recurringSpec(WALLETS), { maxLength: 3 }),
      async (requests, initial, creditLimits, recurring) => {
        const run = randomBase62(8);
        const wallets = await walletsWithBalances(client, initial, creditLimits);
        const recurringGrants = await makeRecurringGrants(client, wallets, recurring);
        const operation = (o: Op) => {
          const keyed = {
            ...(o.key === null ? {} : { idempotency_key: `${run}-${o.key}` }),
            ...(o.type === 'credit' ? categoryFields(o.category, null) : categoryFields(null, o.categories)),
          };
          return o.type === 'transfer'
            ? { type: o.type, from_wallet_id: wallets[o.from], to_wallet_id: wallets[o.to], amount: o.amount, ...keyed }
            : { type: o.type, wallet_id: wallets[o.wallet], amount: o.amount, ...keyed };
        };
        const single = (via: WalletsClient, o: Op): Promise<LightMyRequestResponse> => {
          const { type, ...body } = operation(o);
          if (type === 'transfer') return via.request('POST', '/v1/wallets/transfer', body);
          const { wallet_id: walletId, ...movement } = body as { wallet_id: string };
          return via.request('POST', `/v1/wallets/${walletId}/${type === 'credit' ? 'credits' : 'debits'}`, movement);
        };
        const [responses] = await Promise.all([
          Promise.all(
            requests.map((item, index) => {
              const via = clients[index % clients.length] ?? client;
              if ('single' in item) return single(via, item.single);
              return via.request('POST', '/v1/wallets/batch', { operations: item.batch.map(operation), atomic: item.atomic });
            }),
          ),
          ...jobs.map(catchUp),
        ]);
        const keyedOps = requests.flatMap((item) => ('single' in item ? [item.single] : item.batch)).filter((o) => o.key !== null);
        const retries: LightMyRequestResponse[] = [];
        for (const o of keyedOps) retries.push(await single(client, o));

        // Every answer is a success or a known refusal, and every movement applied is collected.
        const applied = new Map<string, Movement>();
        const keep = (movement: Movement | undefined) => movement !== undefined && applied.set(movement.id, movement);
        for (const response of [...responses, ...retries]) {
          if (response.statusCode === 201 && response.json<{ object: string }>().object !== 'batch') keep(response.json<Movement>());
          else if (response.statusCode === 200 || response.statusCode === 201) {
            for (const result of response.json<Batch>().results) {
              if (result.status === 201) keep(result.transaction ?? result.transfer);
              else expect(REFUSALS, JSON.stringify(result)).toContain(result.error?.code);
            }
          } else expect(REFUSALS, response.body).toContain(errorCode(response));
        }
        // One key, one transaction.
        const perKey = new Map<string, string>();
        for (const movement of applied.values()) {
          if (movement.idempotency_key === null) continue;
          const scope = movement.object === 'transfer' ? '' : movement.wallet_id;
          const name = `${scope}/${movement.idempotency_key}`;
          expect(perKey.get(name) ?? movement.id).toBe(movement.id);
          perKey.set(name, movement.id);
        }
        // Each begun period of each recurring grant credited once, as the wallets' histories list them.
        const periodCredits = await recurringCredits(client, wallets);
        await expectPeriodsCreditedOnce(db, projectId, recurringGrants, periodCredits);
        for (const credit of periodCredits) keep(credit);
        // The model: the start balances plus every distinct movement the answers reported, by category too.
        const model = modelBalances(wallets, initial, applied.values());
        expect(await Promise.all(wallets.map((id) => client.balance(id)))).toEqual(model);
        expectRestrictedDrawsKept(applied.values());
        await expectCategoriesModel(client, wallets, modelCategories(wallets, initial, applied.values()));
        expect(await ledgerViolations(db, projectId)).toEqual(SOUND_LEDGER);
        expect((await verifyLedger(db, { projectId })).sound).toBe(true);
        await afterRun();
      },
    ),
    { numRuns: 15 },
  );
}

describeEachDialect('ledger batches property', (dialect) => {
  const current = useTestService(dialect, { env: { LOG_LEVEL: 'error' } });
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  it('random batches, atomic and not, mixed with single requests, categories, recurring grants and repeated or conflicting keys, match the model', async () => {
    const { service, projectId } = current();
    const job = () => grantDuePeriods({ db: service.db, clock: systemClock, ledger: service.ledger });
    await checkProperty([client], service.db, projectId, [job]);
  }, 120_000);
});

describe.skipIf(inject('postgresAdminUrl') === '')('ledger batches property across two service instances on one PostgreSQL', () => {
  let database: TestDatabase | undefined;
  const services: Service[] = [];
  const clients: WalletsClient[] = [];
  let projectId = '';

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    const config = testConfig(database.url, { RATE_LIMIT_KEY_PER_SECOND: '0', RATE_LIMIT_IP_PER_SECOND: '0', LOG_LEVEL: 'error' });
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

  it('the same property with requests spread over both instances', async () => {
    // Both instances run the recurring-grants job at once, as two processes running jobs would.
    const jobs = services.map((service) => () => grantDuePeriods({ db: service.db, clock: systemClock, ledger: service.ledger }));
    await checkProperty(clients, services[0]!.db, projectId, jobs);
  }, 120_000);
});

/**
 * A WalletsClient over real HTTP, to a `svc serve` in another process. `request` answers with the
 * parts of an injected response the property reads.
 */
function httpWalletsClient(origin: string, secretKey: string, userId: string): WalletsClient {
  const request: WalletsClient['request'] = async (method, url, payload, headers = {}) => {
    const response = await fetch(`${origin}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${secretKey}`,
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = await response.text();
    return {
      statusCode: response.status,
      body,
      headers: { 'request-id': response.headers.get('request-id') ?? undefined },
      json: () => JSON.parse(body) as unknown,
    } as unknown as LightMyRequestResponse;
  };
  const client: WalletsClient = {
    userId,
    request,
    async createWallet(body = {}) {
      return expectStatus<Wallet>(await request('POST', '/v1/wallets', { user_id: userId, currency: 'USD', ...body }), 201);
    },
    async credit(walletId, amount, body = {}) {
      return expectStatus<Transaction>(await request('POST', `/v1/wallets/${walletId}/credits`, { amount, ...body }), 201);
    },
    async debit(walletId, amount, body = {}) {
      return expectStatus<Transaction>(await request('POST', `/v1/wallets/${walletId}/debits`, { amount, ...body }), 201);
    },
    async transfer(fromWalletId, toWalletId, amount, body = {}) {
      const response = await request('POST', '/v1/wallets/transfer', {
        from_wallet_id: fromWalletId,
        to_wallet_id: toWalletId,
        amount,
        ...body,
      });
      return expectStatus<Transfer>(response, 201);
    },
    async balance(walletId) {
      return expectStatus<{ credits: number }>(await request('GET', `/v1/wallets/${walletId}/balance`), 200).credits;
    },
  };
  return client;
}

describe.skipIf(inject('postgresAdminUrl') === '')('ledger batches property across two OS processes on one PostgreSQL', () => {
  let database: TestDatabase | undefined;
  let setup: Service | undefined;
  const children: ChildProcess[] = [];
  const clients: WalletsClient[] = [];
  let projectId = '';
  let env: Record<string, string> = {};

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    env = {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      NODE_ENV: 'test',
      DATA_DIR: tmpdir(),
      DATABASE_URL: database.url,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      RATE_LIMIT_KEY_PER_SECOND: '0',
      RATE_LIMIT_IP_PER_SECOND: '0',
    };
    // This process migrates the database and makes the project; the two servers only serve it.
    setup = await createService(testConfig(database.url, { LOG_LEVEL: 'error' }));
    const { project, secretKey } = await setup.projects.createProject({ name: 'Two processes' });
    projectId = project.id;
    const userId = await createUser(setup, projectId);
    for (const server of await Promise.all([startServeProcess(env), startServeProcess(env)])) {
      children.push(server.child);
      clients.push(httpWalletsClient(server.origin, secretKey, userId));
    }
  }, 90_000);

  afterAll(async () => {
    for (const child of children) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await setup?.close();
    await database?.drop();
  });

  it('the same property with requests spread over two svc serve processes, and svc ledger verify passing after every run', async () => {
    const verify = async () => {
      const { stdout } = await promisify(execFile)(process.execPath, [SVC, 'ledger', 'verify', '--project', projectId], {
        env: { ...env, LOG_LEVEL: 'silent' },
        timeout: 30_000,
      });
      expect(JSON.parse(stdout)).toMatchObject({ sound: true });
    };
    // The two servers run the recurring-grants job every second; this process runs it too, until
    // nothing is due, so every begun period is credited when the checks read them.
    const job = () => grantDuePeriods({ db: setup!.db, clock: systemClock, ledger: setup!.ledger });
    await checkProperty(clients, setup!.db, projectId, [job], verify);
  }, 300_000);
});
