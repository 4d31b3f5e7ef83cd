// Webhook delivery on PostgreSQL: events committed to the outbox → a 200 from a local receiver.
// Targets (docs/performance.md): at least 5,000 deliveries/s; p99 commit-to-delivery under 250 ms at 1,000
// events/s; one dead endpoint among ten costs the other nine under 10 % of their throughput.
//
// Processes: `svc serve` (API + delivery worker) with NODE_ENV=development and
// WEBHOOK_ALLOW_PRIVATE=1 on a fresh PostgreSQL database; the receiver (bench/webhook-receiver.js,
// node:http on 127.0.0.1); this runner, which commits events straight into the outbox table with
// `pg` (what a wallet or auth transaction does, without the API's cost in the measurement) and
// reads the receiver's counts. The baseline is bare POSTs of an envelope-sized body to the same
// receiver with autocannon, in the same run.
//
// Measurements, each repeated BENCH_REPEAT times (default 3) on a fresh database and server
// process; medians are reported:
//   throughput, 1 / 10 / 100 endpoints: a backlog of 5,000 × BENCH_DURATION_SECONDS deliveries
//     is committed (in transactions of 1,000 events) while the worker runs; deliveries/s from
//     the first commit to the last 200.
//   latency: 1 endpoint, 1,000 events/s, one event per transaction, for BENCH_DURATION_SECONDS;
//     commit (from just before its INSERT is sent) → arrival at the receiver, p50 / p99.
//   dead endpoint: 10 endpoints, all healthy, then 9 healthy and 1 that never answers (each
//     attempt holds a slot for the 10-s timeout); the nine's deliveries/s in both.
//   crash resume: 10 endpoints, a backlog being delivered, `svc serve` killed with SIGKILL; the
//     deliveries it held leased at that moment (read from the database) are the interrupted ones.
//     The server is started again on the same DATA_DIR (so with the same worker identity); from
//     the moment it answers /healthz, the time until each interrupted delivery arrives, p50 / p99.
// The measurements are exported too, for ad-hoc runs of one of them from a script.
// Beside each rate: CPU per delivery of the server process and of this database's PostgreSQL
// backends (which include this runner's INSERTs), much less disturbed than the rate by other work
// on the machine (such as another benchmark).
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import pg from 'pg';
import { cpuSince, startCpuWindow } from '../lib/cpu.js';
import { probePostgres } from '../lib/postgres.js';
import { assertLoopback, freePort, httpGet, LOOPBACK, startServer } from '../lib/processes.js';
import { createProject, prepareDatabase, startService } from '../lib/service.js';
import { median } from '../lib/stats.js';

const TARGET_DELIVERIES_PER_S = 5000;
const TARGET_P99_MS = 250;
const LATENCY_EVENTS_PER_S = 1000;
const TARGET_DEAD_COST = 0.1;
const TARGET_SHARE_OF_BASELINE = 0.4;
const TARGET_RESUME_P99_MS = 5000;
const ENDPOINT_COUNTS = [1, 10, 100];
/** Events per transaction when committing a backlog. */
const BACKLOG_BATCH = 1000;
/** A run that has not delivered everything by then is reported as it is (and marked invalid). */
const DRAIN_TIMEOUT_MS = 120_000;
const POLL_MS = 25;
/** The in-flight limit per endpoint of the worker: the baseline uses as many connections. */
const BASELINE_CONNECTIONS = 32;

const EVENT_TYPE = 'wallet.credit.added';
const EVENT_DATA = JSON.stringify({
  wallet_id: 'wlt_0000000000000000bench0',
  transaction_id: 'txn_0000000000000000bench0',
  amount: 1500,
  balance: 98_500,
  description: 'Monthly credits',
});

export const scenario = {
  name: 'webhooks',
  description: 'webhook deliveries/s (1, 10, 100 endpoints), commit-to-delivery latency, a dead endpoint; PostgreSQL',

  async run(ctx) {
    const unreachable = await probePostgres(ctx.options.postgresAdminUrl);
    if (unreachable !== undefined) {
      ctx.note(`webhooks: skipped, PostgreSQL not reachable (${unreachable})`);
      return;
    }
    const repeat = repetitions();
    const logLevel = ctx.options.logLevels[0] ?? 'warn';
    const receiver = await startReceiver(ctx);
    const runs = [];
    try {
      for (let round = 1; round <= repeat; round += 1) {
        ctx.note(`webhooks: round ${round} of ${repeat}`);
        runs.push(await runRound(ctx, receiver, logLevel));
      }
    } finally {
      await receiver.stop();
    }
    summarize(ctx, runs, logLevel);
  },
};

