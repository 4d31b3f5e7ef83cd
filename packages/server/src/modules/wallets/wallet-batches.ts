import { AssertionError } from '../../shared/assert.js';

/** What became of one item of a batch. */
export type BatchOutcome<O> = { readonly ok: true; readonly value: O } | { readonly ok: false; readonly error: unknown };

/**
 * Whose line an item stands in: one wallet of one project. Wallet ids are unique across the
 * database, but a request may name another project's wallet (it is then answered 404); keyed by
 * the wallet alone, that request would share a batch, and its failure, with the wallet's owner.
 */
export interface WalletLine {
  readonly projectId: string;
  readonly walletId: string;
}

interface Waiting<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Per wallet of a project, one batch at a time in this process, carrying every item that arrived
 * for that wallet and project while the batch before it ran: the PostgreSQL ledger's answer to a hot wallet, where each
 * statement must wait for the commit of the one before it on the wallet's row. Batching turns N
 * such waits into one (docs/adr/0005-ledger-write-path.md).
 *
 * `flush` gets the items in arrival order and answers one outcome per item, in the same order.
 * A batch never mixes projects: one tenant's request can never fail another's.
 * A line with nothing waiting is forgotten.
 */
export class WalletBatches<I, O> {
  readonly #flush: (line: WalletLine, items: readonly I[]) => Promise<readonly BatchOutcome<O>[]>;
  readonly #batchSizeMax: number;
  readonly #waiting = new Map<string, Waiting<I, O>[]>();

  constructor(options: {
    readonly flush: (line: WalletLine, items: readonly I[]) => Promise<readonly BatchOutcome<O>[]>;
    readonly batchSizeMax: number;
  }) {
    this.#flush = options.flush;
    this.#batchSizeMax = options.batchSizeMax;
  }

  run(line: WalletLine, item: I): Promise<O> {
    // The project id never contains a space (`prj_` and base62), so the key is unambiguous.
    const key = `${line.projectId} ${line.walletId}`;
    return new Promise<O>((resolve, reject) => {
      const waiting = this.#waiting.get(key);
      if (waiting !== undefined) {
        waiting.push({ item, resolve, reject });
        return;
      }
      this.#waiting.set(key, [{ item, resolve, reject }]);
      // On the next turn of the event loop, so that items parsed in the same turn share the batch.
      setImmediate(() => void this.#drain(key, { projectId: line.projectId, walletId: line.walletId }));
    });
  }

  /** Lines (wallets of a project) with items running or waiting; for tests. */
  get busyWallets(): number {
    return this.#waiting.size;
  }

  async #drain(key: string, line: WalletLine): Promise<void> {
    for (;;) {
      const waiting = this.#waiting.get(key) ?? [];
      const batch = waiting.splice(0, this.#batchSizeMax);
      if (batch.length === 0) {
        this.#waiting.delete(key);
        return;
      }
      // The line stays in the map while the batch runs: arrivals wait in it for the next batch
      // instead of starting one beside it.
      let outcomes: readonly BatchOutcome<O>[];
      try {
        outcomes = await this.#flush(
          line,
          batch.map((entry) => entry.item),
        );
      } catch (error) {
        outcomes = batch.map(() => ({ ok: false, error }));
      }
      batch.forEach((entry, index) => {
        const outcome = outcomes[index];
        if (outcome === undefined) entry.reject(new AssertionError('a wallet batch lost the outcome of an item'));
        else if (outcome.ok) entry.resolve(outcome.value);
        else entry.reject(outcome.error);
      });
    }
  }
}
