import { performance } from 'node:perf_hooks';
import type { Clock } from '../../lib/clock.js';
import type { AttemptOutcome, DeliveryTarget } from './webhooks.delivery.js';

/**
 * The delivery worker's per-endpoint queues (docs/adr/0006-webhook-delivery.md, "Isolation" and
 * "Per-endpoint rate"): which leased attempt may start when, how many requests each endpoint may
 * have open, which endpoints are slow, and how much room a fan-out or a claim may take for each.
 * The worker (webhooks.worker.ts) leases attempts and records them; this holds them in between.
 *
 * Per endpoint: at most `endpointInFlightMax` requests open and `endpointQueuedMax` attempts held and
 * not yet answered. An endpoint that answers slowly or not at all (a request open longer than
 * `SLOW_REQUEST_MS`, or its last attempt ended in a timeout or a network failure) may hold no
 * more than its open requests; what it held beyond that is given back, and claims pass over it.
 * So a slow or dead endpoint holds a few slots and the others keep flowing.
 */

/** An attempt the worker holds the lease of. */
export interface Lease {
  readonly target: DeliveryTarget;
  readonly leaseId: string;
  readonly leasedUntilMs: number;
}

/** One endpoint's share of the worker. */
interface EndpointSlots {
  /** Leased and not yet answered: waiting or open. */
  queued: number;
  /** When each open request started (performance.now()), oldest first. */
  readonly openSinceMs: number[];
  /** Leased, waiting for a free request slot, oldest first. */
  readonly waiting: Lease[];
  /** The last answer was a timeout or a network failure. */
  failing: boolean;
  /** The endpoint's `rate_limit_per_second`, as its latest leased attempt said. */
  ratePerSecond: number | null;
  /** With a rate: when (performance.now()) the next attempt may start. */
  nextSendMs: number;
  /** With a rate: the pending wake-up for the next attempt. */
  timer: NodeJS.Timeout | undefined;
}

/** A request open longer than this marks its endpoint as slow. */
const SLOW_REQUEST_MS = 1000;
/** What must be left of a lease after the request timeout for an attempt to be sent: time to record it. */
const LEASE_RECORD_MARGIN_MS = 2_000;

/**
 * Attempts a throttled endpoint may hold (leased, not yet sent): two seconds of its rate, so its
 * leases never wait long and its backlog stays in the database, claimable by others in turn,
 * instead of filling this worker's budget.
 */
function throttledHoldMax(ratePerSecond: number): number {
  return Math.max(1, Math.ceil(ratePerSecond * 2));
}

/** Room for a fan-out or a claim, in all and per endpoint, drawn on by `take`. */
export interface Room {
  readonly total: number;
  take(endpointId: string, ratePerSecond?: number | null): boolean;
  /** Slow endpoints and throttled ones at their limit: their backlog must not fill the claims. */
  excluded(): string[];
}

export interface EndpointQueuesOptions {
  readonly clock: Clock;
  /** The request timeout of one attempt; an attempt starts only while its lease outlives it. */
  readonly attemptTimeoutMs: number;
  /** Requests open at once to one endpoint. */
  readonly inFlightMax: number;
  /** Attempts leased for one healthy endpoint and not yet answered. */
  readonly queuedMax: number;
  /**
   * Whether the attempt may start now: the worker is not stopping, and the lease is still its own
   * (its heartbeat is fresh; see webhooks.worker-heartbeat.ts).
   */
  readonly mayStart: (lease: Lease) => boolean;
  /** Sends one attempt (never throws for what the receiver does). */
  readonly send: (lease: Lease) => Promise<AttemptOutcome>;
  /** An attempt was answered (or its sending threw, with `error`): its request slot is free again. */
  readonly answered: (lease: Lease, outcome: AttemptOutcome | undefined, error?: unknown) => void;
  /** An attempt leased and not sent is given back (its lease is released). */
  readonly release: (lease: Lease) => void;
}

export class EndpointQueues {
  readonly #options: EndpointQueuesOptions;
  readonly #endpoints = new Map<string, EndpointSlots>();

  constructor(options: EndpointQueuesOptions) {
    this.#options = options;
  }

