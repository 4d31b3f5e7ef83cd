import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import type { Db, Dialect } from './database.js';
import { type CurrentSpan, traced } from '../lib/tracing.js';
import { currentRequestTransaction, TRANSACTION_SPAN_ATTRIBUTES } from './request-transaction.js';
import type { Database } from './schema.js';

/** A Kysely handle bound to one connection inside an open transaction. */
export type Transaction = Kysely<Database>;

/** How a read inside a write transaction locks the rows it reads (`select … for update`, or not at all). */
export type RowLock = 'for update' | 'none';

/**
 * The row lock a write transaction takes on what it reads before changing it: PostgreSQL's
 * transactions run side by side and need it; a SQLite write transaction already holds the
 * database's one write lock from its `BEGIN IMMEDIATE`, and SQLite has no `for update`.
 */
export function rowLockFor(dialect: Dialect): RowLock {
  return dialect === 'postgres' ? 'for update' : 'none';
}

export interface TransactionOptions {
  /** PostgreSQL isolation level; SQLite transactions are always serializable (one writer). */
  readonly isolation?: 'read committed' | 'repeatable read' | 'serializable';
  /** How many times to run `work` in all when the database asks for a retry. */
  readonly attemptsMax?: number;
}

const RETRY_DELAY_BASE_MS = 5;

/**
 * Runs `work` in one database transaction and commits it, or rolls it back if `work` throws.
 *
 * Inside a request transaction (db/request-transaction.ts) it runs `work` in a savepoint of that
 * transaction instead, whatever the options.
 *
 * On SQLite it opens the transaction with `BEGIN IMMEDIATE`, taking the write lock up front: a
 * deferred transaction that reads first and writes later can fail with SQLITE_BUSY when another
 * process wrote in between, and that failure cannot be waited out. On PostgreSQL it uses the
 * isolation level asked for (read committed by default). On a serialization failure, a deadlock or
 * a busy database it runs `work` again, so `work` must not have side effects outside the database
 * (events go to the outbox table, in the same transaction).
 */
export function inTransaction<T>(db: Db, work: (trx: Transaction) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const attemptsMax = options.attemptsMax ?? 5;
  // Inside a request's own transaction (an idempotent POST), the work is a savepoint of it, so that
  // it commits with the request's key and response (db/request-transaction.ts).
  const request = currentRequestTransaction();
  if (request !== undefined) {
    return traced(
      'db.savepoint',
      'client',
      () => TRANSACTION_SPAN_ATTRIBUTES[db.dialect],
      () => request.nested(work, attemptsMax, isRetryable),
    );
  }
  return traced(
    'db.transaction',
    'client',
    () => TRANSACTION_SPAN_ATTRIBUTES[db.dialect],
    (span) => runTransaction(db, work, options, attemptsMax, span),
  );
}

async function runTransaction<T>(
  db: Db,
  work: (trx: Transaction) => Promise<T>,
  options: TransactionOptions,
  attemptsMax: number,
  span: CurrentSpan,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    if (attempt > 1) span.setAttribute('svc.db.attempts', attempt);
    try {
      return await db.kysely.connection().execute(async (connection) => {
        if (db.dialect === 'sqlite') {
          await sql`begin immediate`.execute(connection);
        } else {
          await sql.raw(`begin isolation level ${options.isolation ?? 'read committed'}`).execute(connection);
        }
        try {
          const result = await work(connection);
          await sql`commit`.execute(connection);
          return result;
        } catch (error) {
          await sql`rollback`.execute(connection).catch(() => undefined);
          throw error;
        }
      });
    } catch (error) {
      if (attempt >= attemptsMax || !isRetryable(error)) throw error;
      await sleep(RETRY_DELAY_BASE_MS * 2 ** attempt * Math.random());
    }
  }
}

/** Errors after which the same transaction may succeed when run again. */
export function isRetryable(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const code = (error as { code?: unknown }).code;
  // 40001 serialization_failure, 40P01 deadlock_detected (PostgreSQL); SQLITE_BUSY* (SQLite).
  return code === '40001' || code === '40P01' || (typeof code === 'string' && code.startsWith('SQLITE_BUSY'));
}

/** True when `error` is a unique-constraint violation on either dialect. */
export function isUniqueViolation(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
