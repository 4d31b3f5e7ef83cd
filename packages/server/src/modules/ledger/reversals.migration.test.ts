import { Migrator, sql } from 'kysely';
import { expect, it } from 'vitest';
import { openDatabase } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { MIGRATIONS } from '../../db/migrations/index.js';
import { inTransaction } from '../../db/transaction.js';
import { describeEachDialect, testConfig, useTestDatabase } from '../../test/database.js';

/** Migration 0040 (docs/adr/0024-reversals.md) on a ledger that already holds transactions. */
describeEachDialect('migration 0040 (reversals)', (dialect) => {
  const database = useTestDatabase(dialect);

  it('keeps every transaction (on SQLite with its rowid), the append-only triggers, and takes type reversal only', async () => {
    const db = openDatabase(testConfig(database().url).database);
    try {
      const migrator = (executor: typeof db.kysely) =>
        new Migrator({ db: executor, provider: { getMigrations: () => Promise.resolve(MIGRATIONS) } });
      if (db.dialect === 'sqlite') await inTransaction(db, (trx) => migrator(trx).migrateTo('0039_credit_limits'));
      else await migrator(db.kysely).migrateTo('0039_credit_limits');
      const k = db.kysely;
      const now = '2026-11-01T00:00:00.000Z';
      await sql`insert into projects (id, name, created_at) values ('prj_r', 'r', ${now})`.execute(k);
      await sql`insert into wallets (id, project_id, user_id, currency, balance, status, metadata, created_at, updated_at)
                values ('wlt_r', 'prj_r', 'usr_r', 'USD', 10, 'active', '{}', ${now}, ${now})`.execute(k);
      for (const id of ['txn_r1', 'txn_r2']) {
        await sql`insert into ledger_transactions (id, project_id, type, currency, amount, metadata, idempotency_scope, wallet_id, created_at, actor_type)
                  values (${id}, 'prj_r', 'credit', 'USD', 5, '{}', 'wlt_r', 'wlt_r', ${now}, 'system')`.execute(k);
      }
      const rowids = async () =>
        (await sql<{ id: string; rowid: number }>`select id, rowid from ledger_transactions order by id`.execute(k)).rows;
      const before = db.dialect === 'sqlite' ? await rowids() : [];
      await migrateToLatest(db);

      const rows = await k.selectFrom('ledger_transactions').selectAll().where('project_id', '=', 'prj_r').orderBy('id').execute();
      expect(rows).toMatchObject([
        { id: 'txn_r1', type: 'credit', amount: 5, reverses: null, asked_amount: null },
        { id: 'txn_r2', type: 'credit', amount: 5, reverses: null, asked_amount: null },
      ]);
      if (db.dialect === 'sqlite') expect(await rowids()).toEqual(before);
      await expect(sql`update ledger_transactions set amount = 6 where id = 'txn_r1'`.execute(k)).rejects.toThrow();
      await sql`insert into ledger_transactions (id, project_id, type, currency, amount, metadata, idempotency_scope, wallet_id, created_at, actor_type, reverses)
                values ('txn_r3', 'prj_r', 'reversal', 'USD', 2, '{}', '', 'wlt_r', ${now}, 'system', 'txn_r1')`.execute(k);
      await expect(
        sql`insert into ledger_transactions (id, project_id, type, currency, amount, metadata, idempotency_scope, wallet_id, created_at, actor_type)
            values ('txn_r4', 'prj_r', 'refund', 'USD', 2, '{}', '', 'wlt_r', ${now}, 'system')`.execute(k),
      ).rejects.toThrow();
      const indexes =
        db.dialect === 'sqlite'
          ? await sql<{ name: string }>`select name from sqlite_master where tbl_name = 'ledger_transactions' and type = 'index'`.execute(k)
          : await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'ledger_transactions'`.execute(k);
      expect(indexes.rows.map((row) => row.name)).toContain('ledger_transactions_reverses_idx');
    } finally {
      await db.destroy();
    }
  });
});
