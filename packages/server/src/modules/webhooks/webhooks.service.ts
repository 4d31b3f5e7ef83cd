import type { Db } from '../../db/database.js';
import { listOf, pageOf, startPage } from '../../db/pagination.js';
import { inTransaction } from '../../db/transaction.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { OutboundHttp } from '../../lib/outbound-http.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { isEventType, markEventsDispatched } from '../events/event-log.service.js';
import { recordEvent } from '../events/events.service.js';
import { foldEndpointAttempts } from '../stats/stats.service.js';
import { attemptDelivery, type DeliveryDependencies, loadDeliveryTargets } from './webhooks.delivery.js';
import { checkRecoverySince, type Recovery, recoverDeliveries } from './webhooks.recovery.js';
import type { CreateEndpointBody, ListDeliveriesQuery, PageQuery, RecoverBody, UpdateEndpointBody } from './webhooks.schemas.js';
import type { WebhookSecrets } from './webhooks.secrets.js';
import { generateWebhookSecret } from './webhooks.signing.js';
import {
  type ListOf,
  toDelivery,
  toEndpoint,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
} from './webhooks.objects.js';
import * as store from './webhooks.store.js';

/** How long the secret before a rotation keeps signing beside the new one. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** Attempts shown per delivery: the most recent ones. */
export const ATTEMPTS_SHOWN_MAX = 50;
const ALL_EVENTS = '*';

