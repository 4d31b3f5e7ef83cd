import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToIo, setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import { addMilliseconds, isoTime } from '../../lib/clock.js';
import { newId, randomBase62 } from '../../lib/ids.js';
import { findUndispatchedEvents, hasUndispatchedEvents, markEventsDispatched } from '../events/event-log.service.js';
import {
  type AttemptRecord,
  type DeliveryDependencies,
  type DeliveryTarget,
  deliveryTarget,
  loadDeliveryTargets,
  recordAttempts,
  resumeWorkerLeases,
  sendAttempt,
} from './webhooks.delivery.js';
import * as store from './webhooks.store.js';

/**
 * The delivery worker (docs/api.md section 6). It runs in `svc serve` beside the API and alone in
 * `svc worker`; any number of them may share one PostgreSQL database. Two loops run side by side:
 *
 * 1. **Fan-out.** Events reach the outbox in the transaction of the change they report, with
 *    `dispatched_at` null. The worker takes a batch of them (PostgreSQL: `FOR UPDATE SKIP LOCKED`,
 *    so two workers take different batches; SQLite: the single writer), creates one delivery per
 *    (event, enabled endpoint subscribed to its type or "*"), and marks them dispatched, all in one
 *    transaction. A crash before the commit leaves the events undispatched for the next pass; a
 *    unique index on (event, endpoint) makes a repeated fan-out harmless. So an event that
 *    committed always gets its deliveries, and the write path of events pays nothing for it.
 *    Deliveries due at once are created already leased to this worker, as far as it has room,
 *    and sent as soon as the transaction commits: the first attempt needs no claim of its own.
 *
 * 2. **Claims.** The other due deliveries (retries, and first attempts the fan-out had no room
 *    for or that a dead worker left) are claimed by writing a lease (a random id and an expiry,
 *    `WEBHOOK_LEASE_SECONDS`) on them in a short transaction (again `SKIP LOCKED` on PostgreSQL).
 *
 * Either way an attempt is sent outside any transaction and recorded under its lease. A worker
 * that dies leaves leases that expire, and the deliveries are claimed again: none is lost, and
 * while a lease is alive no other worker sends that attempt. An attempt is sent only while its
 * lease outlives the request timeout with time to record it; one that waited too long for a free
 * request slot is given back unsent instead.
 *
 * Bounds, per worker: at most `concurrencyMax` attempts held (leased and not yet recorded); per
 * endpoint, at most `endpointInFlightMax` requests open and `endpointQueuedMax` attempts held and
 * not yet answered. An endpoint that answers slowly or not at all (a request open longer than
 * `SLOW_REQUEST_MS`, or its last attempt ended in a timeout or a network failure) may hold no
 * more than its open requests; what it held beyond that is given back, and claims pass over it.
 * So a slow or dead endpoint holds a few slots and the others keep flowing.
 *
 * Results are recorded in batches: the attempts that finish while one batch is being written go
 * into the next, so a commit (an fsync) serves many attempts instead of one each.
 */

export interface DeliveryWorkerOptions extends DeliveryDependencies {
  readonly logger: Logger;
  /** The request timeout of one attempt; an attempt is sent only while its lease outlives it. */
  readonly attemptTimeoutMs: number;
  readonly concurrencyMax?: number;
  readonly endpointInFlightMax?: number;
  readonly endpointQueuedMax?: number;
  readonly leaseMs?: number;
  /** How long an idle worker waits before looking for work again. */
  readonly pollIntervalMs?: number;
  /** Events fanned out per transaction. */
  readonly dispatchBatchSize?: number;
  /**
   * The worker's identity, stable across its restarts and unique among running workers, asked for
   * at `start`: its leases carry it, and at start it takes back the leases it held before a crash.
   * None: leases carry no identity, and a crashed worker's deliveries wait out their leases.
   */
  readonly identity?: () => string | undefined;
}

export interface TickReport {
  /** Events fanned out. */
  readonly dispatched: number;
  /** Attempts taken on (leased at fan-out or claimed); each is sent once its endpoint has a free request slot. */
  readonly started: number;
}

