import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The outbox's indexes, one fewer on every event written.
 *
 * - `events_created_idx` (every event, by `created_at`) served only the retention sweep, which
 *   reads dispatched events alone (`dispatched_at is not null` and older than the cutoff). It
 *   becomes a partial index on the dispatched events: an event's insert (in a wallet's or an auth
 *   transaction) writes one index entry less, and the planner can no longer pick it for the
 *   delivery worker's "oldest undispatched events" query, which it did with statistics taken while
 *   the outbox was all undispatched (walking every dispatched event from the oldest, each fetched
 *   to test `dispatched_at`).
 * - `webhook_deliveries_created_idx` had no reader at all: retention deletes events, and their
 *   deliveries and attempts go with them (ON DELETE CASCADE, through the (event, endpoint) index).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('events_dispatched_created_idx')
    .on('events')
    .columns(['created_at'])
    .where(sql.ref('dispatched_at'), 'is not', null)
    .execute();
  await db.schema.dropIndex('events_created_idx').execute();
  await db.schema.dropIndex('webhook_deliveries_created_idx').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('webhook_deliveries_created_idx').on('webhook_deliveries').columns(['created_at']).execute();
  await db.schema.createIndex('events_created_idx').on('events').columns(['created_at']).execute();
  await db.schema.dropIndex('events_dispatched_created_idx').execute();
}
