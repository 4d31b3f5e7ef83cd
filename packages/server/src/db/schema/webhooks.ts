/** The webhooks module's tables (modules/webhooks): endpoints, deliveries, attempts and the delivery workers' heartbeats. */
export interface WebhooksDatabase {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_workers: WebhookWorkersTable;
}

/** A URL that receives the project's events (migration 0004_webhooks). */
export interface WebhookEndpointsTable {
  id: string;
  project_id: string;
  url: string;
  /** JSON array of event types, or `["*"]`. */
  events: string;
  description: string | null;
  /** 1 or 0. */
  enabled: number;
  /**
   * Before migration 0014 the `whsec_…` secret in clear; now always '': the service seals what an
   * older version left here into `secret_sealed` at start and empties it (docs/adr/0015-secrets-at-rest.md).
   */
  secret: string;
  /** Like `secret`: before migration 0014 the previous secret in clear; now always null. */
  previous_secret: string | null;
  /**
   * The `whsec_…` secret, sealed (lib/secret-box.ts) with the associated data
   * `webhook_endpoint:<project id>:<endpoint id>`; null only on a row an older version wrote and the
   * start has not sealed yet. Returned in clear only at creation and rotation.
   */
  secret_sealed: string | null;
  /** The secret before the last rotation, sealed like `secret_sealed`; it signs beside the new one until `previous_secret_expires_at`. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  /** Why the endpoint is off: `failing` (switched off by the worker) or `manual`; null while enabled (migration 0020). */
  disabled_reason: WebhookDisabledReason | null;
  /** The first failed attempt since the last success; null when the last attempt succeeded. */
  failing_since: string | null;
  /** Deliveries that ended `failed` since `failing_since`. */
  failed_deliveries: number;
  /** At most this many attempts a second; null: no cap. */
  rate_limit_per_second: number | null;
  created_at: string;
  updated_at: string;
}

export type WebhookDisabledReason = 'failing' | 'manual';

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One event to one endpoint. Pending rows are the delivery worker's queue. */
export interface WebhookDeliveriesTable {
  id: string;
  project_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  /** Every attempt made, scheduled or manual; the next attempt's number is this plus one. */
  attempt_count: number;
  /** Scheduled attempts made: the position in `WEBHOOK_RETRY_SCHEDULE`. */
  scheduled_attempt_count: number;
  /** When the next scheduled attempt is due; null unless pending. */
  next_attempt_at: string | null;
  /** The worker that has claimed the next attempt, until `leased_until`. */
  lease_id: string | null;
  leased_until: string | null;
  last_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * A running delivery worker's heartbeat (docs/adr/0006-webhook-delivery.md, "Dead workers"): `id`
 * prefixes every lease it takes; `last_seen` is renewed every second while it runs.
 */
export interface WebhookWorkersTable {
  id: string;
  /** The host name and process id, for operators. */
  host: string;
  pid: number;
  started_at: string;
  last_seen: string;
}

export type WebhookAttemptKind = 'scheduled' | 'manual';

/** One HTTP request of a delivery and what came back. */
export interface WebhookAttemptsTable {
  delivery_id: string;
  /** 1, 2, … within the delivery. */
  attempt_number: number;
  project_id: string;
  kind: WebhookAttemptKind;
  created_at: string;
  /** Null when no HTTP answer came (timeout, refused address, connection error). */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  /** The first 4 KiB of the response body, as text. */
  response_body: string | null;
}
