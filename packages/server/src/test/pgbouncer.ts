import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { inject } from 'vitest';
import { freePort } from './serve-process.js';

/** `pgbouncer` on this machine, or '' when it is not installed (test/global-setup.ts): skip then. */
export const pgbouncerCommand = inject('pgbouncerCommand');

/** A PgBouncer of the test's own in `pool_mode = transaction`, in front of the test PostgreSQL. */
export interface TestPgbouncer {
  readonly port: number;
  /** `url` (a PostgreSQL URL, any database on that server) with host and port of the pooler. */
  through(url: string): string;
  /** Runs a statement on PgBouncer's admin console (`SHOW …`) and returns its rows. */
  admin(statement: string): Promise<Record<string, unknown>[]>;
  /** What it has logged so far (its last 2 MB). */
  log(): string;
  stop(): Promise<void>;
}

export interface PgbouncerOptions {
  /** Server connections per database and user; PgBouncer's default is 20. */
  readonly defaultPoolSize?: number;
  /** Startup parameters PgBouncer accepts and drops instead of refusing the client. */
  readonly ignoreStartupParameters?: readonly string[];
}

const LOG_KEPT_CHARS = 2_000_000;
/** How long a started pgbouncer may take to answer. */
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

/**
 * Starts pgbouncer on a free loopback port with a configuration of its own in a temporary
 * directory: every database of the admin URL's server (`* = host=… port=…`), trust
 * authentication for that URL's user, no Unix socket, `pool_mode = transaction`. PgBouncer refuses
 * to run as root; as root it is started as the `postgres` user (`-u postgres`).
 */
export async function startTestPgbouncer(options: PgbouncerOptions = {}): Promise<TestPgbouncer> {
  if (pgbouncerCommand === '') throw new Error('pgbouncer is not installed; the test should have been skipped');
  const adminUrl = new URL(inject('postgresAdminUrl'));
  const user = decodeURIComponent(adminUrl.username) || 'postgres';
  const port = await freePort();
  const directory = mkdtempSync(join(tmpdir(), 'svc-pgbouncer-'));
  const runAsRoot = process.getuid?.() === 0;
  // Read by pgbouncer as the postgres user when started as root.
  chmodSync(directory, 0o755);
  const authFile = join(directory, 'users.txt');
  writeFileSync(authFile, `"${user}" ""\n`, { mode: 0o644 });
  const configFile = join(directory, 'pgbouncer.ini');
  const lines = [
    '[databases]',
    `* = host=${adminUrl.hostname} port=${adminUrl.port || '5432'}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${authFile}`,
    `admin_users = ${user}`,
    'pool_mode = transaction',
    `default_pool_size = ${options.defaultPoolSize ?? 20}`,
    'max_client_conn = 1000',
    ...(options.ignoreStartupParameters === undefined ? [] : [`ignore_startup_parameters = ${options.ignoreStartupParameters.join(',')}`]),
  ];
  writeFileSync(configFile, `${lines.join('\n')}\n`, { mode: 0o644 });
  const child = spawn(pgbouncerCommand, [...(runAsRoot ? ['-u', 'postgres'] : []), configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-LOG_KEPT_CHARS));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const through = (url: string): string => {
    const pooled = new URL(url);
    pooled.hostname = '127.0.0.1';
    pooled.port = String(port);
    return pooled.toString();
  };
  const admin = async (statement: string): Promise<Record<string, unknown>[]> => {
    const consoleUrl = new URL(through(adminUrl.toString()));
    consoleUrl.pathname = '/pgbouncer';
    const client = new pg.Client({ connectionString: consoleUrl.toString(), connectionTimeoutMillis: 2000 });
    await client.connect();
    try {
      // The admin console speaks only the simple query protocol: no parameters.
      return (await client.query<Record<string, unknown>>(statement)).rows;
    } finally {
      await client.end();
    }
  };
  const stop = async (): Promise<void> => {
    await stopChild(child);
    rmSync(directory, { recursive: true, force: true });
  };
  const deadlineMs = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`pgbouncer exited with ${child.exitCode} before answering: ${log.slice(-4000)}`);
    }
    try {
      await admin('SHOW VERSION');
      break;
    } catch (error) {
      if (Date.now() > deadlineMs) {
        await stop();
        throw new Error(`pgbouncer did not answer on port ${port} within ${START_TIMEOUT_MS} ms (${String(error)}): ${log.slice(-4000)}`);
      }
      await sleep(20);
    }
  }
  return { port, through, admin, log: () => log, stop };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // SIGTERM: PgBouncer 1.18's immediate shutdown (SIGINT would wait for its clients). SIGKILL if it lingers.
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(STOP_TIMEOUT_MS)]);
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
}
