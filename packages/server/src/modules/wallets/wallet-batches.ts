import { AssertionError } from '../../shared/assert.js';

/** What became of one item of a batch. */
export type BatchOutcome<O> = { readonly ok: true; readonly value: O } | { readonly ok: false; readonly error: unknown };

interface Waiting<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Per wallet, one batch at a time in this process, carrying every item that arrived for that
 * wallet while the batch before it ran: the PostgreSQL ledger's answer to a hot wallet, where each
 * statement must wait for the commit of the one before it on the wallet's row. Batching turns N
 * such waits into one (docs/adr/0005-ledger-write-path.md).
 *
 * `flush` gets the items in arrival order and answers one outcome per item, in the same order.
 * A wallet with nothing waiting is forgotten.
 */
export class WalletBatches<I, O> {
  readonly #flush: (walletId: string, items: readonly I[]) => Promise<readonly BatchOutcome<O>[]>;
  readonly #batchSizeMax: number;
  readonly #waiting = new Map<string, Waiting<I, O>[]>();

  constructor(options: {
    readonly flush: (walletId: string, items: readonly I[]) => Promise<readonly BatchOutcome<O>[]>;
    readonly batchSizeMax: number;
  }) {
    this.#flush = options.flush;
    this.#batchSizeMax = options.batchSizeMax;
  }

  run(walletId: string, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const line = this.#waiting.get(walletId);
      if (line !== undefined) {
        line.push({ item, resolve, reject });
        return;
      }
      this.#waiting.set(walletId, [{ item, resolve, reject }]);
      // On the next turn of the event loop, so that items parsed in the same turn share the batch.
      setImmediate(() => void this.#drain(walletId));
    });
  }

  /** Wallets with items running or waiting; for tests. */
  get busyWallets(): number {
    return this.#waiting.size;
  }

  async #drain(walletId: string): Promise<void> {
    for (;;) {
      const line = this.#waiting.get(walletId) ?? [];
      const batch = line.splice(0, this.#batchSizeMax);
      if (batch.length === 0) {
        this.#waiting.delete(walletId);
        return;
      }
      // The line stays in the map while the batch runs: arrivals wait in it for the next batch
      // instead of starting one beside it.
      let outcomes: readonly BatchOutcome<O>[];
      try {
        outcomes = await this.#flush(
          walletId,
          batch.map((waiting) => waiting.item),
        );
      } catch (error) {
        outcomes = batch.map(() => ({ ok: false, error }));
      }
      batch.forEach((waiting, index) => {
        const outcome = outcomes[index];
        if (outcome === undefined) waiting.reject(new AssertionError('a wallet batch lost the outcome of an item'));
        else if (outcome.ok) waiting.resolve(outcome.value);
        else waiting.reject(outcome.error);
      });
    }
  }
}
