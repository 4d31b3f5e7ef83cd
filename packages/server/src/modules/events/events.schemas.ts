import { Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';

export const EventSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `evt_`.' }),
    object: Type.Literal('event'),
    type: Type.String({ description: 'One of the event types of the catalog (docs/api.md section 5).' }),
    created_at: Type.String({ format: 'date-time' }),
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'The payload; its fields depend on `type`.' }),
    idempotency_key: Type.String({ description: 'Unique per event and the same on every delivery attempt: receivers de-duplicate by it.' }),
  },
  { $id: 'Event' },
);

export const EventListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(EventSchema), has_more: Type.Boolean() },
  { $id: 'EventList' },
);

export const ListEventsQuery = StrictObject({
  ...ListQuery,
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only events of this type.' })),
});
export interface ListEventsQuery {
  limit?: number;
  starting_after?: string;
  type?: string;
}

export const EventParams = StrictObject({ id: Type.String({ minLength: 1, maxLength: 64, description: 'Begins with `evt_`.' }) });

export const EventTypeSchema = Type.Object(
  {
    type: Type.String({ description: "The event type, as in `Event.type` and in a webhook endpoint's `events`." }),
    description: Type.String(),
    schema: Type.Record(Type.String(), Type.Unknown(), { description: "A JSON Schema of the event's `data`." }),
  },
  { $id: 'EventType' },
);

export const EventTypeListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(EventTypeSchema), has_more: Type.Literal(false) },
  { $id: 'EventTypeList' },
);
