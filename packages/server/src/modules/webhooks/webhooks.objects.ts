import type { WebhookDisabledReason } from '../../db/schema.js';
import type * as store from './webhooks.store.js';

/** The webhook objects as the API shows them (docs/api.md section 4), and their mapping from rows. */

export interface WebhookEndpoint {
  readonly id: string;
  readonly object: 'webhook_endpoint';
  readonly url: string;
  readonly events: string[];
  readonly description: string | null;
  readonly enabled: boolean;
  /** Why the endpoint is off: `failing` (switched off automatically) or `manual`; null while enabled. */
  readonly disabled_reason: WebhookDisabledReason | null;
  readonly rate_limit_per_second: number | null;
  readonly created_at: string;
}

export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  readonly secret: string;
}

export interface WebhookAttempt {
  readonly attempt: number;
  readonly kind: 'scheduled' | 'manual';
  readonly created_at: string;
  readonly status_code: number | null;
  readonly latency_ms: number;
  readonly error: string | null;
  readonly response_body: string | null;
}

export interface WebhookDelivery {
  readonly id: string;
  readonly object: 'webhook_delivery';
  readonly endpoint_id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly attempt_count: number;
  readonly next_attempt_at: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly attempts: WebhookAttempt[];
}

export interface ListOf<T> {
  readonly object: 'list';
  readonly data: T[];
  readonly has_more: boolean;
}

export function toEndpoint(row: store.EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    enabled: row.enabled === 1,
    disabled_reason: row.enabled === 1 ? null : (row.disabled_reason ?? 'manual'),
    rate_limit_per_second: row.rate_limit_per_second,
    created_at: row.created_at,
  };
}

export function toDelivery(row: store.DeliveryRow, attempts: readonly store.AttemptRow[]): WebhookDelivery {
  return {
    id: row.id,
    object: 'webhook_delivery',
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.next_attempt_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    attempts: attempts.map((attempt) => ({
      attempt: attempt.attempt_number,
      kind: attempt.kind,
      created_at: attempt.created_at,
      status_code: attempt.status_code,
      latency_ms: attempt.latency_ms,
      error: attempt.error,
      response_body: attempt.response_body,
    })),
  };
}
