// What traces cost the service's single credit (docs/operations.md "Traces"): `svc serve` with
// OTEL_EXPORTER_OTLP_ENDPOINT unset (`off`: no tracing code loaded) and set (`on`: every request a
// span with its transaction's span, exported as OTLP/HTTP protobuf to a loopback receiver in this
// process that reads and discards them). With BENCH_TRACING_BEFORE_BIN, the `svc.js` of a build
// without tracing code (e.g. a worktree of the commit before it), measured as `before`: the off
// path's cost against it. Credits of 1 spread over wallets, without a key (the group commit path);
// rounds alternate the order of the variants; medians of the rounds.
//
// Targets: `off` within 3 % of `before`; `on` within 15 % of `off` (credits/s).
//
// Knobs besides the runner's: BENCH_TRACING_DIALECT (default "sqlite"), BENCH_TRACING_ROUNDS
// (default 2), BENCH_TRACING_WALLETS (default 1000), BENCH_TRACING_BEFORE_BIN (unset: no `before`).
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { mapConcurrently, requestJson } from '../lib/api.js';
import { spreadCreditRequests } from '../lib/credits.js';
import { measure } from '../lib/load.js';
import { probePostgres } from '../lib/postgres.js';
import { freePort, LOOPBACK, startServer } from '../lib/processes.js';
import { createProject, prepareDatabase } from '../lib/service.js';
import { median } from '../lib/stats.js';

const SEED_CONCURRENCY = 16;
const OFF_COST_MAX = 1.03;
const ON_COST_MAX = 1.15;
/** Spans wait this long in the batch before they are sent (the SDK's default is 5 s). */
const SCHEDULE_DELAY_MS = 1000;

