import autocannon from 'autocannon';
import { cpuSince, startCpuWindow } from './cpu.js';
import { assertLoopback } from './processes.js';

/** Extra time allowed past the planned duration before a load run is stopped from outside. */
const OVERRUN_MS = 30_000;

/**
 * A warm-up (results discarded) and then the measurement, both with autocannon in this process.
 * Throughput is autocannon's mean of per-second request counts; latencies are in milliseconds.
 * With `serverPid`, also where the CPU went during the measurement (see cpu.js).
 *
 * `request` is passed to autocannon as it is, for requests other than a plain GET: `method`,
 * `body`, and `requests` (e.g. `[{ setupRequest }]` to give every request its own path, body or
 * Idempotency-Key). `probes` measure other processes' CPU over the measured window (e.g.
 * pg-cpu.js): each `{ name, start() }`, where `start` returns a function giving the seconds used.
 */
export async function measure({ url, headers = {}, request = {}, probes = [], options, serverPid }) {
  assertLoopback(url);
  const run = (durationSeconds) => load({ url, headers, request, connections: options.connections, durationSeconds });
  if (options.warmupSeconds > 0) await run(options.warmupSeconds);
  const window = startCpuWindow(serverPid);
  const stops = probes.map((probe) => ({ name: probe.name, stop: probe.start() }));
  const result = await run(options.durationSeconds);
  const cpu = cpuSince(window);
  const probed = stops.map(({ name, stop }) => [name, stop()]);
  const non2xx = result.non2xx;
  return {
    req_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    avg_ms: Math.round(result.latency.average * 100) / 100,
    max_ms: result.latency.max,
    req_per_s_min: result.requests.min,
    req_per_s_max: result.requests.max,
    requests_total: result.requests.total,
    non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    status_codes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count])),
    // Server CPU time per answered request: unlike req/s, barely moved by other load on the machine.
    server_cpu_us_per_req:
      cpu?.server_cpu_s === null || cpu === null || result.requests.total === 0
        ? null
        : Math.round((cpu.server_cpu_s * 1e6) / result.requests.total),
    // The server's main thread alone (the one JavaScript runs on; argon2 runs on a pool of its own).
    server_main_thread_cpu_us_per_req:
      cpu === null || cpu.server_main_thread_cpu_s === null || result.requests.total === 0
        ? null
        : Math.round((cpu.server_main_thread_cpu_s * 1e6) / result.requests.total),
    ...Object.fromEntries(
      probed.map(([name, seconds]) => [
        `${name}_cpu_us_per_req`,
        seconds === null || result.requests.total === 0 ? null : Math.round((seconds * 1e6) / result.requests.total),
      ]),
    ),
    cpu,
    valid: non2xx === 0 && result.errors === 0 && result.requests.total > 0,
  };
}

async function load({ url, headers, request, connections, durationSeconds }) {
  const instance = autocannon({ ...request, url, headers, connections, duration: durationSeconds, pipelining: 1, timeout: 10 });
  const guard = setTimeout(() => instance.stop(), durationSeconds * 1000 + OVERRUN_MS);
  try {
    return await instance;
  } finally {
    clearTimeout(guard);
  }
}