function repetitions() {
  const raw = process.env.BENCH_REPEAT;
  if (raw === undefined || raw.trim() === '') return 3;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 20) throw new Error(`BENCH_REPEAT must be a whole number 1..20, got "${raw}"`);
  return value;
}

/** One round: the baseline, then every measurement against a fresh database and server process. */
async function runRound(ctx, receiver, logLevel) {
  const result = { baseline: await measureBaseline(ctx, receiver), throughput: {}, latency: undefined, dead: undefined };
  ctx.record({ bench: 'webhooks_baseline_post', dialect: null, log_level: null, ...result.baseline });

  const database = await prepareDatabase(ctx, 'postgres');
  let service;
  let pool;
  try {
    const { secretKey } = createProject(ctx, database);
    service = await startService(ctx, database, {
      logLevel,
      extraEnv: { NODE_ENV: 'development', WEBHOOK_ALLOW_PRIVATE: '1' },
    });
    pool = new pg.Pool({ connectionString: database.env.DATABASE_URL, max: 8 });
    pool.on('error', () => undefined);
    const bench = { ctx, receiver, service, pool, secretKey, database };
    const run = (measured) => ({ dialect: 'postgres', log_level: logLevel, ...measured });

    // Warm-up: the server's JIT and connection pools, with results discarded.
    if (ctx.options.warmupSeconds > 0) {
      const warm = await newProject(bench, 'warm-up', 10);
      await throughput(bench, warm, 1000 * ctx.options.warmupSeconds);
    }

    for (const endpointCount of ENDPOINT_COUNTS) {
      const project = await newProject(bench, `throughput-${endpointCount}`, endpointCount);
      const measured = await throughput(bench, project, TARGET_DELIVERIES_PER_S * ctx.options.durationSeconds);
      result.throughput[endpointCount] = measured;
      ctx.record(run({ bench: `webhooks_${endpointCount}_endpoint${endpointCount === 1 ? '' : 's'}`, ...measured }));
    }

    const latencyProject = await newProject(bench, 'latency', 1);
    result.latency = await latency(bench, latencyProject, LATENCY_EVENTS_PER_S, ctx.options.durationSeconds);
    ctx.record(run({ bench: `webhooks_latency_${LATENCY_EVENTS_PER_S}_per_s`, ...result.latency }));

    const crash = await crashResume(bench, logLevel);
    service = crash.service;
    bench.service = crash.service;
    result.crash = crash.measured;
    ctx.record(run({ bench: 'webhooks_crash_resume', ...crash.measured }));

    // The dead endpoint last: its attempts go on (each held 10 s, then retried) until the server stops.
    const deliveries = TARGET_DELIVERIES_PER_S * ctx.options.durationSeconds;
    const healthy = await newProject(bench, 'ten-healthy', 10);
    const healthyRun = await throughput(bench, healthy, deliveries, { countedEndpoints: 9 });
    ctx.record(run({ bench: 'webhooks_10_healthy_nine_counted', ...healthyRun }));
    const withDead = await newProject(bench, 'one-dead', 10, { deadEndpoints: 1 });
    const deadRun = await throughput(bench, withDead, deliveries, { countedEndpoints: 9 });
    ctx.record(run({ bench: 'webhooks_9_healthy_1_dead', ...deadRun }));
    result.dead = { healthy: healthyRun, withDead: deadRun };
    return result;
  } finally {
    await pool?.end().catch(() => undefined);
    await service?.stop();
    await database.drop();
  }
}

// ---- The receiver and the baseline ------------------------------------------------------------

export async function startReceiver(ctx) {
  const port = await freePort();
  const origin = `http://${LOOPBACK}:${port}`;
  const server = await startServer({
    label: `webhook receiver (port ${port})`,
    script: join(ctx.benchDir, 'webhook-receiver.js'),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production', PORT: String(port) },
    logFile: join(ctx.workDir, `webhook-receiver-${port}.log`),
    readyUrl: `${origin}/healthz`,
  });
  return {
    ...server,
    origin,
    async stats() {
      const { status, body } = await httpGet(`${origin}/stats`);
      if (status !== 200) throw new Error(`receiver /stats answered ${status}`);
      return JSON.parse(body);
    },
    async arrivals() {
      return JSON.parse((await httpPost(`${origin}/arrivals`, {})).body);
    },
    async reset() {
      await httpPost(`${origin}/reset`, {});
    },
  };
}

