import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { EVENT_CATALOG, EVENT_TYPES, type EventType } from '../modules/events/event-types.js';

/**
 * The OpenAPI 3.1 `webhooks` of the document: one POST per event type, whose body is the event
 * envelope (docs/api.md section 5) with that type's `data` schema from the event catalog
 * (modules/events/event-types.ts), the same schemas `GET /v1/event-types` lists.
 */
export function eventWebhooks(): Webhooks {
  // The operation objects are plain JSON built below; the document's type is checked by Redocly (openapi.test.ts).
  return Object.fromEntries(EVENT_TYPES.map((type) => [type, { post: webhookOperation(type) }])) as Webhooks;
}

type Webhooks = NonNullable<Extract<NonNullable<FastifyDynamicSwaggerOptions['openapi']>, { webhooks?: unknown }>['webhooks']>;

function webhookOperation(type: EventType): Record<string, unknown> {
  const { description, data } = EVENT_CATALOG[type];
  return {
    operationId: `webhook${type
      .split(/[._]/)
      .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
      .join('')}`,
    summary: `Event ${type}`,
    description: `${description} Delivered signed to every enabled endpoint that subscribes to \`${type}\` or \`*\` (docs/api.md section 6).`,
    tags: ['events'],
    security: [],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['id', 'type', 'created_at', 'data', 'idempotency_key'],
            additionalProperties: false,
            properties: {
              id: { type: 'string', description: 'Begins with `evt_`; the same as the `webhook-id` header.' },
              type: { type: 'string', const: type },
              created_at: { type: 'string', format: 'date-time' },
              // A plain copy: the catalog's TypeBox schemas carry symbol keys the document has no use for.
              data: JSON.parse(JSON.stringify(data)) as unknown,
              idempotency_key: { type: 'string', description: 'The same on every attempt to every endpoint: de-duplicate by it.' },
            },
          },
        },
      },
    },
    responses: {
      '2XX': { description: 'Received. Any other status, a redirect or no answer within 10 s is a failed attempt, retried later.' },
    },
  };
}
