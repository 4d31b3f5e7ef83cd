import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { useTestDatabase } from '../test/database.js';
import { openDatabase, PREPARED_STATEMENT } from './database.js';

describe('SQLite settings', () => {
  it('keeps temporary files (savepoint journals) in memory and checkpoints the WAL every 10,000 pages', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'svc-database-'));
    const db = openDatabase({ dialect: 'sqlite', file: join(directory, 'test.sqlite'), synchronous: 'full' });
    try {
      const read = async (pragma: string): Promise<unknown> =>
        Object.values((await sql<Record<string, unknown>>`${sql.raw(`pragma ${pragma}`)}`.execute(db.kysely)).rows[0] ?? {})[0];
      // temp_store 2 = MEMORY; synchronous 2 = FULL.
      expect([await read('journal_mode'), await read('temp_store'), await read('wal_autocheckpoint'), await read('synchronous')]).toEqual([
        'wal',
        2,
        10_000,
        2,
      ]);
    } finally {
      await db.destroy();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe.skipIf(inject('postgresAdminUrl') === '')('PostgreSQL prepared statements', () => {
  const database = useTestDatabase('postgres');

  it('runs texts marked PREPARED_STATEMENT as named statements, prepared once per connection, and others unnamed', async () => {
    const db = openDatabase({ dialect: 'postgres', url: database().url, poolSize: 1, preparedStatements: true });
    try {
      const marked = (value: number) => sql<{ doubled: number }>`${sql.raw(PREPARED_STATEMENT)} select ${value}::int * 2 as doubled`;
      expect((await marked(2).execute(db.kysely)).rows).toEqual([{ doubled: 4 }]);
      expect((await marked(5).execute(db.kysely)).rows).toEqual([{ doubled: 10 }]);
      expect((await sql<{ tripled: number }>`select ${3}::int * 3 as tripled`.execute(db.kysely)).rows).toEqual([{ tripled: 9 }]);
      // One connection (pool of 1): what it has prepared.
      const prepared = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(
        db.kysely,
      );
      expect(prepared.rows).toHaveLength(1);
      expect(prepared.rows[0]?.name).toMatch(/^svc_[0-9a-f]{32}$/);
      expect(prepared.rows[0]?.statement).toContain('* 2 as doubled');
      const jit = await sql<{ setting: string; source: string }>`select setting, source from pg_settings where name = 'jit'`.execute(
        db.kysely,
      );
      expect(jit.rows).toEqual([{ setting: 'off', source: 'client' }]);
    } finally {
      await db.destroy();
    }
  });

  it('with DATABASE_PREPARED_STATEMENTS=false runs marked texts unnamed and sets nothing on the connection', async () => {
    const db = openDatabase({ dialect: 'postgres', url: database().url, poolSize: 1, preparedStatements: false });
    try {
      const marked = (value: number) => sql<{ doubled: number }>`${sql.raw(PREPARED_STATEMENT)} select ${value}::int * 2 as doubled`;
      expect((await marked(2).execute(db.kysely)).rows).toEqual([{ doubled: 4 }]);
      expect((await marked(5).execute(db.kysely)).rows).toEqual([{ doubled: 10 }]);
      const prepared = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(db.kysely);
      expect(prepared.rows).toEqual([]);
      // No setting sent at connect ('client'): the server's own applies.
      const jit = await sql<{ source: string }>`select source from pg_settings where name = 'jit'`.execute(db.kysely);
      expect(jit.rows).toHaveLength(1);
      expect(jit.rows[0]?.source).not.toBe('client');
    } finally {
      await db.destroy();
    }
  });
});