/** Bare POSTs of a signed-envelope-sized body to the receiver: what the loopback and the receiver can take. */
export async function measureBaseline(ctx, receiver) {
  await receiver.reset();
  const url = `${receiver.origin}/hook/baseline`;
  const body = envelope(eventId(), new Date().toISOString());
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'svc-webhooks/1.0',
    'webhook-id': eventId(),
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': `v1,${randomBytes(32).toString('base64')}`,
    'x-service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${randomBytes(32).toString('hex')}`,
  };
  const load = (durationSeconds) =>
    autocannon({ url, method: 'POST', body, headers, connections: BASELINE_CONNECTIONS, duration: durationSeconds, pipelining: 1 });
  if (ctx.options.warmupSeconds > 0) await load(ctx.options.warmupSeconds);
  const window = startCpuWindow(receiver.pid);
  const result = await load(ctx.options.durationSeconds);
  const cpu = cpuSince(window);
  await receiver.reset();
  return {
    req_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    req_per_s_min: result.requests.min,
    req_per_s_max: result.requests.max,
    requests_total: result.requests.total,
    connections: BASELINE_CONNECTIONS,
    non2xx: result.non2xx,
    errors: result.errors,
    server_cpu_us_per_req: cpu?.server_cpu_s == null ? null : Math.round((cpu.server_cpu_s * 1e6) / result.requests.total),
    cpu,
    valid: result.non2xx === 0 && result.errors === 0 && result.requests.total > 0,
  };
}

// ---- Projects, endpoints and events -----------------------------------------------------------

/**
 * A project of its own for one measurement, with `endpointCount` endpoints subscribed to
 * everything (the first `deadEndpoints` of them dead), so its events go to those alone.
 */
export async function newProject(bench, name, endpointCount, { deadEndpoints = 0 } = {}) {
  const { projectId, secretKey } = createProject(bench.ctx, bench.database, name);
  const healthy = [];
  for (let index = 0; index < endpointCount; index += 1) {
    const dead = index >= endpointCount - deadEndpoints;
    const path = dead ? `/dead/${name}-${index}` : `/hook/${name}-${index}`;
    const response = await httpPost(
      `${bench.service.origin}/v1/webhooks`,
      { url: `${bench.receiver.origin}${path}`, events: ['*'] },
      { authorization: `Bearer ${secretKey}` },
    );
    if (response.status !== 201) throw new Error(`POST /v1/webhooks answered ${response.status}: ${response.body}`);
    if (!dead) healthy.push(`${name}-${index}`);
  }
  return { projectId, name, endpointCount, healthy };
}

/** Commits `count` events of the project in transactions of `BACKLOG_BATCH`; returns their ids. */
async function commitBacklog(pool, projectId, count) {
  const ids = [];
  for (let start = 0; start < count; start += BACKLOG_BATCH) {
    const size = Math.min(BACKLOG_BATCH, count - start);
    const batch = Array.from({ length: size }, () => eventId());
    const createdAt = new Date().toISOString();
    await pool.query(
      'insert into events (id, project_id, type, data, idempotency_key, created_at) ' +
        'select id, $2, $3, $4, id, $5 from unnest($1::text[]) as id',
      [batch, projectId, EVENT_TYPE, EVENT_DATA, createdAt],
    );
    ids.push(...batch);
  }
  return ids;
}

/**
 * Commits one event (its own transaction). Returns the wall-clock time just before the INSERT was
 * sent: the commit happens between then and its answer, and a worker may deliver the event before
 * this process has read the answer, so the latency is measured from the earlier time (it includes
 * the commit itself).
 */
async function commitOne(pool, projectId, id) {
  const sentMs = wallClockMs();
  await pool.query('insert into events (id, project_id, type, data, idempotency_key, created_at) values ($1, $2, $3, $4, $1, $5)', [
    id,
    projectId,
    EVENT_TYPE,
    EVENT_DATA,
    new Date().toISOString(),
  ]);
  return sentMs;
}

// ---- Measurements -----------------------------------------------------------------------------

/**
 * Commits a backlog of events worth `deliveries` deliveries to the project's endpoints and waits
 * until the counted endpoints (the first `countedEndpoints` healthy ones; all by default) have
 * received theirs. Rate: counted deliveries from the first commit to the last arrival.
 */
