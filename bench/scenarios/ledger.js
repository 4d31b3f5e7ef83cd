// Credits, debits and transfers through HTTP against the real service (docs/performance.md),
// on SQLite and, when it is reachable, PostgreSQL: spread over 1,000 wallets, and all on one hot
// wallet; credits with and without an Idempotency-Key (a new key on every request). Baselines
// measured in the same run: bare Fastify (the runner's) and pgbench's TPC-B-like script on the same
// PostgreSQL with the same number of clients. Targets on the 2-core machine: SQLite credit >=
// 10,000/s; PostgreSQL credit >= 1.5 x pgbench TPS; each hot-wallet case >= half its spread case.
// After each dialect's run the ledger's invariants are read from the database; a broken one fails
// the run.
//
// Holds: hold_capture_spread sends, on each connection, a hold of 1 and then the capture
// of that hold, again and again; a pair costs two requests, and the target is a hold plus its capture
// <= 2.2 x a debit (debit_spread) of the same run.
//
// Categories (docs/adr/0021-categories.md): every spread wallet also holds a `paid` grant, spent after
// its `default` one; debit_spread_category debits 1 with `categories: ["paid"]`, so each restricted
// debit passes over the default grant to reach it. Target: within 1.2 x an unrestricted debit
// (debit_spread) of the same run, in requests per second.
//
// Reversals (docs/adr/0024-reversals.md): reversal_spread reverses 1 credit of a random spread
// wallet's seed credit (POST /v1/transactions/{id}/reverse), taking it back from the grant that credit
// made. Target: within 1.5 x a debit (debit_spread) of the same run, in requests per second.
//
// Knobs besides the runner's: BENCH_LEDGER_DIALECTS (default "sqlite,postgres"), BENCH_LEDGER_CASES
// (default all, e.g. "credit_spread,credit_hot"), BENCH_SQLITE_SYNCHRONOUS ("full", the service's
// default, or "normal"), BENCH_PGBENCH=off to skip pgbench.
import { randomBytes } from 'node:crypto';
import { mapConcurrently, requestJson } from '../lib/api.js';
import { checkLedgerInvariants } from '../lib/ledger-invariants.js';
import { measure } from '../lib/load.js';
import { sqliteSynchronousSetting } from '../lib/options.js';
import { postgresCpuProbe } from '../lib/pg-cpu.js';
import { measurePgbench, pgbenchUnavailable } from '../lib/pgbench.js';
import { probePostgres } from '../lib/postgres.js';
import { createProject, prepareDatabase, startService } from '../lib/service.js';

const SPREAD_WALLETS = 1000;
/** Enough for every debit and transfer of a run (amount 1 each) to be covered: no 422 under load. */
const SPREAD_BALANCE = 1_000_000;
const HOT_BALANCE = 1_000_000_000_000;
const SEED_CONCURRENCY = 16;
const SQLITE_CREDIT_TARGET_PER_S = 10_000;
const PGBENCH_FACTOR_TARGET = 1.5;
const HOT_OVER_SPREAD_TARGET = 0.5;

