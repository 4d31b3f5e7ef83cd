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