export async function throughput(bench, project, deliveries, { countedEndpoints = project.endpointCount } = {}) {
  const events = Math.max(1, Math.round(deliveries / project.endpointCount));
  const counted = project.healthy.slice(0, countedEndpoints);
  const expected = events * counted.length;
  await bench.receiver.reset();
  const serverCpu = startCpuWindow(bench.service.pid);
  const receiverCpu = startCpuWindow(bench.receiver.pid);
  const databaseCpu = await databaseCpuWindow(bench.pool);
  const startedMs = wallClockMs();
  const ids = await commitBacklog(bench.pool, project.projectId, events);
  const committedMs = wallClockMs();
  const arrived = await waitForDeliveries(bench.receiver, counted, expected);
  const server = cpuSince(serverCpu);
  const receiverUse = cpuSince(receiverCpu);
  const databaseSeconds = await databaseCpu.seconds();
  const { connections } = await bench.receiver.stats();
  const idSet = new Set(ids);
  const arrivals = (await bench.receiver.arrivals()).filter(([id]) => idSet.has(id));
  const lastMs = arrivals.reduce((last, [, at]) => Math.max(last, at), startedMs);
  const seconds = (lastMs - startedMs) / 1000;
  const perSecond = perSecondCounts(arrivals, startedMs);
  const countedShare = counted.length / project.endpointCount;
  return {
    endpoints: project.endpointCount,
    counted_endpoints: counted.length,
    events,
    deliveries_expected: expected,
    deliveries_received: arrived,
    req_per_s: Math.round(arrived / seconds),
    events_per_s: Math.round(events / seconds),
    p50_ms: null,
    p99_ms: null,
    seconds: round2(seconds),
    commit_seconds: round2((committedMs - startedMs) / 1000),
    req_per_s_min: Math.round(Math.min(...perSecond) * countedShare) || 0,
    req_per_s_max: Math.round(Math.max(...perSecond) * countedShare) || 0,
    // Server CPU per delivery made, counted or not (the dead endpoint's attempts are few).
    server_cpu_us_per_req: server?.server_cpu_s == null ? null : Math.round((server.server_cpu_s * 1e6) / (arrived / countedShare)),
    // PostgreSQL backends of this database (the service's and this runner's, which commits the events).
    db_cpu_us_per_delivery: databaseSeconds === null ? null : Math.round((databaseSeconds * 1e6) / (arrived / countedShare)),
    receiver_cpu_pct: receiverUse?.server_pct ?? null,
    receiver_connections: connections,
    cpu: server,
    valid: arrived === expected,
  };
}

/**
 * `eventsPerSecond` events, each committed in its own transaction on a steady schedule, for
 * `durationSeconds`; then the latency of each from its commit to its arrival at the receiver.
 */
export async function latency(bench, project, eventsPerSecond, durationSeconds) {
  await bench.receiver.reset();
  const total = eventsPerSecond * durationSeconds;
  const committedAt = new Map();
  const serverCpu = startCpuWindow(bench.service.pid);
  const databaseCpu = await databaseCpuWindow(bench.pool);
  const startedMs = performance.now();
  const inFlight = new Set();
  let sent = 0;
  let late = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - startedMs) / 1000) * eventsPerSecond));
    if (due - sent > eventsPerSecond / 10) late += 1;
    while (sent < due) {
      const id = eventId();
      const insert = commitOne(bench.pool, project.projectId, id).then((at) => {
        committedAt.set(id, at);
        inFlight.delete(insert);
      });
      inFlight.add(insert);
      sent += 1;
    }
    await sleep(1);
  }
  await Promise.all(inFlight);
  const offeredSeconds = (performance.now() - startedMs) / 1000;
  const arrived = await waitForDeliveries(bench.receiver, project.healthy, total);
  const server = cpuSince(serverCpu);
  const databaseSeconds = await databaseCpu.seconds();
  const latencies = [];
  for (const [id, at] of await bench.receiver.arrivals()) {
    const committed = committedAt.get(id);
    if (committed !== undefined) latencies.push(at - committed);
  }
  latencies.sort((a, b) => a - b);
  return {
    endpoints: 1,
    events: total,
    offered_events_per_s: Math.round(total / offeredSeconds),
    producer_fell_behind: late > 0,
    deliveries_received: arrived,
    req_per_s: Math.round(total / offeredSeconds),
    p50_ms: round2(percentile(latencies, 0.5)),
    p99_ms: round2(percentile(latencies, 0.99)),
    max_ms: round2(latencies.at(-1) ?? Number.NaN),
    min_ms: round2(latencies[0] ?? Number.NaN),
    req_per_s_min: eventsPerSecond,
    req_per_s_max: eventsPerSecond,
    server_cpu_us_per_req: server?.server_cpu_s == null ? null : Math.round((server.server_cpu_s * 1e6) / Math.max(1, arrived)),
    db_cpu_us_per_delivery: databaseSeconds === null ? null : Math.round((databaseSeconds * 1e6) / Math.max(1, arrived)),
    cpu: server,
    valid: arrived === total && latencies.length === total,
  };
}

