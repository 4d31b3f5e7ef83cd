import type { Logger } from 'pino';
import type { DeliveryDependencies } from './webhooks.delivery.js';

/** The delivery worker's options, reports and default bounds (webhooks.worker.ts runs it). */

export interface DeliveryWorkerOptions extends DeliveryDependencies {
  readonly logger: Logger;
  /** The request timeout of one attempt; an attempt is sent only while its lease outlives it. */
  readonly attemptTimeoutMs: number;
  readonly concurrencyMax?: number;
  readonly endpointInFlightMax?: number;
  readonly endpointQueuedMax?: number;
  readonly leaseMs?: number;
  /** The wait between passes of a loop that found work, or after a wake (default 100 ms). */
  readonly pollIntervalMs?: number;
  /** The longest wait between passes of a loop that keeps finding nothing (default 1 s). */
  readonly idlePollIntervalMs?: number;
  /** Events fanned out per transaction. */
  readonly dispatchBatchSize?: number;
  /** How often the heartbeat is renewed (default HEARTBEAT_INTERVAL_MS). */
  readonly heartbeatIntervalMs?: number;
  /**
   * The worker's identity, stable across its restarts and unique among running workers, asked for
   * at `start`: its leases carry it, and at start it takes back the leases it held before a crash.
   * None: leases carry no identity, and a crashed worker's deliveries wait out their leases.
   */
  readonly identity?: () => string | undefined;
  /** Told of each wait of the fan-out loop as it begins (tests watch the idle backoff with it). */
  readonly onFanOutWait?: (wait: FanOutWait) => void;
}

/** One wait of the fan-out loop between two passes. */
export interface FanOutWait {
  /** How long the loop waits unless woken: longer than the poll interval once it has backed off. */
  readonly waitMs: number;
  /** Settles when the wait is over: `woken` when a wake cut it short (or skipped it). */
  readonly ended: Promise<{ readonly woken: boolean }>;
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
export const CONCURRENCY_MAX = 1024;
/** Requests open at once to one endpoint. */
export const ENDPOINT_IN_FLIGHT_MAX = 32;
/**
 * Attempts leased for one healthy endpoint and not yet answered (open, or waiting for a request
 * slot): by default the whole budget, so one fast endpoint can use all of it.
 */
export const ENDPOINT_QUEUED_MAX = CONCURRENCY_MAX;
/** Deliveries leased per claiming transaction at the most. */
export const CLAIM_BATCH_MAX = 512;
export const POLL_INTERVAL_MS = 100;
/** The longest wait of a loop that keeps finding nothing (see IdleBackoff). */
export const IDLE_POLL_INTERVAL_MS = 1000;
/** Events fanned out per transaction at the most. */
export const DISPATCH_BATCH_SIZE = 1000;
export const ERROR_BACKOFF_MS = 1000;
/** How often a running worker renews its heartbeat row and looks for dead workers. */
export const HEARTBEAT_INTERVAL_MS = 1000;
/**
 * A worker whose heartbeat is older than this is dead, and any other worker frees its leases:
 * four missed beats. With a beat a second, a dead worker's deliveries are free within about 6 s.
 */
export const HEARTBEAT_STALE_MS = 5000;
