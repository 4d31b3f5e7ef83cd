import { defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { auditContext } from '../audit/audit.service.js';
import {
  CreateEndpointBody,
  DeletedEndpointSchema,
  DeliveryListSchema,
  DeliveryParams,
  DeliverySchema,
  EndpointListSchema,
  EndpointParams,
  EndpointSchema,
  EndpointWithSecretSchema,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  RecoverBody,
  RecoverySchema,
  UpdateEndpointBody,
} from './webhooks.schemas.js';
import type { WebhooksService } from './webhooks.service.js';

/**
 * HTTP only: schemas in, the service, schemas out. Creation and rotation answer with the secret;
 * their responses are kept with an `Idempotency-Key` like any other POST, so a retried request
 * gets the same endpoint and secret instead of a second one. The stored response is sealed, as the
 * endpoint's secret is (docs/adr/0015-secrets-at-rest.md).
 */
export function webhooksRoutes(webhooks: WebhooksService): RouteModule {
  return routeModule('webhooks', [
    defineRoute({
      method: 'POST',
      url: '/v1/webhooks',
      credential: 'secret',
      operationId: 'createWebhook',
      summary: 'Create a webhook endpoint; the response carries its secret, shown only here and at rotation',
      description:
        'Creates a webhook endpoint for the event types it lists (or `*`). The URL must be `https://` and must not resolve to a private address. The signing secret (`whsec_…`) is in this response and at rotation only.',
      errors: ['webhook_url_invalid', 'webhook_url_forbidden', 'event_type_unknown'],
      body: CreateEndpointBody,
      response: { 201: EndpointWithSecretSchema },
      handler: async (request, reply) => {
        const endpoint = await webhooks.createEndpoint(requireSecretKey(request).projectId, request.body, auditContext(request));
        return reply.code(201).send(endpoint);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/webhooks',
      credential: 'secret',
      operationId: 'listWebhooks',
      summary: 'List webhook endpoints, newest first',
      description: "The project's webhook endpoints, newest first; never their secrets.",
      querystring: ListEndpointsQuery,
      response: { 200: EndpointListSchema },
      handler: (request) => webhooks.listEndpoints(requireSecretKey(request).projectId, request.query),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/webhooks/:id',
      credential: 'secret',
      operationId: 'getWebhook',
      summary: 'Retrieve a webhook endpoint',
      description: 'A webhook endpoint, with whether it is enabled and why not (`disabled_reason`); never its secret.',
      params: EndpointParams,
      response: { 200: EndpointSchema },
      handler: (request) => webhooks.getEndpoint(requireSecretKey(request).projectId, request.params.id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/webhooks/:id',
      credential: 'secret',
      operationId: 'updateWebhook',
      summary: 'Change the URL, event types, description, or switch the endpoint off and on',
      description:
        "Changes an endpoint's URL, event types, description or rate, or switches it off and on. Switching it on clears `disabled_reason` and starts a fresh failure window; its waiting deliveries then go out.",
      errors: ['webhook_url_invalid', 'webhook_url_forbidden', 'event_type_unknown'],
      params: EndpointParams,
      body: UpdateEndpointBody,
      response: { 200: EndpointSchema },
      handler: (request) =>
        webhooks.updateEndpoint(requireSecretKey(request).projectId, request.params.id, request.body, auditContext(request)),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/webhooks/:id',
      credential: 'secret',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook endpoint and its delivery log',
      description: 'Deletes a webhook endpoint with its delivery log; nothing more is sent to it.',
      params: EndpointParams,
      response: { 200: DeletedEndpointSchema },
      handler: (request) => webhooks.deleteEndpoint(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/webhooks/:id/rotate-secret',
      credential: 'secret',
      operationId: 'rotateWebhookSecret',
      summary: 'A new secret; the old one keeps signing beside it for 24 hours',
      description:
        'Makes a new signing secret, answered this once. For 24 hours the old one keeps signing beside it, so receivers can switch without missing a delivery.',
      params: EndpointParams,
      response: { 200: EndpointWithSecretSchema },
      handler: (request) => webhooks.rotateSecret(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/webhooks/:id/test',
      credential: 'secret',
      operationId: 'sendTestWebhook',
      summary: 'Send a webhook.test event to this endpoint alone',
      description: 'Sends a `webhook.test` event to this endpoint alone, signed and delivered as any event, and answers the delivery.',
      params: EndpointParams,
      response: { 201: DeliverySchema },
      handler: async (request, reply) => {
        const delivery = await webhooks.sendTestEvent(requireSecretKey(request).projectId, request.params.id, auditContext(request));
        return reply.code(201).send(delivery);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/webhooks/:id/recover',
      credential: 'secret',
      operationId: 'recoverWebhook',
      summary: 'Send again, in event order, every subscribed event since a time that was not delivered to this endpoint',
      description:
        'Sends again, oldest first, every event since `since` that the endpoint subscribes to and that was not delivered to it; a failed delivery is due again at once. `since` must lie within the event retention. Answers how many deliveries were made due.',
      params: EndpointParams,
      body: RecoverBody,
      response: { 202: RecoverySchema },
      handler: async (request, reply) => {
        const recovery = await webhooks.recover(
          requireSecretKey(request).projectId,
          request.params.id,
          request.body,
          auditContext(request),
        );
        return reply.code(202).send(recovery);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/webhooks/:id/deliveries',
      credential: 'secret',
      operationId: 'listWebhookDeliveries',
      summary: "The endpoint's deliveries with their attempts, newest first",
      description:
        "The endpoint's deliveries, newest first, with their attempts: status code, latency, error and the first 4 KiB of the response body; `status` narrows them.",
      params: EndpointParams,
      querystring: ListDeliveriesQuery,
      response: { 200: DeliveryListSchema },
      handler: (request) => webhooks.listDeliveries(requireSecretKey(request).projectId, request.params.id, request.query),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/webhooks/:id/deliveries/:delivery_id',
      credential: 'secret',
      operationId: 'getWebhookDelivery',
      summary: 'Retrieve a delivery with its attempts',
      description: 'A delivery with its attempts.',
      params: DeliveryParams,
      response: { 200: DeliverySchema },
      handler: (request) => webhooks.getDelivery(requireSecretKey(request).projectId, request.params.id, request.params.delivery_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/webhooks/:id/deliveries/:delivery_id/retry',
      credential: 'secret',
      operationId: 'retryWebhookDelivery',
      summary: 'Send a delivery again now, also one that failed; answers with the delivery and the new attempt',
      description:
        'Makes a new attempt of the delivery now, also for one that failed for good, and answers the delivery with that attempt.',
      params: DeliveryParams,
      response: { 200: DeliverySchema },
      handler: (request) =>
        webhooks.retryDelivery(requireSecretKey(request).projectId, request.params.id, request.params.delivery_id, auditContext(request)),
    }),
  ]);
}