/**
 * CPU time of the PostgreSQL backends serving this database (Linux /proc; null elsewhere): the
 * service's connections and this runner's. Backends that appear during the window count whole.
 */
async function databaseCpuWindow(pool) {
  const backends = async () =>
    (await pool.query('select pid from pg_stat_activity where datname = current_database()')).rows.map((row) => row.pid);
  const ticks = (pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return null;
    }
  };
  const start = new Map((await backends()).map((pid) => [pid, ticks(pid)]));
  return {
    async seconds() {
      let total = 0;
      for (const pid of await backends()) {
        const now = ticks(pid);
        if (now === null) return null;
        total += now - (start.get(pid) ?? 0);
      }
      return total / CLOCK_TICKS_PER_SECOND;
    },
  };
}

/** USER_HZ: /proc counts CPU time in hundredths of a second on Linux, whatever the kernel's tick rate. */
const CLOCK_TICKS_PER_SECOND = 100;

/** Polls the receiver until the endpoints named have `expected` deliveries between them; returns the count. */
async function waitForDeliveries(receiver, names, expected) {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  let arrived = 0;
  while (Date.now() < deadline) {
    const { received } = await receiver.stats();
    arrived = names.reduce((sum, name) => sum + (received[name] ?? 0), 0);
    if (arrived >= expected) return arrived;
    await sleep(POLL_MS);
  }
  return arrived;
}

/**
 * Kills the server (API and worker) with SIGKILL while it delivers a backlog to 10 endpoints, and
 * starts it again on the same DATA_DIR: its worker has the same identity and takes back its leases
 * at start. Measures, for the deliveries that were leased at the kill, their arrival after the
 * restarted server is up. Returns the new server.
 */
export async function crashResume(bench, logLevel) {
  const project = await newProject(bench, 'crash', 10);
  await bench.receiver.reset();
  const events = 2000;
  await commitBacklog(bench.pool, project.projectId, events);
  const expected = events * project.healthy.length;
  // Killed once part of the backlog has arrived, mid-flow.
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const { received } = await bench.receiver.stats();
    if (project.healthy.reduce((sum, name) => sum + (received[name] ?? 0), 0) >= expected / 4) break;
    await sleep(5);
  }
  process.kill(bench.service.pid, 'SIGKILL');
  await bench.service.stop();
  const killedMs = wallClockMs();
  const leased = await bench.pool.query(
    'select d.event_id, d.endpoint_id, e.url from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id ' +
      "where d.project_id = $1 and d.status = 'pending' and d.lease_id is not null",
    [project.projectId],
  );
  const interrupted = new Set(leased.rows.map((row) => `${row.event_id} ${new URL(row.url).pathname.replace(/^\/hook\//, '')}`));
  const service = await startService(bench.ctx, bench.database, {
    logLevel,
    extraEnv: { NODE_ENV: 'development', WEBHOOK_ALLOW_PRIVATE: '1' },
  });
  const readyMs = wallClockMs();
  const arrived = await waitForDeliveries(bench.receiver, project.healthy, expected);
  // The receiver's arrivals are [event id, time, endpoint name]; the first arrival after the kill of
  // each interrupted (event, endpoint).
  const firstAfter = new Map();
  for (const [id, at, name] of await bench.receiver.arrivals()) {
    const key = `${id} ${name}`;
    if (at > killedMs && interrupted.has(key) && !firstAfter.has(key)) firstAfter.set(key, at);
  }
  const sinceReady = [...firstAfter.values()].map((at) => Math.max(0, at - readyMs)).sort((a, b) => a - b);
  return {
    service,
    measured: {
      endpoints: project.endpointCount,
      deliveries_expected: expected,
      deliveries_received: arrived,
      interrupted: interrupted.size,
      interrupted_arrived: firstAfter.size,
      restart_ms: Math.round(readyMs - killedMs),
      req_per_s: null,
      p50_ms: sinceReady.length === 0 ? null : Math.round(percentile(sinceReady, 0.5)),
      p99_ms: sinceReady.length === 0 ? null : Math.round(percentile(sinceReady, 0.99)),
      valid: arrived >= expected && firstAfter.size === interrupted.size && interrupted.size > 0,
    },
  };
}