  /**
   * `budget` attempts of room, in all and per endpoint, as a counter that `take` draws on. A slow
   * endpoint's room is its open requests' limit; a healthy one's, `queuedMax`.
   */
  room(budget: number): Room {
    let total = budget;
    const taken = new Map<string, number>();
    const nowMs = performance.now();
    const limitOf = (slots: EndpointSlots | undefined, ratePerSecond?: number | null) => {
      const limit = slots !== undefined && this.#isSlow(slots, nowMs) ? this.#options.inFlightMax : this.#options.queuedMax;
      const rate = ratePerSecond ?? slots?.ratePerSecond ?? null;
      return rate === null ? limit : Math.min(limit, throttledHoldMax(rate));
    };
    return {
      get total() {
        return total;
      },
      take: (endpointId, ratePerSecond) => {
        const slots = this.#endpoints.get(endpointId);
        const count = (slots?.queued ?? 0) + (taken.get(endpointId) ?? 0);
        if (total <= 0 || count >= limitOf(slots, ratePerSecond)) return false;
        taken.set(endpointId, (taken.get(endpointId) ?? 0) + 1);
        total -= 1;
        return true;
      },
      excluded: () =>
        [...this.#endpoints]
          .filter(([, slots]) => (this.#isSlow(slots, nowMs) || slots.ratePerSecond !== null) && slots.queued >= limitOf(slots))
          .map(([id]) => id),
    };
  }

  /** Gives back what slow endpoints hold beyond their open requests (see `#pump`). */
  shedSlowEndpoints(): void {
    const nowMs = performance.now();
    for (const slots of this.#endpoints.values()) {
      if (slots.waiting.length > 0 && this.#isSlow(slots, nowMs)) {
        this.#giveBackWaiting(slots, this.#options.inFlightMax - slots.openSinceMs.length);
      }
    }
  }

  /** Takes on leased attempts: each waits for a request slot of its endpoint. */
  take(leases: readonly Lease[]): void {
    const touched = new Set<string>();
    for (const lease of leases) {
      const slots = this.#slots(lease.target.endpointId);
      slots.ratePerSecond = lease.target.rateLimitPerSecond;
      slots.queued += 1;
      slots.waiting.push(lease);
      touched.add(lease.target.endpointId);
    }
    for (const endpointId of touched) this.#pump(endpointId);
  }

  /** At stop: every rate timer cleared and every waiting attempt given back. */
  giveBackAll(): void {
    for (const slots of this.#endpoints.values()) {
      clearTimeout(slots.timer);
      slots.timer = undefined;
      this.#giveBackWaiting(slots, 0);
    }
  }

  /** Forgets an endpoint that holds nothing, unless it is failing (which must be remembered). */
  forgetIfIdle(endpointId: string): void {
    const slots = this.#endpoints.get(endpointId);
    // A throttled endpoint is remembered until its next start is due, so its spacing holds.
    if (slots === undefined || slots.queued > 0 || slots.failing) return;
    if (slots.ratePerSecond !== null && slots.nextSendMs > performance.now()) return;
    this.#endpoints.delete(endpointId);
  }

  #isSlow(slots: EndpointSlots, nowMs: number): boolean {
    const oldest = slots.openSinceMs[0];
    return slots.failing || (oldest !== undefined && nowMs - oldest > SLOW_REQUEST_MS);
  }

  #slots(endpointId: string): EndpointSlots {
    let slots = this.#endpoints.get(endpointId);
    if (slots === undefined) {
      slots = { queued: 0, openSinceMs: [], waiting: [], failing: false, ratePerSecond: null, nextSendMs: 0, timer: undefined };
      this.#endpoints.set(endpointId, slots);
    }
    return slots;
  }

  /**
   * Starts the endpoint's waiting attempts while it has free request slots. An attempt is sent only
   * if its lease outlives the request timeout with time to spare for recording it, so no other
   * worker can claim it while it is in flight; otherwise its lease is given back unsent. A slow
   * endpoint keeps no more waiting than it has request slots; the rest is given back.
   */
  #pump(endpointId: string): void {
    const slots = this.#endpoints.get(endpointId);
    if (slots === undefined) return;
    const { inFlightMax } = this.#options;
    const nowMs = this.#options.clock.now().getTime();
    while (slots.openSinceMs.length < inFlightMax && slots.waiting.length > 0) {
      const lease = slots.waiting[0];
      if (lease === undefined) break;
      if (!this.#options.mayStart(lease) || lease.leasedUntilMs - nowMs < this.#options.attemptTimeoutMs + LEASE_RECORD_MARGIN_MS) {
        slots.waiting.shift();
        slots.queued -= 1;
        this.#options.release(lease);
        continue;
      }
      const waitMs = this.#throttle(slots);
      if (waitMs > 0) {
        slots.timer ??= setTimeout(() => {
          slots.timer = undefined;
          this.#pump(endpointId);
        }, Math.ceil(waitMs));
        break;
      }
      slots.waiting.shift();
      void this.#start(lease, slots);
    }
    if (this.#isSlow(slots, performance.now())) this.#giveBackWaiting(slots, inFlightMax - slots.openSinceMs.length);
    else if (slots.ratePerSecond !== null) this.#giveBackWaiting(slots, throttledHoldMax(slots.ratePerSecond) - slots.openSinceMs.length);
  }

  /**
   * The endpoint's rate: 0 when an attempt may start now (and the next start is set one interval
   * later), else the milliseconds until it may. Attempts start evenly spaced, never in a burst.
   */
  #throttle(slots: EndpointSlots): number {
    if (slots.ratePerSecond === null) return 0;
    const nowMs = performance.now();
    if (slots.nextSendMs > nowMs) return slots.nextSendMs - nowMs;
    slots.nextSendMs = nowMs + 1000 / slots.ratePerSecond;
    return 0;
  }

  /** Gives back all but `keep` of the endpoint's waiting attempts (the newest go first). */
  #giveBackWaiting(slots: EndpointSlots, keep: number): void {
    const surplus = slots.waiting.splice(Math.max(0, keep));
    slots.queued -= surplus.length;
    for (const lease of surplus) this.#options.release(lease);
  }

  /** Sends one attempt in a request slot of its endpoint; the slot is free once the exchange is over. */
  async #start(lease: Lease, slots: EndpointSlots): Promise<void> {
    const endpointId = lease.target.endpointId;
    const startedMs = performance.now();
    slots.openSinceMs.push(startedMs);
    let outcome: AttemptOutcome | undefined;
    let failure: unknown;
    try {
      outcome = await this.#options.send(lease);
      slots.failing = outcome.result === 'timeout' || outcome.result === 'network';
    } catch (error) {
      failure = error ?? new Error('sending failed');
    } finally {
      slots.openSinceMs.splice(slots.openSinceMs.indexOf(startedMs), 1);
      slots.queued -= 1;
      this.#pump(endpointId);
      this.forgetIfIdle(endpointId);
    }
    this.#options.answered(lease, outcome, failure);
  }
}
