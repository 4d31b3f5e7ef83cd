import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { loadConfig, type Config } from '../config.js';
import type { Dialect } from '../db/database.js';
import { randomBase62 } from '../lib/ids.js';

export const DIALECTS: readonly Dialect[] = ['sqlite', 'postgres'];

/** A database made for one test file and dropped after it. */
export interface TestDatabase {
  readonly dialect: Dialect;
  /** The DATABASE_URL that points the service at it. */
  readonly url: string;
  drop(): Promise<void>;
}

/** The one suite on both dialects: every storage test runs on SQLite and on PostgreSQL (docs/adr/0001-one-schema-two-dialects.md). */
export function describeEachDialect(title: string, body: (dialect: Dialect) => void): void {
  for (const dialect of DIALECTS) {
    describe.skipIf(dialect === 'postgres' && inject('postgresAdminUrl') === '')(`${title} [${dialect}]`, () => body(dialect));
  }
}

export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const directory = mkdtempSync(join(tmpdir(), 'svc-test-'));
    return {
      dialect,
      url: `sqlite:${join(directory, 'test.sqlite')}`,
      drop: () => Promise.resolve(rmSync(directory, { recursive: true, force: true })),
    };
  }
  const adminUrl = inject('postgresAdminUrl');
  if (adminUrl === '') throw new Error('PostgreSQL is not reachable; the test should have been skipped');
  const name = `svc_test_${randomBase62(12).toLowerCase()}`;
  await adminQuery(adminUrl, `create database ${name}`);
  // Created and dropped directly; used through the pooler when there is one (test/global-setup.ts).
  const poolerUrl = inject('postgresPoolerUrl');
  const url = new URL(poolerUrl === '' ? adminUrl : poolerUrl);
  url.pathname = `/${name}`;
  return {
    dialect,
    url: url.toString(),
    drop: () => adminQuery(adminUrl, `drop database if exists ${name} with (force)`),
  };
}

async function adminQuery(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * Configuration for a test: quiet logs, the given database, and any overrides. Behind a pooler
 * (TEST_DATABASE_POOLER_URL) a PostgreSQL database is used with DATABASE_PREPARED_STATEMENTS=false,
 * as docs/operations.md, "Poolers", asks.
 */
export function testConfig(databaseUrl: string, env: Readonly<Record<string, string>> = {}): Config {
  const pooled = inject('postgresPoolerUrl') !== '' && /^postgres(ql)?:/.test(databaseUrl);
  return loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: tmpdir(),
    DATABASE_URL: databaseUrl,
    ...(pooled ? { DATABASE_PREPARED_STATEMENTS: 'false' } : {}),
    ...env,
  });
}

/**
 * A fresh database for the enclosing describe block: created before its tests, dropped after.
 * Returns a getter, since the database exists only once beforeAll has run.
 */
export function useTestDatabase(dialect: Dialect): () => TestDatabase {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await database?.drop();
  });
  return () => {
    if (database === undefined) throw new Error('the test database exists only inside tests');
    return database;
  };
}
