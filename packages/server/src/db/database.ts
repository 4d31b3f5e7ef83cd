import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type SqliteDatabase from 'better-sqlite3';
import {
  Kysely,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  SqliteDialect,
  type SqliteDatabase as KyselySqliteDatabase,
  sql,
} from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { AssertionError } from '../lib/assert.js';
import type { Database } from './schema.js';
import { FailoverPool } from './failover-pool.js';
import type { PostgresTarget } from './postgres-url.js';
import { currentRequestTransaction } from './request-transaction.js';
import { SqliteDriver } from './sqlite-driver.js';

export { isHostLost } from './connection-errors.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  readonly kysely: Kysely<Database>;
  /** The pool itself, never a request's transaction: for what opens the request transactions. */
  readonly base?: Kysely<Database>;
  readonly dialect: Dialect;
  /** SQLite only: fixed texts run synchronously on the one connection (see `SqliteStatements`). */
  readonly sqlite?: SqliteStatements;
  destroy(): Promise<void>;
}

/**
 * SQLite's connection without Kysely's asynchronous pipeline, for fixed `?` texts on the hottest
 * write paths, with the same cache of prepared statements. Only for code that holds the connection
 * (inside a transaction's callback): a statement run here joins whatever transaction is open on it.
 */
export interface SqliteStatements {
  run(text: string, parameters: readonly unknown[]): void;
  /** The first row, as the database returns it; the caller names its columns in the text. */
  get(text: string, parameters: readonly unknown[]): unknown;
}

/** PostgreSQL type ids whose text form is converted to a JavaScript number: int8 and numeric. */
const PG_INT8_OID = 20;
const PG_NUMERIC_OID = 1700;

/**
 * The one place where a 64-bit integer from the database becomes a JavaScript number. Every money
 * value is bounded by 2^53 - 1 (the balance limit of docs/api.md section 1; sums that could pass
 * it are capped in SQL first), so a value beyond it means a broken invariant, never a client error.
 */
export function int64ToNumber(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new AssertionError(`integer from the database is not a safe integer: ${text}`);
  return value;
}

export function openDatabase(config: DatabaseConfig): Db {
  if (config.dialect === 'sqlite') return openSqlite(config.file, config.synchronous);
  return openPostgres(config.url, config.poolSize, config.preparedStatements, config.target);
}

/** About 40 MiB of WAL (4 KiB pages) between checkpoints. */
const WAL_AUTOCHECKPOINT_PAGES = 10_000;

function openSqlite(file: string, synchronous: 'full' | 'normal'): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const database = new SqliteDriver(file);
  // WAL lets readers run beside the single writer; busy_timeout makes a second process wait for
  // the write lock instead of failing at once. See docs/adr/0001-one-schema-two-dialects.md.
  database.pragma('journal_mode = WAL');
  database.pragma(`synchronous = ${synchronous.toUpperCase()}`);
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  // The ledger's group commit gives every write a SAVEPOINT, whose journal is a temporary file;
  // in memory it costs a copy instead of a write system call per page. Checkpoints every
  // WAL_AUTOCHECKPOINT_PAGES instead of SQLite's 1,000 copy a page written by many commits once.
  // Measured in docs/adr/0005-ledger-write-path.md.
  database.pragma('temp_store = MEMORY');
  database.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  const cached = withStatementCache(database);
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: cached }) });
  const sqlite: SqliteStatements = {
    run: (text, parameters) => void cached.prepare(text).run(...(parameters as unknown[])),
    get: (text, parameters) => cached.prepare(text).get(...(parameters as unknown[])),
  };
  return requestAware(kysely, 'sqlite', sqlite);
}

/** Distinct SQL texts kept prepared; the service's queries are a fixed set, so this is never reached in practice. */
const STATEMENTS_CACHED_MAX = 1000;

/**
 * Kysely prepares every query anew; on a hot path that cost more than running it (measured in
 * bench/). Prepared statements are reusable in better-sqlite3 because Kysely runs each one to
 * completion synchronously (`all` / `run`). Kysely's `stream()` would iterate a statement and must
 * not be used with this cache.
 */
