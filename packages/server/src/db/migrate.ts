import { Migrator } from 'kysely';
import type { Db } from './database.js';
import { MIGRATIONS } from './migrations/index.js';

export interface MigrationReport {
  readonly applied: readonly string[];
}

/**
 * Brings the schema up to date. Safe to run from several processes at once: Kysely's migrator
 * takes a lock (a row lock on PostgreSQL, the single writer on SQLite) around the whole run.
 */
export async function migrateToLatest(db: Db): Promise<MigrationReport> {
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) throw error instanceof Error ? error : new Error('migration failed', { cause: error });
  return { applied: (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName) };
}
