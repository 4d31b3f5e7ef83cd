import { setImmediate as yieldToIo } from 'node:timers/promises';
import type { Logger } from 'pino';
import { randomBase62 } from '../../lib/ids.js';
import { onEventsRecorded } from '../events/events.service.js';
import { type AttemptOutcome, type DeliveryDependencies, sendAttempt } from './webhooks.delivery.js';
import { AttemptRecorder, LeaseReleaser } from './webhooks.worker-batches.js';
import { WorkerBudget } from './webhooks.worker-budget.js';
import { EndpointQueues, type Lease } from './webhooks.worker-endpoints.js';
import { WorkIntake } from './webhooks.worker-intake.js';
import { takeBackLeases } from './webhooks.worker-leasing.js';
import {
  CONCURRENCY_MAX,
  DISPATCH_BATCH_SIZE,
  type DeliveryWorkerOptions,
  ENDPOINT_IN_FLIGHT_MAX,
  ENDPOINT_QUEUED_MAX,
  ERROR_BACKOFF_MS,
  HEARTBEAT_INTERVAL_MS,
  HEARTBEAT_STALE_MS,
  IDLE_POLL_INTERVAL_MS,
  LEASE_MS,
  POLL_INTERVAL_MS,
  type TickReport,
  type WorkerTotals,
} from './webhooks.worker-options.js';
import { WorkerHeartbeat } from './webhooks.worker-heartbeat.js';
import { IdleBackoff, Pause } from './webhooks.worker-pause.js';

/**
 * The delivery worker (docs/api.md section 6). It runs in `svc serve` beside the API and alone in
 * `svc worker`; any number of them may share one PostgreSQL database. Two loops run side by side:
 *
 * 1. **Fan-out** of the outbox's events into deliveries, those due now created leased to this
 *    worker as far as it has room, and sent as soon as the transaction commits.
 * 2. **Claims** of the other due deliveries (retries, first attempts the fan-out had no room for
 *    or that a dead worker left), by writing a lease on them in a short transaction.
 *
 * Either way an attempt is sent outside any transaction and recorded under its lease. A running
 * worker renews a heartbeat row every second (webhooks.worker-heartbeat.ts); one that dies leaves
 * a heartbeat that goes stale, and another worker frees its leases within seconds, so the
 * deliveries are claimed again: none is lost, and while its worker is alive no other worker sends
 * an attempt it leased. An attempt is sent only while its
 * lease outlives the request timeout with time to record it; one that waited too long for a free
 * request slot is given back unsent instead.
 *
 * Results are recorded in batches: the attempts that finish while one batch is being written go
 * into the next, so a commit (an fsync) serves many attempts instead of one each.
 *
 * The parts: the two transactions that take on work in webhooks.worker-leasing.ts, and how much
 * each takes on in webhooks.worker-intake.ts; the budget of attempts held in
 * webhooks.worker-budget.ts; the per-endpoint queues and limits in webhooks.worker-endpoints.ts;
 * the batched writes in webhooks.worker-batches.ts; its options and bounds in
 * webhooks.worker-options.ts. This file runs the loops, and starts and stops the worker.
 */

