import { sql } from 'kysely';
import type { Transaction } from '../../db/transaction.js';
import { assert } from '../../lib/assert.js';
import { newId } from '../../lib/ids.js';

import { type EventData, type EventType } from './event-types.js';

export { EVENT_TYPES, type EventData, type EventType } from './event-types.js';

/** An event of type `T` to record; its `data` is typed by the catalog's schema (event-types.ts). */
export interface NewEventOf<T extends EventType> {
  readonly projectId: string;
  readonly type: T;
  /** The event's `data`, stored as JSON. */
  readonly data: EventData<T>;
  /** The time of the change it reports, so the event and the change carry the same time. */
  readonly createdAt: string;
  /**
   * What receivers de-duplicate by; unique across all events. Defaults to the event id. Pass one
   * derived from the change (for example its transaction id and the event type) when a change
   * must never produce the same event twice: the unique index then refuses the second.
   */
  readonly idempotencyKey?: string;
}

/** Any event to record, discriminated by `type`: a `data` that does not fit its type fails typecheck. */
export type NewEvent = { [T in EventType]: NewEventOf<T> }[EventType];

/**
 * Told, in this process, that events were written, in a transaction that may not have committed
 * yet: this process's delivery worker looks at the outbox now rather than at its next idle poll
 * (docs/adr/0006-webhook-delivery.md, "Idle workers poll less"). Returns a function that stops it.
 */
export function onEventsRecorded(listener: () => void): () => void {
  recordedListeners.add(listener);
  return () => recordedListeners.delete(listener);
}

const recordedListeners = new Set<() => void>();

/**
 * Writes events to the outbox, in the caller's transaction: they exist if and only if the change
 * they report commits (docs/api.md section 5). Delivery happens later, from the outbox, never here.
 * Returns the new event ids, in order.
 */
export async function recordEvents(trx: Transaction, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((event) => {
    const id = newId('evt');
    return {
      id,
      project_id: event.projectId,
      type: event.type,
      data: JSON.stringify(event.data),
      idempotency_key: event.idempotencyKey ?? id,
      created_at: event.createdAt,
    };
  });
  for (const listener of recordedListeners) listener();
  const [only] = rows;
  if (rows.length === 1 && only !== undefined) {
    // Most changes record one event (every log in does): an SQL text, without Kysely's query builder.
    await sql`insert into events (id, project_id, type, data, idempotency_key, created_at)
      values (${only.id}, ${only.project_id}, ${only.type}, ${only.data}, ${only.idempotency_key}, ${only.created_at})`.execute(trx);
  } else {
    await trx.insertInto('events').values(rows).execute();
  }
  return rows.map((row) => row.id);
}

/** Writes one event to the outbox in the caller's transaction; see `recordEvents`. */
export async function recordEvent(trx: Transaction, event: NewEvent): Promise<string> {
  const [id] = await recordEvents(trx, [event]);
  assert(id !== undefined, 'recordEvents returned no id for one event');
  return id;
}
