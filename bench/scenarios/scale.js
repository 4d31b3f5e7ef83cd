// Reads at scale, PostgreSQL only. Creates a database of its own (dropped at the
// end), fills it with generate_series (bench/lib/scale-fill.js: at SCALE=1, 10 million ledger
// transactions over 100,000 wallets, 1 million users and sessions, 5 million events and delivery
// attempts, 1 million audit entries, 20 projects, the first holding half), folds the statistics as
// the stats job would, then measures every list, statistics, audit and dashboard route and session
// validation on the largest project with 10 concurrent clients (p50/p99), and prints EXPLAIN for
// each of their queries that touches a table over 10,000 rows, flagging any Seq Scan.
//
// Knobs: SCALE (default 1; e.g. 0.01 for a quick run), BENCH_SCALE_SECONDS (per route, default 5),
// BENCH_SCALE_CLIENTS (default 10), BENCH_WARMUP_SECONDS (per route, not recorded, default 2).
// A filled database takes half an hour at SCALE=1, so BENCH_SCALE_KEEP=<file> leaves it in place and
// writes to <file> what a later run needs (its URL, secrets key, largest project and its key), and
// BENCH_SCALE_REUSE=<file> measures that database again, without filling (drop it by hand after).
// Targets: every route p99 < 50 ms, the dashboard overview (its three statistics requests at once)
// p99 < 100 ms, no Seq Scan of a table over 10,000 rows.
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import pg from 'pg';
import { requestJson } from '../lib/api.js';
import { explainReads, reads } from '../lib/explain.js';
import { probePostgres } from '../lib/postgres.js';
import { fillStatements } from '../lib/scale-fill.js';
import { createProject, prepareDatabase, startService } from '../lib/service.js';
import { foldStats } from '../../packages/server/dist/modules/stats/stats.fold.js';
import { openDatabase } from '../../packages/server/dist/db/database.js';

const PROJECTS = 20;
const BIG_ROWS = 10_000;
const ROUTE_P99_MS = 50;
const DASHBOARD_P99_MS = 100;
const REQUESTS_MAX = 200_000;

export const scenario = {
  name: 'scale',
  description: 'PostgreSQL at 10M ledger transactions (SCALE): every list/stats/audit route p99 and EXPLAIN',

  async run(ctx) {
    const scale = Number(process.env.SCALE ?? '1');
    if (!(scale > 0 && scale <= 1)) throw new Error('SCALE must be a number in (0, 1]');
    const seconds = Number(process.env.BENCH_SCALE_SECONDS ?? '5');
    const clients = Number(process.env.BENCH_SCALE_CLIENTS ?? '10');
    const unreachable = await probePostgres(ctx.options.postgresAdminUrl);
    if (unreachable !== undefined) {
      ctx.note(`scale: skipped, PostgreSQL not reachable (${unreachable})`);
      return;
    }
    const reuse = process.env.BENCH_SCALE_REUSE;
    const kept = reuse === undefined ? undefined : JSON.parse(readFileSync(reuse, 'utf8'));
    const database = await prepareDatabase(ctx, 'postgres', kept && { url: kept.url, secretsKey: kept.secrets_key });
    try {
      const pool = new pg.Pool({ connectionString: database.env['DATABASE_URL'], max: 2, options: '-c jit=off' });
      try {
        let big;
        let filled;
        if (kept !== undefined) {
          ({ big, filled } = kept);
          ctx.note(`scale: measuring the database kept in ${reuse} (SCALE=${kept.scale}), not filled again`);
        } else {
          const projects = [];
          for (let index = 0; index < PROJECTS; index += 1) projects.push(createProject(ctx, database, `scale-${index}`));
          big = projects[0];
          filled = await fill(ctx, pool, projects, scale);
          await fold(ctx, pool, database);
          const keep = process.env.BENCH_SCALE_KEEP;
          if (keep !== undefined) {
            database.keep();
            const url = database.env['DATABASE_URL'];
            writeFileSync(keep, JSON.stringify({ url, secrets_key: database.env['SECRETS_ENCRYPTION_KEY'], scale, big, filled }));
            ctx.note(`scale: database kept (${url}); BENCH_SCALE_REUSE=${keep} measures it again`);
          }
        }
        const measuredScale = kept?.scale ?? scale;

        const service = await startService(ctx, database, { logLevel: 'warn' });
        try {
          await measureRoutes(ctx, service.origin, big, {
            seconds,
            warmupSeconds: ctx.options.warmupSeconds,
            clients,
            scale: measuredScale,
            filled,
          });
        } finally {
          await service.stop();
        }
        const bigTables = await tablesOver(pool, BIG_ROWS);
        const since = new Date(Date.now() - 29 * 24 * 3600 * 1000).toISOString().slice(0, 10) + 'T00:00:00.000Z';
        const explained = await explainReads(
          pool,
          reads({
            p: big.projectId,
            w: 'wal_s1',
            u: 'usr_s1',
            h: 'whe_s1',
            d: 'whd_s1',
            since,
            today: new Date().toISOString().slice(0, 10) + 'T00:00:00.000Z',
          }),
          bigTables,
        );
        for (const entry of explained) {
          ctx.note(
            `EXPLAIN ${entry.read} (${entry.tables.join(', ')}; ${entry.execution_ms.toFixed(2)} ms)${entry.seq_scans.length > 0 ? '  SEQ SCAN: ' + entry.seq_scans.join(', ') : ''}\n${entry.plan}`,
          );
        }
        const seqScans = explained.filter((entry) => entry.seq_scans.length > 0);
        ctx.record({
          bench: 'scale_explain',
          dialect: 'postgres',
          log_level: null,
          scale: measuredScale,
          statements_explained: explained.length,
          seq_scans: seqScans.map((entry) => ({ read: entry.read, tables: entry.seq_scans })),
          valid: true,
          verdict: seqScans.length === 0 ? 'PASS' : 'FAIL',
        });
      } finally {
        await pool.end();
      }
    } finally {
      await database.drop();
    }
  },
};

