import { setImmediate as yieldToIo, setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import { addMilliseconds, isoTime } from '../../shared/clock.js';
import { newId, randomBase62 } from '../../shared/ids.js';
import { findUndispatchedEvents, markEventsDispatched } from '../events/event-log.service.js';
import {
  type AttemptRecord,
  type DeliveryDependencies,
  type DeliveryTarget,
  loadDeliveryTargets,
  recordAttempts,
  sendAttempt,
} from './webhooks.delivery.js';
import * as store from './webhooks.store.js';

/**
 * The delivery worker (CONTRACT.md section 6). It runs in `svc serve` beside the API and alone in
 * `svc worker`; any number of them may share one PostgreSQL database.
 *
 * Each pass does two things:
 *
 * 1. **Fan-out.** Events reach the outbox in the transaction of the change they report, with
 *    `dispatched_at` null. The worker takes a batch of them (PostgreSQL: `FOR UPDATE SKIP LOCKED`,
 *    so two workers take different batches; SQLite: the single writer), creates one delivery per
 *    (event, enabled endpoint subscribed to its type or "*"), and marks them dispatched, all in one
 *    transaction. A crash before the commit leaves the events undispatched for the next pass; a
 *    unique index on (event, endpoint) makes a repeated fan-out harmless. So an event that
 *    committed always gets its deliveries, and the write path of events pays nothing for it.
 *
 * 2. **Attempts.** The worker claims due pending deliveries by writing a lease (a random id and an
 *    expiry, `LEASE_MS`) on them in a short transaction (again `SKIP LOCKED` on PostgreSQL), then
 *    sends each one outside any transaction and records the result under that lease. A worker that
 *    dies leaves leases that expire, and the deliveries are claimed again: none is lost, and while a
 *    lease is alive no other worker sends that attempt. The lease outlives the 10-s request timeout
 *    by far, so a live worker always records before its lease ends.
 *
 * Bounds: at most `concurrencyMax` attempts in flight per worker (sending or being recorded), and
 * at most `endpointInFlightMax` requests open per endpoint, so a slow or dead endpoint holds a few
 * slots and the others keep flowing; claims pass over endpoints that are at their limit.
 *
 * Results are recorded in batches: the attempts that finish while one batch is being written go
 * into the next, so a commit (an fsync) serves many attempts instead of one each.
 */

export interface DeliveryWorkerOptions extends DeliveryDependencies {
  readonly logger: Logger;
  readonly concurrencyMax?: number;
  readonly endpointInFlightMax?: number;
  readonly leaseMs?: number;
  /** How long an idle worker waits before looking for work again. */
  readonly pollIntervalMs?: number;
  /** Events fanned out per transaction. */
  readonly dispatchBatchSize?: number;
}

export interface TickReport {
  /** Events fanned out. */
  readonly dispatched: number;
  /** Attempts started. */
  readonly started: number;
}

export const LEASE_MS = 60_000;
const CONCURRENCY_MAX = 128;
const ENDPOINT_IN_FLIGHT_MAX = 32;
/** Attempts recorded per transaction at the most. */
const RECORD_BATCH_MAX = 500;
const POLL_INTERVAL_MS = 100;
const DISPATCH_BATCH_SIZE = 200;
/** Candidates read per claim, as a multiple of the free slots, so per-endpoint limits can be honoured. */
const CLAIM_CANDIDATES_FACTOR = 4;
const ERROR_BACKOFF_MS = 1000;

export class DeliveryWorker {
  readonly #deps: DeliveryDependencies;
  readonly #logger: Logger;
  readonly #concurrencyMax: number;
  readonly #endpointInFlightMax: number;
  readonly #leaseMs: number;
  readonly #pollIntervalMs: number;
  readonly #dispatchBatchSize: number;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #inFlightByEndpoint = new Map<string, number>();
  readonly #unrecorded: { record: AttemptRecord; settle: (error?: Error) => void }[] = [];
  #recording: Promise<void> | undefined;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #wake: AbortController = new AbortController();

  constructor(options: DeliveryWorkerOptions) {
    this.#deps = { db: options.db, clock: options.clock, outbound: options.outbound, retryScheduleSeconds: options.retryScheduleSeconds };
    this.#logger = options.logger;
    this.#concurrencyMax = options.concurrencyMax ?? CONCURRENCY_MAX;
    this.#endpointInFlightMax = options.endpointInFlightMax ?? ENDPOINT_IN_FLIGHT_MAX;
    this.#leaseMs = options.leaseMs ?? LEASE_MS;
    this.#pollIntervalMs = options.pollIntervalMs ?? POLL_INTERVAL_MS;
    this.#dispatchBatchSize = options.dispatchBatchSize ?? DISPATCH_BATCH_SIZE;
  }

  get #db(): Db {
    return this.#deps.db;
  }

  /** Starts the background loop; `stop` ends it. */
  start(): void {
    if (this.#loop !== undefined) return;
    this.#stopping = false;
    this.#loop = this.#run();
  }

  /** Stops claiming work and waits for the attempts in flight (each bounded by the request timeout). */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake.abort();
    await this.#loop;
    this.#loop = undefined;
    await this.idle();
  }

  /** One pass: fan out a batch of events, then claim and start as many due attempts as there are free slots. */
  async tick(): Promise<TickReport> {
    let dispatched = 0;
    try {
      dispatched = await this.#dispatch();
    } catch (error) {
      // A failed fan-out (say, an endpoint deleted mid-batch) rolls back whole and runs again next
      // pass; the attempts already due are not held up by it.
      this.#logger.error({ err: error }, 'webhook worker: fan-out failed; retrying next pass');
    }
    const started = await this.#claimAndStart();
    return { dispatched, started };
  }

  /** Resolves when no attempt started by this worker is in flight. */
  async idle(): Promise<void> {
    for (let round = 0; this.#inFlight.size > 0 && round < 1000; round += 1) {
      await Promise.allSettled([...this.#inFlight]);
    }
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

  async #run(): Promise<void> {
    while (!this.#stopping) {
      let waitMs = this.#pollIntervalMs;
      // Responses that have already arrived are handled (and free their slots) before claiming.
      await yieldToIo();
      try {
        const report = await this.tick();
        // A full batch means more events are waiting: go on at once.
        if (report.dispatched >= this.#dispatchBatchSize) waitMs = 0;
      } catch (error) {
        this.#logger.error({ err: error }, 'webhook worker: pass failed; retrying');
        waitMs = ERROR_BACKOFF_MS;
      }
      if (this.#stopping) break;
      if (waitMs > 0) {
        // Woken early when an attempt finishes (a slot is free) or when stopping.
        await sleep(waitMs, undefined, { signal: this.#wake.signal }).catch(() => undefined);
        if (this.#wake.signal.aborted && !this.#stopping) this.#wake = new AbortController();
      }
    }
  }

  async #dispatch(): Promise<number> {
    const db = this.#db;
    // A read first, outside any transaction: an idle worker takes no write lock (SQLite).
    const waiting = await findUndispatchedEvents(db.kysely, { limit: 1, skipLocked: false });
    if (waiting.length === 0) return 0;
    return inTransaction(db, async (trx) => {
      const events = await findUndispatchedEvents(trx, { limit: this.#dispatchBatchSize, skipLocked: db.dialect === 'postgres' });
      if (events.length === 0) return 0;
      const endpoints = await store.findEnabledEndpoints(trx, [...new Set(events.map((event) => event.project_id))]);
      const byProject = new Map<string, { id: string; types: Set<string> }[]>();
      for (const endpoint of endpoints) {
        const list = byProject.get(endpoint.project_id) ?? [];
        list.push({ id: endpoint.id, types: new Set(JSON.parse(endpoint.events) as string[]) });
        byProject.set(endpoint.project_id, list);
      }
      const now = isoTime(this.#deps.clock.now());
      const firstDelayMs = (this.#deps.retryScheduleSeconds[0] ?? 0) * 1000;
      const deliveries: store.DeliveryRow[] = [];
      for (const event of events) {
        for (const endpoint of byProject.get(event.project_id) ?? []) {
          if (!endpoint.types.has(event.type) && !endpoint.types.has('*')) continue;
          deliveries.push({
            id: newId('del'),
            project_id: event.project_id,
            endpoint_id: endpoint.id,
            event_id: event.id,
            event_type: event.type,
            status: 'pending',
            attempt_count: 0,
            scheduled_attempt_count: 0,
            next_attempt_at: isoTime(addMilliseconds(new Date(event.created_at), firstDelayMs)),
            lease_id: null,
            leased_until: null,
            last_attempt_at: null,
            created_at: now,
            updated_at: now,
          });
        }
      }
      await store.insertDeliveries(trx, deliveries);
      await markEventsDispatched(
        trx,
        events.map((event) => event.id),
        now,
      );
      return events.length;
    });
  }

  async #claimAndStart(): Promise<number> {
    const slots = this.#concurrencyMax - this.#inFlight.size;
    if (slots <= 0 || this.#stopping) return 0;
    const db = this.#db;
    const now = this.#deps.clock.now();
    const nowIso = isoTime(now);
    const excludedEndpointIds = [...this.#inFlightByEndpoint].filter(([, count]) => count >= this.#endpointInFlightMax).map(([id]) => id);
    const due = await store.findDueDeliveries(db.kysely, { now: nowIso, limit: 1, excludedEndpointIds, skipLocked: false });
    if (due.length === 0) return 0;

    const leaseId = randomBase62(22);
    const claimed = await inTransaction(db, async (trx) => {
      const candidates = await store.findDueDeliveries(trx, {
        now: nowIso,
        limit: slots * CLAIM_CANDIDATES_FACTOR,
        excludedEndpointIds,
        skipLocked: db.dialect === 'postgres',
      });
      const picked: string[] = [];
      const pickedByEndpoint = new Map<string, number>();
      for (const candidate of candidates) {
        if (picked.length >= slots) break;
        const count = (this.#inFlightByEndpoint.get(candidate.endpoint_id) ?? 0) + (pickedByEndpoint.get(candidate.endpoint_id) ?? 0);
        if (count >= this.#endpointInFlightMax) continue;
        picked.push(candidate.id);
        pickedByEndpoint.set(candidate.endpoint_id, (pickedByEndpoint.get(candidate.endpoint_id) ?? 0) + 1);
      }
      await store.leaseDeliveries(trx, picked, leaseId, isoTime(addMilliseconds(now, this.#leaseMs)));
      return picked;
    });
    if (claimed.length === 0) return 0;

    const targets = await loadDeliveryTargets(db, claimed, now);
    for (const target of targets) this.#start(target, leaseId);
    return targets.length;
  }

  #start(target: DeliveryTarget, leaseId: string): void {
    this.#inFlightByEndpoint.set(target.endpointId, (this.#inFlightByEndpoint.get(target.endpointId) ?? 0) + 1);
    const send = async (): Promise<void> => {
      let outcome;
      try {
        outcome = await sendAttempt(this.#deps, target);
      } finally {
        // The endpoint's slot is free once the exchange is over; the worker's slot once recorded.
        const count = (this.#inFlightByEndpoint.get(target.endpointId) ?? 1) - 1;
        if (count <= 0) this.#inFlightByEndpoint.delete(target.endpointId);
        else this.#inFlightByEndpoint.set(target.endpointId, count);
      }
      await this.#record({ target, outcome, kind: 'scheduled', leaseId });
    };
    const run = send()
      .catch((error: unknown) => {
        // The attempt may have been sent; its lease expires and the delivery is claimed again.
        this.#logger.error({ err: error, delivery_id: target.deliveryId }, 'webhook worker: could not record an attempt');
      })
      .finally(() => {
        this.#inFlight.delete(run);
        // Slots free up a recording batch at a time; the loop claims again once the last of a
        // batch is done rather than once per attempt, so claims stay batched too.
        if (this.#unrecorded.length === 0 && this.#recording === undefined) this.#wake.abort();
      });
    this.#inFlight.add(run);
  }

  /** Queues an attempt for the next recording batch; resolves once it is committed. */
  #record(record: AttemptRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#unrecorded.push({ record, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      this.#recording ??= this.#flush();
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
      }
    } finally {
      this.#recording = undefined;
    }
  }
}