export const scenario = {
  name: 'tracing',
  description:
    "the service's single credit with traces off and on (OTLP/HTTP to a loopback receiver that discards), and optionally before tracing existed",

  async run(ctx) {
    const settings = readSettings(process.env);
    if (settings.dialect === 'postgres') {
      const unreachable = await probePostgres(ctx.options.postgresAdminUrl);
      if (unreachable !== undefined) {
        ctx.note(`tracing [postgres]: skipped, PostgreSQL not reachable (${unreachable})`);
        return;
      }
    }
    const sink = await startSink();
    const database = await prepareDatabase(ctx, settings.dialect);
    try {
      const { secretKey } = createProject(ctx, database);
      const headers = { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' };
      const wallets = await seed(ctx, database, headers, settings.wallets);
      const variants = settings.beforeBin === undefined ? ['off', 'on'] : ['before', 'off', 'on'];
      const runs = Object.fromEntries(variants.map((variant) => [variant, []]));
      for (let round = 0; round < settings.rounds; round += 1) {
        // Every other round reversed: the database grows with every run, and no variant should
        // always meet the bigger tables.
        const order = round % 2 === 0 ? variants : [...variants].reverse();
        for (const variant of order) {
          const service = await startVariant(ctx, database, variant, { sink: sink.endpoint, beforeBin: settings.beforeBin });
          try {
            const result = await measure({
              url: service.origin,
              headers,
              request: spreadCreditRequests(wallets),
              options: ctx.options,
              serverPid: service.pid,
            });
            runs[variant].push(result);
            ctx.record({ bench: `tracing_credit_${variant}`, dialect: settings.dialect, log_level: 'warn', round, ...result });
          } finally {
            await service.stop();
          }
        }
      }
      ctx.note(summary(settings.dialect, runs, sink.received()));
    } finally {
      await database.drop();
      await sink.close();
    }
  },
};

function readSettings(env) {
  const dialect = env['BENCH_TRACING_DIALECT'] ?? 'sqlite';
  if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error(`BENCH_TRACING_DIALECT: no dialect "${dialect}"`);
  const rounds = Number(env['BENCH_TRACING_ROUNDS'] ?? '2');
  const wallets = Number(env['BENCH_TRACING_WALLETS'] ?? '1000');
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new Error('BENCH_TRACING_ROUNDS must be a whole number from 1 to 20');
  if (!Number.isInteger(wallets) || wallets < 1 || wallets > 100_000) throw new Error('BENCH_TRACING_WALLETS must be from 1 to 100000');
  const beforeBin = env['BENCH_TRACING_BEFORE_BIN'] || undefined;
  if (beforeBin !== undefined && !existsSync(beforeBin)) throw new Error(`BENCH_TRACING_BEFORE_BIN: no file ${beforeBin}`);
  return { dialect, rounds, wallets, beforeBin };
}

/** An OTLP/HTTP receiver on loopback that reads every export, counts its bytes and answers 200. */
async function startSink() {
  let requests = 0;
  let bytes = 0;
  const server = http.createServer((request, response) => {
    request.on('data', (chunk) => (bytes += chunk.length));
    request.on('end', () => {
      requests += 1;
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.listen(0, LOOPBACK);
  await once(server, 'listening');
  return {
    endpoint: `http://${LOOPBACK}:${server.address().port}`,
    received: () => ({ requests, bytes }),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** `svc serve` as the variant runs it, on a free loopback port. */
async function startVariant(ctx, database, variant, { sink, beforeBin }) {
  const port = await freePort();
  const tracing = variant === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink, OTEL_BSP_SCHEDULE_DELAY: String(SCHEDULE_DELAY_MS) } : {};
  const server = await startServer({
    label: `svc serve (${database.dialect}, tracing ${variant}, port ${port})`,
    script: variant === 'before' ? beforeBin : ctx.svcBin,
    args: ['serve'],
    nodeFlags: ctx.options.serverNodeFlags,
    env: { ...database.env, PORT: String(port), LOG_LEVEL: 'warn', ...tracing },
    logFile: join(database.dataDir, `tracing-${variant}-${port}.log`),
    readyUrl: `http://${LOOPBACK}:${port}/healthz`,
  });
  return { ...server, origin: `http://${LOOPBACK}:${port}` };
}

/** A user and its wallets, made through the API by a server of their own. */
async function seed(ctx, database, headers, count) {
  const service = await startVariant(ctx, database, 'off', {});
  try {
    const api = (method, path, body, expect) => requestJson({ method, url: `${service.origin}${path}`, headers, body, expect });
    const signup = await api(
      'POST',
      '/v1/auth/signup',
      { email: `bench-${randomBytes(6).toString('hex')}@example.com`, password: randomBytes(18).toString('base64url'), name: 'Tracing' },
      201,
    );
    const create = () => api('POST', '/v1/wallets', { user_id: signup.user.id, currency: 'USD' }, 201);
    return (await mapConcurrently(Array.from({ length: count }), SEED_CONCURRENCY, create)).map((wallet) => wallet.id);
  } finally {
    await service.stop();
  }
}

/** One line per comparison: credits/s and server CPU per credit of each variant, and the ratios against the targets. */
function summary(dialect, runs, received) {
  const pick = (variant, field) => (runs[variant] === undefined ? null : median(runs[variant].map((result) => result[field])));
  const rate = (variant) => pick(variant, 'req_per_s');
  const cpu = (variant) => pick(variant, 'server_cpu_us_per_req');
  const cost = (slower, faster) => (rate(slower) > 0 && rate(faster) !== null ? rate(faster) / rate(slower) : null);
  const line = (label, slower, faster, budget) => {
    const ratio = cost(slower, faster);
    const verdict = ratio === null ? 'n/a' : ratio <= budget ? 'PASS' : 'FAIL';
    return (
      `TARGET ${verdict}  tracing [${dialect}] ${label}: credits/s ${faster} ${rate(faster)}, ${slower} ${rate(slower)}, ` +
      `a credit costs ${ratio === null ? 'n/a' : ratio.toFixed(3)} x (budget <= ${budget}); ` +
      `server CPU ${cpu(faster)} -> ${cpu(slower)} us/credit`
    );
  };
  const lines = [];
  if (runs.before !== undefined) lines.push(line('off against before', 'off', 'before', OFF_COST_MAX));
  lines.push(line('on against off', 'on', 'off', ON_COST_MAX));
  lines.push(`tracing [${dialect}]: the receiver took ${received.requests} exports, ${received.bytes} bytes`);
  return lines.join('\n');
}
