import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase as KyselySqliteDatabase, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { AssertionError } from '../shared/assert.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: Dialect;
  destroy(): Promise<void>;
}

/** PostgreSQL type ids whose text form is converted to a JavaScript number: int8 and numeric. */
const PG_INT8_OID = 20;
const PG_NUMERIC_OID = 1700;

/**
 * The one place where a 64-bit integer from the database becomes a JavaScript number. Every money
 * value is bounded by 2^53 - 1 (the contract's balance limit), so a value beyond it means a broken
 * invariant, never a client error.
 */
export function int64ToNumber(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new AssertionError(`integer from the database is not a safe integer: ${text}`);
  return value;
}

export function openDatabase(config: DatabaseConfig): Db {
  if (config.dialect === 'sqlite') return openSqlite(config.file, config.synchronous);
  return openPostgres(config.url, config.poolSize);
}

function openSqlite(file: string, synchronous: 'full' | 'normal'): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const database = new SqliteDatabase(file);
  // WAL lets readers run beside the single writer; busy_timeout makes a second process wait for
  // the write lock instead of failing at once. See docs/adr/0001-one-schema-two-dialects.md.
  database.pragma('journal_mode = WAL');
  database.pragma(`synchronous = ${synchronous.toUpperCase()}`);
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
  return { kysely, dialect: 'sqlite', destroy: () => kysely.destroy() };
}

/** Distinct SQL texts kept prepared; the service's queries are a fixed set, so this is never reached in practice. */
const STATEMENTS_CACHED_MAX = 1000;

/**
 * Kysely prepares every query anew; on a hot path that cost more than running it (measured in
 * bench/). Prepared statements are reusable in better-sqlite3 because Kysely runs each one to
 * completion synchronously (`all` / `run`). Kysely's `stream()` would iterate a statement and must
 * not be used with this cache.
 */
function withStatementCache(database: SqliteDatabase.Database): KyselySqliteDatabase {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => database.close(),
    prepare(source: string) {
      let statement = statements.get(source);
      if (statement === undefined) {
        if (statements.size >= STATEMENTS_CACHED_MAX) statements.clear();
        statement = database.prepare(source);
        statements.set(source, statement);
      }
      return statement;
    },
  };
}

function openPostgres(url: string, poolSize: number): Db {
  const defaultParser = (oid: number, format: 'text' | 'binary'): ((value: string) => unknown) =>
    (pg.types.getTypeParser as (oid: number, format: 'text' | 'binary') => (value: string) => unknown)(oid, format);
  const types = {
    getTypeParser: (oid: number, format: 'text' | 'binary' = 'text') =>
      oid === PG_INT8_OID || oid === PG_NUMERIC_OID ? int64ToNumber : defaultParser(oid, format),
  };
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types });
  // An idle client that loses its connection emits 'error' on the pool; without a listener that
  // would end the process. The next query gets a fresh connection.
  pool.on('error', () => undefined);
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { kysely, dialect: 'postgres', destroy: () => kysely.destroy() };
}

/** True when the database answers a trivial query; used by `GET /readyz`. */
export async function databaseReachable(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db.kysely);
    return true;
  } catch {
    return false;
  }
}
