import { availableParallelism, cpus } from 'node:os';

/** Benchmark settings from the environment, validated once. Every number has a bound. */
export function loadOptions(env = process.env) {
  return Object.freeze({
    connections: integer(env, 'BENCH_CONNECTIONS', 50, 1, 1000),
    durationSeconds: integer(env, 'BENCH_DURATION_SECONDS', 10, 1, 600),
    warmupSeconds: integer(env, 'BENCH_WARMUP_SECONDS', 2, 0, 60),
    /** The share of bare Fastify's throughput the authenticated route must keep (its target). */
    targetRatio: 0.6,
    /** Admin connection to PostgreSQL; loopback only. Set to "off" to skip the PostgreSQL runs. */
    postgresAdminUrl: env['BENCH_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    /** Log levels the service runs at; the first is the headline. */
    logLevels: list(env, 'BENCH_LOG_LEVELS', ['warn', 'info']),
    /** Extra node flags for the service process, e.g. "--cpu-prof --cpu-prof-dir=bench/results/profiles". */
    serverNodeFlags: list(env, 'BENCH_SERVER_NODE_FLAGS', [], /\s+/),
    skipBuild: env['BENCH_SKIP_BUILD'] === '1',
    cpuCount: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
  });
}

function integer(env, name, fallback, min, max) {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new Error(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new Error(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function list(env, name, fallback, separator = ',') {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw
    .split(separator)
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** BENCH_SQLITE_SYNCHRONOUS: the SQLite servers' SQLITE_SYNCHRONOUS, "full" (the service's default) or "normal". */
export function sqliteSynchronousSetting(env = process.env) {
  const value = env['BENCH_SQLITE_SYNCHRONOUS'] ?? 'full';
  if (value !== 'full' && value !== 'normal') throw new Error('BENCH_SQLITE_SYNCHRONOUS must be full or normal');
  return value;
}
