import { CompiledQuery, type Kysely, sql } from 'kysely';
import { type Dialect, PREPARED_STATEMENT } from '../../db/database.js';
import { type KeysetCursor, keysetPage } from '../../db/pagination.js';
import type { Database, EventsTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type EventRow = Omit<EventsTable, 'dispatched_at'>;

const EVENT_COLUMNS = ['id', 'project_id', 'type', 'data', 'idempotency_key', 'created_at'] as const;

export interface ListEventsFilter {
  readonly type: string | undefined;
  /** Rows after this one in newest-first order. */
  readonly after: KeysetCursor | undefined;
  readonly limit: number;
}

/** Newest first; ties in `created_at` broken by id, so the order is total and the cursor exact. */
export async function listEvents(db: Executor, projectId: string, filter: ListEventsFilter): Promise<EventRow[]> {
  let query = db.selectFrom('events').select(EVENT_COLUMNS).where('project_id', '=', projectId);
  if (filter.type !== undefined) query = query.where('type', '=', filter.type);
  return keysetPage(query, filter).execute();
}

export async function findEvent(db: Executor, projectId: string, eventId: string): Promise<EventRow | undefined> {
  return db.selectFrom('events').select(EVENT_COLUMNS).where('project_id', '=', projectId).where('id', '=', eventId).executeTakeFirst();
}

/**
 * Events whose deliveries have not been created yet, oldest first. Not scoped by project: the
 * delivery worker serves every project. With `skipLocked` (PostgreSQL, inside the fan-out
 * transaction) rows another worker is fanning out are passed over instead of waited for.
 *
 * On PostgreSQL the rest of the transaction runs with sorting disabled for the planner
 * (`enable_sort`, transaction-local): the rows to lock must come from walking the partial index on
 * undispatched events in order, `limit` of them. The planner otherwise chose, whenever its
 * statistics undercounted the backlog (always, in a burst into a young table), to fetch the whole
 * backlog and sort it under the row locks, where the sort cannot stop at `limit`: tens of
 * thousands of rows sorted, on disk, for every batch, about 40 µs per event fanned out in the
 * webhook benchmark and growing with the backlog.
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
  if (!options.skipLocked) return query.execute();
  await sql`select set_config('enable_sort', 'off', true)`.execute(db);
  return query.forUpdate().skipLocked().execute();
}

/** Whether any event waits to be fanned out (any one: no order, so the first index entry found answers). */
export async function anyUndispatchedEvent(db: Executor): Promise<boolean> {
  const row = await db.selectFrom('events').select('id').where('dispatched_at', 'is', null).limit(1).executeTakeFirst();
  return row !== undefined;
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

export async function markEventsDispatched(
  db: Executor,
  eventIds: readonly string[],
  dispatchedAt: string,
  dialect: Dialect,
): Promise<void> {
  if (eventIds.length === 0) return;
  if (dialect === 'postgres') {
    await db.executeQuery(CompiledQuery.raw(PG_MARK_DISPATCHED_SQL, [dispatchedAt, eventIds]));
    return;
  }
  await db.updateTable('events').set({ dispatched_at: dispatchedAt }).where('id', 'in', eventIds).execute();
}

/** One array parameter and a fixed prepared text, whatever the batch's size (see webhooks.store.ts). */
const PG_MARK_DISPATCHED_SQL = `${PREPARED_STATEMENT} update events set dispatched_at = $1 where id = any($2::text[])`;

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

/**
 * A project's events of these types created at or after `since`, oldest first (ties by id), after
 * the cursor `after`: a recovery's pages (the index on (project_id, type, created_at, id) serves it).
 */
export async function findEventsSince(
  db: Executor,
  projectId: string,
  filter: {
    readonly types: readonly string[];
    readonly since: string;
    readonly after: KeysetCursor | undefined;
    readonly limit: number;
  },
): Promise<EventRow[]> {
  if (filter.types.length === 0) return [];
  const query = db
    .selectFrom('events')
    .select(EVENT_COLUMNS)
    .where('project_id', '=', projectId)
    .where('type', 'in', filter.types)
    .where('created_at', '>=', filter.since);
  return keysetPage(query, { ...filter, order: 'oldest first' }).execute();
}
