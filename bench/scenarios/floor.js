// The floor under the credit's targets (SQLite credit >= 10,000/s; the audit write at most +10 % on
// a credit; the service's credit, keyed credit and keyed batch against the same work behind bare
// Fastify): credits spread over 1,000 wallets against bench/floor-server.js, the credit's own
// statements behind bare Fastify and nothing else, with no audit entry, the entry alone, and the
// entry with its link of the chain; the ledger's write path behind bare Fastify, with and without
// keys and in keyed batches of 1,000, and with a debit of 1 and a hold of 1 (the service's default
// expiry, 7 days, so that no hold expires while measured) spread over the same wallets; and the
// real service (`svc serve`) doing the same in the same run. Before the first round every wallet
// gets FUND_PER_WALLET credits, one grant, through the floor's write path, so that no debit or hold
// runs short. Rounds alternate the order (ABBA) so that every variant meets the database at every
// size; medians of the rounds.
//
// Knobs besides the runner's: BENCH_FLOOR_ROUNDS (default 2), BENCH_SQLITE_SYNCHRONOUS ("full", the
// service's default, or "normal"), BENCH_FLOOR_VARIANTS (a comma-separated subset of the variants
// below, e.g. `writer_batch,service_batch` or `writer_debit,service_debit`; a target is printed
// when both its sides were measured), BENCH_FLOOR_DIALECTS (`sqlite`, `postgres` or both, the default).
import { join } from 'node:path';
import { requestJson } from '../lib/api.js';
import { batchCreditRequests, spreadRequests } from '../lib/credits.js';
import { measure } from '../lib/load.js';
import { sqliteSynchronousSetting } from '../lib/options.js';
import { freePort, LOOPBACK, startServer } from '../lib/processes.js';
import { createProject, prepareDatabase, startService } from '../lib/service.js';
import { median } from '../lib/stats.js';
import { probePostgres } from '../lib/postgres.js';

/**
 * Per dialect, the servers measured: the SQLite statements alone (with no audit entry, the entry,
 * the chained entry), the ledger's write path behind bare Fastify (`writer`) and the service, each
 * with credits without a key; the write path and the service with a new Idempotency-Key on every
 * credit (`writer_key`, `service_key`: the key written in the credit's transaction by both); and
 * both with batches of BATCH_SIZE credits, each batch keyed (`writer_batch`, `service_batch`); and
 * both with a debit (`writer_debit`, `service_debit`) and a hold (`writer_hold`, `service_hold`)
 * instead of the credit, without a key.
 */
/** The statements-alone variants (no audit entry, the entry, the chained entry) exist on SQLite only. */
const SQLITE_ONLY = ['none', 'entry', 'chained'];
const SHARED_VARIANTS = [
  'writer',
  'service',
  'writer_key',
  'service_key',
  'writer_batch',
  'service_batch',
  'writer_debit',
  'service_debit',
  'writer_hold',
  'service_hold',
];
const VARIANTS = { sqlite: [...SQLITE_ONLY, ...SHARED_VARIANTS], postgres: SHARED_VARIANTS };
const SQLITE_CREDIT_TARGET_PER_S = 10_000;
const AUDIT_COST_RATIO_MAX = 1.1;
/** The service's single credit, debit or hold against the floor of the same movement through its own write path. */
const SERVICE_OVER_FLOOR_TARGET = 0.6;
/** The service's keyed single credit against the floor of the same keyed credit. */
const SERVICE_KEYED_OVER_FLOOR_TARGET = 0.7;
/** The service's keyed batches against the floor of the same rows written in batches of the same size. */
const SERVICE_BATCH_OVER_FLOOR_TARGET = 0.5;
const BATCH_SIZE = 1000;
const BATCH_WALLETS = 50;
/** Batches in flight at once: each carries 1,000 credits, so a few keep the server busy. */
const BATCH_CONNECTIONS = 4;
/**
 * Each wallet's credits before the debits and holds of 1: far more than a run takes (at 10,000/s
 * spread over 1,000 wallets, an hour takes 36,000 of a wallet).
 */
const FUND_PER_WALLET = 1_000_000_000;

