import type { Db } from '../../db/database.js';
import type { WebhookAttemptKind } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import type { OutboundHttp } from '../../lib/outbound-http.js';
import { type SpanAttributes, traced } from '../../lib/tracing.js';
import { eventEnvelopeJson, type EventRow, findEventsForDelivery } from '../events/event-log.service.js';
import type { AuditService } from '../audit/audit.service.js';
import { endpointOutcomes, updateEndpointHealth } from './webhooks.health.js';
import type { AttemptResult, DeliveryMetrics } from './webhooks.metrics.js';
import type { WebhookSecrets } from './webhooks.secrets.js';
import { signatureHeaders } from './webhooks.signing.js';
import * as leases from './webhooks.leases.store.js';
import * as store from './webhooks.store.js';

/** What one attempt needs: where to send, with which secrets, and the exact body. */
export interface DeliveryTarget {
  readonly deliveryId: string;
  readonly projectId: string;
  readonly endpointId: string;
  readonly eventId: string;
  /** When the event was committed (its `created_at`), for the delivery-lag metric. */
  readonly eventCreatedAt: string;
  readonly url: string;
  /** Live secrets, newest first. */
  readonly secrets: readonly string[];
  readonly body: string;
  /** The endpoint's `rate_limit_per_second`, when it has one. */
  readonly rateLimitPerSecond: number | null;
}

export interface AttemptOutcome {
  readonly succeeded: boolean;
  readonly result: AttemptResult;
  readonly sentAt: string;
  readonly statusCode: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  readonly responseBody: string | null;
  /** From `Retry-After` on a 429 or 503, in seconds. */
  readonly retryAfterSeconds: number | null;
}

export interface DeliveryDependencies {
  readonly db: Db;
  readonly clock: Clock;
  readonly outbound: OutboundHttp;
  /** `WEBHOOK_RETRY_SCHEDULE`, in seconds. */
  readonly retryScheduleSeconds: readonly number[];
  readonly metrics: DeliveryMetrics;
  /** Opens the endpoints' sealed secrets for signing, with its bounded in-memory cache. */
  readonly secrets: WebhookSecrets;
  /** `WEBHOOK_DISABLE_AFTER_SECONDS`: how long an endpoint may fail before it is switched off. */
  readonly disableAfterSeconds: number;
  /** Records the automatic switch-off of a failing endpoint. */
  readonly audit: AuditService;
}

/**
 * Loads what sending these deliveries needs, in the order of `deliveryIds`. Deliveries whose
 * endpoint or event has gone (deleted meanwhile) are left out. The previous secret of a rotation signs until it expires.
 */
export async function loadDeliveryTargets(
  db: Db,
  secrets: WebhookSecrets,
  deliveryIds: readonly string[],
  now: Date,
): Promise<DeliveryTarget[]> {
  const rows = await leases.findDeliveryTargets(db.kysely, deliveryIds);
  const events = new Map(
    (await findEventsForDelivery(db, [...new Set(rows.map((row) => row.event_id))])).map((event) => [event.id, event]),
  );
  const targets: DeliveryTarget[] = [];
  // In the order asked for: a claim's order (oldest due first) is the order of sending.
  const byId = new Map(rows.map((row) => [row.id, row]));
  for (const id of deliveryIds) {
    const row = byId.get(id);
    const event = row === undefined ? undefined : events.get(row.event_id);
    if (row === undefined || event === undefined) continue;
    targets.push(deliveryTarget({ deliveryId: row.id, endpoint: { ...row, id: row.endpoint_id }, event, now, secrets }));
  }
  return targets;
}

/** The endpoint columns a delivery target is built from. */
export type TargetEndpoint = store.TargetEndpointColumns;

/** What sending one delivery needs, from its endpoint and event rows. The previous secret of a rotation signs until it expires. */
export function deliveryTarget(input: {
  readonly deliveryId: string;
  readonly endpoint: TargetEndpoint;
  readonly event: EventRow;
  readonly now: Date;
  readonly secrets: WebhookSecrets;
}): DeliveryTarget {
  const { endpoint, event } = input;
  const open = (sealed: string | null, plain: string | null): string | null =>
    sealed !== null ? input.secrets.open(endpoint.project_id, endpoint.id, sealed) : plain === '' ? null : plain;
  const secret = open(endpoint.secret_sealed, endpoint.secret);
  if (secret === null) throw new Error(`webhook endpoint ${endpoint.id} has no secret`);
  const previousLive = endpoint.previous_secret_expires_at !== null && endpoint.previous_secret_expires_at > isoTime(input.now);
  const previous = previousLive ? open(endpoint.previous_secret_sealed, endpoint.previous_secret) : null;
  return {
    deliveryId: input.deliveryId,
    projectId: event.project_id,
    endpointId: endpoint.id,
    eventId: event.id,
    eventCreatedAt: event.created_at,
    url: endpoint.url,
    secrets: previous === null ? [secret] : [secret, previous],
    body: eventEnvelopeJson(event),
    rateLimitPerSecond: endpoint.rate_limit_per_second,
  };
}

