// npm run bench [-- scenario ...]: runs the named scenarios (file names under bench/scenarios,
// with or without .js, or their `name`), all of them by default. Settings come from the
// environment (bench/lib/options.js): BENCH_CONNECTIONS, BENCH_DURATION_SECONDS,
// BENCH_WARMUP_SECONDS, BENCH_LOG_LEVELS, BENCH_POSTGRES_URL (or "off"), BENCH_SERVER_NODE_FLAGS,
// BENCH_SKIP_BUILD. Results: stdout and bench/results/latest.json. Exits 0 whether targets are
// met or not; 1 only when something crashed or a measurement saw errors.
//
// A scenario file exports `scenario = { name, description, run(ctx) }`; `ctx` gives it the
// options, the baseline (measured once per run, on first use), `record(result)` and `note(text)`.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { measureBaseline } from './lib/baseline.js';
import { ensureBuild } from './lib/build.js';
import { defer, runAllCleanups } from './lib/cleanup.js';
import { loadOptions } from './lib/options.js';
import { printHeader, printResult, say, writeResults } from './lib/report.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const resultsFile = join(benchDir, 'results/latest.json');

async function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    say('usage: npm run bench [-- scenario ...]   (default: all; --list to list them)');
    return 0;
  }
  const scenarios = await loadScenarios();
  if (argv.includes('--list')) {
    for (const { file, scenario } of scenarios) say(`${file.padEnd(20)} ${scenario.name.padEnd(16)} ${scenario.description}`);
    return 0;
  }
  const selected = select(scenarios, argv);
  const options = loadOptions();

  process.once('SIGINT', () => void interrupted('SIGINT'));
  process.once('SIGTERM', () => void interrupted('SIGTERM'));

  const startedAt = new Date();
  const facts = {
    node: process.version,
    fastify: packageVersion('fastify'),
    autocannon: packageVersion('autocannon'),
    cpuCount: options.cpuCount,
    cpuModel: options.cpuModel,
    connections: options.connections,
    durationSeconds: options.durationSeconds,
    warmupSeconds: options.warmupSeconds,
    build: ensureBuild(root, options),
  };
  printHeader(facts);
  say(
    `The service runs with NODE_ENV=production, HOST=127.0.0.1, RATE_LIMIT_KEY_PER_SECOND=0, RATE_LIMIT_IP_PER_SECOND=0, ` +
      `LOG_LEVEL in turn ${options.logLevels.join(', ')} (logs go to a file), each run on a fresh server process.`,
  );
  say();

  const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  defer(`remove ${workDir}`, () => rmSync(workDir, { recursive: true, force: true }));
  const results = [];
  const notes = [];
  const failures = [];
  let baseline;
  const ctx = {
    options,
    root,
    benchDir,
    workDir,
    svcBin: join(root, 'packages/server/bin/svc.js'),
    baseline() {
      baseline ??= measureBaseline(ctx).then((measured) => {
        ctx.record({ bench: 'baseline', dialect: null, log_level: null, ...measured });
        return measured;
      });
      return baseline;
    },
    /** The measurement with the baseline's throughput, the ratio and PASS/FAIL against the target. */
    compare(measured, base) {
      const { req_per_s, p50_ms, p99_ms, ...rest } = measured;
      const ratio = base.req_per_s > 0 ? Number((req_per_s / base.req_per_s).toFixed(4)) : 0;
      return {
        req_per_s,
        p50_ms,
        p99_ms,
        baseline_req_per_s: base.req_per_s,
        ratio,
        target_ratio: options.targetRatio,
        verdict: measured.valid && ratio >= options.targetRatio ? 'PASS' : 'FAIL',
        // The ratio of server CPU per request: what the throughput ratio would be with the server
        // alone on a core, and much less disturbed by other load on the machine than `ratio`.
        cpu_ratio:
          base.server_cpu_us_per_req > 0 && measured.server_cpu_us_per_req > 0
            ? Number((base.server_cpu_us_per_req / measured.server_cpu_us_per_req).toFixed(4))
            : null,
        ...rest,
      };
    },
    record(result) {
      const full = { connections: options.connections, duration_s: options.durationSeconds, warmup_s: options.warmupSeconds, ...result };
      results.push(full);
      printResult(full);
    },
    note(text) {
      notes.push(text);
      say(text);
    },
  };

  for (const { scenario } of selected) {
    try {
      await scenario.run(ctx);
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      failures.push({ scenario: scenario.name, error: message });
      console.error(`bench: scenario ${scenario.name} crashed: ${message}`);
    }
  }
  await runAllCleanups();

  const invalid = results.filter((result) => !result.valid);
  writeResults(resultsFile, {
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    environment: facts,
    note: `load generator and server share ${options.cpuCount} core(s)`,
    scenarios: selected.map(({ scenario }) => scenario.name),
    results,
    notes,
    failures,
  });
  say();
  const judged = results.filter((result) => result.verdict !== undefined);
  for (const result of judged) {
    const measured =
      result.ratio !== undefined
        ? `${(result.ratio * 100).toFixed(1)} % of bare Fastify`
        : result.ratio_to_floor !== undefined
          ? `${result.ratio_to_floor} × its floor (target ${result.target_ratio})`
          : result.main_thread_target_us !== undefined
            ? `main thread ${result.server_main_thread_cpu_us_per_req} µs per request, its floor ${result.floor_main_thread_cpu_us_per_req} µs (target < ${result.main_thread_target_us})`
            : result.p99_ms !== undefined
              ? `${result.route ?? ''} p99 ${result.p99_ms} ms`
              : `${result.validate_ratio_to_peer ?? ''}`;
    say(`${result.verdict}  ${result.bench} [${result.dialect}, LOG_LEVEL=${result.log_level}]: ${measured}`);
  }
  say(`results written to ${resultsFile}`);
  if (failures.length > 0 || invalid.length > 0) {
    console.error(`bench: ${failures.length} scenario(s) crashed, ${invalid.length} measurement(s) saw errors or non-2xx answers`);
    return 1;
  }
  return 0;
}

