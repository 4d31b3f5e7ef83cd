import { type Api, byId } from '../api.js';
import type { PagedList } from '../pagination.js';
import type { RequestOptions } from '../transport.js';
import type {
  CreateWebhookParams,
  DeletedWebhookEndpoint,
  Event,
  ListDeliveriesParams,
  ListEventsParams,
  ListWebhooksParams,
  RecoverWebhookParams,
  UpdateWebhookParams,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookRecovery,
} from '../types.js';
import type { WebhookEvent } from '../webhook-events.js';
import { type VerifyWebhookOptions, type WebhookHeaders, verifyWebhook } from '../webhook-signature.js';

/** `/v1/webhooks*`: endpoints, their deliveries, and signature verification for receivers. */
export class Webhooks {
  readonly #api: Api;
  constructor(api: Api) {
    this.#api = api;
  }

  /** → 201 endpoint with its `secret` (`whsec_…`), shown only here and by `rotateSecret`. */
  create(params: CreateWebhookParams, options?: RequestOptions): Promise<WebhookEndpointWithSecret> {
    return this.#api.call('POST /v1/webhooks', { body: params }, options);
  }

  list(params: ListWebhooksParams = {}, options?: RequestOptions): PagedList<WebhookEndpoint> {
    return this.#api.list('GET /v1/webhooks', { query: params }, options, byId);
  }

  get(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.#api.call('GET /v1/webhooks/{id}', { path: { id } }, options);
  }

  /** `url`, `events`, `description`, `enabled` (true also after an automatic switch-off), `rate_limit_per_second`. */
  update(id: string, params: UpdateWebhookParams, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.#api.call('PATCH /v1/webhooks/{id}', { path: { id }, body: params }, options);
  }

  delete(id: string, options?: RequestOptions): Promise<DeletedWebhookEndpoint> {
    return this.#api.call('DELETE /v1/webhooks/{id}', { path: { id } }, options);
  }

  /** A new secret; the old one keeps signing beside it for 24 hours. */
  rotateSecret(id: string, options?: RequestOptions): Promise<WebhookEndpointWithSecret> {
    return this.#api.call('POST /v1/webhooks/{id}/rotate-secret', { path: { id } }, options);
  }

  /** Sends a `webhook.test` event to this endpoint alone → 201 the delivery. */
  test(id: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.#api.call('POST /v1/webhooks/{id}/test', { path: { id } }, options);
  }

  /**
   * → 202: every event since `since` that the endpoint subscribes to and that was not delivered to
   * it is sent again, in event order; `deliveries` says how many.
   */
  recover(id: string, params: RecoverWebhookParams, options?: RequestOptions): Promise<WebhookRecovery> {
    return this.#api.call('POST /v1/webhooks/{id}/recover', { path: { id }, body: params }, options);
  }

  /** The endpoint's deliveries with their attempts, newest first; `status` filters. */
  deliveries(id: string, params: ListDeliveriesParams = {}, options?: RequestOptions): PagedList<WebhookDelivery> {
    return this.#api.list('GET /v1/webhooks/{id}/deliveries', { path: { id }, query: params }, options, byId);
  }

  getDelivery(id: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.#api.call('GET /v1/webhooks/{id}/deliveries/{delivery_id}', { path: { id, delivery_id: deliveryId } }, options);
  }

  /** One more attempt now, also for a delivery that failed for good. */
  retryDelivery(id: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.#api.call('POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry', { path: { id, delivery_id: deliveryId } }, options);
  }

  /** `verifyWebhook` (which needs no client): the event, or a thrown `SignatureVerificationError`. */
  verify(
    rawBody: string | Uint8Array,
    signature: string | WebhookHeaders,
    secret: string | readonly string[],
    options?: VerifyWebhookOptions,
  ): Promise<WebhookEvent> {
    return verifyWebhook(rawBody, signature, secret, options);
  }
}

/** `/v1/events`: the project's event log, as written to the outbox. */
export class Events {
  readonly #api: Api;
  constructor(api: Api) {
    this.#api = api;
  }

  /** Newest first; `type` filters (e.g. `wallet.credit.added`). */
  list(params: ListEventsParams = {}, options?: RequestOptions): PagedList<Event> {
    return this.#api.list('GET /v1/events', { query: params }, options, byId);
  }

  get(id: string, options?: RequestOptions): Promise<Event> {
    return this.#api.call('GET /v1/events/{id}', { path: { id } }, options);
  }
}
