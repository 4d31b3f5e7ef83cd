import { type TSchema, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import { URL_LENGTH_MAX } from '../../lib/outbound-http.js';
import { EVENT_TYPES } from '../events/events.service.js';

export const DESCRIPTION_LENGTH_MAX = 1000;
/** The catalog and "*": more entries than that can only repeat one. */
const EVENTS_MAX = EVENT_TYPES.length + 1;

function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

const Url = Type.String({
  minLength: 1,
  maxLength: URL_LENGTH_MAX,
  description: 'An https:// URL whose host is public: not loopback, private, link-local, CGNAT, multicast or a metadata address.',
});
const EventTypes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: EVENTS_MAX,
  description: 'Event types from the catalog, or `["*"]` for every type.',
});
const Description = Type.String({ maxLength: DESCRIPTION_LENGTH_MAX });
const Time = Type.String({ format: 'date-time' });
/** Attempts a second at the most; a generous bound that no receiver needs more than. */
export const RATE_LIMIT_PER_SECOND_MAX = 10_000;
const RateLimit = Nullable(
  Type.Integer({
    minimum: 1,
    maximum: RATE_LIMIT_PER_SECOND_MAX,
    description: 'At most this many delivery attempts a second to this endpoint; the rest wait, none is dropped. null: no cap.',
  }),
);

// ---- Requests --------------------------------------------------------------------------------

export const EndpointParams = StrictObject({ id: Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `we_`.' }) });
export const DeliveryParams = StrictObject({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `we_`.' }),
  delivery_id: Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `del_`.' }),
});

export const CreateEndpointBody = StrictObject({
  url: Url,
  events: EventTypes,
  description: Type.Optional(Description),
  rate_limit_per_second: Type.Optional(RateLimit),
});
export interface CreateEndpointBody {
  url: string;
  events: string[];
  description?: string;
  rate_limit_per_second?: number | null;
}

export const UpdateEndpointBody = StrictObject({
  url: Type.Optional(Url),
  events: Type.Optional(EventTypes),
  description: Type.Optional(Nullable(Description)),
  enabled: Type.Optional(
    Type.Boolean({
      description:
        'false stops deliveries to this endpoint (`disabled_reason: "manual"`); true resumes them, also after an automatic switch-off, and starts a fresh failure window.',
    }),
  ),
  rate_limit_per_second: Type.Optional(RateLimit),
});
export interface UpdateEndpointBody {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
  rate_limit_per_second?: number | null;
}

export const RecoverBody = StrictObject({
  since: Type.String({
    format: 'date-time',
    description:
      'Re-send what was not delivered from this time on: not in the future, within the event retention (`EVENT_RETENTION_DAYS`).',
  }),
});
export interface RecoverBody {
  since: string;
}

export const ListEndpointsQuery = StrictObject({ ...ListQuery });
export interface PageQuery {
  limit?: number;
  starting_after?: string;
}

export const ListDeliveriesQuery = StrictObject({
  ...ListQuery,
  status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')])),
});
export interface ListDeliveriesQuery extends PageQuery {
  status?: 'pending' | 'succeeded' | 'failed';
}

// ---- Responses -------------------------------------------------------------------------------

const endpointProperties = {
  id: Type.String({ description: 'Begins with `we_`.' }),
  object: Type.Literal('webhook_endpoint'),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Nullable(Type.String()),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(
    Type.Union([Type.Literal('failing'), Type.Literal('manual')], {
      description:
        'Why the endpoint is off: `failing`, switched off after every attempt failed for `WEBHOOK_DISABLE_AFTER_SECONDS`; `manual`, by `PATCH {enabled: false}`. null while enabled.',
    }),
  ),
  rate_limit_per_second: RateLimit,
  created_at: Time,
};

export const EndpointSchema = Type.Object(endpointProperties, { $id: 'WebhookEndpoint' });
export const EndpointWithSecretSchema = Type.Object(
  {
    ...endpointProperties,
    secret: Type.String({ description: '`whsec_…`: shown only here, at creation and at rotation. Verify signatures with it.' }),
  },
  { $id: 'WebhookEndpointWithSecret' },
);
export const EndpointListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(EndpointSchema), has_more: Type.Boolean() },
  { $id: 'WebhookEndpointList' },
);
export const DeletedEndpointSchema = Type.Object(
  { id: Type.String(), object: Type.Literal('webhook_endpoint'), deleted: Type.Literal(true) },
  { $id: 'DeletedWebhookEndpoint' },
);

export const AttemptSchema = Type.Object(
  {
    attempt: Type.Integer({ description: '1, 2, … within the delivery.' }),
    kind: Type.Union([Type.Literal('scheduled'), Type.Literal('manual')]),
    created_at: Type.String({ format: 'date-time', description: 'When the request was sent.' }),
    status_code: Nullable(Type.Integer({ description: 'The HTTP status of the answer; null when none came.' })),
    latency_ms: Type.Integer(),
    error: Nullable(Type.String({ description: 'Why the attempt failed, when it did not get a 2xx.' })),
    response_body: Nullable(Type.String({ description: 'The first 4 KiB of the response body.' })),
  },
  { $id: 'WebhookAttempt' },
);

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `del_`.' }),
    object: Type.Literal('webhook_delivery'),
    endpoint_id: Type.String(),
    event_id: Type.String(),
    event_type: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
      description: '`failed`: every scheduled attempt failed; no more automatic attempts (retry by hand).',
    }),
    attempt_count: Type.Integer(),
    next_attempt_at: Nullable(Time),
    created_at: Time,
    updated_at: Time,
    attempts: Type.Array(AttemptSchema, { description: 'Oldest first; the most recent 50.' }),
  },
  { $id: 'WebhookDelivery' },
);
export const DeliveryListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(DeliverySchema), has_more: Type.Boolean() },
  { $id: 'WebhookDeliveryList' },
);

export const RecoverySchema = Type.Object(
  {
    object: Type.Literal('recovery'),
    deliveries: Type.Integer({ description: 'Deliveries made due again or created, sent in event order.' }),
  },
  { $id: 'WebhookRecovery' },
);
