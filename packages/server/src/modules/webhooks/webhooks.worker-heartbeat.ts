import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { isoTime } from '../../lib/clock.js';
import { randomBase62 } from '../../lib/ids.js';
import type { DeliveryDependencies } from './webhooks.delivery.js';
import { takeOverDeadWorker } from './webhooks.worker-takeover.js';
import * as workers from './webhooks.workers.store.js';

/**
 * A delivery worker's heartbeat, and the take-over of dead workers' leases
 * (docs/adr/0006-webhook-delivery.md, "Dead workers").
 *
 * Each run of a worker has an id, `<identity>.<random>`, that prefixes every lease it takes, and a
 * row in `webhook_workers` whose `last_seen` it renews every `intervalMs`. At each beat it also
 * looks for other runs whose `last_seen` is older than `staleMs`: their process died (SIGKILL, a
 * lost host) without a clean stop, which deletes the row. It deletes such a row and frees the
 * leases under its prefix in one transaction, so the deliveries go out again within seconds, not
 * when their leases expire. A live worker renews its row every second and is never that far
 * behind, so its leases, and the attempts it has in flight, are never taken from it.
 *
 * A worker that finds its own row gone was taken for dead (it could not write its heartbeat for
 * `staleMs`): its leases are another worker's to send. It starts no attempt under them (`holds`),
 * and carries on as a new run with a new row.
 */
export class WorkerHeartbeat {
  readonly #deps: Pick<DeliveryDependencies, 'db' | 'clock' | 'metrics'>;
  readonly #logger: Logger;
  readonly #intervalMs: number;
  readonly #staleMs: number;
  /** Leases were freed: the claims have work now. */
  readonly #onTakenOver: () => void;
  #runId: string;
  #identity: string | undefined;
  /** When (performance.now) the heartbeat was last written; undefined before the first. */
  #renewedAtMs: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #running = false;

  constructor(options: {
    readonly deps: Pick<DeliveryDependencies, 'db' | 'clock' | 'metrics'>;
    readonly logger: Logger;
    readonly intervalMs: number;
    readonly staleMs: number;
    readonly onTakenOver: () => void;
  }) {
    this.#deps = options.deps;
    this.#logger = options.logger;
    this.#intervalMs = options.intervalMs;
    this.#staleMs = options.staleMs;
    this.#onTakenOver = options.onTakenOver;
    this.#runId = newRunId(undefined);
  }

  /** The prefix of this run's lease ids (before `start`, of leases that no heartbeat covers). */
  get runId(): string {
    return this.#runId;
  }

  /**
   * Whether an attempt may start under `leaseId`: it is this run's, and the heartbeat was written
   * recently enough that no other worker can have taken this one for dead.
   */
  holds(leaseId: string): boolean {
    if (!this.#running) return true;
    if (!leaseId.startsWith(`${this.#runId}.`)) return false;
    return this.#renewedAtMs !== undefined && performance.now() - this.#renewedAtMs < this.#staleMs;
  }

  /** Writes this run's row (under `identity`, when the worker has one) and beats until `stop`. */
  async start(identity: string | undefined): Promise<void> {
    if (this.#running) return;
    this.#identity = identity;
    this.#runId = newRunId(identity);
    await this.#register();
    this.#running = true;
    // The first look for dead workers at once: a replacement started after a crash takes over the
    // dead one's leases as soon as its heartbeat is stale, not a beat later.
    this.#schedule(0);
  }

  /** Stops beating and deletes this run's row (its leases were given back or recorded). */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#beating;
    try {
      await workers.deleteWorkers(this.#deps.db.kysely, { id: this.#runId });
    } catch (error) {
      // The row goes stale and another worker deletes it (finding no leases under it).
      this.#logger.warn({ err: error }, 'webhook worker: could not delete its heartbeat row; another worker will');
    }
  }

  #schedule(delayMs: number = this.#intervalMs): void {
    this.#timer = setTimeout(() => {
      this.#beating = this.#beat().finally(() => {
        this.#beating = undefined;
        if (this.#running) this.#schedule();
      });
    }, delayMs);
    this.#timer.unref();
  }

  async #register(): Promise<void> {
    const now = isoTime(this.#deps.clock.now());
    await workers.insertWorker(this.#deps.db.kysely, {
      id: this.#runId,
      host: hostname(),
      pid: process.pid,
      started_at: now,
      last_seen: now,
    });
    this.#renewedAtMs = performance.now();
  }

  async #beat(): Promise<void> {
    try {
      const renewed = await workers.renewWorker(this.#deps.db.kysely, this.#runId, isoTime(this.#deps.clock.now()));
      if (renewed) {
        this.#renewedAtMs = performance.now();
      } else {
        this.#logger.error(
          { worker_run: this.#runId },
          'webhook worker: taken for dead (its heartbeat was not written in time); its leases went to other workers; continuing as a new run',
        );
        this.#runId = newRunId(this.#identity);
        await this.#register();
      }
    } catch (error) {
      this.#logger.warn({ err: error }, 'webhook worker: could not write its heartbeat');
    }
    try {
      await this.#takeOverDead();
    } catch (error) {
      this.#logger.warn({ err: error }, 'webhook worker: could not take over the leases of dead workers; retrying at the next beat');
    }
  }

  async #takeOverDead(): Promise<void> {
    const staleBefore = isoTime(new Date(this.#deps.clock.now().getTime() - this.#staleMs));
    const dead = await workers.findStaleWorkers(this.#deps.db.kysely, staleBefore, this.#runId);
    let freed = 0;
    for (const worker of dead) {
      const deliveries = await takeOverDeadWorker(this.#deps, worker.id, staleBefore);
      if (deliveries === undefined) continue;
      freed += deliveries;
      this.#deps.metrics.leasesFreed('dead_worker', deliveries);
      this.#logger.warn(
        { dead_worker_run: worker.id, last_seen: worker.last_seen, deliveries },
        'webhook worker: took over the leases of a dead worker',
      );
    }
    if (freed > 0) this.#onTakenOver();
  }
}

/** `<identity>.<random>`: a restarted worker finds its earlier runs' leases by `<identity>.`. */
function newRunId(identity: string | undefined): string {
  return `${identity ?? randomBase62(12)}.${randomBase62(8)}`;
}
