import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import type { EventLogService } from './event-log.service.js';
import { EVENT_CATALOG, EVENT_TYPES } from './event-types.js';
import { EventListSchema, EventParams, EventSchema, EventTypeListSchema, ListEventsQuery } from './events.schemas.js';

const security = [{ secretKey: [] }, { secretKeyHeader: [] }];
const tags = ['events'];

/** The event log: every event of the project, as written to the outbox. */
export function eventsRoutes(events: EventLogService): RouteModule {
  return (app: FastifyInstance) => {
    app.get(
      '/v1/events',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listEvents',
          description: "The project's event log, newest first; `type` narrows it. Events are kept `EVENT_RETENTION_DAYS`.",
          errors: ['event_type_unknown'],
          tags,
          security,
          summary: 'List events, newest first',
          querystring: ListEventsQuery,
          response: { 200: EventListSchema },
        },
      },
      (request) => events.list(requireSecretKey(request).projectId, request.query as ListEventsQuery),
    );

    app.get(
      '/v1/events/:id',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'getEvent',
          description: 'An event: its type, time, `data` and `idempotency_key`, as it was delivered to webhooks.',
          tags,
          security,
          summary: 'Retrieve an event',
          params: EventParams,
          response: { 200: EventSchema },
        },
      },
      (request: FastifyRequest<{ Params: { id: string } }>) => events.get(requireSecretKey(request).projectId, request.params.id),
    );

    // The catalog is the same for every project and built once; the credential is still required.
    const catalog = eventTypeList();
    app.get(
      '/v1/event-types',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listEventTypes',
          description: 'Every event type the service emits, with a description and a JSON Schema of its `data`.',
          tags,
          security,
          summary: "List the event types the service emits, with a JSON Schema of each one's data",
          response: { 200: EventTypeListSchema },
        },
      },
      () => catalog,
    );
  };
}

/** `GET /v1/event-types`'s body: every type of the catalog (event-types.ts), in its order. */
export function eventTypeList() {
  return {
    object: 'list' as const,
    data: EVENT_TYPES.map((type) => ({ type, description: EVENT_CATALOG[type].description, schema: EVENT_CATALOG[type].data })),
    has_more: false as const,
  };
}