/** Signs and sends one attempt, then records it. Never throws for what the receiver does. */
export async function attemptDelivery(
  deps: DeliveryDependencies,
  target: DeliveryTarget,
  options: { readonly kind: WebhookAttemptKind; readonly leaseId: string | null },
): Promise<AttemptOutcome> {
  const outcome = await sendAttempt(deps, target, options.kind);
  await recordAttempts(deps, [{ target, outcome, ...options }]);
  return outcome;
}

/** Signs (with the time of sending) and sends one attempt; never throws for what the receiver does. */
export async function sendAttempt(deps: DeliveryDependencies, target: DeliveryTarget, kind: WebhookAttemptKind): Promise<AttemptOutcome> {
  const outcome = await traced(
    'webhook.attempt',
    'client',
    () => attemptSpanAttributes(target, kind),
    async (span) => {
      const sent = await exchange(deps, target);
      if (sent.statusCode !== null) span.setAttribute('http.response.status_code', sent.statusCode);
      if (!sent.succeeded) span.fail(sent.result);
      return sent;
    },
  );
  deps.metrics.attempted(kind, outcome.result, outcome.latencyMs);
  return outcome;
}

/**
 * Who the attempt is for and where it goes, by host alone: an endpoint's URL may carry a token in
 * its path or query, and its secrets and body never leave the signing code.
 */
function attemptSpanAttributes(target: DeliveryTarget, kind: WebhookAttemptKind): SpanAttributes {
  return {
    'http.request.method': 'POST',
    'server.address': hostOf(target.url),
    'svc.project_id': target.projectId,
    'svc.webhook.endpoint_id': target.endpointId,
    'svc.webhook.delivery_id': target.deliveryId,
    'svc.webhook.event_id': target.eventId,
    'svc.webhook.attempt_kind': kind,
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return 'invalid';
  }
}

async function exchange(deps: DeliveryDependencies, target: DeliveryTarget): Promise<AttemptOutcome> {
  const now = deps.clock.now();
  const headers = signatureHeaders({
    eventId: target.eventId,
    body: target.body,
    timestampSeconds: Math.floor(now.getTime() / 1000),
    secrets: target.secrets,
  });
  const result = await deps.outbound.send({
    method: 'POST',
    url: target.url,
    headers: { 'content-type': 'application/json', ...headers },
    body: target.body,
  });
  const sentAt = isoTime(now);
  if (result.kind === 'failure') {
    return {
      succeeded: false,
      result: result.reason,
      sentAt,
      statusCode: null,
      latencyMs: result.latencyMs,
      error: `${result.reason}: ${result.message}`,
      responseBody: null,
      retryAfterSeconds: null,
    };
  }
  const succeeded = result.status >= 200 && result.status <= 299;
  const redirect = result.status >= 300 && result.status <= 399;
  const retryAfter = result.status === 429 || result.status === 503 ? parseRetryAfter(result.headers['retry-after'], now) : null;
  return {
    succeeded,
    result: succeeded ? 'succeeded' : redirect ? 'redirect' : 'http_error',
    sentAt,
    statusCode: result.status,
    latencyMs: result.latencyMs,
    error: succeeded ? null : redirect ? `redirect not followed (HTTP ${result.status})` : `HTTP ${result.status}`,
    responseBody: storableText(result.body.toString('utf8')),
    retryAfterSeconds: retryAfter,
  };
}

/**
 * A receiver's bytes as text both databases store: PostgreSQL refuses a NUL character in text, and
 * one receiver's NUL must not fail the recording batch it shares with other deliveries' attempts.
 * (Invalid UTF-8 was already replaced by U+FFFD when the bytes were decoded.)
 */
function storableText(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}

export interface AttemptRecord {
  readonly target: DeliveryTarget;
  readonly outcome: AttemptOutcome;
  readonly kind: WebhookAttemptKind;
  /** The lease the worker claimed a scheduled attempt with; null for manual attempts. */
  readonly leaseId: string | null;
}

/**
 * Writes attempts and moves their deliveries on, all in one transaction (the worker batches the
 * attempts that finish together, so one commit serves many):
 * - a scheduled attempt moves the schedule only while the worker still holds the lease it claimed
 *   the attempt with; success → `succeeded`; failure → the next attempt is due after the next delay
 *   of the schedule, or after the last one the delivery is `failed`;
 * - a manual attempt never moves the schedule: success → `succeeded`, failure changes nothing but
 *   the log (a `failed` delivery stays failed; a pending one keeps its next scheduled attempt).
 * Deliveries deleted meanwhile (their endpoint was deleted) are skipped.
 */
