import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { defer } from './cleanup.js';
import { assertLoopback } from './processes.js';

const CONNECT_TIMEOUT_MS = 2000;

/** Undefined when PostgreSQL answers at `adminUrl`, else why not. */
export async function probePostgres(adminUrl) {
  if (adminUrl === 'off') return 'BENCH_POSTGRES_URL=off';
  try {
    await adminQuery(adminUrl, 'select 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error);
  }
}

/** A fresh database `svc_bench_<random>`, dropped by `drop()` or by the runner's cleanup. */
export async function createBenchDatabase(adminUrl) {
  const name = `svc_bench_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `create database ${name}`);
  let kept = false;
  const drop = defer(`drop database ${name}`, () =>
    kept ? undefined : adminQuery(adminUrl, `drop database if exists ${name} with (force)`),
  );
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  // keep(): neither drop() nor the cleanup at exit drops it (a bench that leaves it for a later run).
  return { name, url: url.toString(), drop, keep: () => (kept = true) };
}

async function adminQuery(adminUrl, statement) {
  assertLoopback(adminUrl);
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