export class DeliveryWorker {
  readonly #deps: DeliveryDependencies;
  readonly #logger: Logger;
  readonly #pollIntervalMs: number;
  readonly #idlePollIntervalMs: number;
  readonly #identity: (() => string | undefined) | undefined;
  readonly #onFanOutWait: DeliveryWorkerOptions['onFanOutWait'];
  readonly #endpoints: EndpointQueues;
  readonly #recorder: AttemptRecorder;
  readonly #releaser: LeaseReleaser;
  readonly #heartbeat: WorkerHeartbeat;
  readonly #budget: WorkerBudget;
  readonly #intake: WorkIntake;
  #loops: Promise<void> | undefined;
  #stopping = false;
  /** The claiming loop's wait, cut short when room is freed, new deliveries exist, or stopping. */
  readonly #claimPause = new Pause();
  readonly #fanOutPause = new Pause();
  #totals = { leased: 0, sent: 0, released: 0 };
  /** The identity this worker's leases carry (see `identity`), once started. */
  #workerId: string | undefined;
  /** Stops listening for the events this process records (while started). */
  #stopListening: (() => void) | undefined;
  /** The fan-out waits longer than the base interval (it found nothing for a while). */
  #fanOutBackedOff = false;

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
    this.#budget = new WorkerBudget(options.concurrencyMax ?? CONCURRENCY_MAX);
    const inFlightMax = options.endpointInFlightMax ?? ENDPOINT_IN_FLIGHT_MAX;
    this.#pollIntervalMs = options.pollIntervalMs ?? POLL_INTERVAL_MS;
    this.#idlePollIntervalMs = options.idlePollIntervalMs ?? IDLE_POLL_INTERVAL_MS;
    this.#identity = options.identity;
    this.#onFanOutWait = options.onFanOutWait;
    this.#endpoints = new EndpointQueues({
      clock: options.clock,
      attemptTimeoutMs: options.attemptTimeoutMs,
      inFlightMax,
      queuedMax: Math.max(inFlightMax, options.endpointQueuedMax ?? ENDPOINT_QUEUED_MAX),
      mayStart: (lease) => !this.#stopping && this.#heartbeat.holds(lease.leaseId),
      send: (lease) => {
        this.#totals.sent += 1;
        return sendAttempt(this.#deps, lease.target, 'scheduled');
      },
      answered: (lease, outcome, error) => this.#answered(lease, outcome, error),
      release: (lease) => this.#releaser.release(lease),
    });
    this.#intake = new WorkIntake({
      deps: this.#deps,
      budget: this.#budget,
      endpoints: this.#endpoints,
      leaseMs: options.leaseMs ?? LEASE_MS,
      dispatchBatchSize: options.dispatchBatchSize ?? DISPATCH_BATCH_SIZE,
      newLeaseId: () => this.#newLeaseId(),
      isStopping: () => this.#stopping,
      take: (leases) => this.#take(leases),
      onDueUnleased: () => this.#claimPause.wake(),
    });
    // Room is free after each batch: the fan-out goes on now rather than at its next poll, and
    // the claims if they wanted room or an attempt failed (its retry may be due at once).
    this.#recorder = new AttemptRecorder(this.#deps, (records) => {
      if (this.#intake.claimWantsRoom || records.some((record) => !record.outcome.succeeded)) this.#claimPause.wake();
      this.#fanOutPause.wake();
    });
    this.#heartbeat = new WorkerHeartbeat({
      deps: this.#deps,
      logger: this.#logger,
      intervalMs: options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS,
      staleMs: HEARTBEAT_STALE_MS,
      onTakenOver: () => this.#claimPause.wake(),
    });
    this.#releaser = new LeaseReleaser(this.#deps, this.#logger, (leases) => {
      this.#totals.released += leases.length;
      for (const { target } of leases) {
        this.#endpoints.forgetIfIdle(target.endpointId);
        this.#budget.settle();
      }
      this.#wakeLoops();
    });
  }

  get totals(): WorkerTotals {
    return { ...this.#totals };
  }

  /**
   * Starts the background loops (fan-out, and claims) and the heartbeat; `stop` ends them. First,
   * under a stable identity, it takes back the leases it held before a crash, so those deliveries
   * go out now rather than when their leases expire.
   */
  start(): void {
    if (this.#loops !== undefined) return;
    this.#stopping = false;
    // Events written in this process do not wait for an idle poll: a fan-out backed off past the
    // base interval runs now (it may run before their transaction commits; the next pass, a base
    // interval later, sees them). A busy one is at most that far away and takes them in one batch
    // with the others, rather than one transaction per event.
    this.#stopListening = onEventsRecorded(() => {
      if (this.#fanOutBackedOff) this.#fanOutPause.wake();
    });
    this.#loops = this.resumeOwnLeases()
      .then(async (resumed) => {
        await this.#startHeartbeat();
        await this.#claimFirst(resumed);
      })
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
        const claimed = await this.#intake.claim();
        if (claimed === 0) return;
        left -= claimed;
      }
    } catch (error) {
      this.#logger.error({ err: error }, 'webhook worker: claiming the resumed deliveries failed; the claim loop takes them');
    }
  }

  /**
   * Writes this run's heartbeat row, retrying until it is written or the worker stops: leases are
   * taken only under a run whose row exists, so that a dead run's leases can be found.
   */
  async #startHeartbeat(): Promise<void> {
    while (!this.#stopping) {
      try {
        await this.#heartbeat.start(this.#workerId);
        return;
      } catch (error) {
        this.#logger.error({ err: error }, 'webhook worker: could not write its heartbeat row; retrying');
        await new Promise((resolve) => setTimeout(resolve, ERROR_BACKOFF_MS));
      }
    }
  }

  /**
   * Takes on this worker's identity (once) and gives back the leases held under it: a process with
   * this identity that died left them, and none of them is in flight. Returns how many.
   */
  async resumeOwnLeases(): Promise<number> {
    if (this.#workerId === undefined) this.#workerId = this.#identity?.();
    return this.#workerId === undefined ? 0 : takeBackLeases(this.#deps, this.#logger, this.#workerId);
  }

  /** A new lease id: this run's id (the worker's identity, when it has one, first) and 128 bits of randomness. */
  #newLeaseId(): string {
    return `${this.#heartbeat.runId}.${randomBase62(22)}`;
  }

  /**
   * Stops taking on work, gives back the leases of attempts not yet sent, and waits for the attempts
   * in flight (each bounded by the request timeout) to be recorded.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#stopListening?.();
    this.#stopListening = undefined;
    this.#claimPause.wake();
    this.#fanOutPause.wake();
    await this.#loops;
    this.#loops = undefined;
    this.#endpoints.giveBackAll();
    await this.idle();
    // Nothing is held any more: the row goes, and no other worker need take this one over.
    await this.#heartbeat.stop();
  }

  /** One pass: fan out a batch of events, then claim as many due attempts as there is room for. */
  async tick(): Promise<TickReport> {
    let dispatched = 0;
    let leased = 0;
    try {
      ({ dispatched, leased } = await this.#intake.fanOut());
    } catch (error) {
      // A failed fan-out (say, an endpoint deleted mid-batch) rolls back whole and runs again next
      // pass; the attempts already due are not held up by it.
      this.#logger.error({ err: error }, 'webhook worker: fan-out failed; retrying next pass');
    }
    const claimed = await this.#intake.claim();
    return { dispatched, started: leased + claimed };
  }

  /** Resolves when no attempt leased by this worker is unsettled (sent and recorded, or given back). */
  idle(): Promise<void> {
    return this.#budget.idle();
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

  /** Fans events out while there are any, else looks again after a poll interval (IdleBackoff). */
  async #fanOutLoop(): Promise<void> {
    const backoff = new IdleBackoff(this.#pollIntervalMs, this.#idlePollIntervalMs);
    while (!this.#stopping) {
      let waitMs = backoff.waitMs;
      this.#fanOutPause.begin();
      try {
        const { dispatched, more } = await this.#intake.fanOut();
        backoff.passed(dispatched > 0);
        if (more) waitMs = 0;
      } catch (error) {
        // A failed fan-out (say, an endpoint deleted mid-batch) rolls back whole and runs again.
        this.#logger.error({ err: error }, 'webhook worker: fan-out failed; retrying');
        waitMs = ERROR_BACKOFF_MS;
      }
      this.#fanOutBackedOff = waitMs > this.#pollIntervalMs;
      if (!this.#stopping) {
        const woken = this.#fanOutPause.wait(waitMs);
        this.#onFanOutWait?.({ waitMs, ended: woken.then((cutShort) => ({ woken: cutShort })) });
        if (await woken) backoff.reset();
      }
      this.#fanOutBackedOff = false;
    }
  }

  /** Claims due attempts while it finds some and has room, else waits for a poll, freed room or new deliveries. */
  async #claimLoop(): Promise<void> {
    const backoff = new IdleBackoff(this.#pollIntervalMs, this.#idlePollIntervalMs);
    while (!this.#stopping) {
      let waitMs = backoff.waitMs;
      // Responses that have already arrived are handled (and free their slots) before claiming.
      await yieldToIo();
      this.#claimPause.begin();
      try {
        const claimed = await this.#intake.claim();
        backoff.passed(claimed > 0);
        if (claimed > 0 && !this.#budget.full) waitMs = 0;
      } catch (error) {
        this.#logger.error({ err: error }, 'webhook worker: claiming failed; retrying');
        waitMs = ERROR_BACKOFF_MS;
      }
      if (!this.#stopping && (await this.#claimPause.wait(waitMs))) backoff.reset();
    }
  }

  /** Takes on leased attempts: each waits for a request slot of its endpoint. */
  #take(leases: readonly Lease[]): void {
    this.#budget.hold(leases.length);
    this.#totals.leased += leases.length;
    this.#endpoints.take(leases);
  }

  /** An attempt's exchange is over: its result is recorded, and the attempt settled once it is. */
  #answered(lease: Lease, outcome: AttemptOutcome | undefined, error: unknown): void {
    const { target, leaseId } = lease;
    // The attempt may have been sent; unrecorded, its lease expires and the delivery is claimed again.
    const failed = (failure: unknown) =>
      this.#logger.error({ err: failure, delivery_id: target.deliveryId }, 'webhook worker: could not record an attempt');
    if (outcome === undefined) {
      failed(error);
      this.#budget.settle();
      return;
    }
    this.#recorder
      .record({ target, outcome, kind: 'scheduled', leaseId })
      .catch(failed)
      .finally(() => this.#budget.settle());
  }

  #wakeLoops(): void {
    this.#claimPause.wake();
    this.#fanOutPause.wake();
  }
}