export async function recordAttempts(deps: DeliveryDependencies, records: readonly AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  const now = deps.clock.now();
  const nowIso = isoTime(now);
  const finished = await inTransaction(deps.db, async (trx) => {
    const ids = [...new Set(records.map((record) => record.target.deliveryId))];
    // Locked in id order (PostgreSQL), so two recorders never wait for each other in a cycle.
    const original = await store.findDeliveriesByIds(trx, ids, deps.db.dialect);
    const rows = new Map(original.map((row) => [row.id, { ...row }]));
    const attempts: store.AttemptRow[] = [];
    const health = endpointOutcomes();
    for (const { target, outcome, kind, leaseId } of records) {
      const row = rows.get(target.deliveryId);
      if (row === undefined) continue;
      row.attempt_count += 1;
      health.attempt(row.endpoint_id, outcome.succeeded, outcome.sentAt);
      attempts.push({
        delivery_id: row.id,
        attempt_number: row.attempt_count,
        project_id: row.project_id,
        kind,
        created_at: outcome.sentAt,
        status_code: outcome.statusCode,
        latency_ms: outcome.latencyMs,
        error: outcome.error,
        response_body: outcome.responseBody,
      });
      const ownsLease = kind === 'scheduled' && leaseId !== null && row.lease_id === leaseId;
      if (ownsLease) {
        row.lease_id = null;
        row.leased_until = null;
      }
      if (ownsLease && row.status === 'pending') {
        row.scheduled_attempt_count += 1;
        const delaySeconds = outcome.succeeded
          ? undefined
          : nextAttemptDelaySeconds(deps.retryScheduleSeconds, row.scheduled_attempt_count, outcome.retryAfterSeconds);
        row.status = outcome.succeeded ? 'succeeded' : delaySeconds === undefined ? 'failed' : 'pending';
        row.next_attempt_at = delaySeconds === undefined ? null : isoTime(addMilliseconds(now, delaySeconds * 1000));
      } else if (kind === 'manual' && outcome.succeeded && row.status !== 'succeeded') {
        row.status = 'succeeded';
        row.next_attempt_at = null;
      }
    }
    await store.insertAttempts(trx, attempts, deps.db.dialect);
    // One UPDATE per group of deliveries that change alike (typically: all that succeeded, and
    // those due again at the same time), not one per delivery.
    const groups = new Map<string, { ids: string[]; change: store.DeliveryGroupChange }>();
    for (const before of original) {
      const after = rows.get(before.id);
      if (after === undefined || after.attempt_count === before.attempt_count) continue;
      const change: store.DeliveryGroupChange = {
        attemptsAdded: after.attempt_count - before.attempt_count,
        scheduledAttemptsAdded: after.scheduled_attempt_count - before.scheduled_attempt_count,
        status: after.status,
        next_attempt_at: after.next_attempt_at,
        lease_id: after.lease_id,
        leased_until: after.leased_until,
        updated_at: nowIso,
      };
      const key = JSON.stringify(change);
      const group = groups.get(key) ?? { ids: [], change };
      group.ids.push(before.id);
      groups.set(key, group);
    }
    for (const { ids: groupIds, change } of groups.values()) await store.updateDeliveries(trx, groupIds, change, deps.db.dialect);
    for (const before of original) {
      const after = rows.get(before.id);
      if (after !== undefined && before.status === 'pending' && after.status === 'failed') health.deliveryFailed(after.endpoint_id);
    }
    await updateEndpointHealth(
      trx,
      { dialect: deps.db.dialect, disableAfterSeconds: deps.disableAfterSeconds, audit: deps.audit },
      health.byEndpoint,
      now,
    );
    return original.flatMap((before) => {
      const after = rows.get(before.id);
      return after !== undefined && after.status !== before.status && after.status !== 'pending' ? [after] : [];
    });
  });
  // Counted once committed (the transaction may have run more than once).
  const byDelivery = new Map(records.map((record) => [record.target.deliveryId, record]));
  for (const row of finished) {
    deps.metrics.finished(row.status === 'succeeded' ? 'succeeded' : 'failed');
    const record = byDelivery.get(row.id);
    if (row.status === 'succeeded' && record !== undefined && record.kind === 'scheduled') {
      const endMs = Date.parse(record.outcome.sentAt) + record.outcome.latencyMs;
      deps.metrics.delivered(endMs - Date.parse(record.target.eventCreatedAt));
    }
  }
}

/**
 * Seconds until the next scheduled attempt after `scheduledAttemptsMade` attempts, the last of
 * which failed; undefined when the schedule is used up. A `Retry-After` (429, 503) can push the
 * attempt later but never beyond the schedule's longest delay, and never adds attempts.
 */
export function nextAttemptDelaySeconds(
  scheduleSeconds: readonly number[],
  scheduledAttemptsMade: number,
  retryAfterSeconds: number | null,
): number | undefined {
  const delay = scheduleSeconds[scheduledAttemptsMade];
  if (delay === undefined) return undefined;
  if (retryAfterSeconds === null) return delay;
  return Math.max(delay, Math.min(retryAfterSeconds, Math.max(...scheduleSeconds)));
}

/** `Retry-After` as delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, Math.ceil((date - now.getTime()) / 1000));
}
