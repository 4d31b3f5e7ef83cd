import { outsideRequestTransaction } from '../../db/request-transaction.js';
import { AssertionError } from '../../lib/assert.js';

export interface GroupCommitOptions<I, O> {
  /** Applies items in one database transaction; one outcome per item, in the order given. */
  readonly flush: (items: readonly I[]) => Promise<readonly O[]>;
  /** An item's size (its movements); a flush takes items up to `weightMax`, and always at least one. */
  readonly weight: (item: I) => number;
  readonly weightMax: number;
  /** Flushes running at once: 1 for SQLite's single writer, a few on PostgreSQL. */
  readonly concurrency: number;
}

interface Pending<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit: the ledger requests that arrive while a flush runs share the next one, and so one
 * database transaction and one commit (docs/adr/0005-ledger-write-path.md). A flush starts on the
 * next turn of the event loop after an item arrives (so the items of one turn go together), or
 * when a running flush ends; it takes items in arrival order. Every caller learns its outcome
 * only after the commit. If the flush fails, every item of it fails with the same error.
 */
export class GroupCommit<I, O> {
  readonly #options: GroupCommitOptions<I, O>;
  readonly #queue: Pending<I, O>[] = [];
  #running = 0;
  #scheduled = false;

  constructor(options: GroupCommitOptions<I, O>) {
    this.#options = options;
  }

  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // A flush serves many requests: it runs in no request's transaction (db/request-transaction.ts).
        outsideRequestTransaction(() =>
          setImmediate(() => {
            this.#scheduled = false;
            this.#start();
          }),
        );
      }
    });
  }

  /** Items waiting or in a running flush; for tests. */
  get busy(): boolean {
    return this.#queue.length > 0 || this.#running > 0;
  }

  #start(): void {
    while (this.#queue.length > 0 && this.#running < this.#options.concurrency) {
      const batch: Pending<I, O>[] = [];
      let weight = 0;
      for (const next of this.#queue) {
        const more = this.#options.weight(next.item);
        if (batch.length > 0 && weight + more > this.#options.weightMax) break;
        batch.push(next);
        weight += more;
      }
      this.#queue.splice(0, batch.length);
      this.#running += 1;
      void this.#flush(batch);
    }
  }

  async #flush(batch: readonly Pending<I, O>[]): Promise<void> {
    try {
      const outcomes = await this.#options.flush(batch.map((pending) => pending.item));
      batch.forEach((pending, index) => {
        const outcome = outcomes[index];
        if (outcome === undefined) pending.reject(new AssertionError('group commit lost the outcome of an item'));
        else pending.resolve(outcome);
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      this.#running -= 1;
      this.#start();
    }
  }
}