async function loadScenarios() {
  const directory = join(benchDir, 'scenarios');
  const files = readdirSync(directory)
    .filter((file) => file.endsWith('.js'))
    .sort();
  const loaded = [];
  for (const file of files) {
    const module = await import(pathToFileURL(join(directory, file)).href);
    if (module.scenario === undefined || typeof module.scenario.run !== 'function') {
      throw new Error(`bench/scenarios/${file} does not export scenario = { name, description, run }`);
    }
    loaded.push({ file: file.slice(0, -'.js'.length), scenario: module.scenario });
  }
  return loaded;
}

function select(scenarios, argv) {
  const wanted = argv.filter((arg) => !arg.startsWith('-'));
  if (wanted.length === 0) return scenarios;
  // A scenario with `partOf: 'x'` runs after scenario x when x is named (`sessions` runs `session-jwt` too).
  return wanted.flatMap((name) => {
    const bare = name.replace(/\.js$/, '');
    const found = scenarios.find(({ file, scenario }) => file === bare || scenario.name === bare);
    if (found === undefined) throw new UsageError(`no scenario "${name}"; there are: ${scenarios.map(({ file }) => file).join(', ')}`);
    return [found, ...scenarios.filter(({ scenario }) => scenario.partOf !== undefined && scenario.partOf === found.scenario.name)];
  });
}

class UsageError extends Error {}

function packageVersion(name) {
  try {
    return JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

async function interrupted(signal) {
  console.error(`bench: ${signal}: stopping servers and removing temp data`);
  await runAllCleanups();
  process.exit(130);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  const usage = error instanceof UsageError;
  console.error(`bench: ${error instanceof Error ? ((usage ? undefined : error.stack) ?? error.message) : String(error)}`);
  await runAllCleanups();
  process.exitCode = 1;
}
