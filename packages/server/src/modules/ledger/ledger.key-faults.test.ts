import { setTimeout as sleep } from 'node:timers/promises';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Dialect } from '../../db/database.js';
import { SqliteDriver } from '../../db/sqlite-driver.js';
import type { Clock } from '../../lib/clock.js';
import { randomBase62 } from '../../lib/ids.js';
import { createService, type Service } from '../../main.js';
import { createTestDatabase, describeEachDialect, type TestDatabase, testConfig } from '../../test/database.js';
import { createUser, walletsClient } from '../wallets/wallets.fixtures.js';

/**
 * The ways a request's key and its change could come apart without a crash
 * (docs/adr/0004-idempotency.md): a wait longer than any lease the key could have had, the
 * database connection lost at any point of a request (PostgreSQL), SQLite's write lock held by
 * another process past `busy_timeout`. In none is anything applied twice.
 */

/** A clock the test moves by hand, starting at the real time. */
function movableClock(): Clock & { advance(milliseconds: number): void } {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (milliseconds) => void (offset += milliseconds) };
}

function useKeyedService(dialect: Dialect) {
  const clock = movableClock();
  const state = { database: undefined as TestDatabase | undefined, service: undefined as Service | undefined, secretKey: '', wallet: '' };
  beforeAll(async () => {
    state.database = await createTestDatabase(dialect);
    state.service = await createService(
      testConfig(state.database.url, { RATE_LIMIT_KEY_PER_SECOND: '0', RATE_LIMIT_IP_PER_SECOND: '0', LOG_LEVEL: 'fatal' }),
      { clock },
    );
    const { project, secretKey } = await state.service.projects.createProject({ name: 'Faults' });
    state.secretKey = secretKey;
    const userId = await createUser(state.service, project.id);
    const client = await walletsClient(state.service, { projectId: project.id, secretKey });
    state.wallet = (await client.createWallet({ user_id: userId })).id;
  });
  afterAll(async () => {
    await state.service?.close();
    await state.database?.drop();
  });
  const batch = (key: string, amount: number): Promise<LightMyRequestResponse> =>
    state.service!.app.inject({
      method: 'POST',
      url: '/v1/wallets/batch',
      headers: { authorization: `Bearer ${state.secretKey}`, 'idempotency-key': key },
      payload: { operations: [1, 2, 3].map(() => ({ type: 'credit', wallet_id: state.wallet, amount })) },
    });
  const balance = async (): Promise<number> => {
    const response = await state.service!.app.inject({
      method: 'GET',
      url: `/v1/wallets/${state.wallet}/balance`,
      headers: { authorization: `Bearer ${state.secretKey}` },
    });
    return response.json<{ credits: number }>().credits;
  };
  return { clock, state, batch, balance };
}

/** Holds the database's write lock (SQLite) or the wallet's row lock (PostgreSQL) from another connection until released. */
async function holdLock(database: TestDatabase, walletId: string): Promise<() => Promise<void>> {
  if (database.dialect === 'sqlite') {
    const other = new SqliteDriver(database.url.slice('sqlite:'.length));
    other.pragma('busy_timeout = 5000');
    other.exec('begin immediate');
    return async () => {
      other.exec('rollback');
      other.close();
    };
  }
  const other = new pg.Client({ connectionString: database.url });
  await other.connect();
  await other.query('begin');
  await other.query('select id from wallets where id = $1 for update', [walletId]);
  return async () => {
    await other.query('rollback');
    await other.end();
  };
}

describeEachDialect('an idempotency key and its change, without a crash', (dialect) => {
  const { clock, state, batch, balance } = useKeyedService(dialect);

  it('keeps a key in use through a lock wait longer than any lease, and applies it once', async () => {
    const before = await balance();
    const release = await holdLock(state.database!, state.wallet);
    const key = `wait-${randomBase62(8)}`;
    const first = batch(key, 10);
    await sleep(300);
    // Ten minutes later by the service's clock, the first request is still waiting on the lock.
    clock.advance(10 * 60_000);
    const second = await batch(key, 10);
    expect(second.statusCode, second.body).toBe(409);
    expect(second.json<{ error: { code: string } }>().error.code).toBe('idempotency_key_in_use');
    await release();
    const answered = await first;
    expect(answered.statusCode, answered.body).toBe(200);
    const replay = await batch(key, 10);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(answered.body);
    expect(await balance()).toBe(before + 30);
  });
});

describe("an idempotency key and its change, with SQLite's write lock held by another process [sqlite]", () => {
  const { state, batch, balance } = useKeyedService('sqlite');

  it('answers 503 when another process holds the write lock past busy_timeout, and applies the retry once', async () => {
    const before = await balance();
    const release = await holdLock(state.database!, state.wallet);
    const key = `busy-${randomBase62(8)}`;
    let refused: LightMyRequestResponse;
    try {
      refused = await batch(key, 7);
    } finally {
      await release();
    }
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.json<{ error: { code: string } }>().error.code).toBe('service_unavailable');
    const retried = await batch(key, 7);
    expect(retried.statusCode, retried.body).toBe(200);
    expect((await batch(key, 7)).headers['idempotent-replayed']).toBe('true');
    expect(await balance()).toBe(before + 21);
  }, 30_000);
});

describe.skipIf(inject('postgresAdminUrl') === '')(
  'an idempotency key and its change, with the connection lost at any point [postgres]',
  () => {
    const { state, batch, balance } = useKeyedService('postgres');

    it('applies every keyed batch once while the service loses its connections again and again, and never answers 500', async () => {
      const before = await balance();
      const killer = new pg.Client({ connectionString: state.database!.url });
      await killer.connect();
      let killing = true;
      let killed = 0;
      const killUntil = Date.now() + 4_000;
      // Terminates every other connection to the test database every few milliseconds: in the middle
      // of statements, of transactions and of commits.
      const kills = (async () => {
        while (killing && Date.now() < killUntil) {
          const { rowCount } = await killer.query(
            'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
          );
          killed += rowCount ?? 0;
          await sleep(20 + Math.random() * 60);
        }
      })();
      const keys = Array.from({ length: 60 }, (_, index) => `lost-${randomBase62(6)}-${index}`);
      let applied = 0;
      const deadline = Date.now() + 60_000;
      await Promise.all(
        keys.map(async (key, index) => {
          for (;;) {
            expect(Date.now()).toBeLessThan(deadline);
            const response = await batch(key, index + 1);
            expect(response.statusCode, response.body).not.toBe(500);
            if (response.statusCode === 200) {
              applied += 3 * (index + 1);
              return;
            }
            expect([409, 503], response.body).toContain(response.statusCode);
            await sleep(10);
          }
        }),
      );
      killing = false;
      await kills;
      await killer.end();
      expect(killed).toBeGreaterThan(0);
      // The pool's connections were killed too: wait until the service reads again.
      for (let tries = 0; tries < 50; tries += 1) {
        try {
          expect(await balance()).toBe(before + applied);
          return;
        } catch (error) {
          if (tries === 49) throw error;
          await sleep(100);
        }
      }
    }, 90_000);
  },
);