/** Totals since the worker was made, for the log line at stop. */
export interface WorkerTotals {
  /** Attempts leased, at fan-out or by a claim. */
  readonly leased: number;
  readonly sent: number;
  /** Leased but given back unsent (stopping, a slow endpoint, or too little of the lease left). */
  readonly released: number;
}

export const LEASE_MS = 60_000;
/** Attempts leased and not yet recorded, per worker: its whole budget of work in hand. */
const CONCURRENCY_MAX = 1024;
/** Requests open at once to one endpoint. */
const ENDPOINT_IN_FLIGHT_MAX = 32;
/**
 * Attempts leased for one healthy endpoint and not yet answered (open, or waiting for a request
 * slot): by default the whole budget, so one fast endpoint can use all of it.
 */
const ENDPOINT_QUEUED_MAX = CONCURRENCY_MAX;
/** A request open longer than this marks its endpoint as slow. */
const SLOW_REQUEST_MS = 1000;
/** Deliveries leased per claiming transaction at the most. */
const CLAIM_BATCH_MAX = 512;
/** Attempts recorded per transaction at the most. */
const RECORD_BATCH_MAX = 500;
const POLL_INTERVAL_MS = 100;
/** Events fanned out per transaction at the most... */
const DISPATCH_BATCH_SIZE = 1000;
/** ...and deliveries created per transaction at the most (an event with many endpoints fills it sooner). */
const FAN_OUT_DELIVERIES_MAX = 5000;
/** What must be left of a lease after the request timeout for an attempt to be sent: time to record it. */
const LEASE_RECORD_MARGIN_MS = 2_000;
const ERROR_BACKOFF_MS = 1000;

/** An attempt this worker holds the lease of. */
interface Lease {
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

/**
 * Attempts a throttled endpoint may hold (leased, not yet sent): two seconds of its rate, so its
 * leases never wait long and its backlog stays in the database, claimable by others in turn,
 * instead of filling this worker's budget.
 */
function throttledHoldMax(ratePerSecond: number): number {
  return Math.max(1, Math.ceil(ratePerSecond * 2));
}

export class DeliveryWorker {
  readonly #deps: DeliveryDependencies;
  readonly #logger: Logger;
  readonly #attemptTimeoutMs: number;
  readonly #concurrencyMax: number;
  readonly #endpointInFlightMax: number;
  readonly #endpointQueuedMax: number;
  readonly #leaseMs: number;
  readonly #pollIntervalMs: number;
  readonly #dispatchBatchSize: number;
  readonly #endpoints = new Map<string, EndpointSlots>();
  /** Attempts leased and not yet settled (recorded or given back). */
  #held = 0;
  /** Room set aside by a fan-out or claim in progress (the two loops run side by side). */
  #reserved = 0;
  #idleWaiters: (() => void)[] = [];
  readonly #unrecorded: { record: AttemptRecord; settle: (error?: Error) => void }[] = [];
  #recording: Promise<void> | undefined;
  readonly #unsent: Lease[] = [];
  #releasing: Promise<void> | undefined;
  #loops: Promise<void> | undefined;
  #stopping = false;
  /** The claiming loop's wait, cut short when room is freed, new deliveries exist, or stopping. */
  readonly #claimPause = new Pause();
  readonly #fanOutPause = new Pause();
  #totals = { leased: 0, sent: 0, released: 0 };
  #claimFoundWork = false;
  /** The identity this worker's leases carry (see `identity`), once started. */
  #workerId: string | undefined;

  constructor(options: DeliveryWorkerOptions) {
    this.#deps = {
      db: options.db,
      clock: options.clock,
      outbound: options.outbound,
      retryScheduleSeconds: options.retryScheduleSeconds,
      metrics: options.metrics,
      secrets: options.secrets,
      disableAfterSeconds: options.disableAfterSeconds,
      audit: options.audit,
    };
    this.#logger = options.logger;
    this.#attemptTimeoutMs = options.attemptTimeoutMs;
    this.#concurrencyMax = options.concurrencyMax ?? CONCURRENCY_MAX;
    this.#endpointInFlightMax = options.endpointInFlightMax ?? ENDPOINT_IN_FLIGHT_MAX;
    this.#endpointQueuedMax = Math.max(this.#endpointInFlightMax, options.endpointQueuedMax ?? ENDPOINT_QUEUED_MAX);
    this.#leaseMs = options.leaseMs ?? LEASE_MS;
    this.#pollIntervalMs = options.pollIntervalMs ?? POLL_INTERVAL_MS;
    this.#dispatchBatchSize = options.dispatchBatchSize ?? DISPATCH_BATCH_SIZE;
    this.#identity = options.identity;
  }