// ---- Summary ----------------------------------------------------------------------------------

function summarize(ctx, runs, logLevel) {
  const baseline = median(runs.map((run) => run.baseline.req_per_s));
  const lines = [`webhooks: medians of ${runs.length} round(s) on PostgreSQL; bare POSTs to the receiver: ${fmt(baseline)} req/s`];
  const rates = [];
  for (const endpointCount of ENDPOINT_COUNTS) {
    const measured = runs.map((run) => run.throughput[endpointCount]).filter((value) => value !== undefined);
    const rate = median(measured.map((value) => value.req_per_s));
    rates.push(rate);
    const cpu = median(measured.map((value) => value.server_cpu_us_per_req));
    const databaseCpu = median(measured.map((value) => value.db_cpu_us_per_delivery));
    const summary = {
      bench: `webhooks_${endpointCount}_endpoint${endpointCount === 1 ? '' : 's'}_median`,
      dialect: 'postgres',
      log_level: logLevel,
      rounds: measured.length,
      req_per_s: rate,
      events_per_s: median(measured.map((value) => value.events_per_s)),
      p50_ms: null,
      p99_ms: null,
      baseline_post_per_s: baseline,
      share_of_baseline: baseline ? Math.round((rate / baseline) * 1000) / 1000 : null,
      server_cpu_us_per_delivery: cpu,
      db_cpu_us_per_delivery: databaseCpu,
      target_deliveries_per_s: TARGET_DELIVERIES_PER_S,
      target_met: rate !== null && rate >= TARGET_DELIVERIES_PER_S,
      target_share_of_baseline: TARGET_SHARE_OF_BASELINE,
      share_target_met: shareOf(rate, baseline) >= TARGET_SHARE_OF_BASELINE,
      valid: measured.every((value) => value.valid),
    };
    ctx.record(summary);
    lines.push(
      `  ${String(endpointCount).padStart(3)} endpoint(s): ${fmt(rate)} deliveries/s (${fmt(summary.events_per_s)} events/s), ` +
        `${pct(summary.share_of_baseline)} of bare POSTs (target >= ${pct(TARGET_SHARE_OF_BASELINE)}: ${summary.share_target_met ? 'MET' : 'NOT MET'}), CPU per delivery: server ${cpu} us, PostgreSQL ${databaseCpu} us; target >= ${fmt(TARGET_DELIVERIES_PER_S)}/s: ` +
        `${summary.target_met ? 'MET' : 'NOT MET'}`,
    );
  }
  const latencies = runs.map((run) => run.latency).filter((value) => value !== undefined);
  const p50 = median(latencies.map((value) => value.p50_ms));
  const p99 = median(latencies.map((value) => value.p99_ms));
  ctx.record({
    bench: `webhooks_latency_${LATENCY_EVENTS_PER_S}_per_s_median`,
    dialect: 'postgres',
    log_level: logLevel,
    rounds: latencies.length,
    req_per_s: median(latencies.map((value) => value.offered_events_per_s)),
    p50_ms: p50,
    p99_ms: p99,
    server_cpu_us_per_delivery: median(latencies.map((value) => value.server_cpu_us_per_req)),
    target_p99_ms: TARGET_P99_MS,
    target_met: p99 !== null && p99 < TARGET_P99_MS,
    valid: latencies.every((value) => value.valid),
  });
  lines.push(
    `  commit -> delivery at ${fmt(LATENCY_EVENTS_PER_S)} events/s: p50 ${p50} ms, p99 ${p99} ms; target p99 < ${TARGET_P99_MS} ms: ` +
      `${p99 !== null && p99 < TARGET_P99_MS ? 'MET' : 'NOT MET'}`,
  );
  const costs = runs
    .map((run) => run.dead)
    .filter((value) => value !== undefined)
    .map(({ healthy, withDead }) => 1 - withDead.req_per_s / healthy.req_per_s);
  const cost = median(costs);
  ctx.record({
    bench: 'webhooks_dead_endpoint_cost_median',
    dialect: 'postgres',
    log_level: logLevel,
    rounds: costs.length,
    req_per_s: median(runs.map((run) => run.dead?.withDead.req_per_s)),
    p50_ms: null,
    p99_ms: null,
    healthy_req_per_s: median(runs.map((run) => run.dead?.healthy.req_per_s)),
    cost: cost === null ? null : round2(cost),
    costs: costs.map(round2),
    target_cost_max: TARGET_DEAD_COST,
    target_met: cost !== null && cost < TARGET_DEAD_COST,
    valid: runs.every((run) => run.dead === undefined || (run.dead.healthy.valid && run.dead.withDead.valid)),
  });
  lines.push(
    `  one dead endpoint among ten: the nine others lose ${pct(cost)} of their deliveries/s (rounds: ${costs.map(pct).join(', ')}); ` +
      `target < ${pct(TARGET_DEAD_COST)}: ${cost !== null && cost < TARGET_DEAD_COST ? 'MET' : 'NOT MET'}`,
  );
  const crashes = runs.map((run) => run.crash).filter((value) => value !== undefined);
  const resumeP99 = median(crashes.map((value) => value.p99_ms));
  ctx.record({
    bench: 'webhooks_crash_resume_median',
    dialect: 'postgres',
    log_level: logLevel,
    rounds: crashes.length,
    req_per_s: null,
    p50_ms: median(crashes.map((value) => value.p50_ms)),
    p99_ms: resumeP99,
    interrupted: median(crashes.map((value) => value.interrupted)),
    restart_ms: median(crashes.map((value) => value.restart_ms)),
    target_p99_ms: TARGET_RESUME_P99_MS,
    target_met: resumeP99 !== null && resumeP99 < TARGET_RESUME_P99_MS,
    valid: crashes.every((value) => value.valid),
  });
  lines.push(
    `  after SIGKILL and restart: the ${fmt(median(crashes.map((value) => value.interrupted)))} interrupted deliveries arrive ` +
      `p50 ${median(crashes.map((value) => value.p50_ms))} ms, p99 ${resumeP99} ms after the server is up again ` +
      `(restart took ${fmt(median(crashes.map((value) => value.restart_ms)))} ms); target p99 < ${fmt(TARGET_RESUME_P99_MS)} ms: ` +
      `${resumeP99 !== null && resumeP99 < TARGET_RESUME_P99_MS ? 'MET' : 'NOT MET'}`,
  );
  for (const line of lines) ctx.note(line);
}

