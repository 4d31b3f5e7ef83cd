import type { Kysely } from 'kysely';
import type { Database, EventsTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type EventRow = Omit<EventsTable, 'dispatched_at'>;

const EVENT_COLUMNS = ['id', 'project_id', 'type', 'data', 'idempotency_key', 'created_at'] as const;

export interface ListEventsFilter {
  readonly type: string | undefined;
  /** Rows after this one in newest-first order. */
  readonly after: Pick<EventRow, 'created_at' | 'id'> | undefined;
  readonly limit: number;
}

/** Newest first; ties in `created_at` broken by id, so the order is total and the cursor exact. */
export async function listEvents(db: Executor, projectId: string, filter: ListEventsFilter): Promise<EventRow[]> {
  const { type, after } = filter;
  let query = db.selectFrom('events').select(EVENT_COLUMNS).where('project_id', '=', projectId);
  if (type !== undefined) query = query.where('type', '=', type);
  if (after !== undefined) {
    query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.created_at, after.id)));
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
}

export async function findEvent(db: Executor, projectId: string, eventId: string): Promise<EventRow | undefined> {
  return db.selectFrom('events').select(EVENT_COLUMNS).where('project_id', '=', projectId).where('id', '=', eventId).executeTakeFirst();
}

/**
 * Events whose deliveries have not been created yet, oldest first. Not scoped by project: the
 * delivery worker serves every project. With `skipLocked` (PostgreSQL) rows another worker is
 * fanning out are passed over instead of waited for.
 */
export async function findUndispatchedEvents(
  db: Executor,
  options: { readonly limit: number; readonly skipLocked: boolean },
): Promise<EventRow[]> {
  const query = db
    .selectFrom('events')
    .select(EVENT_COLUMNS)
    .where('dispatched_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(options.limit);
  return (options.skipLocked ? query.forUpdate().skipLocked() : query).execute();
}

/** The ids of up to `limit` events not yet fanned out (served by the partial index alone). */
export async function findUndispatchedEventIds(db: Executor, limit: number): Promise<{ id: string }[]> {
  return db.selectFrom('events').select('id').where('dispatched_at', 'is', null).orderBy('created_at').orderBy('id').limit(limit).execute();
}

/** Events not yet fanned out, across projects (the metrics gauge; served by the partial index). */
export async function countUndispatchedEvents(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('dispatched_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export async function markEventsDispatched(db: Executor, eventIds: readonly string[], dispatchedAt: string): Promise<void> {
  if (eventIds.length === 0) return;
  await db.updateTable('events').set({ dispatched_at: dispatchedAt }).where('id', 'in', eventIds).execute();
}

/** Events by id, across projects (the delivery worker's read; each id came from a project's delivery). */
export async function findEventsByIds(db: Executor, eventIds: readonly string[]): Promise<EventRow[]> {
  if (eventIds.length === 0) return [];
  return db.selectFrom('events').select(EVENT_COLUMNS).where('id', 'in', eventIds).execute();
}

/** Deletes up to `limit` fanned-out events created before `cutoff`; returns how many. */
export async function deleteDispatchedEventsBefore(db: Executor, cutoff: string, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('events')
    .where('id', 'in', (eb) =>
      eb.selectFrom('events').select('id').where('created_at', '<', cutoff).where('dispatched_at', 'is not', null).limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
