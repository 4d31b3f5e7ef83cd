import { existsSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { requestJson } from './api.js';
import { measure } from './load.js';
import { freePort, LOOPBACK, startServer } from './processes.js';

/**
 * The floors of the session reads (bench/sessions-floor-server.js) on the service's database, in
 * the same run: POST /validate and GET /balance with the same session token.
 */
export async function measureSessionFloors(ctx, database, sessionToken, served) {
  const port = await freePort();
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production', PORT: String(port) };
  if (database.env['DATABASE_URL'] !== undefined) env['DATABASE_URL'] = database.env['DATABASE_URL'];
  else env['DATA_DIR'] = database.dataDir;
  const origin = `http://${LOOPBACK}:${port}`;
  const server = await startServer({
    label: `session floor (${database.dialect}, port ${port})`,
    script: join(ctx.benchDir, 'sessions-floor-server.js'),
    env,
    logFile: join(database.dataDir, `floor-${port}.log`),
    readyUrl: `${origin}/ready`,
  });
  try {
    // A floor is the same work with nothing around it: it must answer what the service answered.
    const answered = {
      validate: await requestJson({ method: 'POST', url: `${origin}/validate`, body: { session_id: sessionToken }, expect: 200 }),
      balance: await requestJson({
        method: 'GET',
        url: `${origin}/balance`,
        headers: { authorization: `Bearer ${sessionToken}` },
        expect: 200,
      }),
    };
    for (const route of ['validate', 'balance']) {
      const difference = firstDifference(served[route], answered[route], route);
      if (difference !== undefined) throw new Error(`the session floor's ${route} does not answer what the service does: ${difference}`);
    }
    const validate = await measure({
      url: `${origin}/validate`,
      headers: { 'content-type': 'application/json' },
      request: { method: 'POST', body: JSON.stringify({ session_id: sessionToken }) },
      options: ctx.options,
      serverPid: server.pid,
    });
    const balance = await measure({
      url: `${origin}/balance`,
      headers: { authorization: `Bearer ${sessionToken}` },
      options: ctx.options,
      serverPid: server.pid,
    });
    return { validate, balance };
  } finally {
    await server.stop();
  }
}

/**
 * The floor of log in (bench/login-floor-server.js) on the service's database, in the same run:
 * `request` is the service's log-in load (each log in from its own end-user address). Its answer
 * must have the shape of the service's (`served`; the tokens and times differ by nature).
 */
export async function measureLoginFloor(ctx, database, { projectId, email, password, request, served }) {
  const port = await freePort();
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production', PORT: String(port), PROJECT_ID: projectId };
  if (database.env['DATABASE_URL'] !== undefined) env['DATABASE_URL'] = database.env['DATABASE_URL'];
  else env['DATA_DIR'] = database.dataDir;
  const origin = `http://${LOOPBACK}:${port}`;
  const server = await startServer({
    label: `log-in floor (${database.dialect}, port ${port})`,
    script: join(ctx.benchDir, 'login-floor-server.js'),
    env,
    logFile: join(database.dataDir, `login-floor-${port}.log`),
    readyUrl: `${origin}/ready`,
  });
  try {
    const answered = await requestJson({ method: 'POST', url: `${origin}/login`, body: { email, password }, expect: 200 });
    const difference = firstDifference(shapeOf(served), shapeOf(answered));
    if (difference !== undefined)
      throw new Error(`the log-in floor does not answer the shape the service does: ${difference} (service: ${JSON.stringify(served)})`);
    return await measure({
      url: `${origin}/login`,
      headers: { 'content-type': 'application/json' },
      request,
      options: ctx.options,
      serverPid: server.pid,
    });
  } finally {
    await server.stop();
  }
}

/** A JSON value with every leaf replaced by its type (null stays null). */
function shapeOf(value) {
  if (value === null) return null;
  if (Array.isArray(value)) return value.map(shapeOf);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shapeOf(item)]));
  return typeof value;
}

/**
 * Better Auth's get-session (Bearer) from the peer's own server, when BENCH_BETTER_AUTH_DIR names
 * a directory with the peer installed (server.mjs and node_modules); else the reason it is skipped.
 * PostgreSQL through `databaseUrl` (a fresh bench database), SQLite in a temp file otherwise.
 */
export async function measureBetterAuth(ctx, { dialect, databaseUrl }) {
  const dir = process.env.BENCH_BETTER_AUTH_DIR;
  if (dir === undefined || dir === '') return { skipped: 'BENCH_BETTER_AUTH_DIR is not set' };
  if (!existsSync(join(dir, 'server.mjs')) || !existsSync(join(dir, 'node_modules/better-auth')))
    return { skipped: `no installed peer in ${dir} (server.mjs and node_modules/better-auth)` };
  const port = await freePort();
  const scratch = mkdtempSync(join(ctx.workDir, `peer-${dialect}-`));
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    NODE_ENV: 'production',
    PORT: String(port),
    PEER_HASH: 'argon2id',
    ...(dialect === 'postgres' ? { DATABASE_URL: databaseUrl } : { SQLITE_PATH: join(scratch, 'auth.db') }),
  };
  const origin = `http://${LOOPBACK}:${port}`;
  const server = await startServer({
    label: `Better Auth peer (${dialect}, port ${port})`,
    script: join(dir, 'server.mjs'),
    env,
    logFile: join(scratch, 'peer.log'),
    readyUrl: `${origin}/healthz`,
  });
  try {
    const response = await globalThis.fetch(`${origin}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ email: `peer-${port}@example.com`, password: 'a long bench passphrase 7f3a', name: 'Peer' }),
    });
    const token = response.headers.get('set-auth-token');
    if (!response.ok || token === null)
      return { skipped: `peer sign-up answered ${response.status}: ${(await response.text()).slice(0, 200)}` };
    const check = await globalThis.fetch(`${origin}/api/auth/get-session`, { headers: { authorization: `Bearer ${token}` } });
    const body = await check.json();
    if (body?.user?.id === undefined) return { skipped: `peer get-session answered no user: ${JSON.stringify(body).slice(0, 200)}` };
    return {
      measured: await measure({
        url: `${origin}/api/auth/get-session`,
        headers: { authorization: `Bearer ${token}` },
        options: ctx.options,
        serverPid: server.pid,
      }),
    };
  } finally {
    await server.stop();
  }
}

/** The first path at which two JSON values differ (key order aside), or undefined. */
export function firstDifference(expected, actual, path = '$') {
  if (typeof expected !== 'object' || expected === null || typeof actual !== 'object' || actual === null) {
    return Object.is(expected, actual) ? undefined : `${path}: ${JSON.stringify(expected)} ≠ ${JSON.stringify(actual)}`;
  }
  if (Array.isArray(expected) !== Array.isArray(actual)) return `${path}: one is an array`;
  const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  for (const key of keys) {
    if (!(key in expected) || !(key in actual)) return `${path}.${key}: only in the ${key in expected ? 'service' : 'floor'}`;
    const difference = firstDifference(expected[key], actual[key], `${path}.${key}`);
    if (difference !== undefined) return difference;
  }
  return undefined;
}