function shareOf(rate, baseline) {
  return rate === null || !baseline ? 0 : rate / baseline;
}

// ---- Small helpers ----------------------------------------------------------------------------

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** An id shaped like the service's (`evt_` and 22 base62 characters). */
function eventId() {
  const bytes = randomBytes(22);
  let id = 'evt_';
  for (const byte of bytes) id += BASE62[byte % 62];
  return id;
}

function envelope(id, createdAt) {
  return `{"id":"${id}","type":"${EVENT_TYPE}","created_at":"${createdAt}","data":${EVENT_DATA},"idempotency_key":"${id}"}`;
}

function wallClockMs() {
  return performance.timeOrigin + performance.now();
}

function perSecondCounts(arrivals, startedMs) {
  const buckets = [];
  for (const [, at] of arrivals) {
    const second = Math.floor((at - startedMs) / 1000);
    buckets[second] = (buckets[second] ?? 0) + 1;
  }
  // The last second is partial: left out unless it is the only one.
  const full = buckets.slice(0, Math.max(1, buckets.length - 1)).map((value) => value ?? 0);
  return full.length > 0 ? full : [0];
}

function percentile(sorted, fraction) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
}

function round2(value) {
  return Number.isFinite(value) ? Math.round(value * 100) / 100 : null;
}

function fmt(value) {
  return value === null || value === undefined ? '?' : Math.round(value).toLocaleString('en-US');
}

function pct(value) {
  return value === null || value === undefined ? '?' : `${(value * 100).toFixed(1)} %`;
}

/** One POST of a JSON body on the loopback interface: `{ status, body }`. */
function httpPost(url, payload, headers = {}) {
  assertLoopback(url);
  const body = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
        timeout: 10_000,
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: chunks.join('') }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`POST ${url} timed out`)));
    request.on('error', reject);
    request.end(body);
  });
}
