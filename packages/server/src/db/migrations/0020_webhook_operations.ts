import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Webhook operations (docs/api.md section 4, docs/adr/0006-webhook-delivery.md):
 *
 * - `disabled_reason`: why an endpoint is off, `failing` (the worker switched it off) or `manual`
 *   (`PATCH {enabled: false}`); null while enabled.
 * - `failing_since`: the first failed attempt since the endpoint's last success (null when its
 *   last attempt succeeded), and `failed_deliveries`: the deliveries that ended `failed` since
 *   then. Together they decide the automatic switch-off after `WEBHOOK_DISABLE_AFTER_SECONDS`.
 * - `rate_limit_per_second`: at most this many attempts a second to the endpoint; null, no cap.
 *
 * Existing rows: an endpoint already switched off by its owner gets the reason `manual`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('disabled_reason', 'text').execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('failing_since', 'text').execute();
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('failed_deliveries', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('rate_limit_per_second', 'integer').execute();
  await db.updateTable('webhook_endpoints').set({ disabled_reason: 'manual' }).where('enabled', '=', 0).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['rate_limit_per_second', 'failed_deliveries', 'failing_since', 'disabled_reason']) {
    await db.schema.alterTable('webhook_endpoints').dropColumn(column).execute();
  }
}
