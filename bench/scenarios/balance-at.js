// `GET /v1/wallets/{id}/balance?at=` on a wallet with a million transactions, both
// dialects. The wallet is made through the API, then its history is written straight into the
// ledger tables (1,000,000 credits of 1, one every 30 s over about a year, each with its issuance
// counter-entry, so `ledger_entries` holds 2,000,000 rows) and the wallet's balance set to match.
// Measured with autocannon, each request asking a random time in that year, beside
// `GET /v1/wallets/{id}/balance` (today's balance, one primary-key read) in the same run.
//
// Knobs: BENCH_BALANCE_AT_TRANSACTIONS (default 1,000,000), BENCH_BALANCE_AT_CLIENTS (concurrent
// connections, default 10, as in the scale bench: at 50 the p99 is the queue behind two shared
// cores, not the read), and the usual BENCH_DURATION_SECONDS. Target: p99 of `?at=` < 20 ms.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { requestJson } from '../lib/api.js';
import { measure } from '../lib/load.js';
import { probePostgres } from '../lib/postgres.js';
import { createProject, expectOk, prepareDatabase, startService } from '../lib/service.js';
import { openDatabase } from '../../packages/server/dist/db/database.js';
import { findWalletBalanceAt } from '../../packages/server/dist/modules/ledger/ledger.store.js';

const P99_TARGET_MS = 20;
const FIRST = Date.parse('2025-11-01T00:00:00.000Z');
const STEP_SECONDS = 30;

export const scenario = {
  name: 'balance-at',
  description: 'GET /v1/wallets/:id/balance?at= on a wallet with 1,000,000 transactions (p99 < 20 ms), beside GET balance',

  async run(ctx) {
    const transactions = Number(process.env.BENCH_BALANCE_AT_TRANSACTIONS ?? '1000000');
    if (!(Number.isInteger(transactions) && transactions >= 1000 && transactions <= 5_000_000)) {
      throw new Error('BENCH_BALANCE_AT_TRANSACTIONS must be a whole number from 1,000 to 5,000,000');
    }
    const clients = Number(process.env.BENCH_BALANCE_AT_CLIENTS ?? '10');
    if (!(Number.isInteger(clients) && clients >= 1 && clients <= 100)) throw new Error('BENCH_BALANCE_AT_CLIENTS must be 1 to 100');
    const options = { ...ctx.options, connections: clients };
    const dialects = ['sqlite'];
    const unreachable = await probePostgres(ctx.options.postgresAdminUrl);
    if (unreachable === undefined) dialects.push('postgres');
    else ctx.note(`balance-at: PostgreSQL skipped (${unreachable})`);
    for (const dialect of dialects) await runDialect(ctx, options, dialect, transactions);
  },
};

async function runDialect(ctx, options, dialect, transactions) {
  const database = await prepareDatabase(ctx, dialect);
  try {
    const { projectId, secretKey } = createProject(ctx, database, 'balance-at');
    const headers = { authorization: `Bearer ${secretKey}` };
    let walletId;
    const setup = await startService(ctx, database, { logLevel: 'warn' });
    try {
      const signup = await requestJson({
        method: 'POST',
        url: `${setup.origin}/v1/auth/signup`,
        headers,
        body: { email: 'balance-at@example.com', password: randomBytes(18).toString('base64url') },
        expect: 201,
      });
      const wallet = await requestJson({
        method: 'POST',
        url: `${setup.origin}/v1/wallets`,
        headers,
        body: { user_id: signup.user.id, currency: 'USD' },
        expect: 201,
      });
      walletId = wallet.id;
    } finally {
      await setup.stop();
    }
    const filledIn = await fill(database, { projectId, walletId, transactions });
    ctx.note(`balance-at (${dialect}): ${transactions} transactions written and analyzed in ${filledIn.toFixed(1)} s`);
    const statement = await timeStatement(database, { projectId, walletId, transactions });
    ctx.record({ bench: 'balance_at_statement', dialect, log_level: null, transactions, ...statement, valid: true });

    const service = await startService(ctx, database, { logLevel: 'warn' });
    try {
      const base = `${service.origin}/v1/wallets/${walletId}/balance`;
      const now = await expectOk(base, headers);
      if (now.credits !== transactions) throw new Error(`the wallet holds ${now.credits} credits, not ${transactions}`);
      const middle = await expectOk(`${base}?at=${timeOf(transactions / 2)}`, headers);
      if (middle.credits !== transactions / 2) throw new Error(`?at= the middle answered ${middle.credits}, not ${transactions / 2}`);

      const today = await measure({ url: base, headers, options, serverPid: service.pid });
      ctx.record({ bench: 'balance_now', dialect, log_level: 'warn', transactions, ...today, connections: options.connections });
      const randomTime = () => timeOf(Math.floor(Math.random() * transactions) + 0.5);
      const at = await measure({
        url: base,
        headers,
        request: {
          requests: [{ setupRequest: (request) => ({ ...request, path: `/v1/wallets/${walletId}/balance?at=${randomTime()}` }) }],
        },
        options,
        serverPid: service.pid,
      });
      ctx.record({
        bench: 'balance_at',
        dialect,
        log_level: 'warn',
        transactions,
        ...at,
        ratio_to_balance_now: Number((at.req_per_s / today.req_per_s).toFixed(2)),
        balance_now_p99_ms: today.p99_ms,
        connections: options.connections,
        target_p99_ms: P99_TARGET_MS,
        verdict: at.valid && at.p99_ms < P99_TARGET_MS ? 'PASS' : 'FAIL',
      });
    } finally {
      await service.stop();
    }
  } finally {
    await database.drop();
  }
}

