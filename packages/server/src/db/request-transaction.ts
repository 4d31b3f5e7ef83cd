import { AsyncLocalStorage } from 'node:async_hooks';
import { type Kysely, sql } from 'kysely';
import type { Dialect } from './database.js';
import { type OpenSpan, openSpan, type SpanAttributes } from '../lib/tracing.js';
import type { Database } from './schema.js';

/** The span attributes of a transaction, by dialect: the database system's name in the conventions' spelling. */
export const TRANSACTION_SPAN_ATTRIBUTES: Readonly<Record<Dialect, SpanAttributes>> = {
  sqlite: { 'db.system.name': 'sqlite' },
  postgres: { 'db.system.name': 'postgresql' },
};

/**
 * A request's own database transaction, opened before its handler runs and committed after its
 * response is known, so that an idempotent request's key, its stored response and everything the
 * request changed commit together or not at all (docs/adr/0004-idempotency.md).
 *
 * While a request runs inside one (`run`), every statement it sends through `Db.kysely` and every
 * `inTransaction` it opens (as a savepoint) joins it; work that runs on behalf of the whole process
 * (the ledger's group commit, the audit log's deferred entries, the webhook worker) leaves it with
 * `outsideRequestTransaction`.
 */
export class RequestTransaction {
  readonly #connection: Kysely<Database>;
  readonly #dialect: Dialect;
  readonly #finish: (statement: 'commit' | 'rollback') => Promise<void>;
  /** From BEGIN to COMMIT or ROLLBACK (lib/tracing.ts); undefined while traces are off. */
  readonly #span: OpenSpan | undefined;
  #open = true;
  #savepoints = 0;

  private constructor(
    connection: Kysely<Database>,
    dialect: Dialect,
    finish: (statement: 'commit' | 'rollback') => Promise<void>,
    span: OpenSpan | undefined,
  ) {
    this.#connection = connection;
    this.#dialect = dialect;
    this.#finish = finish;
    this.#span = span;
  }

  /**
   * Takes a connection and begins a transaction on it (SQLite: `BEGIN IMMEDIATE`, the write lock
   * up front, as `inTransaction` does; PostgreSQL: read committed). The connection stays taken
   * until `commit` or `rollback`.
   */
  static open(base: Kysely<Database>, dialect: Dialect): Promise<RequestTransaction> {
    const span = openSpan('db.transaction', 'client', () => TRANSACTION_SPAN_ATTRIBUTES[dialect]);
    return new Promise<RequestTransaction>((resolve, reject) => {
      base
        .connection()
        .execute(async (connection) => {
          await sql.raw(dialect === 'sqlite' ? 'begin immediate' : 'begin').execute(connection);
          let decide!: (statement: 'commit' | 'rollback') => void;
          const decided = new Promise<'commit' | 'rollback'>((resolveDecision) => (decide = resolveDecision));
          let settle!: { resolve: () => void; reject: (error: unknown) => void };
          const settled = new Promise<void>(
            (resolveSettled, rejectSettled) => (settle = { resolve: resolveSettled, reject: rejectSettled }),
          );
          resolve(
            new RequestTransaction(
              connection,
              dialect,
              (statement) => {
                decide(statement);
                return settled;
              },
              span,
            ),
          );
          const statement = await decided;
          try {
            await sql.raw(statement).execute(connection);
            settle.resolve();
          } catch (error) {
            if (statement === 'commit') await sql`rollback`.execute(connection).catch(() => undefined);
            settle.reject(error);
          }
        })
        // Before `resolve` this is a failed BEGIN; after it, the failure already went to `settled`.
        .catch((error: unknown) => {
          span?.fail('begin_failed');
          span?.end();
          throw error;
        })
        .catch(reject);
    });
  }

  /** The connection while the transaction is open; undefined once it has committed or rolled back. */
  get connection(): Kysely<Database> | undefined {
    return this.#open ? this.#connection : undefined;
  }

  get dialect(): Dialect {
    return this.#dialect;
  }

  /** Runs `work` with this transaction as the ambient one of everything it starts. */
  run<T>(work: () => T): T {
    return storage.run(this, work);
  }

  /**
   * `work` inside a savepoint of this transaction: rolled back alone if it throws, so that a
   * service's refusal undoes its own writes and nothing else, as its own transaction would.
   * Deadlocks and serialization failures roll back to the savepoint and run `work` again.
   */
  async nested<T>(work: (trx: Kysely<Database>) => Promise<T>, attemptsMax: number, retryable: (error: unknown) => boolean): Promise<T> {
    const connection = this.#connection;
    for (let attempt = 1; ; attempt += 1) {
      this.#savepoints += 1;
      const name = `request_sp_${this.#savepoints}`;
      await sql.raw(`savepoint ${name}`).execute(connection);
      try {
        const result = await work(connection);
        await sql.raw(`release savepoint ${name}`).execute(connection);
        return result;
      } catch (error) {
        await sql.raw(`rollback to savepoint ${name}`).execute(connection);
        await sql.raw(`release savepoint ${name}`).execute(connection);
        if (attempt >= attemptsMax || !retryable(error)) throw error;
      }
    }
  }

  commit(): Promise<void> {
    return this.#end('commit');
  }

  rollback(): Promise<void> {
    return this.#end('rollback');
  }

  get isOpen(): boolean {
    return this.#open;
  }

  #end(statement: 'commit' | 'rollback'): Promise<void> {
    if (!this.#open) return Promise.resolve();
    this.#open = false;
    const span = this.#span;
    if (span === undefined) return this.#finish(statement);
    span.setAttribute('svc.db.outcome', statement);
    return this.#finish(statement).then(
      () => span.end(),
      (error: unknown) => {
        span.fail(`${statement}_failed`);
        span.end();
        throw error;
      },
    );
  }
}

const storage = new AsyncLocalStorage<RequestTransaction>();

/** The open request transaction this code runs in, if any. */
export function currentRequestTransaction(): RequestTransaction | undefined {
  const current = storage.getStore();
  return current?.isOpen === true ? current : undefined;
}

/**
 * Runs `work` outside any request transaction: for work started by a request but done for the
 * whole process (a group commit that serves many requests, entries written after the answer).
 */
export function outsideRequestTransaction<T>(work: () => T): T {
  return storage.exit(work);
}
