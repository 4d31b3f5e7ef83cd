import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Webhook endpoints, deliveries and their attempts, and the fan-out mark on the event outbox.
 *
 * `events.dispatched_at` is null until the delivery worker has created the event's deliveries; the
 * worker finds work through a partial index on the null rows, so the outbox's write path (the
 * wallet and auth transactions) gains no work at all. Events written before this migration had no
 * endpoint to go to and are marked as dispatched.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('dispatched_at', 'text').execute();
  await sql`update events set dispatched_at = created_at`.execute(db);
  await db.schema
    .createIndex('events_undispatched_idx')
    .on('events')
    .columns(['created_at', 'id'])
    .where(sql.ref('dispatched_at'), 'is', null)
    .execute();
  // GET /v1/events?type= (newest first, with a (created_at, id) cursor) and the retention sweep.
  await db.schema.createIndex('events_project_type_created_idx').on('events').columns(['project_id', 'type', 'created_at', 'id']).execute();
  await db.schema.createIndex('events_created_idx').on('events').columns(['created_at']).execute();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull().references('projects.id'))
    .addColumn('url', 'text', (column) => column.notNull())
    .addColumn('events', 'text', (column) => column.notNull())
    .addColumn('description', 'text')
    .addColumn('enabled', 'integer', (column) => column.notNull())
    .addColumn('secret', 'text', (column) => column.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addCheckConstraint('webhook_endpoints_enabled_flag', sql`enabled in (0, 1)`)
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_project_created_idx')
    .on('webhook_endpoints')
    .columns(['project_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('endpoint_id', 'text', (column) => column.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (column) => column.notNull().references('events.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('attempt_count', 'integer', (column) => column.notNull())
    .addColumn('scheduled_attempt_count', 'integer', (column) => column.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_id', 'text')
    .addColumn('leased_until', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addCheckConstraint('webhook_deliveries_status_known', sql`status in ('pending', 'succeeded', 'failed')`)
    .execute();
  // One delivery per (event, endpoint), whatever the fan-out does twice.
  await db.schema
    .createIndex('webhook_deliveries_event_endpoint_idx')
    .on('webhook_deliveries')
    .columns(['event_id', 'endpoint_id'])
    .unique()
    .execute();
  // The worker's queue: only pending rows, in due order.
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .columns(['next_attempt_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  // GET /v1/webhooks/{id}/deliveries, newest first, optionally by status.
  await db.schema
    .createIndex('webhook_deliveries_endpoint_created_idx')
    .on('webhook_deliveries')
    .columns(['project_id', 'endpoint_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_created_idx').on('webhook_deliveries').columns(['created_at']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('delivery_id', 'text', (column) => column.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempt_number', 'integer', (column) => column.notNull())
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('latency_ms', 'integer', (column) => column.notNull())
    .addColumn('error', 'text')
    .addColumn('response_body', 'text')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt_number'])
    .addCheckConstraint('webhook_attempts_kind_known', sql`kind in ('scheduled', 'manual')`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
  await db.schema.dropIndex('events_created_idx').execute();
  await db.schema.dropIndex('events_project_type_created_idx').execute();
  await db.schema.dropIndex('events_undispatched_idx').execute();
  await db.schema.alterTable('events').dropColumn('dispatched_at').execute();
}
