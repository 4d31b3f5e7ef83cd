import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteModule } from '../../lib/routes.js';
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
  type PageQuery,
  RecoverBody,
  RecoverySchema,
  UpdateEndpointBody,
} from './webhooks.schemas.js';
import type { WebhooksService } from './webhooks.service.js';

const security = [{ secretKey: [] }, { secretKeyHeader: [] }];
const tags = ['webhooks'];
const config = { credential: 'secret' } as const;

type WithEndpoint = FastifyRequest<{ Params: { id: string } }>;
type WithDelivery = FastifyRequest<{ Params: { id: string; delivery_id: string } }>;

/**
 * HTTP only: schemas in, the service, schemas out. Creation and rotation answer with the secret;
 * their responses are kept with an `Idempotency-Key` like any other POST, so a retried request
 * gets the same endpoint and secret instead of a second one. The stored response is sealed, as the
 * endpoint's secret is (docs/adr/0015-secrets-at-rest.md).
 */
export function webhooksRoutes(webhooks: WebhooksService): RouteModule {
  return (app: FastifyInstance) => {
    app.post(
      '/v1/webhooks',
      {
        config,
        schema: {
          operationId: 'createWebhook',
          description:
            'Creates a webhook endpoint for the event types it lists (or `*`). The URL must be `https://` and must not resolve to a private address. The signing secret (`whsec_…`) is in this response and at rotation only.',
          errors: ['webhook_url_invalid', 'webhook_url_forbidden', 'event_type_unknown'],
          tags,
          security,
          summary: 'Create a webhook endpoint; the response carries its secret, shown only here and at rotation',
          body: CreateEndpointBody,
          response: { 201: EndpointWithSecretSchema },
        },
      },
      async (request, reply) => {
        const endpoint = await webhooks.createEndpoint(
          requireSecretKey(request).projectId,
          request.body as CreateEndpointBody,
          auditContext(request),
        );
        return reply.code(201).send(endpoint);
      },
    );

    app.get(
      '/v1/webhooks',
      {
        config,
        schema: {
          operationId: 'listWebhooks',
          description: "The project's webhook endpoints, newest first; never their secrets.",
          tags,
          security,
          summary: 'List webhook endpoints, newest first',
          querystring: ListEndpointsQuery,
          response: { 200: EndpointListSchema },
        },
      },
      (request) => webhooks.listEndpoints(requireSecretKey(request).projectId, request.query as PageQuery),
    );

    app.get(
      '/v1/webhooks/:id',
      {
        config,
        schema: {
          operationId: 'getWebhook',
          description: 'A webhook endpoint, with whether it is enabled and why not (`disabled_reason`); never its secret.',
          tags,
          security,
          summary: 'Retrieve a webhook endpoint',
          params: EndpointParams,
          response: { 200: EndpointSchema },
        },
      },
      (request: WithEndpoint) => webhooks.getEndpoint(requireSecretKey(request).projectId, request.params.id),
    );

    app.patch(
      '/v1/webhooks/:id',
      {
        config,
        schema: {
          operationId: 'updateWebhook',
          description:
            "Changes an endpoint's URL, event types, description or rate, or switches it off and on. Switching it on clears `disabled_reason` and starts a fresh failure window; its waiting deliveries then go out.",
          errors: ['webhook_url_invalid', 'webhook_url_forbidden', 'event_type_unknown'],
          tags,
          security,
          summary: 'Change the URL, event types, description, or switch the endpoint off and on',
          params: EndpointParams,
          body: UpdateEndpointBody,
          response: { 200: EndpointSchema },
        },
      },
      (request: WithEndpoint) =>
        webhooks.updateEndpoint(
          requireSecretKey(request).projectId,
          request.params.id,
          request.body as UpdateEndpointBody,
          auditContext(request),
        ),
    );

    app.delete(
      '/v1/webhooks/:id',
      {
        config,
        schema: {
          operationId: 'deleteWebhook',
          description: 'Deletes a webhook endpoint with its delivery log; nothing more is sent to it.',
          tags,
          security,
          summary: 'Delete a webhook endpoint and its delivery log',
          params: EndpointParams,
          response: { 200: DeletedEndpointSchema },
        },
      },
      (request: WithEndpoint) => webhooks.deleteEndpoint(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    );

    app.post(
      '/v1/webhooks/:id/rotate-secret',
      {
        config,
        schema: {
          operationId: 'rotateWebhookSecret',
          description:
            'Makes a new signing secret, answered this once. For 24 hours the old one keeps signing beside it, so receivers can switch without missing a delivery.',
          tags,
          security,
          summary: 'A new secret; the old one keeps signing beside it for 24 hours',
          params: EndpointParams,
          response: { 200: EndpointWithSecretSchema },
        },
      },
      (request: WithEndpoint) => webhooks.rotateSecret(requireSecretKey(request).projectId, request.params.id, auditContext(request)),
    );

    app.post(
      '/v1/webhooks/:id/test',
      {
        config,
        schema: {
          operationId: 'sendTestWebhook',
          description: 'Sends a `webhook.test` event to this endpoint alone, signed and delivered as any event, and answers the delivery.',
          tags,
          security,
          summary: 'Send a webhook.test event to this endpoint alone',
          params: EndpointParams,
          response: { 201: DeliverySchema },
        },
      },
      async (request: WithEndpoint, reply) => {
        const delivery = await webhooks.sendTestEvent(requireSecretKey(request).projectId, request.params.id, auditContext(request));
        return reply.code(201).send(delivery);
      },
    );

    app.post(
      '/v1/webhooks/:id/recover',
      {
        config,
        schema: {
          operationId: 'recoverWebhook',
          description:
            'Sends again, oldest first, every event since `since` that the endpoint subscribes to and that was not delivered to it; a failed delivery is due again at once. `since` must lie within the event retention. Answers how many deliveries were made due.',
          tags,
          security,
          summary: 'Send again, in event order, every subscribed event since a time that was not delivered to this endpoint',
          params: EndpointParams,
          body: RecoverBody,
          response: { 202: RecoverySchema },
        },
      },
      async (request: WithEndpoint, reply) => {
        const recovery = await webhooks.recover(
          requireSecretKey(request).projectId,
          request.params.id,
          request.body as RecoverBody,
          auditContext(request),
        );
        return reply.code(202).send(recovery);
      },
    );

    app.get(
      '/v1/webhooks/:id/deliveries',
      {
        config,
        schema: {
          operationId: 'listWebhookDeliveries',
          description:
            "The endpoint's deliveries, newest first, with their attempts: status code, latency, error and the first 4 KiB of the response body; `status` narrows them.",
          tags,
          security,
          summary: "The endpoint's deliveries with their attempts, newest first",
          params: EndpointParams,
          querystring: ListDeliveriesQuery,
          response: { 200: DeliveryListSchema },
        },
      },
      (request: WithEndpoint) =>
        webhooks.listDeliveries(requireSecretKey(request).projectId, request.params.id, request.query as ListDeliveriesQuery),
    );

    app.get(
      '/v1/webhooks/:id/deliveries/:delivery_id',
      {
        config,
        schema: {
          operationId: 'getWebhookDelivery',
          description: 'A delivery with its attempts.',
          tags,
          security,
          summary: 'Retrieve a delivery with its attempts',
          params: DeliveryParams,
          response: { 200: DeliverySchema },
        },
      },
      (request: WithDelivery) => webhooks.getDelivery(requireSecretKey(request).projectId, request.params.id, request.params.delivery_id),
    );

    app.post(
      '/v1/webhooks/:id/deliveries/:delivery_id/retry',
      {
        config,
        schema: {
          operationId: 'retryWebhookDelivery',
          description:
            'Makes a new attempt of the delivery now, also for one that failed for good, and answers the delivery with that attempt.',
          tags,
          security,
          summary: 'Send a delivery again now, also one that failed; answers with the delivery and the new attempt',
          params: DeliveryParams,
          response: { 200: DeliverySchema },
        },
      },
      (request: WithDelivery) =>
        webhooks.retryDelivery(requireSecretKey(request).projectId, request.params.id, request.params.delivery_id, auditContext(request)),
    );
  };
}