/** Each case: the request every connection sends again and again. `wallets` = { spread, hot }. */
const CASES = {
  credit_spread: { op: 'credit', wallet: 'spread', key: false },
  credit_spread_key: { op: 'credit', wallet: 'spread', key: true },
  credit_hot: { op: 'credit', wallet: 'hot', key: false },
  credit_hot_key: { op: 'credit', wallet: 'hot', key: true },
  debit_spread: { op: 'debit', wallet: 'spread', key: false },
  // The same debit restricted to the category its wallet spends last.
  debit_spread_category: { op: 'debit', wallet: 'spread', key: false, categories: ['paid'] },
  debit_hot: { op: 'debit', wallet: 'hot', key: false },
  transfer_spread: { op: 'transfer', wallet: 'spread', key: false },
  transfer_hot: { op: 'transfer', wallet: 'hot', key: false },
  // POST /v1/wallets/{id}/holds then POST /v1/holds/{id}/capture, alternately on each connection.
  hold_capture_spread: { op: 'hold_capture', wallet: 'spread', key: false },
  // POST /v1/transactions/{id}/reverse of 1 credit of a spread wallet's seed credit.
  reversal_spread: { op: 'reverse', wallet: 'spread', key: false },
  // POST /v1/wallets/batch: BATCH_SIZE credits over the first BATCH_WALLETS wallets per request.
  credit_batch: { op: 'batch', wallet: 'spread', key: false },
};
const BATCH_SIZE = 1000;
const BATCH_WALLETS = 50;
/** Batches in flight at once: each carries 1,000 credits, so a few keep the server busy. */
const BATCH_CONNECTIONS = 4;
const BATCH_OVER_SINGLE_TARGET = 10;
const BATCH_PGBENCH_FACTOR_TARGET = 5;
/** A hold plus its capture costs at most this many debits. */
const HOLD_CAPTURE_OVER_DEBIT_TARGET = 2.2;
/** A debit restricted to a category costs at most this many unrestricted debits. */
const CATEGORY_OVER_DEBIT_TARGET = 1.2;
/** A reversal costs at most this many debits. */
const REVERSAL_OVER_DEBIT_TARGET = 1.5;
/** The priority of the seeded `paid` grants: after the `default` ones (50). */
const PAID_PRIORITY = 60;

