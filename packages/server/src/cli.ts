import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, type DatabaseConfig, loadConfig } from './config.js';
import { BackupError, backupSqlite, restoreSqlite } from './db/backup.js';
import { type Db, openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { startService, startWorker } from './main.js';
import { AuditService, SYSTEM_AUDIT_CONTEXT } from './modules/audit/audit.service.js';
import { ProjectsService } from './modules/projects/projects.service.js';
import { rotateSigningKey, SigningKeys } from './modules/sessions/sessions.service.js';
import { ledgerAuditSource } from './modules/ledger/ledger.audit.js';
import { LEDGER_CHECKS, verifyLedger } from './modules/ledger/ledger.verify.js';
import { rotateSealedSecrets } from './security/secrets-rotation.js';
import { systemClock } from './lib/clock.js';
import { isApiError } from './lib/errors.js';
import { DEVELOPMENT_KEY_FILE, secretBoxFromConfig } from './lib/secret-box.js';
import { SERVICE_VERSION } from './version.js';

const USAGE = `usage: svc <command> [options]

  serve                                  run the API and the background jobs on PORT (default 8080)
  worker                                 run the background jobs and the webhook delivery worker only
  migrate                                bring the database schema up to date
  project create --name NAME             create a project; prints {"project", "secret_key"}
  key create --project PRJ_ID [--name N] create a secret key; prints {"api_key", "secret_key"}
  key list --project PRJ_ID              list a project's keys (prefix and last four only)
  key revoke --project PRJ_ID KEY_ID     revoke a key
  audit verify --project PRJ_ID          seal new audit entries, then recompute the project's hash chain;
                                         prints the report, exit code 1 when a link is broken
  ledger verify [--project PRJ_ID]       check every ledger invariant (balances = their entries, each
                                         transaction sums to zero, no negative balance, no key applied
                                         twice, one event per movement, grants sum to the balance, held =
                                         the pending holds, available never negative, one credit per
                                         recurring grant period) in one project or all of them; prints
                                         the report, exit code 1 naming each broken one
  backup FILE                            SQLite: copy the live database to FILE (a new file) while the
                                         service runs, then check the copy (integrity_check and every
                                         ledger invariant); prints a summary, exit code 1 naming what failed
  restore FILE                           SQLite: put the backup FILE in place as the database of an empty
                                         DATA_DIR, checked as svc backup checks; exit code 1 otherwise
  signing-keys rotate --project PRJ_ID   make the project's next session JWT signing key sign from now on
                                         (the previous stays published until its JWTs expire); prints it
  secrets rotate [--batch-rows N]        re-seal every sealed secret under the first key of
                                         SECRETS_ENCRYPTION_KEYS; prints counts per column, exit code 1
                                         when a value opens with no key of the ring
  --version                              print the service's version (e.g. 0.1.0)

The database and every other setting come from the environment (docs/configuration.md).`;

class UsageError extends Error {}

/** Runs one CLI command and returns the process exit code: 0 done, 1 failed, 2 bad usage. */
export async function runCli(argv: readonly string[]): Promise<number> {
  try {
    return await dispatch(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`svc: ${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`svc: configuration: ${error.message}\n`);
      return 1;
    }
    if (error instanceof BackupError) {
      process.stderr.write(`svc: ${error.message}\n`);
      return 1;
    }
    if (isApiError(error)) {
      process.stderr.write(`svc: ${error.code}: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`svc: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}

async function dispatch(argv: readonly string[]): Promise<number> {
  const [command, subcommand, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve();
    case 'worker':
      return worker();
    case 'migrate':
      return migrate();
    case 'project':
      if (subcommand === 'create') return projectCreate(rest);
      throw new UsageError(`unknown project command "${subcommand ?? ''}"`);
    case 'key':
      if (subcommand === 'create') return keyCreate(rest);
      if (subcommand === 'list') return keyList(rest);
      if (subcommand === 'revoke') return keyRevoke(rest);
      throw new UsageError(`unknown key command "${subcommand ?? ''}"`);
    case 'audit':
      if (subcommand === 'verify') return auditVerify(rest);
      throw new UsageError(`unknown audit command "${subcommand ?? ''}"`);
    case 'ledger':
      if (subcommand === 'verify') return ledgerVerify(rest);
      throw new UsageError(`unknown ledger command "${subcommand ?? ''}"`);
    case 'backup':
      return backup(subcommand, rest);
    case 'restore':
      return restore(subcommand, rest);
    case 'signing-keys':
      if (subcommand === 'rotate') return signingKeysRotate(rest);
      throw new UsageError(`unknown signing-keys command "${subcommand ?? ''}"`);
    case 'secrets':
      if (subcommand === 'rotate') return secretsRotate(rest);
      throw new UsageError(`unknown secrets command "${subcommand ?? ''}"`);
    case '--version':
    case '-v':
      process.stdout.write(`${SERVICE_VERSION}\n`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/**
 * Opens the database a command works on, and says on stderr which one it is, so that a command run
 * with the wrong DATA_DIR or DATABASE_URL shows it before anything else.
 */
function openCliDatabase(config: DatabaseConfig): Db {
  process.stderr.write(`svc: database ${describeDatabase(config)}\n`);
  return openDatabase(config);
}

/** The database as an operator names it: the SQLite file, or the PostgreSQL URL without its password. */
export function describeDatabase(config: DatabaseConfig): string {
  if (config.dialect === 'sqlite') return `SQLite ${config.file}`;
  return `PostgreSQL ${config.url.replace(/^([a-z]+:\/\/[^:/@]*):[^@]*@/i, '$1:***@')}`;
}

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function options(args: readonly string[], names: readonly string[]): { values: Record<string, string | undefined>; positionals: string[] } {
  try {
    const parsed = parseArgs({
      args: [...args],
      options: Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
      allowPositionals: true,
      strict: true,
    });
    return { values: parsed.values, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function required(values: Record<string, string | undefined>, name: string): string {
  const value = values[name];
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** Opens the database, brings it up to date, and runs `work` with the projects service. */
async function withProjects<T>(work: (projects: ProjectsService) => Promise<T>): Promise<T> {
  const db = openCliDatabase(loadConfig().database);
  try {
    await migrateToLatest(db);
    return await work(
      new ProjectsService({ db, clock: systemClock, audit: new AuditService({ db, clock: systemClock, ledger: ledgerAuditSource(db) }) }),
    );
  } finally {
    await db.destroy();
  }
}

async function migrate(): Promise<number> {
  const db = openCliDatabase(loadConfig().database);
  try {
    printJson(await migrateToLatest(db));
    return 0;
  } finally {
    await db.destroy();
  }
}

async function projectCreate(args: readonly string[]): Promise<number> {
  const { values } = options(args, ['name']);
  const name = required(values, 'name');
  const { project, secretKey } = await withProjects((projects) => projects.createProject({ name }));
  printJson({ project: { id: project.id, name: project.name }, secret_key: secretKey });
  return 0;
}

async function keyCreate(args: readonly string[]): Promise<number> {
  const { values } = options(args, ['project', 'name']);
  const projectId = required(values, 'project');
  const name = values['name'];
  const { apiKey, secretKey } = await withProjects((projects) => projects.createKey(projectId, name === undefined ? {} : { name }));
  printJson({ api_key: apiKey, secret_key: secretKey });
  return 0;
}

async function keyList(args: readonly string[]): Promise<number> {
  const { values } = options(args, ['project']);
  const projectId = required(values, 'project');
  const keys = await withProjects(async (projects) => {
    await projects.getProject(projectId);
    return projects.listKeys(projectId);
  });
  printJson({ object: 'list', data: keys, has_more: false });
  return 0;
}

async function keyRevoke(args: readonly string[]): Promise<number> {
  const { values, positionals } = options(args, ['project', 'key']);
  const projectId = required(values, 'project');
  const keyId = values['key'] ?? positionals[0];
  if (keyId === undefined) throw new UsageError('name the key to revoke: svc key revoke --project PRJ_ID KEY_ID');
  printJson(await withProjects((projects) => projects.revokeKey(projectId, keyId)));
  return 0;
}

/** `svc audit verify`: 0 when the chain holds, 1 when a link is broken (the report names the first). */
async function auditVerify(args: readonly string[]): Promise<number> {
  const { values } = options(args, ['project']);
  const projectId = required(values, 'project');
  const db = openCliDatabase(loadConfig().database);
  try {
    await migrateToLatest(db);
    const audit = new AuditService({ db, clock: systemClock, ledger: ledgerAuditSource(db) });
    await new ProjectsService({ db, clock: systemClock, audit }).getProject(projectId);
    const report = await audit.verify(projectId);
    printJson(report);
    if (report.broken !== null) process.stderr.write(`svc: audit chain broken: ${report.broken.message}\n`);
    return report.ok ? 0 : 1;
  } finally {
    await db.destroy();
  }
}

/** `svc ledger verify`: 0 when every invariant holds, 1 naming each broken one on stderr. */
async function ledgerVerify(args: readonly string[]): Promise<number> {
  const { values } = options(args, ['project']);
  const projectId = values['project'] ?? null;
  const db = openCliDatabase(loadConfig().database);
  try {
    await migrateToLatest(db);
    if (projectId !== null) {
      await new ProjectsService({
        db,
        clock: systemClock,
        audit: new AuditService({ db, clock: systemClock, ledger: ledgerAuditSource(db) }),
      }).getProject(projectId);
    }
    const report = await verifyLedger(db, { projectId });
    printJson({ sound: report.sound, project_id: report.projectId, checks: report.checks });
    for (const check of LEDGER_CHECKS) {
      const result = report.checks[check];
      if (result.violations > 0) {
        process.stderr.write(`svc: ledger invariant broken: ${check} (${result.violations}; e.g. ${result.examples.join(', ')})\n`);
      }
    }
    return report.sound ? 0 : 1;
  } finally {
    await db.destroy();
  }
}

/** The one file argument of `svc backup FILE` and `svc restore FILE`. */
function fileArgument(command: string, file: string | undefined, rest: readonly string[]): string {
  if (file === undefined || file === '' || file.startsWith('-') || rest.length > 0) {
    throw new UsageError(`name one file: svc ${command} FILE`);
  }
  return resolve(file);
}

const POSTGRES_BACKUPS =
  "copies SQLite databases only; on PostgreSQL use pg_dump (or pg_basebackup, or your platform's backups), see docs/operations.md";

/** `svc backup FILE`: 0 with a summary once the copy is written and checked; 1 naming what failed. */
async function backup(file: string | undefined, rest: readonly string[]): Promise<number> {
  const target = fileArgument('backup', file, rest);
  const config = loadConfig();
  if (config.database.dialect !== 'sqlite') throw new BackupError(`svc backup ${POSTGRES_BACKUPS}`);
  process.stderr.write(`svc: database ${describeDatabase(config.database)}\n`);
  const summary = await backupSqlite({ source: config.database.file, file: target });
  printJson(summary);
  warnAboutGeneratedSecretsKey(config.dataDir, config.secrets.keys !== undefined);
  return 0;
}

/** `svc restore FILE`: 0 once the copy is in place and checked; 1 when DATA_DIR is not empty or the copy fails a check. */
async function restore(file: string | undefined, rest: readonly string[]): Promise<number> {
  const source = fileArgument('restore', file, rest);
  const config = loadConfig();
  if (config.database.dialect !== 'sqlite') throw new BackupError(`svc restore ${POSTGRES_BACKUPS.replace('pg_dump', 'pg_restore')}`);
  printJson(await restoreSqlite({ file: source, dataDir: config.dataDir, target: config.database.file }));
  return 0;
}

/**
 * Sealed secrets in a copy open only with the key that sealed them; a key generated into DATA_DIR
 * (no SECRETS_ENCRYPTION_KEYS) is not in the copy, so the operator is told to keep it with it.
 */
function warnAboutGeneratedSecretsKey(dataDir: string, keysConfigured: boolean): void {
  const keyFile = join(dataDir, DEVELOPMENT_KEY_FILE);
  if (!keysConfigured && existsSync(keyFile)) {
    process.stderr.write(`svc: the sealed secrets in this copy open only with ${keyFile}; keep a copy of that file with the backup\n`);
  }
}

/**
 * `svc secrets rotate`: safe while the service runs, and idempotent (docs/adr/0015-secrets-at-rest.md).
 * 0 when every sealed value is now under the first key; 1 when some value opens with no key of the ring.
 */
async function secretsRotate(args: readonly string[]): Promise<number> {
  const { values } = options(args, ['batch-rows']);
  const batchText = values['batch-rows'];
  if (batchText !== undefined && !/^[1-9]\d{0,5}$/.test(batchText))
    throw new UsageError('--batch-rows must be a whole number from 1 to 999999');
  const config = loadConfig();
  const secrets = secretBoxFromConfig({ keys: config.secrets.keys, dataDir: config.dataDir });
  const db = openCliDatabase(config.database);
  try {
    await migrateToLatest(db);
    const report = await rotateSealedSecrets(db, secrets, batchText === undefined ? {} : { batchRows: Number(batchText) });
    printJson(report);
    if (report.unreadable > 0) {
      process.stderr.write(`svc: ${report.unreadable} sealed value(s) open with no key of the ring; they were left as they are\n`);
    }
    return report.unreadable === 0 ? 0 : 1;
  } finally {
    await db.destroy();
  }
}

/** `svc signing-keys rotate`: what `POST /v1/project/signing-keys/rotate` does, with the same audit entry. */
async function signingKeysRotate(args: readonly string[]): Promise<number> {
  const { values } = options(args, ['project']);
  const projectId = required(values, 'project');
  const config = loadConfig();
  const secrets = secretBoxFromConfig({ keys: config.secrets.keys, dataDir: config.dataDir });
  const db = openCliDatabase(config.database);
  try {
    await migrateToLatest(db);
    const audit = new AuditService({ db, clock: systemClock, ledger: ledgerAuditSource(db) });
    await new ProjectsService({ db, clock: systemClock, audit }).getProject(projectId);
    const keys = new SigningKeys({ secrets, alg: config.auth.sessionJwtAlg });
    printJson(await rotateSigningKey({ db, clock: systemClock, audit, keys }, projectId, SYSTEM_AUDIT_CONTEXT));
    return 0;
  } finally {
    await db.destroy();
  }
}

/** Resolves when the process is asked to stop (SIGTERM from an orchestrator, SIGINT from a terminal). */
function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

/** Stops gracefully, or exits anyway when stopping takes longer than SHUTDOWN_TIMEOUT_MS. */
async function stopWithin(timeoutMs: number, stop: () => Promise<void>): Promise<void> {
  const timer = setTimeout(() => {
    process.stderr.write(`svc: graceful shutdown took longer than ${timeoutMs} ms; exiting\n`);
    process.exit(1);
  }, timeoutMs);
  timer.unref();
  await stop();
  clearTimeout(timer);
}

async function serve(): Promise<number> {
  const config = loadConfig();
  const running = await startService(config);
  const signal = await stopSignal();
  running.service.logger.info({ signal }, 'stopping: finishing in-flight requests');
  await stopWithin(config.shutdownTimeoutMs, () => running.stop());
  running.service.logger.info('stopped');
  return 0;
}

async function worker(): Promise<number> {
  const config = loadConfig();
  const running = await startWorker(config);
  const signal = await stopSignal();
  running.service.logger.info({ signal }, 'worker stopping');
  await stopWithin(config.shutdownTimeoutMs, () => running.stop());
  // What this process did, for the operator (and the tests that run several workers).
  running.service.logger.info({ webhook_attempts: running.service.webhooks.worker.totals }, 'worker stopped');
  return 0;
}
