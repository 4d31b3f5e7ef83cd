import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WebhookAttemptKind } from '../../db/schema.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';

/** How an attempt ended, as the metrics count it. */
export type AttemptResult = 'succeeded' | 'http_error' | 'redirect' | 'timeout' | 'network' | 'refused';

/** What the delivery code reports; `noDeliveryMetrics` when nobody scrapes (tests, tools). */
export interface DeliveryMetrics {
  /** One attempt sent (or refused before sending), with how long the exchange took. */
  attempted(kind: WebhookAttemptKind, result: AttemptResult, latencyMs: number): void;
  /** A delivery reached a final status in a committed transaction. */
  finished(status: 'succeeded' | 'failed'): void;
  /** A delivery succeeded `lagMs` after its event was committed (scheduled attempts only). */
  delivered(lagMs: number): void;
  /**
   * Leases of a worker that died were freed, `count` deliveries: by another worker that found its
   * heartbeat stale (`dead_worker`), or by the same identity restarted (`restart`).
   */
  leasesFreed(reason: LeasesFreedReason, count: number): void;
}

export type LeasesFreedReason = 'dead_worker' | 'restart';

export const noDeliveryMetrics: DeliveryMetrics = {
  attempted: () => undefined,
  finished: () => undefined,
  delivered: () => undefined,
  leasesFreed: () => undefined,
};

export interface DeliveryMetricsOptions {
  /** Deliveries waiting to be sent, database-wide (an indexed count); read by the refresh job, never by a scrape. */
  readonly countPending: () => Promise<number>;
  /** Events not yet fanned out to deliveries, database-wide (an indexed count); read by the refresh job, never by a scrape. */
  readonly countUndispatched: () => Promise<number>;
}

/**
 * How often the database-wide gauges are counted again: the most a gauge lags behind the
 * database, and the most often this process counts, however often it is scraped.
 */
export const DELIVERY_GAUGES_REFRESH_INTERVAL_MS = 15_000;

export interface DeliveryMetricsWithGauges {
  readonly metrics: DeliveryMetrics;
  /** Counts the database-wide gauges again; scheduled every DELIVERY_GAUGES_REFRESH_INTERVAL_MS. */
  readonly gaugesJob: PeriodicJob;
}

const RESULTS: readonly AttemptResult[] = ['succeeded', 'http_error', 'redirect', 'timeout', 'network', 'refused'];
const KINDS: readonly WebhookAttemptKind[] = ['scheduled', 'manual'];

/**
 * Webhook delivery metrics in the service's registry (served at `GET /metrics`). Counters are per
 * process: with several workers, Prometheus sums them. The two gauges are database-wide figures,
 * so every process reports the same; they are counted by `gaugesJob` at most every
 * DELIVERY_GAUGES_REFRESH_INTERVAL_MS and held in memory. A scrape only reads memory: it never
 * queries the database, so scraping costs the same whatever the size of the tables and however
 * often it comes (a scrape that counted every tenant's deliveries would grow with them).
 */
export function createDeliveryMetrics(registry: Registry, options: DeliveryMetricsOptions): DeliveryMetricsWithGauges {
  const attempts = new Counter({
    name: 'webhook_attempts_total',
    help: 'Webhook delivery attempts made by this process, by kind (scheduled, manual) and result.',
    labelNames: ['kind', 'result'] as const,
    registers: [registry],
  });
  const finished = new Counter({
    name: 'webhook_deliveries_finished_total',
    help: 'Deliveries that reached a final status in this process: succeeded, or failed after the last scheduled attempt.',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'Time from sending an attempt to having its answer (or giving up), in seconds.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const lag = new Histogram({
    name: 'webhook_delivery_lag_seconds',
    help: 'Time from an event to the successful scheduled attempt of one of its deliveries, in seconds (retries included).',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200],
    registers: [registry],
  });
  const freed = new Counter({
    name: 'webhook_leases_freed_total',
    help: 'Deliveries whose lease this process freed because the worker holding them died: found by its stale heartbeat (dead_worker) or at its restart under the same identity (restart).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const pending = new Gauge({
    name: 'webhook_deliveries_pending',
    help: 'Deliveries waiting for an attempt (status pending), across the database; counted every 15 s.',
    registers: [registry],
  });
  const undispatched = new Gauge({
    name: 'webhook_events_undispatched',
    help: 'Events committed but not yet fanned out to webhook deliveries, across the database; counted every 15 s.',
    registers: [registry],
  });
  const gaugesJob: PeriodicJob = {
    name: 'webhook-metrics-gauges',
    intervalMs: DELIVERY_GAUGES_REFRESH_INTERVAL_MS,
    async run() {
      // Each gauge on its own: a count that fails (a database outage) keeps its last value, and
      // the scheduler logs the failure.
      const [pendingCount, undispatchedCount] = await Promise.allSettled([options.countPending(), options.countUndispatched()]);
      if (pendingCount.status === 'fulfilled') pending.set(pendingCount.value);
      if (undispatchedCount.status === 'fulfilled') undispatched.set(undispatchedCount.value);
      const failed = [pendingCount, undispatchedCount].find((result) => result.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    },
  };
  // Children looked up once: prom-client hashes label values on every `labels` call. Every series
  // is created at zero, so a rate over a result that has not happened yet is 0, not absent.
  const attemptChildren = new Map(
    KINDS.flatMap((kind) => RESULTS.map((result) => [`${kind} ${result}`, attempts.labels({ kind, result })] as const)),
  );
  const finishedChildren = { succeeded: finished.labels({ status: 'succeeded' }), failed: finished.labels({ status: 'failed' }) };
  const freedChildren = { dead_worker: freed.labels({ reason: 'dead_worker' }), restart: freed.labels({ reason: 'restart' }) };
  for (const child of [...attemptChildren.values(), ...Object.values(finishedChildren), ...Object.values(freedChildren)]) child.inc(0);
  const metrics: DeliveryMetrics = {
    attempted(kind, result, latencyMs) {
      attemptChildren.get(`${kind} ${result}`)?.inc();
      duration.observe(latencyMs / 1000);
    },
    finished(status) {
      finishedChildren[status].inc();
    },
    delivered(lagMs) {
      lag.observe(Math.max(0, lagMs) / 1000);
    },
    leasesFreed(reason, count) {
      freedChildren[reason].inc(count);
    },
  };
  return { metrics, gaugesJob };
}