/** Folds the statistics as the stats job would, then analyzes. */
async function fold(ctx, pool, database) {
  const db = openDatabase({ dialect: 'postgres', url: database.env['DATABASE_URL'], poolSize: 2, preparedStatements: true });
  const foldStart = Date.now();
  try {
    while (!(await foldStats(db, { now: () => new Date() }, { stepMs: 100 * 24 * 3600 * 1000, stepsMax: 10 })));
  } finally {
    await db.destroy();
  }
  ctx.note(`scale: statistics folded in ${((Date.now() - foldStart) / 1000).toFixed(1)} s`);
  await pool.query('vacuum analyze');
}

async function fill(ctx, pool, projects, scale) {
  const { size, statements } = fillStatements(
    projects.map((project) => project.projectId),
    scale,
  );
  const started = Date.now();
  const client = await pool.connect();
  try {
    await client.query('set session_replication_role = replica');
    for (const [label, text] of statements) {
      const at = Date.now();
      await client.query(text);
      ctx.note(`scale: filled ${label} in ${((Date.now() - at) / 1000).toFixed(1)} s`);
    }
    await client.query('set session_replication_role = origin');
  } finally {
    client.release();
  }
  await pool.query('vacuum analyze');
  const seconds = (Date.now() - started) / 1000;
  ctx.note(`scale: SCALE=${scale} ${JSON.stringify(size)} filled and analyzed in ${seconds.toFixed(0)} s`);
  return { size, seconds };
}

async function tablesOver(pool, rows) {
  const result = await pool.query(`select relname from pg_class where relkind = 'r' and reltuples > $1`, [rows]);
  return new Set(result.rows.map((row) => row.relname));
}

