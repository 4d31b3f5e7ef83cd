/**
 * The delivery worker's budget (webhooks.worker.ts): at most `concurrencyMax` attempts held, that
 * is leased and not yet settled (recorded, or given back); per endpoint, see
 * webhooks.worker-endpoints.ts.
 *
 * The fan-out and the claims run side by side: each sets aside the room it may lease into for the
 * length of its transaction (`reserve`, `unreserve`), so that together they never lease past the
 * budget. A busy worker takes on work in batches of at least an eighth of its budget, not one
 * attempt per recorded result: less room is not worth a transaction.
 */
export class WorkerBudget {
  readonly #concurrencyMax: number;
  /** Attempts leased and not yet settled (recorded or given back). */
  #held = 0;
  /** Room set aside by a fan-out or claim in progress. */
  #reserved = 0;
  #idleWaiters: (() => void)[] = [];

  constructor(concurrencyMax: number) {
    this.#concurrencyMax = concurrencyMax;
  }

  /** Every attempt of the budget is held (room set aside by a transaction in progress not counted). */
  get full(): boolean {
    return this.#held >= this.#concurrencyMax;
  }

  /** The room a transaction may take on now, at most `roomMax`: 0 when it is less than worth one. */
  batchRoom(roomMax: number): number {
    const room = Math.min(this.#concurrencyMax - this.#held - this.#reserved, roomMax);
    return room < this.#batchRoomMin ? 0 : room;
  }

  /** Sets `room` aside for a transaction in progress; `unreserve` when it is over, leased or not. */
  reserve(room: number): void {
    this.#reserved += room;
  }

  unreserve(room: number): void {
    this.#reserved -= room;
  }

  /** Leased attempts are held until each is settled. */
  hold(count: number): void {
    this.#held += count;
  }

  /** One held attempt is done with (recorded, or given back). */
  settle(): void {
    this.#held -= 1;
    if (this.#held === 0) {
      for (const resolve of this.#idleWaiters.splice(0)) resolve();
    }
  }

  /** Resolves when no attempt is held. */
  async idle(): Promise<void> {
    if (this.#held === 0) return;
    await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  get #batchRoomMin(): number {
    return Math.max(1, Math.ceil(this.#concurrencyMax / 8));
  }
}
