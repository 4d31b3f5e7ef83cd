import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config.js';
import type { AuditService } from '../audit/audit.service.js';
import type { Db } from '../../db/database.js';
import type { RouteModule } from '../../lib/routes.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { type DnsLookup, OUTBOUND_TIMEOUT_MS, OutboundHttp } from '../../lib/outbound-http.js';
import { countUndispatchedEvents, EventLogService } from '../events/event-log.service.js';
import { eventsRoutes } from '../events/events.routes.js';
import { createDeliveryMetrics, noDeliveryMetrics } from './webhooks.metrics.js';
import { eventRetentionJob } from './webhooks.retention.job.js';
import { webhooksRoutes } from './webhooks.routes.js';
import { WebhookSecrets } from './webhooks.secrets.js';
import { WebhooksService } from './webhooks.service.js';
import { countPendingDeliveries } from './webhooks.leases.store.js';
import { DeliveryWorker } from './webhooks.worker.js';
import type { DeliveryWorkerOptions } from './webhooks.worker-options.js';
import { claimWorkerSlot } from './webhooks.worker-identity.js';

/** Seams for tests and benchmarks; production uses the defaults. */
export interface WebhooksOptions {
  /** Resolves host names for the URL checks and the connections (default: the OS resolver). */
  readonly lookup?: DnsLookup;
  /** The request timeout of a delivery attempt (default 10 s, the contract's). */
  readonly timeoutMs?: number;
  readonly worker?: Partial<
    Pick<
      DeliveryWorkerOptions,
      | 'concurrencyMax'
      | 'endpointInFlightMax'
      | 'endpointQueuedMax'
      | 'leaseMs'
      | 'pollIntervalMs'
      | 'idlePollIntervalMs'
      | 'dispatchBatchSize'
      | 'identity'
      | 'onFanOutWait'
    >
  >;
}

export interface Webhooks {
  readonly service: WebhooksService;
  readonly events: EventLogService;
  /** Not started here: `startService` and `svc worker` start it; tests drive `tick` and `drain`. */
  readonly worker: DeliveryWorker;
  readonly routes: readonly RouteModule[];
  readonly jobs: readonly PeriodicJob[];
  /** Stops the worker (attempts in flight finish) and closes the outbound connections. */
  close(): Promise<void>;
}

export function createWebhooks(
  deps: {
    readonly db: Db;
    readonly config: Config;
    readonly clock: Clock;
    readonly logger: Logger;
    /** Where the delivery metrics go (the registry of `GET /metrics`); none: not measured. */
    readonly metricsRegistry?: Registry;
    readonly audit: AuditService;
    /** The service's one keyring (built in main.ts): seals the endpoints' signing secrets. */
    readonly secrets: SecretBox;
  },
  options: WebhooksOptions = {},
): Webhooks {
  const { db, config, clock, logger } = deps;
  const attemptTimeoutMs = options.timeoutMs ?? OUTBOUND_TIMEOUT_MS;
  const outbound = new OutboundHttp({
    allowPrivate: config.webhookAllowPrivate,
    ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    timeoutMs: attemptTimeoutMs,
  });
  const retryScheduleSeconds = config.webhookRetryScheduleSeconds;
  const measured =
    deps.metricsRegistry === undefined
      ? undefined
      : createDeliveryMetrics(deps.metricsRegistry, {
          countPending: () => countPendingDeliveries(db.kysely),
          countUndispatched: () => countUndispatchedEvents(db),
        });
  const metrics = measured?.metrics ?? noDeliveryMetrics;
  // One cache of opened secrets for the module: the worker's fan-out and claims and manual retries share it.
  const secrets = new WebhookSecrets(deps.secrets);
  const delivery = {
    db,
    clock,
    outbound,
    retryScheduleSeconds,
    metrics,
    secrets,
    audit: deps.audit,
    disableAfterSeconds: config.webhookDisableAfterSeconds,
  };
  const service = new WebhooksService({ ...delivery, eventRetentionDays: config.eventRetentionDays });
  const events = new EventLogService({ db });
  const worker = new DeliveryWorker({
    ...delivery,
    logger,
    attemptTimeoutMs,
    leaseMs: config.webhookLeaseSeconds * 1000,
    idlePollIntervalMs: config.webhookIdlePollMs,
    identity: () => config.webhookWorkerId ?? claimWorkerSlot(config.dataDir),
    ...options.worker,
  });
  return {
    service,
    events,
    worker,
    routes: [webhooksRoutes(service), eventsRoutes(events)],
    jobs: [eventRetentionJob(db, clock, config.eventRetentionDays), ...(measured === undefined ? [] : [measured.gaugesJob])],
    async close() {
      await worker.stop();
      await outbound.close();
    },
  };
}