export const scenario = {
  name: 'floor',
  description:
    'credits with nothing but their statements (SQLite), and credits, debits and holds through the write path on both dialects, vs the service, same run',

  async run(ctx) {
    const settings = readSettings(process.env);
    const baseline = await ctx.baseline();
    for (const dialect of settings.dialects) {
      if (dialect === 'postgres') {
        const unreachable = await probePostgres(ctx.options.postgresAdminUrl);
        if (unreachable !== undefined) {
          ctx.note(`floor [postgres]: skipped, PostgreSQL not reachable (${unreachable})`);
          continue;
        }
      }
      const variants = variantsOf(dialect, settings);
      if (variants.length === 0) continue;
      const database = await prepareDatabase(ctx, dialect);
      try {
        const { projectId, secretKey } = createProject(ctx, database);
        const extraEnv = dialect === 'sqlite' ? { SQLITE_SYNCHRONOUS: settings.sqliteSynchronous } : {};
        const funded = variants.some((variant) => operationOf(variant) !== 'credit');
        const wallets = await walletsOfFloor(ctx, database, projectId, funded ? 'writer' : floorAudit(variants[0]), extraEnv, funded);
        const runs = Object.fromEntries(variants.map((variant) => [variant, []]));
        for (let round = 0; round < settings.rounds; round += 1) {
          for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
            const isService = variant.startsWith('service');
            const server = isService
              ? await startService(ctx, database, { logLevel: 'warn', extraEnv })
              : await startFloorServer(ctx, database, projectId, floorAudit(variant), extraEnv);
            try {
              const batched = variant.endsWith('_batch');
              const operation = operationOf(variant);
              const result = await measure({
                url: server.origin,
                headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
                request: batched
                  ? batchCreditRequests(wallets, { size: BATCH_SIZE, walletCount: BATCH_WALLETS })
                  : spreadRequests(wallets, `${operation}s`, { keyed: variant.endsWith('_key') }),
                options: batched ? { ...ctx.options, connections: BATCH_CONNECTIONS } : ctx.options,
                serverPid: server.pid,
              });
              // A batch carries BATCH_SIZE credits: its rate is counted in credits, from the total.
              if (batched) result.credits_per_s = Math.round((result.requests_total * BATCH_SIZE) / ctx.options.durationSeconds);
              runs[variant].push(result);
              ctx.record({
                bench: benchName(variant, operation),
                dialect,
                log_level: variant.startsWith('service') ? 'warn' : null,
                ...(dialect === 'sqlite' ? { sqlite_synchronous: settings.sqliteSynchronous } : {}),
                round,
                ...result,
                fastify_req_per_s: baseline.req_per_s,
              });
            } finally {
              await server.stop();
            }
          }
        }
        for (const line of summary(dialect, variants, runs)) ctx.note(line);
      } finally {
        await database.drop();
      }
    }
  },
};

function readSettings(env) {
  const rounds = Number(env['BENCH_FLOOR_ROUNDS'] ?? '2');
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new Error('BENCH_FLOOR_ROUNDS must be a whole number from 1 to 20');
  const sqliteSynchronous = sqliteSynchronousSetting(env);
  const known = new Set([...VARIANTS.sqlite, ...VARIANTS.postgres]);
  const only = listSetting(env, 'BENCH_FLOOR_VARIANTS', known);
  const dialects = listSetting(env, 'BENCH_FLOOR_DIALECTS', new Set(['sqlite', 'postgres'])) ?? ['sqlite', 'postgres'];
  return { rounds, sqliteSynchronous, only, dialects };
}

/** A comma-separated setting whose every item is one of `known`; undefined when unset. */
function listSetting(env, name, known) {
  const value = env[name];
  if (value === undefined || value.trim() === '') return undefined;
  const items = value.split(',').map((item) => item.trim());
  const unknown = items.filter((item) => !known.has(item));
  if (unknown.length > 0) throw new Error(`${name}: unknown ${unknown.join(', ')} (known: ${[...known].join(', ')})`);
  return items;
}

/** The variants measured on `dialect`: all of them, or those BENCH_FLOOR_VARIANTS names. */
function variantsOf(dialect, settings) {
  return VARIANTS[dialect].filter((variant) => settings.only === undefined || settings.only.includes(variant));
}

async function startFloorServer(ctx, database, projectId, audit, extraEnv) {
  const port = await freePort();
  const server = await startServer({
    label: `floor-server (audit ${audit}, port ${port})`,
    script: join(ctx.benchDir, 'floor-server.js'),
    nodeFlags: ctx.options.serverNodeFlags,
    env: { ...database.env, ...extraEnv, PORT: String(port), FLOOR_PROJECT_ID: projectId, FLOOR_AUDIT: audit },
    logFile: join(database.dataDir, `floor-server-${port}.log`),
    readyUrl: `http://${LOOPBACK}:${port}/wallets`,
  });
  return { ...server, origin: `http://${LOOPBACK}:${port}` };
}

/** The floor server's FLOOR_AUDIT for a variant: the write path for the writer's and the service's. */
function floorAudit(variant) {
  return variant.startsWith('writer') || variant.startsWith('service') ? 'writer' : variant;
}

/** What a variant measures: `credit`, `debit` or `hold`. */
function operationOf(variant) {
  if (variant.endsWith('_debit')) return 'debit';
  if (variant.endsWith('_hold')) return 'hold';
  return 'credit';
}

/** The result's name: the credits' as they always were; `floor_service_debit`, `floor_debit_writer` and the like for the others. */
function benchName(variant, operation) {
  if (operation !== 'credit') return variant.startsWith('service') ? `floor_service_${operation}` : `floor_${operation}_writer`;
  if (variant.startsWith('service')) return `floor_${variant}_credit`;
  return variant.startsWith('writer') ? `floor_credit_${variant}` : `floor_credit_audit_${variant}`;
}