export type { ListOf, WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from './webhooks.objects.js';

export type WebhooksServiceOptions = DeliveryDependencies & {
  /** `EVENT_RETENTION_DAYS`: how far back a recovery may reach. */
  readonly eventRetentionDays: number;
};

/** The endpoints API and the delivery log (docs/api.md section 4, "Webhooks and events"). */
export class WebhooksService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #outbound: OutboundHttp;
  /** What a manual attempt needs (the same as the worker's). */
  readonly #delivery: DeliveryDependencies;
  readonly #audit: AuditService;
  readonly #secrets: WebhookSecrets;
  readonly #eventRetentionDays: number;

  constructor(options: WebhooksServiceOptions) {
    this.#eventRetentionDays = options.eventRetentionDays;
    this.#db = options.db;
    this.#audit = options.audit;
    this.#clock = options.clock;
    this.#outbound = options.outbound;
    this.#delivery = options;
    this.#secrets = options.secrets;
  }

  async createEndpoint(projectId: string, input: CreateEndpointBody, context: AuditContext): Promise<WebhookEndpointWithSecret> {
    const record = endpointRecord(projectId, 'webhook_endpoint.create', null);
    return this.#audit.recordingRefusals(context, record, async () => {
      const events = checkEventTypes(input.events);
      const url = await this.#checkUrl(input.url);
      const now = isoTime(this.#clock.now());
      const id = newId('we');
      const secret = generateWebhookSecret();
      const row: store.EndpointRow = {
        id,
        project_id: projectId,
        url,
        events: JSON.stringify(events),
        description: input.description ?? null,
        enabled: 1,
        disabled_reason: null,
        failing_since: null,
        failed_deliveries: 0,
        rate_limit_per_second: input.rate_limit_per_second ?? null,
        // Only sealed (docs/adr/0015-secrets-at-rest.md); the plain columns of migration 0004 stay empty.
        secret: '',
        previous_secret: null,
        secret_sealed: this.#secrets.seal(projectId, id, secret),
        previous_secret_sealed: null,
        previous_secret_expires_at: null,
        created_at: now,
        updated_at: now,
      };
      await inTransaction(this.#db, async (trx) => {
        await store.insertEndpoint(trx, row);
        await this.#audit.record(trx, context, {
          ...endpointRecord(projectId, 'webhook_endpoint.create', row.id),
          changes: { url_host: new URL(url).host, events: events.join(',') },
          createdAt: now,
        });
      });
      return { ...toEndpoint(row), secret };
    });
  }

  async listEndpoints(projectId: string, query: PageQuery): Promise<ListOf<WebhookEndpoint>> {
    const page = await startPage(query, {
      find: (id) => store.findEndpoint(this.#db.kysely, projectId, id),
      missing: (id) => `No webhook endpoint ${id} to start after.`,
    });
    const rows = await store.listEndpoints(this.#db.kysely, projectId, { after: page.after, limit: page.rowsToRead });
    return listOf(rows, page.limit, toEndpoint);
  }

  async getEndpoint(projectId: string, endpointId: string): Promise<WebhookEndpoint> {
    return toEndpoint(await this.#endpoint(projectId, endpointId));
  }

  async updateEndpoint(projectId: string, endpointId: string, input: UpdateEndpointBody, context: AuditContext): Promise<WebhookEndpoint> {
    const record = endpointRecord(projectId, 'webhook_endpoint.update', endpointId);
    return this.#audit.recordingRefusals(context, record, async () => {
      await this.#endpoint(projectId, endpointId);
      const changes: store.EndpointChanges = {
        updated_at: isoTime(this.#clock.now()),
        ...(input.events === undefined ? {} : { events: JSON.stringify(checkEventTypes(input.events)) }),
        ...(input.url === undefined ? {} : { url: await this.#checkUrl(input.url) }),
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.rate_limit_per_second === undefined ? {} : { rate_limit_per_second: input.rate_limit_per_second }),
        // Switched on, the endpoint starts a fresh failure window; switched off by hand, it says so.
        ...(input.enabled === undefined
          ? {}
          : input.enabled
            ? { enabled: 1, disabled_reason: null, failing_since: null, failed_deliveries: 0 }
            : { enabled: 0, disabled_reason: 'manual' as const }),
      };
      const row = await inTransaction(this.#db, async (trx) => {
        const updated = await store.updateEndpoint(trx, projectId, endpointId, changes);
        if (updated === undefined) throw endpointMissing(endpointId);
        // The URL's host only: a path or query string may carry a receiver's token.
        await this.#audit.record(trx, context, {
          ...record,
          changes: {
            fields: Object.keys(input).sort().join(','),
            ...(input.url === undefined ? {} : { url_host: new URL(updated.url).host }),
            ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
            ...(input.rate_limit_per_second === undefined ? {} : { rate_limit_per_second: input.rate_limit_per_second }),
          },
        });
        return updated;
      });
      return toEndpoint(row);
    });
  }

  async deleteEndpoint(
    projectId: string,
    endpointId: string,
    context: AuditContext,
  ): Promise<{ id: string; object: 'webhook_endpoint'; deleted: true }> {
    const record = endpointRecord(projectId, 'webhook_endpoint.delete', endpointId);
    return this.#audit.recordingRefusals(context, record, () =>
      inTransaction(this.#db, async (trx) => {
        // Its deliveries go with it; the statistics keep their attempts (docs/adr/0012-dashboard.md).
        await foldEndpointAttempts(trx, this.#db.dialect, projectId, endpointId);
        if (!(await store.deleteEndpoint(trx, projectId, endpointId))) throw endpointMissing(endpointId);
        await this.#audit.record(trx, context, record);
        return { id: endpointId, object: 'webhook_endpoint' as const, deleted: true as const };
      }),
    );
  }

  /**
   * A new secret. The current one becomes the previous secret and keeps signing beside the new one
   * for 24 hours, so receivers can switch without dropping deliveries; a previous secret that was
   * still live is dropped (at most two secrets sign at once).
   */
  async rotateSecret(projectId: string, endpointId: string, context: AuditContext): Promise<WebhookEndpointWithSecret> {
    const now = this.#clock.now();
    const record = endpointRecord(projectId, 'webhook_endpoint.rotate_secret', endpointId);
    const secret = generateWebhookSecret();
    const row = await this.#audit.recordingRefusals(context, record, () =>
      inTransaction(this.#db, async (trx) => {
        const current = await store.findEndpoint(trx, projectId, endpointId);
        if (current === undefined) throw endpointMissing(endpointId);
        // Both secrets of an endpoint share one associated data, so the current sealed value moves
        // to the previous column as it is (a row an older version left in clear is sealed here).
        const previousSealed = current.secret_sealed ?? this.#secrets.seal(projectId, endpointId, current.secret);
        const updated = await store.updateEndpoint(trx, projectId, endpointId, {
          secret: '',
          previous_secret: null,
          secret_sealed: this.#secrets.seal(projectId, endpointId, secret),
          previous_secret_sealed: previousSealed,
          previous_secret_expires_at: isoTime(addMilliseconds(now, SECRET_ROTATION_OVERLAP_MS)),
          updated_at: isoTime(now),
        });
        if (updated === undefined) throw endpointMissing(endpointId);
        await this.#audit.record(trx, context, {
          ...record,
          changes: { previous_secret_expires_at: updated.previous_secret_expires_at },
          createdAt: isoTime(now),
        });
        return updated;
      }),
    );
    return { ...toEndpoint(row), secret };
  }

  /**
   * A `webhook.test` event for this endpoint alone: the event is written to the log already marked
   * as fanned out, with its one delivery, so no other endpoint receives it. The worker sends it.
   */
  async sendTestEvent(projectId: string, endpointId: string, context: AuditContext): Promise<WebhookDelivery> {
    const record = endpointRecord(projectId, 'webhook_endpoint.test', endpointId);
    const row = await this.#audit.recordingRefusals(context, record, () =>
      inTransaction(this.#db, async (trx) => {
        const endpoint = await store.findEndpoint(trx, projectId, endpointId);
        if (endpoint === undefined) throw endpointMissing(endpointId);
        const now = isoTime(this.#clock.now());
        const eventId = await recordEvent(trx, { projectId, type: 'webhook.test', data: { endpoint_id: endpointId }, createdAt: now });
        await markEventsDispatched(trx, [eventId], now, this.#db.dialect);
        const delivery = store.pendingDelivery({
          id: newId('del'),
          projectId,
          endpointId,
          eventId,
          eventType: 'webhook.test',
          nextAttemptAt: isoTime(addMilliseconds(new Date(now), (this.#delivery.retryScheduleSeconds[0] ?? 0) * 1000)),
          now,
        });
        await store.insertDeliveries(trx, [delivery], this.#db.dialect);
        await this.#audit.record(trx, context, { ...record, changes: { delivery_id: delivery.id, event_id: eventId }, createdAt: now });
        return delivery;
      }),
    );
    return toDelivery(row, []);
  }

  async listDeliveries(projectId: string, endpointId: string, query: ListDeliveriesQuery): Promise<ListOf<WebhookDelivery>> {
    await this.#endpoint(projectId, endpointId);
    const page = await startPage(query, {
      find: (id) => store.findDelivery(this.#db.kysely, projectId, endpointId, id),
      missing: (id) => `No delivery ${id} to start after.`,
    });
    const rows = await store.listDeliveries(this.#db.kysely, projectId, endpointId, {
      status: query.status,
      after: page.after,
      limit: page.rowsToRead,
    });
    const { rows: shown, has_more } = pageOf(rows, page.limit);
    return { object: 'list', data: await this.#withAttempts(projectId, shown), has_more };
  }

  async getDelivery(projectId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
    const row = await store.findDelivery(this.#db.kysely, projectId, endpointId, deliveryId);
    if (row === undefined) throw deliveryMissing(deliveryId);
    const [delivery] = await this.#withAttempts(projectId, [row]);
    if (delivery === undefined) throw deliveryMissing(deliveryId);
    return delivery;
  }

  /**
   * A new attempt now, made in this request, whatever the delivery's status (also `failed`). It
   * does not move the automatic schedule: on success the delivery is `succeeded`; on failure a
   * failed delivery stays failed and a pending one keeps its next scheduled attempt.
   */
  async retryDelivery(projectId: string, endpointId: string, deliveryId: string, context: AuditContext): Promise<WebhookDelivery> {
    const record: AuditRecord = {
      projectId,
      action: 'webhook_delivery.retry',
      resource: { type: 'webhook_delivery', id: deliveryId },
      changes: { endpoint_id: endpointId },
    };
    return this.#audit.recordingRefusals(context, record, async () => {
      const row = await store.findDelivery(this.#db.kysely, projectId, endpointId, deliveryId);
      if (row === undefined) throw deliveryMissing(deliveryId);
      const [target] = await loadDeliveryTargets(this.#db, this.#secrets, [row.id], this.#clock.now());
      if (target === undefined) throw deliveryMissing(deliveryId);
      await attemptDelivery(this.#delivery, target, { kind: 'manual', leaseId: null });
      const delivery = await this.getDelivery(projectId, endpointId, deliveryId);
      // The attempt is recorded by the delivery code in its own transaction, after a network call
      // that must not hold one open; the entry follows it with what the attempt came to.
      const attempt = delivery.attempts[delivery.attempts.length - 1];
      await this.#audit.recordAlone(context, {
        ...record,
        changes: { endpoint_id: endpointId, status: delivery.status, status_code: attempt?.status_code ?? null },
      });
      return delivery;
    });
  }

  /**
   * Sends again, in event order, every event since `since` that the endpoint subscribes to and that
   * has not been delivered to it (see webhooks.recovery.ts). Answers how many deliveries were made due.
   */
  async recover(projectId: string, endpointId: string, input: RecoverBody, context: AuditContext): Promise<Recovery> {
    const record = endpointRecord(projectId, 'webhook_endpoint.recover', endpointId);
    return this.#audit.recordingRefusals(context, record, async () => {
      const now = this.#clock.now();
      const since = checkRecoverySince(input.since, now, this.#eventRetentionDays);
      const endpoint = await this.#endpoint(projectId, endpointId);
      const deliveries = await recoverDeliveries(this.#db, { endpoint, since, now });
      await this.#audit.recordAlone(context, { ...record, changes: { since, deliveries }, createdAt: isoTime(now) });
      return { object: 'recovery', deliveries };
    });
  }

  async #endpoint(projectId: string, endpointId: string): Promise<store.EndpointRow> {
    const row = await store.findEndpoint(this.#db.kysely, projectId, endpointId);
    if (row === undefined) throw endpointMissing(endpointId);
    return row;
  }

  async #checkUrl(url: string): Promise<string> {
    const check = await this.#outbound.checkUrl(url);
    if (check.ok) return check.url;
    throw new ApiError(check.reason === 'invalid' ? 'webhook_url_invalid' : 'webhook_url_forbidden', check.message, { param: 'url' });
  }

  async #withAttempts(projectId: string, rows: readonly store.DeliveryRow[]): Promise<WebhookDelivery[]> {
    const attempts = await store.findAttempts(
      this.#db.kysely,
      projectId,
      rows.map((row) => row.id),
    );
    const byDelivery = new Map<string, store.AttemptRow[]>();
    for (const attempt of attempts) {
      const list = byDelivery.get(attempt.delivery_id) ?? [];
      list.push(attempt);
      byDelivery.set(attempt.delivery_id, list);
    }
    return rows.map((row) => toDelivery(row, (byDelivery.get(row.id) ?? []).slice(-ATTEMPTS_SHOWN_MAX)));
  }
}

/** Each type must be in the catalog, or "*"; repeats are dropped. */
function checkEventTypes(types: readonly string[]): string[] {
  types.forEach((type, index) => {
    if (type !== ALL_EVENTS && !isEventType(type)) {
      throw new ApiError('event_type_unknown', `Unknown event type "${type}"; use a type from the catalog or "*".`, {
        param: `events[${index}]`,
      });
    }
  });
  return [...new Set(types)];
}

function endpointRecord(projectId: string, action: AuditRecord['action'], endpointId: string | null): AuditRecord {
  return { projectId, action, resource: { type: 'webhook_endpoint', id: endpointId } };
}

function endpointMissing(endpointId: string): ApiError {
  return new ApiError('resource_missing', `No webhook endpoint ${endpointId}.`, { param: 'id' });
}

function deliveryMissing(deliveryId: string): ApiError {
  return new ApiError('resource_missing', `No delivery ${deliveryId} for this endpoint.`, { param: 'delivery_id' });
}
