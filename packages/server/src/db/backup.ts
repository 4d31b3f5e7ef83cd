import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import { verifyLedger } from '../modules/ledger/ledger.verify.js';
import type { Db } from './database.js';
import type { Database } from './schema.js';
import { SqliteDriver } from './sqlite-driver.js';

/**
 * `svc backup` and `svc restore` for SQLite (docs/operations.md, "Backups"). The contract: a file
 * these functions leave behind has passed `integrity_check` and every ledger invariant of
 * `svc ledger verify`; a copy that fails is removed, never left where it could be taken for a
 * good one. Neither function overwrites anything: the backup's FILE must not exist, and a restore
 * goes only into an empty data directory.
 */

/** Refused or failed: the message names what, for the operator's terminal. */
export class BackupError extends Error {}

export interface CopyCheck {
  readonly integrity_check: 'ok';
  readonly ledger_sound: true;
  readonly projects: number;
  readonly wallets: number;
  readonly transactions: number;
}

export interface BackupSummary extends CopyCheck {
  readonly file: string;
  readonly bytes: number;
  /** Time of the copy alone (the online backup), then of the checks. */
  readonly copy_ms: number;
  readonly check_ms: number;
}

export interface RestoreSummary extends CopyCheck {
  readonly from: string;
  readonly database: string;
  readonly bytes: number;
}

/** Pages per backup step: all of them in one step (see `backupSqlite`). */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies the live database `source` to `file` with SQLite's online backup, while other processes
 * read and write it. The copy is made in one step, inside one read transaction: in WAL mode that
 * reads a single snapshot without blocking writers, whereas a copy in several steps would start
 * over each time another connection commits, and might never finish under steady writes.
 */
export async function backupSqlite(options: { source: string; file: string }): Promise<BackupSummary> {
  const { source, file } = options;
  if (existsSync(file)) throw new BackupError(`${file} already exists; svc backup never overwrites a file: name a new one`);
  if (!existsSync(source)) throw new BackupError(`no database at ${source}`);
  if (!existsSync(dirname(file))) throw new BackupError(`the directory ${dirname(file)} does not exist`);
  // Written beside FILE under another name, and linked to FILE only once checked.
  const partial = join(dirname(file), `.${basename(file)}.partial-${process.pid}`);
  const started = Date.now();
  const database = new SqliteDriver(source, { fileMustExist: true });
  try {
    database.pragma('busy_timeout = 5000');
    await database.backup(partial, { progress: () => ALL_PAGES });
  } catch (error) {
    removeDatabaseFile(partial);
    throw error;
  } finally {
    database.close();
  }
  const copied = Date.now();
  try {
    const check = await checkSqliteCopy(partial);
    // link, not rename: it fails if FILE appeared meanwhile, where rename would replace it.
    linkSync(partial, file);
    return { file, bytes: statSync(file).size, copy_ms: copied - started, check_ms: Date.now() - copied, ...check };
  } finally {
    removeDatabaseFile(partial);
  }
}

/**
 * Puts the backup `file` in place as the database `target` of the data directory `dataDir`, which
 * must be empty (or not exist): a restore never mixes with what another database left there
 * (webhook worker slots, a secrets key, an outbox).
 */
export async function restoreSqlite(options: { file: string; dataDir: string; target: string }): Promise<RestoreSummary> {
  const { file, dataDir, target } = options;
  if (!existsSync(file)) throw new BackupError(`no backup at ${file}`);
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    throw new BackupError(`DATA_DIR ${dataDir} is not empty; svc restore goes only into an empty one`);
  }
  if (existsSync(target)) throw new BackupError(`${target} already exists; svc restore never overwrites a database`);
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(dirname(target), { recursive: true });
  const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  try {
    copyFileSync(file, partial);
    const check = await checkSqliteCopy(partial);
    linkSync(partial, target);
    return { from: file, database: target, bytes: statSync(target).size, ...check };
  } finally {
    removeDatabaseFile(partial);
  }
}

/**
 * Checks a copy: SQLite's `integrity_check`, then every ledger invariant of every project. Also
 * turns the copy's journal into a rollback journal, so that the copy is one self-contained file
 * (the service turns WAL back on when it opens it).
 */
export async function checkSqliteCopy(file: string): Promise<CopyCheck> {
  const database = new SqliteDriver(file, { fileMustExist: true });
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  try {
    database.pragma('journal_mode = DELETE');
    const integrity = database.pragma('integrity_check') as { integrity_check: string }[];
    const problems = integrity.map((row) => row.integrity_check).filter((line) => line !== 'ok');
    if (problems.length > 0) throw new BackupError(`integrity_check failed on the copy: ${problems.slice(0, 5).join('; ')}`);
    const db: Db = { kysely, dialect: 'sqlite', destroy: () => kysely.destroy() };
    const report = await verifyLedger(db, { projectId: null });
    if (!report.sound) {
      const broken = Object.entries(report.checks)
        .filter(([, result]) => result.violations > 0)
        .map(([check, result]) => `${check} (${result.violations})`);
      throw new BackupError(`ledger invariants broken in the copy: ${broken.join(', ')}`);
    }
    const count = (table: string) => (database.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    return {
      integrity_check: 'ok',
      ledger_sound: true,
      projects: count('projects'),
      wallets: count('wallets'),
      transactions: count('ledger_transactions'),
    };
  } finally {
    await kysely.destroy();
  }
}

/** Removes a database file and the journal files SQLite may have left beside it. */
function removeDatabaseFile(file: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
}