/**
 * The floor server makes the wallets at its first start (FLOOR_WALLETS, default 1,000); `funded`
 * (the audit `writer`): then each gets FUND_PER_WALLET credits, one grant, through the write path
 * in batches of BATCH_SIZE credits.
 */
async function walletsOfFloor(ctx, database, projectId, audit, extraEnv, funded) {
  const server = await startFloorServer(ctx, database, projectId, audit, extraEnv);
  try {
    const { data } = await requestJson({ method: 'GET', url: `${server.origin}/wallets`, expect: 200 });
    if (funded)
      for (let start = 0; start < data.length; start += BATCH_SIZE) {
        const operations = data
          .slice(start, start + BATCH_SIZE)
          .map((walletId) => ({ type: 'credit', wallet_id: walletId, amount: FUND_PER_WALLET }));
        await requestJson({ method: 'POST', url: `${server.origin}/v1/wallets/batch`, body: { operations }, expect: 200 });
      }
    return data;
  } finally {
    await server.stop();
  }
}

function summary(dialect, variants, runs) {
  const rateOf = (result) => result.credits_per_s ?? result.req_per_s;
  const rate = Object.fromEntries(variants.map((variant) => [variant, Math.round(median(runs[variant].map(rateOf)) ?? 0)]));
  const cpu = Object.fromEntries(
    variants.map((variant) => [variant, Math.round(median(runs[variant].map((result) => result.server_cpu_us_per_req)) ?? 0)]),
  );
  const describe = (variant) => `${rate[variant]}/s (${cpu[variant]} us of server CPU per request)`;
  // A ratio to a run that answered errors (a floor that broke) is no measurement.
  const target = (label, service, floor, goal) => {
    const value = rate[floor] > 0 ? rate[service] / rate[floor] : 0;
    const valid = [...runs[floor], ...runs[service]].every((result) => result.valid);
    const verdict = !valid ? 'INVALID' : value >= goal ? 'PASS' : 'FAIL';
    return `TARGET ${verdict}  [${dialect}] ${label} through the service = ${value.toFixed(2)} x the floor (target >= ${goal})`;
  };
  const measured = (...names) => names.every((name) => variants.includes(name));
  const lines = [];
  if (measured('writer', 'service')) {
    lines.push(
      `FLOOR  [${dialect}] the write path behind bare Fastify, no audit entry: ${describe('writer')}; the service: ${describe('service')}`,
      target('single credit', 'service', 'writer', SERVICE_OVER_FLOOR_TARGET),
    );
  }
  for (const operation of ['debit', 'hold']) {
    const [writer, service] = [`writer_${operation}`, `service_${operation}`];
    if (!measured(writer, service)) continue;
    lines.push(
      `FLOOR  [${dialect}] ${operation}s of 1 spread over the wallets: the write path behind bare Fastify ${describe(writer)}; the service ${describe(service)}`,
      target(operation, service, writer, SERVICE_OVER_FLOOR_TARGET),
    );
  }
  if (measured('writer_key', 'service_key')) {
    lines.push(
      `FLOOR  [${dialect}] keyed credits, the key written in the credit's transaction: the write path ${describe('writer_key')}; the service ${describe('service_key')}`,
      target('keyed single credit', 'service_key', 'writer_key', SERVICE_KEYED_OVER_FLOOR_TARGET),
    );
  }
  if (measured('writer_batch', 'service_batch')) {
    lines.push(
      `FLOOR  [${dialect}] keyed batches of ${BATCH_SIZE} credits (${BATCH_CONNECTIONS} connections), in credits/s: the write path ${rate.writer_batch}/s (${cpu.writer_batch} us of server CPU per batch); the service ${rate.service_batch}/s (${cpu.service_batch} us)`,
      target(`keyed batched credits (${BATCH_SIZE} per request)`, 'service_batch', 'writer_batch', SERVICE_BATCH_OVER_FLOOR_TARGET),
    );
  }
  if (dialect !== 'sqlite' || !measured('none', 'entry', 'chained', 'service')) return lines;
  const floorOfTarget = (rate.chained / SQLITE_CREDIT_TARGET_PER_S).toFixed(2);
  const auditCost = (rate.none / rate.chained).toFixed(3);
  const entryCost = (rate.none / rate.entry).toFixed(3);
  return [
    `floor [sqlite] credits: no audit ${describe('none')}; audit entry alone ${describe('entry')}; entry and chain link ${describe('chained')}; the service ${describe('service')}`,
    `FLOOR  SQLite credit with its audit entry: ${rate.chained}/s = ${floorOfTarget} x the 10,000/s target, with nothing but its statements; the service reaches ${(rate.service / rate.chained).toFixed(2)} x the floor`,
    `FLOOR  the audit write at the floor: a credit costs ${auditCost} x with the chained entry, ${entryCost} x with the entry alone (budget <= ${AUDIT_COST_RATIO_MAX}); ` +
      `+${cpu.chained - cpu.none} us of server CPU, against ${Math.round(cpu.service * (AUDIT_COST_RATIO_MAX - 1))} us that 10 % of the service's credit allows`,
    ...lines,
  ];
}
