import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Output: human-readable lines, and for every measurement one JSON object on a line of its own
 * (the only stdout lines that start with "{"), so `npm run bench | grep '^{'` gives the data.
 */
export function say(line = '') {
  process.stdout.write(`${line}\n`);
}

export function printHeader(facts) {
  say('== svc benchmarks ==');
  say(`node ${facts.node}, fastify ${facts.fastify}, autocannon ${facts.autocannon}; ${facts.cpuCount} CPU(s): ${facts.cpuModel}`);
  say(
    `load: autocannon in the runner process, ${facts.connections} connections, ${facts.warmupSeconds} s warm-up + ` +
      `${facts.durationSeconds} s measured per scenario, 127.0.0.1 only`,
  );
  say(
    `NOTE: the load generator and the server share this machine's ${facts.cpuCount} core(s); absolute numbers are ` +
      'lower than on a dedicated host and the ratio is the number to compare.',
  );
  say(`build: ${facts.build}`);
  say();
}

/** Above this much CPU (percent of one core) used by other processes, a measurement is flagged noisy. */
const BUSY_MACHINE_PCT = 20;

/** One measurement: a human line, then the JSON line. */
export function printResult(result) {
  const what =
    result.bench === 'baseline' ? 'bare Fastify GET /baseline' : `${result.bench} [${result.dialect}, LOG_LEVEL=${result.log_level}]`;
  // A result that is not a load measurement (an in-process loop, a ratio) says itself what it measured.
  if (typeof result.summary === 'string') {
    say(`${what.padEnd(42)} ${result.summary}`);
    return;
  }
  let line = `${what.padEnd(42)} ${formatInt(result.req_per_s).padStart(8)} req/s  p50 ${result.p50_ms} ms  p99 ${result.p99_ms} ms`;
  if (result.ratio !== undefined) {
    line += `  = ${(result.ratio * 100).toFixed(1)} % of baseline (target >= ${result.target_ratio * 100} %): ${result.verdict}`;
  }
  if (!result.valid) {
    line += `  INVALID: ${result.non2xx} non-2xx, ${result.errors} errors (${JSON.stringify(result.status_codes)})`;
  }
  say(line);
  const cpu = result.cpu;
  if (cpu !== null && cpu !== undefined) {
    say(
      `    CPU, % of one core: server ${cpu.server_pct ?? '?'}, load generator ${cpu.loadgen_pct}, rest of machine ${cpu.rest_pct ?? '?'}` +
        `${result.dialect === 'postgres' ? ' (includes PostgreSQL)' : ''}; req/s per second ${formatInt(result.req_per_s_min)}..${formatInt(result.req_per_s_max)}`,
    );
    if (result.server_cpu_us_per_req !== null) {
      say(
        `    server CPU per request: ${result.server_cpu_us_per_req} us` +
          (result.cpu_ratio === null || result.cpu_ratio === undefined
            ? ''
            : `; bare Fastify's us per request / this = ${(result.cpu_ratio * 100).toFixed(1)} % (the throughput ratio to expect with a core to spare for the server)`),
      );
    }
    if (result.postgres_cpu_us_per_req !== undefined && result.postgres_cpu_us_per_req !== null) {
      say(`    PostgreSQL backends' CPU per request: ${result.postgres_cpu_us_per_req} us`);
    }
    if (cpu.rest_pct !== null && cpu.rest_pct > BUSY_MACHINE_PCT && result.dialect !== 'postgres') {
      say(`    WARNING: other processes (or kernel work) used ${cpu.rest_pct} % of a core during this measurement; treat req/s as noisy.`);
    }
  }
  say(JSON.stringify(result));
}

export function writeResults(file, payload) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(payload, null, 2)}\n`);
}

function formatInt(value) {
  return Math.round(value).toLocaleString('en-US');
}
