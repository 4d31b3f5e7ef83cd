// Scaling out on one PostgreSQL and one Redis (docs/operations.md, "Processes"): credits of 1 spread
// over 1,000 wallets, first against one `svc serve`, then against two `svc serve` processes at once
// (each taking half the connections) with a `svc worker` beside them, all three sharing REDIS_URL.
// Prints the total credits/s of each layout, measured in the same run with rounds in alternating
// order, their ratio, and the ledger's invariants afterwards (every credit of both layouts, applied
// by several processes at once, must leave a sound ledger). On one machine the processes share its
// cores with PostgreSQL and the load generator: the ratio says what a second process adds on this
// machine, not what a second host would.
//
// Knobs besides the runner's: BENCH_SCALE_OUT_ROUNDS (default 2), BENCH_REDIS_URL (default
// redis://127.0.0.1:6379).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { mapConcurrently, requestJson } from '../lib/api.js';
import { defer } from '../lib/cleanup.js';
import { spreadCreditRequests } from '../lib/credits.js';
import { checkLedgerInvariants } from '../lib/ledger-invariants.js';
import { measure } from '../lib/load.js';
import { probePostgres } from '../lib/postgres.js';
import { createProject, prepareDatabase, startService } from '../lib/service.js';
import { median } from '../lib/stats.js';

const WALLETS = 1000;
const SEED_CONCURRENCY = 20;
const LAYOUTS = ['one', 'two'];

export const scenario = {
  name: 'scale-out',
  description: 'credits/s from one svc serve against two svc serve and a svc worker on one PostgreSQL and Redis, same run',

  async run(ctx) {
    const rounds = Number(process.env['BENCH_SCALE_OUT_ROUNDS'] ?? '2');
    if (!Number.isInteger(rounds) || rounds < 1 || rounds > 10)
      throw new Error('BENCH_SCALE_OUT_ROUNDS must be a whole number from 1 to 10');
    const redisUrl = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
    const unreachable = await probePostgres(ctx.options.postgresAdminUrl);
    if (unreachable !== undefined) {
      ctx.note(`scale-out: skipped, PostgreSQL not reachable (${unreachable})`);
      return;
    }
    const database = await prepareDatabase(ctx, 'postgres');
    try {
      const { secretKey } = createProject(ctx, database);
      const headers = { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' };
      const extraEnv = { REDIS_URL: redisUrl };
      const wallets = await seedWallets(ctx, database, headers, extraEnv);
      const rates = { one: [], two: [] };
      for (let round = 0; round < rounds; round += 1) {
        for (const layout of round % 2 === 0 ? LAYOUTS : [...LAYOUTS].reverse()) {
          const total =
            layout === 'one'
              ? await measureOne(ctx, database, headers, extraEnv, wallets)
              : await measureTwo(ctx, database, headers, extraEnv, wallets);
          rates[layout].push(total.credits_per_s);
          ctx.record({ bench: `scale_out_${layout}`, dialect: 'postgres', log_level: 'warn', round, ...total });
        }
      }
      const one = Math.round(median(rates.one));
      const two = Math.round(median(rates.two));
      const invariants = await checkLedgerInvariants(database);
      ctx.note(
        `SCALE-OUT [postgres] credits over ${WALLETS} wallets, ${ctx.options.connections} connections in all: one svc serve ${one}/s; ` +
          `two svc serve and a svc worker ${two}/s = ${(two / one).toFixed(2)} x, on ${ctx.options.cpuCount} cores shared with PostgreSQL and the load generator`,
      );
      ctx.note(
        `SCALE-OUT [postgres] the ledger after both layouts: ${invariants.sound ? 'sound' : `NOT SOUND ${JSON.stringify(invariants.checks)}`}`,
      );
      if (!invariants.sound) throw new Error('the ledger is not sound after the scale-out runs');
    } finally {
      await database.drop();
    }
  },
};

/** A user and `WALLETS` wallets, made through one service that stops afterwards. */
async function seedWallets(ctx, database, headers, extraEnv) {
  const service = await startService(ctx, database, { logLevel: 'warn', extraEnv });
  try {
    const api = (method, path, body, expect) => requestJson({ method, url: `${service.origin}${path}`, headers, body, expect });
    const signup = await api(
      'POST',
      '/v1/auth/signup',
      {
        email: `bench-${randomBytes(6).toString('hex')}@example.com`,
        password: randomBytes(18).toString('base64url'),
        name: 'Scale-out benchmark',
      },
      201,
    );
    const create = () => api('POST', '/v1/wallets', { user_id: signup.user.id, currency: 'USD' }, 201);
    return (await mapConcurrently(Array.from({ length: WALLETS }), SEED_CONCURRENCY, create)).map((wallet) => wallet.id);
  } finally {
    await service.stop();
  }
}

async function measureOne(ctx, database, headers, extraEnv, wallets) {
  const server = await startService(ctx, database, { logLevel: 'warn', extraEnv: { ...extraEnv, WEBHOOK_WORKER_ID: 'serve-a' } });
  try {
    const result = await measure({
      url: server.origin,
      headers,
      request: spreadCreditRequests(wallets),
      options: ctx.options,
      serverPid: server.pid,
    });
    return summed([result]);
  } finally {
    await server.stop();
  }
}

/** Two `svc serve` at once, each loaded by half the connections, and a `svc worker` beside them. */
async function measureTwo(ctx, database, headers, extraEnv, wallets) {
  const stopWorker = startWorker(ctx, database, { ...extraEnv, WEBHOOK_WORKER_ID: 'worker-c' });
  const servers = [];
  try {
    servers.push(await startService(ctx, database, { logLevel: 'warn', extraEnv: { ...extraEnv, WEBHOOK_WORKER_ID: 'serve-a' } }));
    servers.push(await startService(ctx, database, { logLevel: 'warn', extraEnv: { ...extraEnv, WEBHOOK_WORKER_ID: 'serve-b' } }));
    const connections = Math.max(1, Math.floor(ctx.options.connections / 2));
    const results = await Promise.all(
      servers.map((server) =>
        measure({
          url: server.origin,
          headers,
          request: spreadCreditRequests(wallets),
          options: { ...ctx.options, connections },
          serverPid: server.pid,
        }),
      ),
    );
    return summed(results);
  } finally {
    for (const server of servers) await server.stop();
    await stopWorker();
  }
}

/** One layout's figures from the measurement of each of its processes: rates add up, latencies are the worst. */
function summed(results) {
  const total = (name) => results.reduce((sum, result) => sum + result[name], 0);
  const worst = (name) => Math.max(...results.map((result) => result[name]));
  return {
    req_per_s: total('req_per_s'),
    credits_per_s: total('req_per_s'),
    p50_ms: worst('p50_ms'),
    p99_ms: worst('p99_ms'),
    non2xx: total('non2xx'),
    errors: total('errors'),
    valid: results.every((result) => result.valid),
    processes: results,
  };
}

/** `svc worker` in the background (it serves no HTTP); the returned function stops it. */
function startWorker(ctx, database, extraEnv) {
  const logFd = openSync(join(database.dataDir, 'scale-out-worker.log'), 'a');
  let child;
  try {
    child = spawn(process.execPath, [ctx.svcBin, 'worker'], {
      env: { ...database.env, LOG_LEVEL: 'warn', ...extraEnv },
      stdio: ['ignore', logFd, logFd],
    });
  } finally {
    closeSync(logFd);
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return defer('stop the scale-out svc worker', async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  });
}