/** The time of the n-th transaction (1-based; fractions fall between two). */
function timeOf(n) {
  return new Date(FIRST + n * STEP_SECONDS * 1000).toISOString();
}

/**
 * The read itself, without HTTP: the service's own statement (the built ledger store), one call at
 * a time at random times, so the machine's load barely shows.
 */
async function timeStatement(database, { projectId, walletId, transactions }) {
  const db = openDb(database);
  const calls = 2000;
  const times = [];
  try {
    for (let call = 0; call < calls; call += 1) {
      const n = Math.floor(Math.random() * transactions) + 1;
      const started = process.hrtime.bigint();
      const found = await findWalletBalanceAt(db.kysely, projectId, walletId, timeOf(n));
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (found?.balance !== n) throw new Error(`the statement answered ${found?.balance} at transaction ${n}`);
    }
  } finally {
    await db.destroy();
  }
  times.sort((a, b) => a - b);
  const at = (q) => Number(times[Math.floor(q * (times.length - 1))].toFixed(3));
  const totalMs = times.reduce((sum, time) => sum + time, 0);
  // req_per_s here: calls per second on one connection, one after another.
  return { req_per_s: Math.round((calls * 1000) / totalMs), calls, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: at(1) };
}

function openDb(database) {
  return database.dialect === 'postgres'
    ? openDatabase({ dialect: 'postgres', url: database.env['DATABASE_URL'], poolSize: 1, preparedStatements: true })
    : openDatabase({ dialect: 'sqlite', file: `${database.dataDir}/svc.sqlite`, synchronous: 'normal' });
}

/** Writes the wallet's history in a few statements; returns the seconds it took. */
async function fill(database, { projectId, walletId, transactions }) {
  const started = Date.now();
  const postgres = database.dialect === 'postgres';
  const db = openDb(database);
  try {
    const first = FIRST / 1000;
    const numbers = postgres
      ? `generate_series(1, ${transactions}) as s(n)`
      : `(with recursive s(n) as (select 1 union all select n + 1 from s where n < ${transactions}) select n from s) as s`;
    const time = postgres
      ? `to_char(to_timestamp(${first} + n * ${STEP_SECONDS}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
      : `strftime('%Y-%m-%dT%H:%M:%fZ', ${first} + n * ${STEP_SECONDS}, 'unixepoch')`;
    const p = `'${projectId}'`;
    const w = `'${walletId}'`;
    const statements = [
      `insert into ledger_transactions (id, project_id, type, currency, amount, metadata, idempotency_scope, wallet_id, created_at, actor_type)
       select 'txn_at' || n, ${p}, 'credit', 'USD', 1, '{}', ${w}, ${w}, ${time}, 'system' from ${numbers}`,
      `insert into ledger_entries (project_id, transaction_id, account_id, amount, balance_after, created_at)
       select ${p}, 'txn_at' || n, ${w}, 1, n, ${time} from ${numbers}`,
      `insert into ledger_entries (project_id, transaction_id, account_id, amount, balance_after, created_at)
       select ${p}, 'txn_at' || n, 'issuance:USD', -1, null, ${time} from ${numbers}`,
      `update wallets set balance = ${transactions} where id = ${w}`,
      postgres ? 'vacuum analyze ledger_entries' : 'analyze',
    ];
    if (postgres) await sql.raw('set session_replication_role = replica').execute(db.kysely);
    for (const text of statements) await sql.raw(text).execute(db.kysely);
  } finally {
    await db.destroy();
  }
  return (Date.now() - started) / 1000;
}
