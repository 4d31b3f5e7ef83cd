import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { inTransaction, isRetryable, type Transaction } from '../../db/transaction.js';
import { AssertionError, assert } from '../../shared/assert.js';

/** Writes per commit at the most, so one batch never holds the write lock for long. */
const BATCH_SIZE_MAX = 128;

interface Pending {
  readonly work: (trx: Transaction) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * Group commit for SQLite: the ledger writes that arrive while the database is busy share one
 * transaction and so one commit (one fsync with `synchronous = full`). The commit, not the
 * statements, is what a single SQLite writer spends its time on; sharing it multiplies throughput.
 *
 * Each write runs in its own SAVEPOINT inside the shared transaction: a write that throws (a
 * refusal such as `insufficient_credits`, or a bug) is rolled back alone and the others go on.
 * Every caller learns its outcome only after the COMMIT, so nobody is told "done" (or refused on
 * the strength of a neighbour's change) before it is durable. If the commit fails, every write of
 * the batch fails with it. A batch the database asks to retry (SQLITE_BUSY from another process)
 * runs again whole, so `work` must be pure database work, as for `inTransaction`.
 *
 * Batches form by themselves: a batch starts on the next turn of the event loop after the first
 * write arrives, and takes everything queued by then; while it runs, the next one queues.
 */
export class GroupCommit {
  readonly #db: Db;
  #queue: Pending[] = [];
  #scheduled = false;

  constructor(db: Db) {
    assert(db.dialect === 'sqlite', 'group commit is for SQLite, whose single writer makes each commit the bottleneck');
    this.#db = db;
  }

  run<T>(work: (trx: Transaction) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, BATCH_SIZE_MAX);
      let outcomes: Outcome[];
      try {
        outcomes = await inTransaction(this.#db, async (trx) => {
          const done: Outcome[] = [];
          for (const pending of batch) {
            await sql`savepoint group_commit_write`.execute(trx);
            try {
              const value = await pending.work(trx);
              await sql`release group_commit_write`.execute(trx);
              done.push({ ok: true, value });
            } catch (error) {
              // The database asks for the whole transaction again: the batch is retried, not this write failed.
              if (isRetryable(error)) throw error;
              await sql`rollback to group_commit_write`.execute(trx);
              await sql`release group_commit_write`.execute(trx);
              done.push({ ok: false, error });
            }
          }
          return done;
        });
      } catch (error) {
        outcomes = batch.map(() => ({ ok: false, error }));
      }
      batch.forEach((pending, index) => {
        const outcome = outcomes[index];
        if (outcome === undefined) pending.reject(new AssertionError('group commit lost the outcome of a write'));
        else if (outcome.ok) pending.resolve(outcome.value);
        else pending.reject(outcome.error);
      });
    }
    this.#scheduled = false;
  }
}