  readonly #identity: (() => string | undefined) | undefined;

  get #db(): Db {
    return this.#deps.db;
  }

  get totals(): WorkerTotals {
    return { ...this.#totals };
  }

  /**
   * Starts the background loops (fan-out, and claims); `stop` ends them. First, under a stable
   * identity, it takes back the leases it held before a crash, so those deliveries go out now
   * rather than when their leases expire.
   */
  start(): void {
    if (this.#loops !== undefined) return;
    this.#stopping = false;
    this.#loops = this.resumeOwnLeases()
      .then((resumed) => this.#claimFirst(resumed))
      .then(() => Promise.all([this.#fanOutLoop(), this.#claimLoop()]).then(() => undefined));
  }

  /**
   * Claims the deliveries a restart took back before the fan-out starts: they are the oldest due,
   * and would otherwise wait for room behind the first attempts of events fanned out meanwhile.
   */
  async #claimFirst(resumed: number): Promise<void> {
    let left = resumed;
    try {
      while (left > 0 && !this.#stopping) {
        const claimed = await this.#claim();
        if (claimed === 0) return;
        left -= claimed;
      }
    } catch (error) {
      this.#logger.error({ err: error }, 'webhook worker: claiming the resumed deliveries failed; the claim loop takes them');
    }
  }

  /**
   * Takes on this worker's identity (once) and gives back the leases held under it: a process with
   * this identity that died left them, and none of them is in flight. Returns how many.
   */
  async resumeOwnLeases(): Promise<number> {
    if (this.#workerId === undefined) this.#workerId = this.#identity?.();
    if (this.#workerId === undefined) return 0;
    try {
      const released = await resumeWorkerLeases(this.#deps, this.#workerId);
      if (released > 0)
        this.#logger.info(
          { worker_id: this.#workerId, deliveries: released },
          'webhook worker: resumed the deliveries it held before a restart',
        );
      return released;
    } catch (error) {
      // Not given back, they wait out their leases: a delay, never a loss.
      this.#logger.warn({ err: error }, 'webhook worker: could not take back its earlier leases; they will expire');
      return 0;
    }
  }

  /** A new lease id: the worker's identity, when it has one, and 128 bits of randomness. */
  #newLeaseId(): string {
    return this.#workerId === undefined ? randomBase62(22) : `${this.#workerId}.${randomBase62(22)}`;
  }

  /**
   * Stops taking on work, gives back the leases of attempts not yet sent, and waits for the attempts
   * in flight (each bounded by the request timeout) to be recorded.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#claimPause.wake();
    this.#fanOutPause.wake();
    await this.#loops;
    this.#loops = undefined;
    for (const slots of this.#endpoints.values()) {
      clearTimeout(slots.timer);
      slots.timer = undefined;
      this.#giveBackWaiting(slots, 0);
    }
    await this.idle();
  }

  /** One pass: fan out a batch of events, then claim as many due attempts as there is room for. */
  async tick(): Promise<TickReport> {
    let dispatched = 0;
    let leased = 0;
    try {
      ({ dispatched, leased } = await this.#dispatch());
    } catch (error) {
      // A failed fan-out (say, an endpoint deleted mid-batch) rolls back whole and runs again next
      // pass; the attempts already due are not held up by it.
      this.#logger.error({ err: error }, 'webhook worker: fan-out failed; retrying next pass');
    }
    const claimed = await this.#claim();
    return { dispatched, started: leased + claimed };
  }

  /** Resolves when no attempt leased by this worker is unsettled (sent and recorded, or given back). */
  async idle(): Promise<void> {
    if (this.#held === 0) return;
    await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Passes until nothing is due now (tests and tools; the service uses `start`). Bounded by `passesMax`. */
  async drain(options: { readonly passesMax?: number } = {}): Promise<void> {
    const passesMax = options.passesMax ?? 100;
    for (let pass = 0; pass < passesMax; pass += 1) {
      const report = await this.tick();
      await this.idle();
      if (report.dispatched === 0 && report.started === 0) return;
    }
  }

  /** Fans events out while there are any, else looks again every poll interval. */
  async #fanOutLoop(): Promise<void> {
    while (!this.#stopping) {
      let waitMs = this.#pollIntervalMs;
      this.#fanOutPause.begin();
      try {
        const { more } = await this.#dispatch();
        if (more) waitMs = 0;
      } catch (error) {
        // A failed fan-out (say, an endpoint deleted mid-batch) rolls back whole and runs again.
        this.#logger.error({ err: error }, 'webhook worker: fan-out failed; retrying');
        waitMs = ERROR_BACKOFF_MS;
      }
      if (!this.#stopping) await this.#fanOutPause.wait(waitMs);
    }
  }

  /** Claims due attempts while it finds some and has room, else waits for a poll, freed room or new deliveries. */
  async #claimLoop(): Promise<void> {
    while (!this.#stopping) {
      let waitMs = this.#pollIntervalMs;
      // Responses that have already arrived are handled (and free their slots) before claiming.
      await yieldToIo();
      this.#claimPause.begin();
      try {
        const claimed = await this.#claim();
        if (claimed > 0 && this.#held < this.#concurrencyMax) waitMs = 0;
      } catch (error) {
        this.#logger.error({ err: error }, 'webhook worker: claiming failed; retrying');
        waitMs = ERROR_BACKOFF_MS;
      }
      if (!this.#stopping) await this.#claimPause.wait(waitMs);
    }
  }

  /**
   * Fans out one batch of events and leases the deliveries due now that there is room for. `more`
   * when events were left for the next batch.
   */
  async #dispatch(): Promise<{ dispatched: number; leased: number; more: boolean }> {
    const db = this.#db;
    // A worker with no room leaves the events in the outbox (to another worker, or until it has
    // room): fanned out now, their deliveries would only wait, and need a claim of their own later.
    const roomNow = this.#freeRoom();
    if (roomNow < this.#batchRoomMin || this.#stopping) return { dispatched: 0, leased: 0, more: false };
    // A read first, outside any transaction: an idle worker takes no write lock (SQLite).
    if (!(await hasUndispatchedEvents(db))) return { dispatched: 0, leased: 0, more: false };
    const leaseId = this.#newLeaseId();
    this.#reserved += roomNow;
    try {
      return await this.#fanOut(leaseId, roomNow);
    } finally {
      this.#reserved -= roomNow;
    }
  }

  async #fanOut(leaseId: string, roomNow: number): Promise<{ dispatched: number; leased: number; more: boolean }> {
    const db = this.#db;
    const result = await inTransaction(db, async (trx) => {
      const events = await findUndispatchedEvents(trx, {
        limit: Math.min(this.#dispatchBatchSize, roomNow),
        skipLocked: db.dialect === 'postgres',
      });
      if (events.length === 0) return { dispatched: 0, leases: [], more: false };
      const endpoints = await store.findEnabledEndpoints(trx, [...new Set(events.map((event) => event.project_id))]);
      const byProject = new Map<string, { endpoint: (typeof endpoints)[number]; types: Set<string> }[]>();
      for (const endpoint of endpoints) {
        const list = byProject.get(endpoint.project_id) ?? [];
        list.push({ endpoint, types: new Set(JSON.parse(endpoint.events) as string[]) });
        byProject.set(endpoint.project_id, list);
      }
      const now = this.#deps.clock.now();
      const nowIso = isoTime(now);
      const leasedUntilMs = now.getTime() + this.#leaseMs;
      const leasedUntil = isoTime(new Date(leasedUntilMs));
      const firstDelayMs = (this.#deps.retryScheduleSeconds[0] ?? 0) * 1000;
      // The transaction may run again: the room taken is counted afresh each time.
      const room = this.#roomFor(roomNow);
      const deliveries: store.DeliveryRow[] = [];
      const leases: Lease[] = [];
      const fannedOut: string[] = [];
      for (const event of events) {
        const subscribed = (byProject.get(event.project_id) ?? []).filter(({ types }) => types.has(event.type) || types.has('*'));
        // The rest of the batch waits for the next transaction (at least one event per batch):
        // when it would exceed the deliveries of one transaction, or the worker has no room left.
        if (fannedOut.length > 0 && (room.total <= 0 || deliveries.length + subscribed.length > FAN_OUT_DELIVERIES_MAX)) break;
        fannedOut.push(event.id);
        const nextAttemptAt = isoTime(addMilliseconds(new Date(event.created_at), firstDelayMs));
        for (const { endpoint } of subscribed) {
          const id = newId('del');
          const lease = !this.#stopping && nextAttemptAt <= nowIso && room.take(endpoint.id, endpoint.rate_limit_per_second);
          deliveries.push({
            id,
            project_id: event.project_id,
            endpoint_id: endpoint.id,
            event_id: event.id,
            event_type: event.type,
            status: 'pending',
            attempt_count: 0,
            scheduled_attempt_count: 0,
            next_attempt_at: nextAttemptAt,
            lease_id: lease ? leaseId : null,
            leased_until: lease ? leasedUntil : null,
            last_attempt_at: null,
            created_at: nowIso,
            updated_at: nowIso,
          });
          if (lease)
            leases.push({
              target: deliveryTarget({ deliveryId: id, endpoint, event, now, secrets: this.#deps.secrets }),
              leaseId,
              leasedUntilMs,
            });
        }
      }
      const inserted = await store.insertDeliveries(trx, deliveries, db.dialect);
      await markEventsDispatched(trx, fannedOut, nowIso, db.dialect);
      return {
        dispatched: fannedOut.length,
        // A delivery that existed already for its (event, endpoint) was not inserted, so its lease
        // is not ours. (Only a repeated fan-out could meet one, and that finds the events dispatched.)
        leases: leases.filter((lease) => inserted.has(lease.target.deliveryId)),
        more: fannedOut.length < events.length || events.length >= Math.min(this.#dispatchBatchSize, roomNow),
      };
    });
    // Committed: the deliveries exist and their leases are this worker's.
    this.#take(result.leases);
    if (result.dispatched > 0) this.#claimPause.wake();
    return { dispatched: result.dispatched, leased: result.leases.length, more: result.more };
  }

  async #claim(): Promise<number> {
    this.#shedSlowEndpoints();
    const wanted = Math.min(this.#freeRoom(), CLAIM_BATCH_MAX);
    if (wanted < this.#batchRoomMin || this.#stopping) return 0;
    this.#reserved += wanted;
    try {
      return await this.#claimUpTo(wanted);
    } finally {
      this.#reserved -= wanted;
    }
  }

  async #claimUpTo(wanted: number): Promise<number> {
    const db = this.#db;
    const now = this.#deps.clock.now();
    const nowIso = isoTime(now);
    // Slow endpoints at their limit are left out in the query, so their backlog never hides the
    // deliveries of others; a fast one at its limit frees room within moments and is only passed
    // over below.
    const excludedEndpointIds = this.#roomFor(wanted).excluded();
    // A read first, outside any transaction, so an idle worker takes no write lock (SQLite); not
    // needed right after a claim that found work, when more is likely.
    if (!this.#claimFoundWork) {
      const due = await store.findDueDeliveries(db.kysely, { now: nowIso, limit: 1, excludedEndpointIds, skipLocked: false });
      if (due.length === 0) return 0;
    }
    const leaseId = this.#newLeaseId();
    const leasedUntilMs = now.getTime() + this.#leaseMs;
    const claimed = await inTransaction(db, async (trx) => {
      const candidates = await store.findDueDeliveries(trx, {
        now: nowIso,
        limit: wanted,
        excludedEndpointIds,
        skipLocked: db.dialect === 'postgres',
      });
      // The transaction may run again: the room taken is counted afresh each time.
      const attempt = this.#roomFor(wanted);
      const picked = candidates.filter((candidate) => attempt.take(candidate.endpoint_id)).map((candidate) => candidate.id);
      await store.leaseDeliveries(trx, picked, leaseId, isoTime(new Date(leasedUntilMs)));
      return picked;
    });
    this.#claimFoundWork = claimed.length > 0;
    if (claimed.length === 0) return 0;

    const targets = await loadDeliveryTargets(db, this.#deps.secrets, claimed, now);
    // A claimed delivery whose endpoint or event was deleted meanwhile has nothing to send.
    const loaded = new Set(targets.map((target) => target.deliveryId));
    const vanished = claimed.filter((id) => !loaded.has(id));
    if (vanished.length > 0) await store.releaseLeases(db.kysely, vanished, leaseId);
    this.#take(targets.map((target) => ({ target, leaseId, leasedUntilMs })));
    return targets.length;
  }

  /**
   * The least room worth a transaction: a busy worker takes on work in batches of at least an
   * eighth of its budget, not one attempt per recorded result.
   */
  get #batchRoomMin(): number {
    return Math.max(1, Math.ceil(this.#concurrencyMax / 8));
  }

  /** Attempts this worker may still take on. */
  #freeRoom(): number {
    return this.#concurrencyMax - this.#held - this.#reserved;
  }

  /**
   * `budget` attempts of room, in all and per endpoint, as a counter that `take` draws on. A slow
   * endpoint's room is its open requests' limit; a healthy one's, `endpointQueuedMax`.
   */
  #roomFor(budget: number): {
    readonly total: number;
    take(endpointId: string, ratePerSecond?: number | null): boolean;
    excluded(): string[];
  } {
    let total = budget;
    const taken = new Map<string, number>();
    const nowMs = performance.now();
    const limitOf = (slots: EndpointSlots | undefined, ratePerSecond?: number | null) => {
      const limit = slots !== undefined && this.#isSlow(slots, nowMs) ? this.#endpointInFlightMax : this.#endpointQueuedMax;
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
      // Slow endpoints and throttled ones at their limit: their backlog must not fill the claims.
      excluded: () =>
        [...this.#endpoints]
          .filter(([, slots]) => (this.#isSlow(slots, nowMs) || slots.ratePerSecond !== null) && slots.queued >= limitOf(slots))
          .map(([id]) => id),
    };
  }

  /** Gives back what slow endpoints hold beyond their open requests (see `#pump`). */
  #shedSlowEndpoints(): void {
    const nowMs = performance.now();
    for (const slots of this.#endpoints.values()) {
      if (slots.waiting.length > 0 && this.#isSlow(slots, nowMs)) {
        this.#giveBackWaiting(slots, this.#endpointInFlightMax - slots.openSinceMs.length);
      }
    }
  }

  #isSlow(slots: EndpointSlots, nowMs: number): boolean {
    const oldest = slots.openSinceMs[0];
    return slots.failing || (oldest !== undefined && nowMs - oldest > SLOW_REQUEST_MS);
  }

  /** Takes on leased attempts: each waits for a request slot of its endpoint. */
  #take(leases: readonly Lease[]): void {
    const touched = new Set<string>();
    for (const lease of leases) {
      const slots = this.#slots(lease.target.endpointId);
      slots.ratePerSecond = lease.target.rateLimitPerSecond;
      slots.queued += 1;
      this.#held += 1;
      slots.waiting.push(lease);
      touched.add(lease.target.endpointId);
    }
    this.#totals.leased += leases.length;
    for (const endpointId of touched) this.#pump(endpointId);
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
    const nowMs = this.#deps.clock.now().getTime();
    while (slots.openSinceMs.length < this.#endpointInFlightMax && slots.waiting.length > 0) {
      const lease = slots.waiting[0];
      if (lease === undefined) break;
      if (this.#stopping || lease.leasedUntilMs - nowMs < this.#attemptTimeoutMs + LEASE_RECORD_MARGIN_MS) {
        slots.waiting.shift();
        slots.queued -= 1;
        this.#release(lease);
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
      this.#totals.sent += 1;
      void this.#send(lease, slots);
    }
    if (this.#isSlow(slots, performance.now())) this.#giveBackWaiting(slots, this.#endpointInFlightMax - slots.openSinceMs.length);
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
    for (const lease of surplus) this.#release(lease);
  }

  async #send(lease: Lease, slots: EndpointSlots): Promise<void> {
    const { target, leaseId } = lease;
    const startedMs = performance.now();
    slots.openSinceMs.push(startedMs);
    try {
      let outcome;
      try {
        outcome = await sendAttempt(this.#deps, target, 'scheduled');
        slots.failing = outcome.result === 'timeout' || outcome.result === 'network';
      } finally {
        // The endpoint's request slot is free once the exchange is over; the worker's once recorded.
        slots.openSinceMs.splice(slots.openSinceMs.indexOf(startedMs), 1);
        slots.queued -= 1;
        this.#pump(target.endpointId);
        this.#forgetIfIdle(target.endpointId);
      }
      await this.#record({ target, outcome, kind: 'scheduled', leaseId });
    } catch (error) {
      // The attempt may have been sent; its lease expires and the delivery is claimed again.
      this.#logger.error({ err: error, delivery_id: target.deliveryId }, 'webhook worker: could not record an attempt');
    } finally {
      this.#settle();
    }
  }

  /** Forgets an endpoint that holds nothing, unless it is failing (which must be remembered). */
  #forgetIfIdle(endpointId: string): void {
    const slots = this.#endpoints.get(endpointId);
    // A throttled endpoint is remembered until its next start is due, so its spacing holds.
    if (slots === undefined || slots.queued > 0 || slots.failing) return;
    if (slots.ratePerSecond !== null && slots.nextSendMs > performance.now()) return;
    this.#endpoints.delete(endpointId);
  }

  /** One leased attempt is done with (recorded, or given back). */
  #settle(): void {
    this.#held -= 1;
    if (this.#held === 0) {
      for (const resolve of this.#idleWaiters.splice(0)) resolve();
    }
  }

  /** Gives a leased, unsent attempt's lease back (in batches), so it can be claimed again at once. */
  #release(lease: Lease): void {
    this.#unsent.push(lease);
    if (this.#releasing === undefined) this.#releasing = this.#flushReleases();
  }

  async #flushReleases(): Promise<void> {
    try {
      while (this.#unsent.length > 0) {
        await yieldToIo();
        const batch = this.#unsent.splice(0, RECORD_BATCH_MAX);
        const byLease = new Map<string, string[]>();
        for (const { target, leaseId } of batch) byLease.set(leaseId, [...(byLease.get(leaseId) ?? []), target.deliveryId]);
        try {
          for (const [leaseId, ids] of byLease) await store.releaseLeases(this.#db.kysely, ids, leaseId);
        } catch (error) {
          // Not given back, the leases simply expire: a delay, never a loss.
          this.#logger.warn({ err: error }, 'webhook worker: could not give back unsent leases; they will expire');
        }
        this.#totals.released += batch.length;
        for (const { target } of batch) {
          this.#forgetIfIdle(target.endpointId);
          this.#settle();
        }
        this.#claimPause.wake();
        this.#fanOutPause.wake();
      }
    } finally {
      this.#releasing = undefined;
    }
  }

  /** Queues an attempt for the next recording batch; resolves once it is committed. */
  #record(record: AttemptRecord): Promise<void> {
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
        const batch = this.#unrecorded.splice(0, RECORD_BATCH_MAX);
        try {
          await recordAttempts(
            this.#deps,
            batch.map((entry) => entry.record),
          );
          for (const entry of batch) entry.settle();
        } catch (error) {
          for (const entry of batch) entry.settle(error instanceof Error ? error : new Error(String(error)));
        }
        // Room is free: the loops go on now rather than at their next poll.
        this.#claimPause.wake();
        this.#fanOutPause.wake();
      }
    } finally {
      this.#recording = undefined;
    }
  }
}

/** A loop's wait between passes. `wake` cuts it short; a wake during a pass skips the next wait. */
class Pause {
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