export const scenario = {
  name: 'ledger',
  description: 'credits, debits, transfers over HTTP: 1,000 wallets and one hot wallet, vs bare Fastify and pgbench',

  async run(ctx) {
    const settings = readSettings(process.env);
    const baseline = await ctx.baseline();
    const measured = { sqlite: {}, postgres: {} };
    let pgbench;
    for (const dialect of settings.dialects) {
      if (dialect === 'postgres') {
        const unreachable = await probePostgres(ctx.options.postgresAdminUrl);
        if (unreachable !== undefined) {
          ctx.note(`ledger [postgres]: skipped, PostgreSQL not reachable (${unreachable})`);
          continue;
        }
        pgbench = await runPgbench(ctx, settings);
      }
      const database = await prepareDatabase(ctx, dialect);
      try {
        const { secretKey } = createProject(ctx, database);
        const headers = { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' };
        const extraEnv = dialect === 'sqlite' ? { SQLITE_SYNCHRONOUS: settings.sqliteSynchronous } : {};
        const wallets = await seed(ctx, database, { headers, extraEnv });
        for (const name of settings.cases) {
          const service = await startService(ctx, database, { logLevel: settings.logLevel, extraEnv });
          try {
            const result = await measure({
              // Each request sets its own path (ledgerRequests); this is where they go.
              url: service.origin,
              headers,
              request: ledgerRequests(CASES[name], wallets),
              probes: dialect === 'postgres' ? [postgresCpuProbe(new URL(database.env['DATABASE_URL']).pathname.slice(1))] : [],
              options: CASES[name].op === 'batch' ? { ...ctx.options, connections: BATCH_CONNECTIONS } : ctx.options,
              serverPid: service.pid,
            });
            // A batch request carries BATCH_SIZE credits: its rate is counted in credits.
            // (From the total: a batch takes long enough that the per-second average rounds to 0 or 1.)
            if (CASES[name].op === 'batch')
              result.credits_per_s = Math.round((result.requests_total * BATCH_SIZE) / ctx.options.durationSeconds);
            measured[dialect][name] = result;
            ctx.record({
              bench: `ledger_${name}`,
              dialect,
              log_level: settings.logLevel,
              ...(dialect === 'sqlite' ? { sqlite_synchronous: settings.sqliteSynchronous } : {}),
              ...result,
              fastify_req_per_s: baseline.req_per_s,
              ratio_vs_fastify: ratio(result.req_per_s, baseline.req_per_s),
            });
          } finally {
            await service.stop();
          }
        }
        const invariants = await checkLedgerInvariants(database);
        ctx.note(
          `ledger [${dialect}] invariants: ${invariants.sound ? 'SOUND' : 'BROKEN'}; violations ${JSON.stringify(invariants.checks)}; ` +
            `totals ${JSON.stringify(invariants.totals)}`,
        );
        if (!invariants.sound) throw new Error(`ledger [${dialect}]: the ledger's invariants are broken after the run`);
      } finally {
        await database.drop();
      }
    }
    for (const line of targetLines(measured, pgbench)) ctx.note(line);
  },
};

function readSettings(env) {
  const list = (name, fallback) => {
    const items = (env[name] ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
    return items.length > 0 ? items : fallback;
  };
  const dialects = list('BENCH_LEDGER_DIALECTS', ['sqlite', 'postgres']);
  const cases = list('BENCH_LEDGER_CASES', Object.keys(CASES));
  for (const dialect of dialects)
    if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error(`BENCH_LEDGER_DIALECTS: no dialect "${dialect}"`);
  for (const name of cases)
    if (CASES[name] === undefined) throw new Error(`BENCH_LEDGER_CASES: no case "${name}"; there are ${Object.keys(CASES).join(', ')}`);
  const sqliteSynchronous = sqliteSynchronousSetting(env);
  // LOG_LEVEL=warn measures the ledger's cost, not the request log's.
  return { dialects, cases, sqliteSynchronous, logLevel: 'warn', pgbench: env['BENCH_PGBENCH'] !== 'off' };
}

async function runPgbench(ctx, settings) {
  if (!settings.pgbench) {
    ctx.note('ledger [postgres]: pgbench skipped (BENCH_PGBENCH=off); no PostgreSQL target ratio this run');
    return undefined;
  }
  const unavailable = pgbenchUnavailable();
  if (unavailable !== undefined) {
    ctx.note(`ledger [postgres]: pgbench baseline skipped: ${unavailable}; no PostgreSQL target ratio this run`);
    return undefined;
  }
  const result = await measurePgbench(ctx);
  ctx.record({ bench: 'pgbench_tpcb', dialect: 'postgres', log_level: null, ...result });
  return result;
}

/**
 * A user (sign-up), 1,000 wallets and one hot wallet, each credited through the API, with a
 * server of its own, so that each measured server starts fresh with the data in place.
 */
async function seed(ctx, database, { headers, extraEnv }) {
  const service = await startService(ctx, database, { logLevel: 'warn', extraEnv });
  try {
    const api = (method, path, body, expect) => requestJson({ method, url: `${service.origin}${path}`, headers, body, expect });
    const signup = await api(
      'POST',
      '/v1/auth/signup',
      {
        email: `bench-${randomBytes(6).toString('hex')}@example.com`,
        password: randomBytes(18).toString('base64url'),
        name: 'Ledger benchmark',
      },
      201,
    );
    const userId = signup.user.id;
    const create = () => api('POST', '/v1/wallets', { user_id: userId, currency: 'USD' }, 201);
    const spread = (await mapConcurrently(Array.from({ length: SPREAD_WALLETS }), SEED_CONCURRENCY, create)).map((wallet) => wallet.id);
    const hot = (await create()).id;
    const credit = (walletId, amount) => api('POST', `/v1/wallets/${walletId}/credits`, { amount, description: 'seed' }, 201);
    const seedCredits = (await mapConcurrently(spread, SEED_CONCURRENCY, (walletId) => credit(walletId, SPREAD_BALANCE))).map(
      (transaction) => transaction.id,
    );
    const paid = (walletId) =>
      api('POST', `/v1/wallets/${walletId}/credits`, { amount: SPREAD_BALANCE, category: 'paid', priority: PAID_PRIORITY }, 201);
    await mapConcurrently(spread, SEED_CONCURRENCY, paid);
    await credit(hot, HOT_BALANCE);
    return { spread, hot, seedCredits };
  } finally {
    await service.stop();
  }
}

/** autocannon's request options for a case: every request picks its wallets (and key) anew. */
function ledgerRequests(spec, wallets) {
  const runId = randomBytes(4).toString('hex');
  let counter = 0;
  const pick = () => wallets.spread[Math.floor(Math.random() * wallets.spread.length)];
  const batchBody = JSON.stringify({
    operations: Array.from({ length: BATCH_SIZE }, (_, index) => ({
      type: 'credit',
      wallet_id: wallets.spread[index % BATCH_WALLETS],
      amount: 1,
    })),
  });
  if (spec.op === 'hold_capture') {
    // Two requests per connection in turn: the hold, then the capture of the hold it answered.
    return {
      method: 'POST',
      requests: [
        {
          setupRequest(request) {
            return { ...request, path: `/v1/wallets/${pick()}/holds`, body: '{"amount":1}' };
          },
          onResponse(status, body, context) {
            context.holdId = status === 201 ? JSON.parse(body).id : 'hld_missing';
          },
        },
        {
          setupRequest(request, context) {
            return { ...request, path: `/v1/holds/${context.holdId}/capture`, body: '{}' };
          },
        },
      ],
    };
  }
  const build = () => {
    if (spec.op === 'batch') return { path: '/v1/wallets/batch', body: batchBody };
    if (spec.op === 'reverse') {
      const transactionId = wallets.seedCredits[Math.floor(Math.random() * wallets.seedCredits.length)];
      return { path: `/v1/transactions/${transactionId}/reverse`, body: '{"amount":1}' };
    }
    if (spec.op === 'transfer') {
      const from = spec.wallet === 'hot' ? wallets.hot : pick();
      let to = pick();
      while (to === from) to = pick();
      return { path: '/v1/wallets/transfer', body: `{"from_wallet_id":"${from}","to_wallet_id":"${to}","amount":1}` };
    }
    const walletId = spec.wallet === 'hot' ? wallets.hot : pick();
    const body = spec.categories === undefined ? '{"amount":1}' : JSON.stringify({ amount: 1, categories: spec.categories });
    return { path: `/v1/wallets/${walletId}/${spec.op === 'credit' ? 'credits' : 'debits'}`, body };
  };
  return {
    method: 'POST',
    requests: [
      {
        setupRequest(request) {
          const { path, body } = build();
          counter += 1;
          const headers = spec.key ? { ...request.headers, 'idempotency-key': `bench-${runId}-${counter}` } : request.headers;
          return { ...request, path, body, headers };
        },
      },
    ],
  };
}

function ratio(value, base) {
  return base > 0 ? Number((value / base).toFixed(4)) : null;
}

/** The targets, one line each: the measured ratio, the target, PASS or FAIL. */
function targetLines(measured, pgbench) {
  const lines = [];
  const verdict = (value, target) => (value === null ? 'n/a' : value >= target ? 'PASS' : 'FAIL');
  const sqliteCredit = measured.sqlite.credit_spread;
  if (sqliteCredit !== undefined) {
    const value = ratio(sqliteCredit.req_per_s, SQLITE_CREDIT_TARGET_PER_S);
    lines.push(
      `TARGET ${verdict(value, 1)}  SQLite credit (spread, no key) ${sqliteCredit.req_per_s}/s = ${value} x the 10,000/s target (server CPU ${sqliteCredit.server_cpu_us_per_req} us/op)`,
    );
  }
  const postgresCredit = measured.postgres.credit_spread;
  if (postgresCredit !== undefined && pgbench !== undefined) {
    const value = ratio(postgresCredit.req_per_s, pgbench.req_per_s);
    lines.push(
      `TARGET ${verdict(value, PGBENCH_FACTOR_TARGET)}  PostgreSQL credit (spread, no key) ${postgresCredit.req_per_s}/s = ${value} x pgbench TPC-B ${pgbench.req_per_s} TPS (target >= ${PGBENCH_FACTOR_TARGET})`,
    );
  }
  for (const dialect of ['sqlite', 'postgres']) {
    const batch = measured[dialect].credit_batch;
    const single = measured[dialect].credit_spread;
    if (batch !== undefined && single !== undefined) {
      const value = ratio(batch.credits_per_s, single.req_per_s);
      lines.push(
        `TARGET ${verdict(value, BATCH_OVER_SINGLE_TARGET)}  ${dialect} batched credits (${BATCH_SIZE} per request, ${BATCH_WALLETS} wallets, ${BATCH_CONNECTIONS} connections) ${batch.credits_per_s}/s = ${value} x single-request credits ${single.req_per_s}/s (target >= ${BATCH_OVER_SINGLE_TARGET})`,
      );
    }
    if (dialect === 'postgres' && batch !== undefined && pgbench !== undefined) {
      const value = ratio(batch.credits_per_s, pgbench.req_per_s);
      lines.push(
        `TARGET ${verdict(value, BATCH_PGBENCH_FACTOR_TARGET)}  PostgreSQL batched credits ${batch.credits_per_s}/s = ${value} x pgbench TPC-B ${pgbench.req_per_s} TPS (target >= ${BATCH_PGBENCH_FACTOR_TARGET})`,
      );
    }
    const pairs = measured[dialect].hold_capture_spread;
    const debit = measured[dialect].debit_spread;
    if (pairs !== undefined && debit !== undefined) {
      // Requests alternate hold, capture: a pair is two of them.
      const pairsPerSecond = pairs.req_per_s / 2;
      const value = pairsPerSecond > 0 ? Number((debit.req_per_s / pairsPerSecond).toFixed(4)) : null;
      lines.push(
        `TARGET ${value === null ? 'n/a' : value <= HOLD_CAPTURE_OVER_DEBIT_TARGET ? 'PASS' : 'FAIL'}  ${dialect} hold + capture costs ${value} x a debit: ${pairsPerSecond} pairs/s vs ${debit.req_per_s} debits/s (server CPU ${pairs.server_cpu_us_per_req} us/request vs ${debit.server_cpu_us_per_req} us/debit; target <= ${HOLD_CAPTURE_OVER_DEBIT_TARGET})`,
      );
    }
    const reversal = measured[dialect].reversal_spread;
    if (reversal !== undefined && debit !== undefined) {
      const value = reversal.req_per_s > 0 ? Number((debit.req_per_s / reversal.req_per_s).toFixed(4)) : null;
      lines.push(
        `TARGET ${value === null ? 'n/a' : value <= REVERSAL_OVER_DEBIT_TARGET ? 'PASS' : 'FAIL'}  ${dialect} a reversal costs ${value} x a debit: ${reversal.req_per_s} reversals/s vs ${debit.req_per_s} debits/s (server CPU ${reversal.server_cpu_us_per_req} vs ${debit.server_cpu_us_per_req} us/request; target <= ${REVERSAL_OVER_DEBIT_TARGET})`,
      );
    }
    const restricted = measured[dialect].debit_spread_category;
    if (restricted !== undefined && debit !== undefined) {
      const value = restricted.req_per_s > 0 ? Number((debit.req_per_s / restricted.req_per_s).toFixed(4)) : null;
      lines.push(
        `TARGET ${value === null ? 'n/a' : value <= CATEGORY_OVER_DEBIT_TARGET ? 'PASS' : 'FAIL'}  ${dialect} a debit restricted to a category costs ${value} x an unrestricted one: ${restricted.req_per_s} vs ${debit.req_per_s} debits/s (server CPU ${restricted.server_cpu_us_per_req} vs ${debit.server_cpu_us_per_req} us/debit; target <= ${CATEGORY_OVER_DEBIT_TARGET})`,
      );
    }
    for (const [hot, spread] of [
      ['credit_hot', 'credit_spread'],
      ['credit_hot_key', 'credit_spread_key'],
      ['debit_hot', 'debit_spread'],
      ['transfer_hot', 'transfer_spread'],
    ]) {
      const hotResult = measured[dialect][hot];
      const spreadResult = measured[dialect][spread];
      if (hotResult === undefined || spreadResult === undefined) continue;
      const value = ratio(hotResult.req_per_s, spreadResult.req_per_s);
      lines.push(
        `TARGET ${verdict(value, HOT_OVER_SPREAD_TARGET)}  ${dialect} ${hot} / ${spread}: ${hotResult.req_per_s} / ${spreadResult.req_per_s} = ${value} (target >= ${HOT_OVER_SPREAD_TARGET})`,
      );
    }
  }
  return lines;
}
