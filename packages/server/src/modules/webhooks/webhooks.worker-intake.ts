import { hasUndispatchedEvents } from '../events/event-log.service.js';
import type { DeliveryDependencies } from './webhooks.delivery.js';
import type { WorkerBudget } from './webhooks.worker-budget.js';
import type { EndpointQueues, Lease } from './webhooks.worker-endpoints.js';
import { claimDue, fanOutBatch } from './webhooks.worker-leasing.js';
import { CLAIM_BATCH_MAX } from './webhooks.worker-options.js';

export interface WorkIntakeOptions {
  readonly deps: DeliveryDependencies;
  readonly budget: WorkerBudget;
  readonly endpoints: EndpointQueues;
  readonly leaseMs: number;
  readonly dispatchBatchSize: number;
  /** A new lease id of this worker's run. */
  readonly newLeaseId: () => string;
  readonly isStopping: () => boolean;
  /** Takes on the leases a transaction committed. */
  readonly take: (leases: readonly Lease[]) => void;
  /** A fan-out left due deliveries unleased: they are the claims' work. */
  readonly onDueUnleased: () => void;
}

/**
 * How much the delivery worker (webhooks.worker.ts) takes on in each of its two transactions
 * (webhooks.worker-leasing.ts), and whether to run one at all: each takes the room of the worker's
 * budget it may lease into for its length, sizes its batch from what the last ones found, and
 * takes no write lock when a read shows there is nothing to do.
 */
export class WorkIntake {
  readonly #options: WorkIntakeOptions;
  #claimFoundWork = false;
  /**
   * The last claim found work (or skipped for want of room): freed room wakes the claiming loop.
   * Otherwise it waits for its poll, a fan-out that left due deliveries unleased, given-back
   * leases or a failed attempt: each wake-up costs a query that walks the leased deliveries.
   */
  #claimWantsRoom = false;
  /** Deliveries per event in the last fan-out batch: how many events the next one reads. */
  #deliveriesPerEvent = 1;

  constructor(options: WorkIntakeOptions) {
    this.#options = options;
  }

  get claimWantsRoom(): boolean {
    return this.#claimWantsRoom;
  }

  /**
   * Fans out one batch of events and leases the deliveries due now that there is room for. `more`
   * when events were left for the next batch.
   */
  async fanOut(): Promise<{ dispatched: number; leased: number; more: boolean }> {
    const { deps, budget, endpoints, isStopping } = this.#options;
    // A worker with no room leaves the events in the outbox (to another worker, or until it has
    // room): fanned out now, their deliveries would only wait, and need a claim of their own later.
    const roomNow = budget.batchRoom(Number.POSITIVE_INFINITY);
    if (roomNow === 0 || isStopping()) return { dispatched: 0, leased: 0, more: false };
    // A read first, outside any transaction: an idle worker takes no write lock (SQLite).
    if (!(await hasUndispatchedEvents(deps.db))) return { dispatched: 0, leased: 0, more: false };
    budget.reserve(roomNow);
    try {
      const batch = await fanOutBatch(deps, {
        leaseId: this.#options.newLeaseId(),
        leaseMs: this.#options.leaseMs,
        // Events read (and locked) per batch: as many as the room can take at the deliveries per
        // event of the last batch, and one more, not the whole batch size: with 100 endpoints,
        // 1,000 events read for the 10 that fit would be fetched and locked for nothing.
        limit: Math.min(this.#options.dispatchBatchSize, roomNow, Math.ceil(roomNow / this.#deliveriesPerEvent) + 1),
        // The transaction may run again: the room taken is counted afresh each time.
        room: () => endpoints.room(roomNow),
        isStopping,
      });
      if (batch.dispatched > 0) this.#deliveriesPerEvent = Math.max(1, batch.deliveriesPerEvent);
      // Committed: the deliveries exist and their leases are this worker's.
      this.#options.take(batch.leases);
      // Deliveries it could not lease are the claims' work, now rather than at the next poll.
      if (batch.dueUnleased > 0) this.#options.onDueUnleased();
      return { dispatched: batch.dispatched, leased: batch.leases.length, more: batch.more };
    } finally {
      budget.unreserve(roomNow);
    }
  }

  /** Claims as many due attempts as there is room for; returns how many it leased. */
  async claim(): Promise<number> {
    const { deps, budget, endpoints, isStopping } = this.#options;
    endpoints.shedSlowEndpoints();
    const wanted = budget.batchRoom(CLAIM_BATCH_MAX);
    if (wanted === 0 || isStopping()) {
      this.#claimWantsRoom = !isStopping();
      return 0;
    }
    budget.reserve(wanted);
    try {
      const { found, claimed, leases } = await claimDue(deps, {
        wanted,
        leaseId: this.#options.newLeaseId(),
        leaseMs: this.#options.leaseMs,
        room: () => endpoints.room(wanted),
        // A read first, outside any transaction, so an idle worker takes no write lock (SQLite);
        // not needed right after a claim that found work, when more is likely.
        lookFirst: !this.#claimFoundWork,
      });
      this.#claimFoundWork = claimed > 0;
      this.#claimWantsRoom = claimed > 0 || found > claimed;
      this.#options.take(leases);
      return leases.length;
    } finally {
      budget.unreserve(wanted);
    }
  }
}
