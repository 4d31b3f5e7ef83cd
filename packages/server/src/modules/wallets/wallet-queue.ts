/**
 * At most `perWalletMax` movements at a time per wallet in this process, the others waiting in
 * arrival order: the PostgreSQL ledger's answer to a hot wallet.
 *
 * Correctness never depends on it: the database's row lock already serializes movements on a
 * wallet, across processes too. Throughput does. When many connections update one row at once,
 * PostgreSQL queues them on the row lock, wakes each after the commit before it, and re-checks its
 * conditions against the new row version; that costs about three times the CPU of the same
 * updates sent one or two at a time (pgbench on the credit statement, one hot row: 1,110
 * statements/s with 20 clients, 3,011/s with two; docs/adr/0005-ledger-write-path.md). Waiting
 * here instead costs a promise. Two at a time rather than one: the second waits on the row lock
 * inside PostgreSQL and starts the moment the first commits, without a round trip to this process.
 *
 * A movement on several wallets (a transfer) takes its place in every wallet's line at once, when
 * it arrives, so the lines agree on one order and two transfers can never wait for each other.
 */
export class WalletQueue {
  readonly #perWalletMax: number;
  /** Per wallet: the movements in its line, running or waiting, in arrival order. */
  readonly #lines = new Map<string, Slot[]>();

  constructor(options: { readonly perWalletMax: number }) {
    this.#perWalletMax = options.perWalletMax;
  }

  async run<T>(walletIds: readonly string[], work: () => Promise<T>): Promise<T> {
    const slot = new Slot([...new Set(walletIds)]);
    for (const walletId of slot.walletIds) {
      const line = this.#lines.get(walletId);
      if (line === undefined) this.#lines.set(walletId, [slot]);
      else line.push(slot);
    }
    this.#startReady(slot);
    await slot.started;
    try {
      return await work();
    } finally {
      this.#finish(slot);
    }
  }

  /** Wallets with a movement running or waiting; for tests. */
  get busyWallets(): number {
    return this.#lines.size;
  }

  #finish(slot: Slot): void {
    const next = new Set<Slot>();
    for (const walletId of slot.walletIds) {
      const line = this.#lines.get(walletId) ?? [];
      line.splice(line.indexOf(slot), 1);
      if (line.length === 0) this.#lines.delete(walletId);
      const waiting = line[this.#perWalletMax - 1];
      if (waiting !== undefined) next.add(waiting);
    }
    for (const waiting of next) this.#startReady(waiting);
  }

  /** Starts `slot` once it is among the first `perWalletMax` of every line it stands in. */
  #startReady(slot: Slot): void {
    const ready = slot.walletIds.every((walletId) => (this.#lines.get(walletId) ?? []).indexOf(slot) < this.#perWalletMax);
    if (ready) slot.start();
  }
}

class Slot {
  readonly walletIds: readonly string[];
  readonly started: Promise<void>;
  start: () => void = () => undefined;

  constructor(walletIds: readonly string[]) {
    this.walletIds = walletIds;
    this.started = new Promise<void>((resolve) => {
      this.start = resolve;
    });
  }
}
