import { Migrator, sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { MIGRATIONS } from '../../db/migrations/index.js';
import { inTransaction } from '../../db/transaction.js';
import { describeEachDialect, testConfig, useTestDatabase } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import type { Hold } from '../ledger/holds.schemas.js';
import { verifyLedger } from '../ledger/ledger.verify.js';
import { errorCode, expectStatus, walletsClient, type WalletsClient } from './wallets.fixtures.js';
import type { Wallet } from './wallets.schemas.js';

describeEachDialect('holds under concurrency', (dialect) => {
  const current = useTestService(dialect);
  let client: WalletsClient;

  beforeAll(async () => {
    const { service, secretKey, projectId } = current();
    client = await walletsClient(service, { projectId, secretKey });
  });

  it('200 concurrent holds of 1 on a wallet that can afford 100: exactly 100 succeed, 100 get insufficient_credits', async () => {
    const { id } = await client.createWallet();
    await client.credit(id, 100);
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        client.request('POST', `/v1/wallets/${id}/holds`, { amount: 1 }, index % 2 === 0 ? { 'idempotency-key': `hold-${index}` } : {}),
      ),
    );
    const outcomes = responses.map((response) => (response.statusCode === 201 ? 'held' : errorCode(response)));
    expect(outcomes.filter((outcome) => outcome === 'held')).toHaveLength(100);
    expect(outcomes.filter((outcome) => outcome === 'insufficient_credits')).toHaveLength(100);
    expect(expectStatus<Wallet>(await client.request('GET', `/v1/wallets/${id}`), 200)).toMatchObject({ balance: 100, available: 0 });

    // Captures and voids of all of them at once, with debits racing them: nothing is spent twice.
    const holds = responses.filter((response) => response.statusCode === 201).map((response) => response.json<Hold>().id);
    const settled = await Promise.all([
      ...holds.map((holdId, index) => client.request('POST', `/v1/holds/${holdId}/${index % 2 === 0 ? 'capture' : 'void'}`)),
      ...holds.map(() => client.request('POST', `/v1/wallets/${id}/debits`, { amount: 1 })),
    ]);
    const captures = settled.slice(0, holds.length);
    expect(captures.map((response) => response.statusCode).filter((status) => status !== 200)).toEqual([]);
    expect(captures[0]?.body).toContain('captured');
    const debited = settled.slice(holds.length).filter((response) => response.statusCode === 201).length;
    expect(expectStatus<Wallet>(await client.request('GET', `/v1/wallets/${id}`), 200)).toMatchObject({
      balance: 50 - debited,
      available: 50 - debited,
    });
    const verification = await verifyLedger(current().service.db, { projectId: current().projectId });
    expect(verification.sound, JSON.stringify(verification.checks)).toBe(true);
  });

  it('runs the expiry job with the service', () => {
    expect(current().service.jobs.map((job) => job.name)).toContain('ledger-expiry');
  });
});

describeEachDialect('migration 0023 (holds and grants)', (dialect) => {
  const database = useTestDatabase(dialect);

  it('turns the balance of every wallet credited before it into one never-expiring grant, keeping the ledger', async () => {
    const db = openDatabase(testConfig(database().url).database);
    try {
      const migrate = (target: string) =>
        new Migrator({ db: db.kysely, provider: { getMigrations: () => Promise.resolve(MIGRATIONS) } }).migrateTo(target);
      if (db.dialect === 'sqlite')
        await inTransaction(db, (trx) =>
          new Migrator({ db: trx, provider: { getMigrations: () => Promise.resolve(MIGRATIONS) } }).migrateTo('0022_read_aggregates'),
        );
      else await migrate('0022_read_aggregates');
      const now = '2026-11-01T00:00:00.000Z';
      await sql`insert into projects (id, name, created_at) values ('prj_m', 'm', ${now})`.execute(db.kysely);
      for (const [id, balance] of [
        ['wlt_full', 70],
        ['wlt_empty', 0],
      ] as const) {
        await sql`insert into wallets (id, project_id, user_id, currency, balance, status, metadata, created_at, updated_at)
                  values (${id}, 'prj_m', 'usr_m', 'USD', ${balance}, 'active', '{}', ${now}, ${now})`.execute(db.kysely);
      }
      await sql`insert into ledger_transactions (id, project_id, type, currency, amount, metadata, idempotency_scope, wallet_id, created_at)
                values ('txn_m', 'prj_m', 'credit', 'USD', 70, '{}', 'wlt_full', 'wlt_full', ${now})`.execute(db.kysely);
      await sql`insert into ledger_entries (project_id, transaction_id, account_id, amount, balance_after, created_at)
                values ('prj_m', 'txn_m', 'wlt_full', 70, 70, ${now}), ('prj_m', 'txn_m', 'issuance:USD', -70, null, ${now})`.execute(
        db.kysely,
      );
      await migrateToLatest(db);
      const grants = await db.kysely.selectFrom('wallet_grants').selectAll().execute();
      expect(grants).toHaveLength(1);
      expect(grants[0]).toMatchObject({ wallet_id: 'wlt_full', amount: 70, remaining: 70, held: 0, priority: 50, expires_at: null });
      expect(await db.kysely.selectFrom('ledger_transactions').select(['id', 'type']).execute()).toEqual([{ id: 'txn_m', type: 'credit' }]);
      // The rebuilt table (SQLite) keeps its append-only triggers and the entries' foreign key.
      await expect(sql`update ledger_transactions set amount = 1`.execute(db.kysely)).rejects.toThrow(/append-only/);
      await expect(
        sql`insert into ledger_entries (project_id, transaction_id, account_id, amount, created_at)
            values ('prj_m', 'txn_missing', 'wlt_full', 1, ${now})`.execute(db.kysely),
      ).rejects.toThrow();
      const report = await verifyLedger(db, { projectId: 'prj_m' });
      expect(report.checks.grants_not_summing_to_balance.violations).toBe(0);
    } finally {
      await db.destroy();
    }
  });
});
