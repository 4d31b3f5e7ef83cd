import type { Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Webhook signing secrets sealed at rest (docs/adr/0015-secrets-at-rest.md).
 *
 * Adds `webhook_endpoints.secret_sealed` and `previous_secret_sealed`. A migration cannot seal the
 * secrets already stored: sealing needs the keyring, which belongs to the running service's
 * configuration, not to `svc migrate`. So the service does it at start, before it serves or
 * delivers anything (modules/secrets/secrets.plaintext.ts): each row whose `secret` is not yet
 * empty is sealed into the new columns and its plain columns are emptied (`secret` '' and
 * `previous_secret` null) in one compare-and-set UPDATE, safe with several processes starting at
 * once. `svc secrets rotate` does the same for any row left. The plain columns stay (SQLite cannot
 * drop a NOT NULL without rebuilding the table), always empty; a later migration may drop them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('secret_sealed', 'text').execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('previous_secret_sealed', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').dropColumn('previous_secret_sealed').execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('secret_sealed').execute();
}
