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

  async wait(waitMs: number): Promise<void> {
    if (waitMs <= 0 || this.#wanted) return;
    const controller = new AbortController();
    this.#sleeping = controller;
    await sleep(waitMs, undefined, { signal: controller.signal }).catch(() => undefined);
    this.#sleeping = undefined;
  }
}
