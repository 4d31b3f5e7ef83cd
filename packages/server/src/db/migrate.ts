import { type Kysely, Migrator } from 'kysely';
import type { Db } from './database.js';
import { MIGRATIONS } from './migrations/index.js';
import type { Database } from './schema.js';
import { inTransaction } from './transaction.js';

export interface MigrationReport {
  readonly applied: readonly string[];
}

/**
 * Brings the schema up to date. Safe to run from several processes at once (`serve` beside
 * `worker` on first start). On PostgreSQL Kysely's migrator takes a row lock around the run. On
 * SQLite its lock is a no-op, so the whole run is one `BEGIN IMMEDIATE` transaction instead
 * (SQLite's DDL is transactional): the others wait for the write lock, then find nothing to do.
 */
export async function migrateToLatest(db: Db): Promise<MigrationReport> {
  if (db.dialect === 'sqlite') return inTransaction(db, (trx) => migrate(trx));
  return migrate(db.kysely);
}

async function migrate(kysely: Kysely<Database>): Promise<MigrationReport> {
  const migrator = new Migrator({
    db: kysely,
    provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) throw error instanceof Error ? error : new Error('migration failed', { cause: error });
  return { applied: (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName) };
}