async function measureRoutes(ctx, origin, big, { seconds, warmupSeconds, clients, scale, filled }) {
  const headers = { authorization: `Bearer ${big.secretKey}` };
  const signedUp = await requestJson({
    method: 'POST',
    url: `${origin}/v1/auth/signup`,
    headers: { ...headers, 'content-type': 'application/json' },
    body: { email: `scale-bench-${Date.now()}@example.com`, password: 'a long bench passphrase 7f3a' },
    expect: 201,
  });
  const token = signedUp.session.id ?? signedUp.session.token;
  const get = (path) => ({ method: 'GET', path, headers });
  const routes = {
    'GET /v1/stats/overview': [get('/v1/stats/overview')],
    'GET /v1/stats/credits?days=30': [get('/v1/stats/credits?days=30')],
    'GET /v1/stats/webhooks?days=30': [get('/v1/stats/webhooks?days=30')],
    'dashboard overview (the three at once)': [
      get('/v1/stats/overview'),
      get('/v1/stats/credits?days=30'),
      get('/v1/stats/webhooks?days=30'),
    ],
    'GET /v1/users': [get('/v1/users')],
    'GET /v1/users/:id/sessions': [get('/v1/users/usr_s1/sessions')],
    'GET /v1/wallets': [get('/v1/wallets')],
    'GET /v1/wallets/:id/transactions': [get('/v1/wallets/wal_s1/transactions')],
    'GET /v1/events': [get('/v1/events')],
    'GET /v1/events?type=': [get('/v1/events?type=wallet.credit.added')],
    'GET /v1/audit-logs': [get('/v1/audit-logs')],
    'GET /v1/audit-logs?action=': [get('/v1/audit-logs?action=organization.update')],
    'GET /v1/audit-logs?actor_id=': [get('/v1/audit-logs?actor_id=key3')],
    'GET /v1/audit-logs?resource_id=': [get('/v1/audit-logs?resource_id=wal_s1')],
    'GET /v1/webhooks/:id/deliveries': [get('/v1/webhooks/whe_s1/deliveries')],
    'POST /v1/sessions/validate': [
      {
        method: 'POST',
        path: '/v1/sessions/validate',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ session_id: token }),
      },
    ],
  };
  for (const [name, requests] of Object.entries(routes)) {
    // Not recorded: the server's first requests of a route (its code compiled by V8, the pool's
    // connections opened and their catalog caches filled) are not the steady state measured here.
    if (warmupSeconds > 0) await closedLoop(origin, requests, { seconds: warmupSeconds, clients });
    const measured = await closedLoop(origin, requests, { seconds, clients });
    const target = requests.length > 1 ? DASHBOARD_P99_MS : ROUTE_P99_MS;
    ctx.record({
      bench: 'scale_route',
      route: name,
      dialect: 'postgres',
      log_level: 'warn',
      scale,
      clients,
      ...measured,
      target_p99_ms: target,
      verdict: measured.valid && measured.p99_ms < target ? 'PASS' : 'FAIL',
      ledger_transactions: filled.size.transactions,
    });
  }
}

/** `clients` loops, each sending `requests` at once and waiting for all, for `seconds`; latency per round. */
async function closedLoop(origin, requests, { seconds, clients }) {
  const agent = new Agent({ keepAlive: true, maxSockets: clients * requests.length });
  const latencies = [];
  const statuses = {};
  const deadline = Date.now() + seconds * 1000;
  const one = (spec) =>
    new Promise((resolve, reject) => {
      const req = httpRequest(`${origin}${spec.path}`, { method: spec.method, headers: spec.headers, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(spec.body);
    });
  let errors = 0;
  const worker = async () => {
    while (Date.now() < deadline && latencies.length < REQUESTS_MAX) {
      const start = process.hrtime.bigint();
      try {
        const codes = await Promise.all(requests.map(one));
        for (const code of codes) statuses[code] = (statuses[code] ?? 0) + 1;
      } catch {
        errors += 1;
      }
      latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: clients }, worker));
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q) => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(2));
  const non2xx = Object.entries(statuses)
    .filter(([code]) => !code.startsWith('2'))
    .reduce((sum, [, count]) => sum + count, 0);
  return {
    req_per_s: Math.round(latencies.length / seconds),
    p50_ms: at(0.5),
    p99_ms: at(0.99),
    rounds: latencies.length,
    status_codes: statuses,
    errors,
    valid: errors === 0 && non2xx === 0 && latencies.length > 0,
  };
}
