// What the audit log costs a credit (budget: at most +10 %, docs/performance.md). Since the audit log
// reads money movements from the ledger (docs/adr/0019-audit-reads-the-ledger.md) a credit writes
// no audit row, and the two measurements below should agree: the scenario now checks that the
// money path carries no audit cost (the after-commit sealing runs in both). Credits spread over
// wallets through HTTP against the real service, on SQLite and, when reachable, PostgreSQL, each
// measured with the audit write and without it (bench/audit-server.js --no-audit, the service's
// `auditRecording: false`), alternating so that both see the same machine; medians of the rounds.
// Reports credits/s, server CPU per credit (and PostgreSQL's), and the ratios with / without.
//
// Knobs besides the runner's: BENCH_AUDIT_DIALECTS (default "sqlite,postgres"), BENCH_AUDIT_ROUNDS
// (default 4, run in ABBA order), BENCH_AUDIT_WALLETS (default 1000).
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { mapConcurrently, requestJson } from '../lib/api.js';
import { spreadCreditRequests } from '../lib/credits.js';
import { measure } from '../lib/load.js';
import { postgresCpuProbe } from '../lib/pg-cpu.js';
import { probePostgres } from '../lib/postgres.js';
import { createProject, prepareDatabase } from '../lib/service.js';
import { freePort, LOOPBACK, startServer } from '../lib/processes.js';
import { median } from '../lib/stats.js';

const SEED_CONCURRENCY = 16;
/** The budget: a credit with its audit entry costs at most 1.10 x one without. */
const COST_RATIO_MAX = 1.1;

export const scenario = {
  name: 'audit',
  description:
    'credits/s and CPU per credit with audit recording on and off (no audit row on the money path since ADR 0019), both dialects',

  async run(ctx) {
    const settings = readSettings(process.env);
    for (const dialect of settings.dialects) {
      if (dialect === 'postgres') {
        const unreachable = await probePostgres(ctx.options.postgresAdminUrl);
        if (unreachable !== undefined) {
          ctx.note(`audit [postgres]: skipped, PostgreSQL not reachable (${unreachable})`);
          continue;
        }
      }
      const database = await prepareDatabase(ctx, dialect);
      try {
        const { secretKey } = createProject(ctx, database);
        const headers = { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' };
        const wallets = await seed(ctx, database, headers, settings.wallets);
        const runs = { with: [], without: [] };
        for (let round = 0; round < settings.rounds; round += 1) {
          // ABBA order: the database grows with every run, so the variant that always ran second
          // would always meet the bigger tables.
          for (const variant of round % 2 === 0 ? ['without', 'with'] : ['with', 'without']) {
            const service = await startAuditServer(ctx, database, variant === 'with');
            try {
              const result = await measure({
                url: service.origin,
                headers,
                request: spreadCreditRequests(wallets),
                probes: dialect === 'postgres' ? [postgresCpuProbe(new URL(database.env['DATABASE_URL']).pathname.slice(1))] : [],
                options: ctx.options,
                serverPid: service.pid,
              });
              runs[variant].push(result);
              ctx.record({ bench: `audit_credit_${variant}_audit`, dialect, log_level: 'warn', round, ...result });
            } finally {
              await service.stop();
            }
          }
        }
        ctx.note(summary(dialect, runs));
      } finally {
        await database.drop();
      }
    }
  },
};

function readSettings(env) {
  const dialects = (env['BENCH_AUDIT_DIALECTS'] ?? 'sqlite,postgres')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  for (const dialect of dialects)
    if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error(`BENCH_AUDIT_DIALECTS: no dialect "${dialect}"`);
  const rounds = Number(env['BENCH_AUDIT_ROUNDS'] ?? '4');
  const wallets = Number(env['BENCH_AUDIT_WALLETS'] ?? '1000');
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('BENCH_AUDIT_ROUNDS must be a whole number >= 1');
  if (!Number.isInteger(wallets) || wallets < 1) throw new Error('BENCH_AUDIT_WALLETS must be a whole number >= 1');
  return { dialects, rounds, wallets };
}

/** `svc serve`'s composition with or without audit writes, on a free loopback port. */
async function startAuditServer(ctx, database, audit) {
  const port = await freePort();
  const label = `audit-server (${database.dialect}, audit ${audit ? 'on' : 'off'}, port ${port})`;
  const server = await startServer({
    label,
    script: join(ctx.benchDir, 'audit-server.js'),
    args: audit ? [] : ['--no-audit'],
    nodeFlags: ctx.options.serverNodeFlags,
    env: { ...database.env, PORT: String(port), LOG_LEVEL: 'warn' },
    logFile: join(database.dataDir, `audit-server-${port}.log`),
    readyUrl: `http://${LOOPBACK}:${port}/healthz`,
  });
  return { ...server, origin: `http://${LOOPBACK}:${port}` };
}

/** A user and its wallets, made through the API by a server of their own. */
async function seed(ctx, database, headers, count) {
  const service = await startAuditServer(ctx, database, true);
  try {
    const api = (method, path, body, expect) => requestJson({ method, url: `${service.origin}${path}`, headers, body, expect });
    const signup = await api(
      'POST',
      '/v1/auth/signup',
      { email: `bench-${randomBytes(6).toString('hex')}@example.com`, password: randomBytes(18).toString('base64url'), name: 'Audit' },
      201,
    );
    const create = () => api('POST', '/v1/wallets', { user_id: signup.user.id, currency: 'USD' }, 201);
    return (await mapConcurrently(Array.from({ length: count }), SEED_CONCURRENCY, create)).map((wallet) => wallet.id);
  } finally {
    await service.stop();
  }
}

/** One line: throughput and CPU per credit with and without, and the cost ratio against the budget. */
function summary(dialect, runs) {
  const pick = (variant, field) => median(runs[variant].map((result) => result[field]));
  const rate = { with: pick('with', 'req_per_s'), without: pick('without', 'req_per_s') };
  const serverCpu = { with: pick('with', 'server_cpu_us_per_req'), without: pick('without', 'server_cpu_us_per_req') };
  const pgCpu = {
    with: median(runs.with.map((result) => result.postgres_cpu_us_per_req)),
    without: median(runs.without.map((result) => result.postgres_cpu_us_per_req)),
  };
  const costRatio = rate.with > 0 ? rate.without / rate.with : null;
  const verdict = costRatio === null ? 'n/a' : costRatio <= COST_RATIO_MAX ? 'PASS' : 'FAIL';
  const cpu =
    `server CPU ${serverCpu.without} -> ${serverCpu.with} us/credit` +
    (pgCpu.with === null ? '' : `, PostgreSQL CPU ${pgCpu.without} -> ${pgCpu.with} us/credit`);
  return (
    `TARGET ${verdict}  audit [${dialect}] credits/s without ${rate.without}, with ${rate.with}: a credit costs ` +
    `${costRatio === null ? 'n/a' : costRatio.toFixed(3)} x with its audit entry (budget <= ${COST_RATIO_MAX}); ${cpu}`
  );
}
