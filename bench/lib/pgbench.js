import { Buffer } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cpuSince, startCpuWindow } from './cpu.js';
import { postgresCpuProbe } from './pg-cpu.js';
import { createBenchDatabase } from './postgres.js';

/** TPC-B-like scale factor: 10 branches, 100 tellers, 1,000,000 accounts (about 150 MB). */
const PGBENCH_SCALE = 10;
const PGBENCH_THREADS = 2;
const INIT_TIMEOUT_MS = 5 * 60_000;
/** Extra time allowed past the planned duration before pgbench is stopped from outside. */
const OVERRUN_MS = 30_000;

/** Undefined when `pgbench` can be run, else why not. */
export function pgbenchUnavailable() {
  const result = spawnSync('pgbench', ['--version'], { encoding: 'utf8', timeout: 5000 });
  if (result.error !== undefined) return `pgbench not found (${result.error.message}); apt-get install -y postgresql-contrib`;
  if (result.status !== 0) return `pgbench --version exited with ${result.status}: ${result.stderr}`;
  return undefined;
}

/**
 * pgbench's built-in TPC-B-like script on a scratch database of this PostgreSQL (created, then
 * dropped): `pgbench -i -s 10`, then a warm-up and the measured run with
 * `-c <connections> -j 2 -T <seconds> -M prepared`. Every transaction is BEGIN, three UPDATEs,
 * a SELECT, an INSERT and COMMIT: seven round trips and one commit. p50/p99 come from the
 * per-transaction log (`-l`).
 */
export async function measurePgbench(ctx) {
  const { options } = ctx;
  const database = await createBenchDatabase(options.postgresAdminUrl);
  const logDir = mkdtempSync(join(ctx.workDir, 'pgbench-'));
  try {
    await pgbench(['-i', '-s', String(PGBENCH_SCALE), '-q', database.url], INIT_TIMEOUT_MS);
    const common = ['-c', String(options.connections), '-j', String(PGBENCH_THREADS), '-M', 'prepared'];
    if (options.warmupSeconds > 0) {
      await pgbench([...common, '-T', String(options.warmupSeconds), database.url], options.warmupSeconds * 1000 + OVERRUN_MS);
    }
    const window = startCpuWindow(undefined);
    const stopProbe = postgresCpuProbe(database.name).start();
    const output = await pgbench(
      [...common, '-T', String(options.durationSeconds), '-P', '1', '-l', '--log-prefix', join(logDir, 'tx'), database.url],
      options.durationSeconds * 1000 + OVERRUN_MS,
    );
    const cpu = cpuSince(window);
    const postgresSeconds = stopProbe();
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(output);
    if (tps === null) throw new Error(`pgbench printed no tps:\n${output}`);
    const failed = /number of failed transactions: (\d+)/.exec(output);
    const perSecond = [...output.matchAll(/progress: [\d.]+ s, ([\d.]+) tps/g)].map((match) => Math.round(Number(match[1])));
    const latenciesUs = readLatencies(logDir);
    return {
      req_per_s: Math.round(Number(tps[1])),
      p50_ms: percentileMs(latenciesUs, 0.5),
      p99_ms: percentileMs(latenciesUs, 0.99),
      req_per_s_min: perSecond.length === 0 ? null : Math.min(...perSecond),
      req_per_s_max: perSecond.length === 0 ? null : Math.max(...perSecond),
      requests_total: latenciesUs.length,
      failed_transactions: failed === null ? 0 : Number(failed[1]),
      scale: PGBENCH_SCALE,
      threads: PGBENCH_THREADS,
      server_cpu_us_per_req: null,
      postgres_cpu_us_per_req:
        postgresSeconds === null || latenciesUs.length === 0 ? null : Math.round((postgresSeconds * 1e6) / latenciesUs.length),
      cpu,
      valid: latenciesUs.length > 0 && (failed === null || Number(failed[1]) === 0),
    };
  } finally {
    rmSync(logDir, { recursive: true, force: true });
    await database.drop();
  }
}

function pgbench(args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn('pgbench', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const output = Buffer.concat(chunks).toString('utf8');
      if (code === 0) resolve(output);
      else reject(new Error(`pgbench ${args.slice(0, -1).join(' ')} exited with ${code ?? signal}:\n${output.slice(-2000)}`));
    });
  });
}

/** Per-transaction latencies in µs: the third field of each line of every `tx.<pid>[.<thread>]` file. */
function readLatencies(logDir) {
  const latencies = [];
  for (const file of readdirSync(logDir)) {
    for (const line of readFileSync(join(logDir, file), 'utf8').split('\n')) {
      const fields = line.split(' ');
      if (fields.length >= 3) latencies.push(Number(fields[2]));
    }
  }
  return latencies.sort((a, b) => a - b);
}

function percentileMs(sortedUs, fraction) {
  if (sortedUs.length === 0) return null;
  const index = Math.min(sortedUs.length - 1, Math.ceil(fraction * sortedUs.length) - 1);
  return Math.round((sortedUs[index] ?? 0) / 100) / 10;
}
