import { setTimeout as sleep } from 'node:timers/promises';

/** A loop's wait between passes. `wake` cuts it short; a wake during a pass skips the next wait. */
export class Pause {
  #wanted = false;
  #sleeping: AbortController | undefined;

  wake(): void {
    this.#wanted = true;
    this.#sleeping?.abort();
  }

  /** At the start of a pass: from now on a wake is for the wait after it. */
  begin(): void {
    this.#wanted = false;
  }

  /** Resolves after `waitMs`, or at once on a wake: true when a wake cut it short (or skipped it). */
  async wait(waitMs: number): Promise<boolean> {
    if (this.#wanted) return true;
    if (waitMs <= 0) return false;
    const controller = new AbortController();
    this.#sleeping = controller;
    await sleep(waitMs, undefined, { signal: controller.signal }).catch(() => undefined);
    this.#sleeping = undefined;
    return controller.signal.aborted;
  }
}

/**
 * A loop's poll interval: `baseMs` after a pass that found work or after a wake, doubled after each
 * pass that found nothing, up to `idleMs`. An idle worker polls once a second instead of ten times
 * (docs/adr/0006-webhook-delivery.md, "Idle workers poll less").
 */
export class IdleBackoff {
  readonly #baseMs: number;
  readonly #idleMs: number;
  #nextMs: number;

  constructor(baseMs: number, idleMs: number) {
    this.#baseMs = baseMs;
    this.#idleMs = Math.max(baseMs, idleMs);
    this.#nextMs = baseMs;
  }

  get waitMs(): number {
    return this.#nextMs;
  }

  /** After a pass: `found` whether it found work. */
  passed(found: boolean): void {
    this.#nextMs = found ? this.#baseMs : Math.min(this.#idleMs, this.#nextMs * 2);
  }

  /** Work may be there (a wake): back to the base interval. */
  reset(): void {
    this.#nextMs = this.#baseMs;
  }
}
