import type { Db, Dialect } from '../../db/database.js';
import { listOf, startPage } from '../../db/pagination.js';
import type { Transaction } from '../../db/transaction.js';
import { ApiError } from '../../lib/errors.js';
import * as store from './event-log.store.js';
import { EVENT_TYPES, type EventType } from './events.service.js';
import type { ListEventsQuery } from './events.schemas.js';

export type { EventRow } from './event-log.store.js';

/** An event as the API shows it: the webhook envelope plus `object`. */
export interface EventObject {
  readonly id: string;
  readonly object: 'event';
  readonly type: string;
  readonly created_at: string;
  readonly data: Record<string, unknown>;
  readonly idempotency_key: string;
}

export interface EventList {
  readonly object: 'list';
  readonly data: EventObject[];
  readonly has_more: boolean;
}

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** The event log of `GET /v1/events`: read-only, every query scoped by project. */
export class EventLogService {
  readonly #db: Db;

  constructor(options: { readonly db: Db }) {
    this.#db = options.db;
  }

  async list(projectId: string, query: ListEventsQuery): Promise<EventList> {
    if (query.type !== undefined && !isEventType(query.type)) {
      throw new ApiError('event_type_unknown', `Unknown event type "${query.type}"; see the event catalog.`, { param: 'type' });
    }
    const page = await startPage(query, {
      find: (id) => store.findEvent(this.#db.kysely, projectId, id),
      missing: (id) => `No event ${id} to start after.`,
    });
    const rows = await store.listEvents(this.#db.kysely, projectId, { type: query.type, after: page.after, limit: page.rowsToRead });
    return listOf(rows, page.limit, toEventObject);
  }

  async get(projectId: string, eventId: string): Promise<EventObject> {
    const row = await store.findEvent(this.#db.kysely, projectId, eventId);
    if (row === undefined) throw new ApiError('resource_missing', `No event ${eventId}.`, { param: 'id' });
    return toEventObject(row);
  }
}

export function toEventObject(row: store.EventRow): EventObject {
  return {
    id: row.id,
    object: 'event',
    type: row.type,
    created_at: row.created_at,
    data: JSON.parse(row.data) as Record<string, unknown>,
    idempotency_key: row.idempotency_key,
  };
}

/**
 * The webhook body, `{id, type, created_at, data, idempotency_key}` in that order (docs/api.md
 * section 5). Built from the stored JSON text of `data` without parsing it, so every attempt to
 * every endpoint sends the same bytes.
 */
export function eventEnvelopeJson(row: store.EventRow): string {
  return (
    `{"id":${JSON.stringify(row.id)},"type":${JSON.stringify(row.type)},"created_at":${JSON.stringify(row.created_at)},` +
    `"data":${row.data},"idempotency_key":${JSON.stringify(row.idempotency_key)}}`
  );
}

// ---- The outbox, as the webhook delivery worker reads it ---------------------------------------

/** The stored events with these ids, across projects; each id came from a project's delivery. */
export function findEventsForDelivery(db: Db, eventIds: readonly string[]): Promise<store.EventRow[]> {
  return store.findEventsByIds(db.kysely, eventIds);
}

/**
 * Up to `limit` events not yet fanned out to webhook endpoints, oldest first, whole (the worker
 * sends the first attempts of their deliveries at once). On PostgreSQL, inside the fan-out
 * transaction, rows another worker holds are skipped (`FOR UPDATE SKIP LOCKED`).
 */
export function findUndispatchedEvents(
  trx: Transaction,
  options: { readonly limit: number; readonly skipLocked: boolean },
): Promise<store.EventRow[]> {
  return store.findUndispatchedEvents(trx, options);
}

/** A project's events of these types since a time, oldest first, a page at a time (a webhook recovery). */
export function findEventsSince(db: Db, projectId: string, filter: Parameters<typeof store.findEventsSince>[2]): Promise<store.EventRow[]> {
  return store.findEventsSince(db.kysely, projectId, filter);
}

/** Whether any event waits to be fanned out (a read outside any transaction). */
export function hasUndispatchedEvents(db: Db): Promise<boolean> {
  return store.anyUndispatchedEvent(db.kysely);
}

/** How many events wait to be fanned out, across projects (a metrics gauge). */
export function countUndispatchedEvents(db: Db): Promise<number> {
  return store.countUndispatchedEvents(db.kysely);
}

/** Marks events as fanned out, in the transaction that created their deliveries. */
export function markEventsDispatched(trx: Transaction, eventIds: readonly string[], dispatchedAt: string, dialect: Dialect): Promise<void> {
  return store.markEventsDispatched(trx, eventIds, dispatchedAt, dialect);
}

/** Retention: deletes up to `limit` fanned-out events older than `cutoff` (deliveries go with them). */
export function deleteDispatchedEventsBefore(db: Db, cutoff: string, limit: number): Promise<number> {
  return store.deleteDispatchedEventsBefore(db.kysely, cutoff, limit);
}