function withStatementCache(
  database: SqliteDatabase.Database,
): Omit<KyselySqliteDatabase, 'prepare'> & { prepare(source: string): SqliteDatabase.Statement } {
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

/**
 * SQL text that begins with this comment runs as a named prepared statement on PostgreSQL: parsed
 * and planned once per connection instead of on every execution. For the ledger's hot statements,
 * whose planning cost more than running them (docs/adr/0005-ledger-write-path.md). Only for fixed
 * texts that name their columns: each distinct text stays prepared on every connection that ran
 * it, and a `select *` would break when a migration adds a column under a running process. With
 * DATABASE_PREPARED_STATEMENTS=false the comment is only a comment and the text runs unnamed.
 */
export const PREPARED_STATEMENT = '/* prepared */';

/** Distinct prepared texts at the most; past it, texts run unprepared (a text built from data would be a bug). */
const PREPARED_TEXTS_MAX = 100;

/** Where the preparing pool takes its clients from: a node-postgres pool, or the failover pool. */
interface ClientSource {
  connect(): Promise<pg.PoolClient>;
  end(): Promise<void>;
  /** Told of every failed statement (the failover pool watches for a lost host). */
  failed?(client: pg.PoolClient, error: unknown): void;
  /** Gives a client back; unset: `client.release()`. */
  release?(client: pg.PoolClient): void;
}

/**
 * The pool as Kysely sees it, running texts marked with PREPARED_STATEMENT as named statements. The
 * name is a hash of the text, so equal texts share one statement and a changed text gets its own.
 * `named` false runs them unnamed, and keeps only the source's `failed` and `release` hooks.
 */
function preparingPool(source: ClientSource, named = true): PostgresPool {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    if (!named) return undefined;
    let name = names.get(text);
    if (name === undefined && names.size < PREPARED_TEXTS_MAX) {
      name = `svc_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
      names.set(text, name);
    }
    return name;
  };
  const query = (client: pg.PoolClient, text: unknown, values?: unknown[]): Promise<unknown> => {
    const name = typeof text === 'string' && text.startsWith(PREPARED_STATEMENT) ? nameOf(text) : undefined;
    if (name !== undefined) return client.query({ name, text: text as string, values: values ?? [] });
    return (client.query as (...args: unknown[]) => Promise<unknown>)(text, values);
  };
  const failed = source.failed?.bind(source);
  const release = source.release?.bind(source);
  // Kysely keeps one connection object per client, found by identity: one wrapper per client.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let wrapper = wrappers.get(client);
    if (wrapper === undefined) {
      wrapper = {
        query: (failed === undefined
          ? (text: unknown, values?: unknown[]) => query(client, text, values)
          : (text: unknown, values?: unknown[]) =>
              query(client, text, values).catch((error: unknown) => {
                failed(client, error);
                throw error;
              })) as PostgresPoolClient['query'],
        release: release === undefined ? () => client.release() : () => release(client),
      };
      wrappers.set(client, wrapper);
    }
    return wrapper;
  };
  return { connect: async () => wrap(await source.connect()), end: () => source.end() };
}

/**
 * With `preparedStatements` false (DATABASE_PREPARED_STATEMENTS=false) a connection carries no
 * state from one transaction to the next, so that a transaction-mode pooler may hand each
 * transaction to another server connection (docs/operations.md, "Poolers"): texts marked with
 * PREPARED_STATEMENT run as unnamed statements like any other, and no startup option is sent (a
 * pooler refuses `options`, and would not carry it to the server connections it opens).
 */
function openPostgres(url: string, poolSize: number, preparedStatements: boolean, target: PostgresTarget | undefined): Db {
  const defaultParser = (oid: number, format: 'text' | 'binary'): ((value: string) => unknown) =>
    (pg.types.getTypeParser as (oid: number, format: 'text' | 'binary') => (value: string) => unknown)(oid, format);
  const types = {
    getTypeParser: (oid: number, format: 'text' | 'binary' = 'text') =>
      oid === PG_INT8_OID || oid === PG_NUMERIC_OID ? int64ToNumber : defaultParser(oid, format),
  };
  // No JIT: the service's statements are short, and a statistics read whose row estimate is
  // generic (a range from a watermark read in the same statement) crossed jit_above_cost and spent
  // more compiling than reading at the scale bench's size (docs/performance.md, "Scale benchmark").
  // Without prepared statements (a pooler in between) the database's or role's own setting
  // applies: docs/operations.md, "Poolers", asks for `jit = off` there.
  const options: pg.PoolConfig = { max: poolSize, types, ...(preparedStatements ? { options: '-c jit=off' } : {}) };
  // Several hosts, or one that must take writes: the failover pool picks the host and finds it
  // again when it goes away (db/failover-pool.ts).
  if (target !== undefined) {
    const pool = preparingPool(new FailoverPool(target, options), preparedStatements);
    return requestAware(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), 'postgres', undefined);
  }
  const pool = new pg.Pool({ ...options, connectionString: url });
  // An idle client that loses its connection emits 'error' on the pool; without a listener that
  // would end the process. The next query gets a fresh connection.
  pool.on('error', () => undefined);
  // A client in use whose connection is lost (a terminated backend, a failover) emits 'error' on
  // itself besides failing its query, even between its connect and the caller's first statement;
  // without a listener that would end the process. The query's own failure is the answer (503),
  // and the pool replaces the client. 'connect' fires for each new client before it is handed out.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparedStatements ? preparingPool(pool) : pool }) });
  return requestAware(kysely, 'postgres', undefined);
}

/**
 * The database as the service sees it: `kysely` is the request transaction's connection while a
 * request runs inside one (db/request-transaction.ts), so that everything the request reads and
 * writes joins it; elsewhere it is the pool (PostgreSQL) or the one connection (SQLite).
 */
function requestAware(base: Kysely<Database>, dialect: Dialect, sqlite: SqliteStatements | undefined): Db {
  return {
    get kysely() {
      return currentRequestTransaction()?.connection ?? base;
    },
    base,
    dialect,
    ...(sqlite === undefined ? {} : { sqlite }),
    destroy: () => base.destroy(),
  };
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
