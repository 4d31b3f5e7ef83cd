import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { defer } from './cleanup.js';
import { createBenchDatabase } from './postgres.js';
import { freePort, httpGet, LOOPBACK, runNode, startServer } from './processes.js';

/**
 * A database for the real service: a temp DATA_DIR (SQLite, the default) or a fresh PostgreSQL
 * database; `env` is the environment every `svc` command against it gets. `drop()` removes it,
 * `keep()` makes `drop()` leave the PostgreSQL database in place. `existing` ({ url, secretsKey })
 * is a PostgreSQL database kept by an earlier run, used as it is and never dropped.
 */
export async function prepareDatabase(ctx, dialect, existing) {
  const dataDir = mkdtempSync(join(ctx.workDir, `svc-${dialect}-`));
  const removeDir = defer(`remove ${dataDir}`, () => rmSync(dataDir, { recursive: true, force: true }));
  const env = serviceEnv({ DATA_DIR: dataDir });
  let dropDatabase = async () => undefined;
  let keepDatabase = () => undefined;
  if (existing !== undefined) {
    env['DATABASE_URL'] = existing.url;
    env['SECRETS_ENCRYPTION_KEY'] = existing.secretsKey;
  } else if (dialect === 'postgres') {
    const database = await createBenchDatabase(ctx.options.postgresAdminUrl);
    env['DATABASE_URL'] = database.url;
    dropDatabase = database.drop;
    keepDatabase = database.keep;
  }
  return {
    dialect,
    dataDir,
    env,
    keep: () => keepDatabase(),
    async drop() {
      await dropDatabase();
      await removeDir();
    },
  };
}

/** Creates a project with the CLI and returns its secret key. */
export function createProject(ctx, database, name = 'bench') {
  const stdout = runNode(ctx.svcBin, ['project', 'create', '--name', name], { env: database.env });
  const created = JSON.parse(stdout.trim().split('\n').pop() ?? '');
  if (typeof created.secret_key !== 'string') throw new Error(`svc project create printed no secret_key: ${stdout}`);
  return { projectId: created.project?.id, secretKey: created.secret_key };
}

/**
 * `svc serve` on a free loopback port with rate limits off, ready when /healthz answers.
 * `extraEnv` overrides anything (e.g. LOG_LEVEL); `port`, when given, is the port (for a `PUBLIC_URL` that names it).
 */
export async function startService(ctx, database, { logLevel, extraEnv = {}, port: chosenPort }) {
  const port = chosenPort ?? (await freePort());
  const env = {
    ...database.env,
    PORT: String(port),
    LOG_LEVEL: logLevel,
    ...extraEnv,
  };
  const label = `svc serve (${database.dialect}, LOG_LEVEL=${logLevel}, port ${port})`;
  const server = await startServer({
    label,
    script: ctx.svcBin,
    args: ['serve'],
    nodeFlags: ctx.options.serverNodeFlags,
    env,
    logFile: join(database.dataDir, `serve-${logLevel}-${port}.log`),
    readyUrl: `http://${LOOPBACK}:${port}/healthz`,
  });
  return { ...server, origin: `http://${LOOPBACK}:${port}`, label };
}

/** Fails loudly when a route does not answer 200 before it is put under load. */
export async function expectOk(url, headers = {}) {
  const { status, body } = await httpGet(url, { headers });
  if (status !== 200) throw new Error(`GET ${url} answered ${status}, not 200: ${body.slice(0, 500)}`);
  return JSON.parse(body);
}

/**
 * The service's environment, built from scratch so that a developer's shell (DATABASE_URL,
 * REDIS_URL, SVC_SECRET_KEY, TLS_*) cannot change what is measured.
 */
function serviceEnv(values) {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    NODE_ENV: 'production',
    HOST: LOOPBACK,
    RATE_LIMIT_KEY_PER_SECOND: '0',
    RATE_LIMIT_IP_PER_SECOND: '0',
    // Required with NODE_ENV=production; one per database, so every restart reads its secrets.
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    // Required with NODE_ENV=production too. Nothing listens there: the one verification email a
    // scenario's sign-up queues fails to send and waits for its retry, off the measured path.
    SMTP_URL: `smtp://${LOOPBACK}:9`,
    ...values,
  };
  if (process.env.HOME !== undefined) env['HOME'] = process.env.HOME;
  return env;
}
