import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

/**
 * Runs once before the suite: finds out whether PostgreSQL and Redis are reachable (and the
 * redis-server and pgbouncer commands installed) and tells the
 * test files through `inject`. On a fresh machine without them the SQLite half runs and this says
 * clearly what was skipped; with SVC_TEST_REQUIRE_SERVICES=1 (set by .ci/run) a missing server
 * fails the run instead.
 */
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL of a reachable PostgreSQL, or '' when there is none. */
    postgresAdminUrl: string;
    /** URL of a reachable Redis, or '' when there is none. */
    redisUrl: string;
    /** `redis-server` when the tests can start (and kill) a Redis of their own, or '' when it is not installed. */
    redisServerCommand: string;
    /** The `pgbouncer` command when the tests can start a PgBouncer of their own, or '' when it is not installed. */
    pgbouncerCommand: string;
    /**
     * TEST_DATABASE_POOLER_URL, or '': a pooler in front of `postgresAdminUrl`. When set, each test
     * file's database is still created through the admin URL, but the service under test connects
     * through the pooler with DATABASE_PREPARED_STATEMENTS=false (test/database.ts).
     */
    postgresPoolerUrl: string;
  }
}

export async function setup(project: TestProject): Promise<void> {
  const required = process.env['SVC_TEST_REQUIRE_SERVICES'] === '1';
  const postgresUrl = process.env['TEST_DATABASE_URL'] ?? DEFAULT_TEST_DATABASE_URL;
  const redisUrl = process.env['TEST_REDIS_URL'] ?? DEFAULT_TEST_REDIS_URL;
  const postgresError = await probePostgres(postgresUrl);
  const redisError = await probeRedis(redisUrl);
  const redisServerError = await probeCommand(REDIS_SERVER_COMMAND);
  const pgbouncer = await findPgbouncer();
  const poolerUrl = process.env['TEST_DATABASE_POOLER_URL'] ?? '';
  // Asked for by name: a pooler that does not answer fails the run instead of testing without it.
  const poolerError = poolerUrl === '' ? undefined : await probePostgres(poolerUrl);
  if (poolerError !== undefined) throw new Error(`TEST_DATABASE_POOLER_URL ${redact(poolerUrl)} does not answer: ${poolerError}`);
  const missing: string[] = [];
  if (postgresError !== undefined) missing.push(`PostgreSQL at ${redact(postgresUrl)} (${postgresError})`);
  if (redisError !== undefined) missing.push(`Redis at ${redisUrl} (${redisError})`);
  if (redisServerError !== undefined) missing.push(`the ${REDIS_SERVER_COMMAND} command, to start and kill a Redis (${redisServerError})`);
  if (pgbouncer.error !== undefined) missing.push(`the pgbouncer command, to start a PgBouncer (${pgbouncer.error})`);
  if (missing.length > 0) {
    if (required) throw new Error(`SVC_TEST_REQUIRE_SERVICES=1 but these are not reachable: ${missing.join('; ')}`);
    const line = '='.repeat(100);
    process.stdout.write(
      `\n${line}\nSKIPPING the tests that need: ${missing.join('; ')}.\n` +
        'Only the SQLite half of the storage tests runs. Start the servers (see README) or set TEST_DATABASE_URL / TEST_REDIS_URL.\n' +
        `${line}\n\n`,
    );
  }
  project.provide('postgresAdminUrl', postgresError === undefined ? postgresUrl : '');
  project.provide('redisUrl', redisError === undefined ? redisUrl : '');
  project.provide('redisServerCommand', redisServerError === undefined ? REDIS_SERVER_COMMAND : '');
  project.provide('pgbouncerCommand', pgbouncer.command);
  project.provide('postgresPoolerUrl', poolerUrl);
}

/** Debian installs pgbouncer in /usr/sbin, which is not on every user's PATH. */
const PGBOUNCER_COMMANDS = ['pgbouncer', '/usr/sbin/pgbouncer'];

async function findPgbouncer(): Promise<{ command: string; error?: string }> {
  let error = '';
  for (const command of PGBOUNCER_COMMANDS) {
    const failure = await probeCommand(command);
    if (failure === undefined) return { command };
    error = failure;
  }
  return { command: '', error };
}

const REDIS_SERVER_COMMAND = 'redis-server';

async function probeCommand(command: string): Promise<string | undefined> {
  try {
    await promisify(execFile)(command, ['--version'], { timeout: 5000 });
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

async function probePostgres(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function probeRedis(url: string): Promise<string | undefined> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    redis.disconnect();
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:***@');
}
