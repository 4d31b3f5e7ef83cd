import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../config.js';
import { useTestDatabase } from '../test/database.js';
import { freePort } from '../test/serve-process.js';
import { type Db, isHostLost, openDatabase } from './database.js';

/**
 * The host selection of a multi-host DATABASE_URL (db/failover-pool.ts) against the suite's
 * PostgreSQL; the failover itself, with a standby that is promoted, is in failover.postgres.test.ts.
 */
describe.skipIf(inject('postgresAdminUrl') === '')('PostgreSQL host selection', () => {
  const database = useTestDatabase('postgres');

  /** The test database's URL with `hosts` in place of its one host and `query` added. */
  const urlWith = (hosts: readonly string[], query: string): string => {
    const url = new URL(database().url);
    const hostList = hosts.map((host) => (host === 'the server' ? url.host : host)).join(',');
    return `postgres://${url.username}@${hostList}${url.pathname}?${query}`;
  };
  const open = (url: string): Db => {
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: url, DATABASE_POOL_SIZE: '4' }).database;
    expect(config.dialect === 'postgres' && config.target !== undefined, 'the URL asks for host selection').toBe(true);
    return openDatabase(config);
  };
  const one = async (db: Db): Promise<number> => (await sql<{ one: number }>`select 1 as one`.execute(db.kysely)).rows[0]?.one ?? 0;

  it('skips a host that refuses connections and uses the next, in the order of the URL', async () => {
    const db = open(urlWith([`127.0.0.1:${await freePort()}`, 'the server'], 'target_session_attrs=read-write'));
    try {
      expect(await one(db)).toBe(1);
    } finally {
      await db.destroy();
    }
  });

  it('refuses a host whose sessions are read-only for read-write, with an error the HTTP layer answers with 503', async () => {
    const readOnly = 'options=-c%20default_transaction_read_only%3Don';
    const db = open(urlWith(['the server'], `target_session_attrs=read-write&${readOnly}`));
    try {
      const error = await one(db).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toMatchObject({ name: 'DatabaseUnavailableError', code: '08001' });
      expect((error as Error).message).toMatch(/No database host takes writes .*does not take writes/);
      expect(isHostLost(error)).toBe(true);
    } finally {
      await db.destroy();
    }
    // `primary` asks only that the server not be in recovery, as libpq does.
    const primary = open(urlWith(['the server'], `target_session_attrs=primary&${readOnly}`));
    try {
      expect(await one(primary)).toBe(1);
    } finally {
      await primary.destroy();
    }
  });

  it('finds the host again after its connections are lost, with no restart', async () => {
    const db = open(
      urlWith([`127.0.0.1:${await freePort()}`, 'the server'], 'target_session_attrs=read-write&application_name=svc_failover_test'),
    );
    const admin = new pg.Client({ connectionString: database().url });
    await admin.connect();
    try {
      expect(await one(db)).toBe(1);
      await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'svc_failover_test'");
      // The first statement on a terminated connection fails as a lost host (503); the next finds the host again.
      const failed = await one(db).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      if (failed !== undefined) expect(isHostLost(failed)).toBe(true);
      expect(await one(db)).toBe(1);
    } finally {
      await admin.end();
      await db.destroy();
    }
  });
});
