import { defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import type { EventLogService } from './event-log.service.js';
import { EVENT_CATALOG, EVENT_TYPES } from './event-types.js';
import { EventListSchema, EventParams, EventSchema, EventTypeListSchema, ListEventsQuery } from './events.schemas.js';

/** The event log: every event of the project, as written to the outbox. */
export function eventsRoutes(events: EventLogService): RouteModule {
  // The catalog is the same for every project and built once; the credential is still required.
  const catalog = eventTypeList();
  return routeModule('events', [
    defineRoute({
      method: 'GET',
      url: '/v1/events',
      credential: 'secret',
      operationId: 'listEvents',
      summary: 'List events, newest first',
      description: "The project's event log, newest first; `type` narrows it. Events are kept `EVENT_RETENTION_DAYS`.",
      errors: ['event_type_unknown'],
      querystring: ListEventsQuery,
      response: { 200: EventListSchema },
      handler: (request) => events.list(requireSecretKey(request).projectId, request.query),
    }),

    defineRoute({
      method: 'GET',
      url: '/v1/events/:id',
      credential: 'secret',
      operationId: 'getEvent',
      summary: 'Retrieve an event',
      description: 'An event: its type, time, `data` and `idempotency_key`, as it was delivered to webhooks.',
      params: EventParams,
      response: { 200: EventSchema },
      handler: (request) => events.get(requireSecretKey(request).projectId, request.params.id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/event-types',
      credential: 'secret',
      operationId: 'listEventTypes',
      summary: "List the event types the service emits, with a JSON Schema of each one's data",
      description: 'Every event type the service emits, with a description and a JSON Schema of its `data`.',
      response: { 200: EventTypeListSchema },
      handler: () => catalog,
    }),
  ]);
}

/** `GET /v1/event-types`'s body: every type of the catalog (event-types.ts), in its order. */
export function eventTypeList() {
  return {
    object: 'list' as const,
    data: EVENT_TYPES.map((type) => ({ type, description: EVENT_CATALOG[type].description, schema: EVENT_CATALOG[type].data })),
    has_more: false as const,
  };
}
