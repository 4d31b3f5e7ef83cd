import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Webhook delivery workers' heartbeats (docs/adr/0006-webhook-delivery.md, "Dead workers").
 *
 * One row per running worker process: `id` is the prefix of every lease it takes (its identity
 * and a random part new at each start), `last_seen` is renewed every second. A row whose
 * `last_seen` is too old belongs to a process that died; any other worker deletes it and frees the
 * leases under its prefix in one transaction. A worker that stops cleanly deletes its own row.
 * A handful of rows, read whole: no index beyond the primary key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_workers')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('host', 'text', (column) => column.notNull())
    .addColumn('pid', 'integer', (column) => column.notNull())
    .addColumn('started_at', 'text', (column) => column.notNull())
    .addColumn('last_seen', 'text', (column) => column.notNull())
    .execute();
}
