import { setImmediate as yieldToIo } from 'node:timers/promises';
import type { Logger } from 'pino';
import { type AttemptRecord, type DeliveryDependencies, recordAttempts } from './webhooks.delivery.js';
import type { Lease } from './webhooks.worker-endpoints.js';
import * as leases from './webhooks.leases.store.js';

/**
 * The delivery worker's batched writes (docs/adr/0006-webhook-delivery.md, "Batched writes"): the
 * results of attempts, and the leases given back unsent. What arrives while one batch is being
 * written goes into the next, so a commit serves many attempts instead of one each.
 */

/** Attempts recorded (or leases given back) per transaction at the most. */
const BATCH_MAX = 500;

/** Records attempts in batches, one transaction each. */
export class AttemptRecorder {
  readonly #deps: DeliveryDependencies;
  /** After each batch, committed or not, with its records: room is free. */
  readonly #afterBatch: (records: readonly AttemptRecord[]) => void;
  readonly #unrecorded: { record: AttemptRecord; settle: (error?: Error) => void }[] = [];
  #recording: Promise<void> | undefined;

  constructor(deps: DeliveryDependencies, afterBatch: (records: readonly AttemptRecord[]) => void) {
    this.#deps = deps;
    this.#afterBatch = afterBatch;
  }

  /** Queues an attempt for the next recording batch; resolves once it is committed. */
  record(record: AttemptRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#unrecorded.push({ record, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      if (this.#recording === undefined) this.#recording = this.#flush();
    });
  }

  async #flush(): Promise<void> {
    try {
      while (this.#unrecorded.length > 0) {
        // Let the responses that have already arrived join this batch first (with SQLite a commit
        // blocks the event loop, so without this every batch would hold one attempt).
        await yieldToIo();
        const batch = this.#unrecorded.splice(0, BATCH_MAX);
        const records = batch.map((entry) => entry.record);
        try {
          await recordAttempts(this.#deps, records);
          for (const entry of batch) entry.settle();
        } catch (error) {
          for (const entry of batch) entry.settle(error instanceof Error ? error : new Error(String(error)));
        }
        this.#afterBatch(records);
      }
    } finally {
      this.#recording = undefined;
    }
  }
}

/** Gives leased, unsent attempts' leases back in batches, so they can be claimed again at once. */
export class LeaseReleaser {
  readonly #deps: Pick<DeliveryDependencies, 'db'>;
  readonly #logger: Logger;
  /** After each batch, given back or not, with the leases it held. */
  readonly #afterBatch: (leases: readonly Lease[]) => void;
  readonly #unsent: Lease[] = [];
  #releasing: Promise<void> | undefined;

  constructor(deps: Pick<DeliveryDependencies, 'db'>, logger: Logger, afterBatch: (leases: readonly Lease[]) => void) {
    this.#deps = deps;
    this.#logger = logger;
    this.#afterBatch = afterBatch;
  }

  release(lease: Lease): void {
    this.#unsent.push(lease);
    if (this.#releasing === undefined) this.#releasing = this.#flush();
  }

  async #flush(): Promise<void> {
    try {
      while (this.#unsent.length > 0) {
        await yieldToIo();
        const batch = this.#unsent.splice(0, BATCH_MAX);
        const byLease = new Map<string, string[]>();
        for (const { target, leaseId } of batch) byLease.set(leaseId, [...(byLease.get(leaseId) ?? []), target.deliveryId]);
        try {
          for (const [leaseId, ids] of byLease) await leases.releaseLeases(this.#deps.db.kysely, ids, leaseId);
        } catch (error) {
          // Not given back, the leases simply expire: a delay, never a loss.
          this.#logger.warn({ err: error }, 'webhook worker: could not give back unsent leases; they will expire');
        }
        this.#afterBatch(batch);
      }
    } finally {
      this.#releasing = undefined;
    }
  }
}
