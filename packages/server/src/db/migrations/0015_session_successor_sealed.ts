import { type Kysely, sql } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was at the time they were written,
// not as the current table types say it is.
/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The refresh grace window (`REFRESH_REUSE_GRACE_SECONDS`, docs/adr/0009-sessions-and-refresh-chains.md):
 * a used refresh token presented again within the window answers the same new session again, so
 * the used row keeps its successor's session token and refresh token until the window ends —
 * sealed (AES-256-GCM, bound to the row), never in clear.
 *
 * - `sessions.successor_sealed`: that sealed pair, or null (always null with no grace window, and
 *   cleared once the window has passed).
 * - `sessions_successor_sealed_idx`: the rows still holding one, by `refreshed_at`, for the job
 *   that clears them; a partial index, so it holds only the few rows inside a window.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('successor_sealed', 'text').execute();
  await db.schema
    .createIndex('sessions_successor_sealed_idx')
    .on('sessions')
    .columns(['refreshed_at'])
    .where(sql.ref('successor_sealed'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('sessions_successor_sealed_idx').execute();
  await db.schema.alterTable('sessions').dropColumn('successor_sealed').execute();
}
