// Checks the module boundaries of packages/server/src (docs/architecture.md, "Boundaries"): the rules
// of dependency-cruiser.config.js on resolved paths, then the graph between modules for cycles.
// Part of `npm run lint`; exits 1 and names each broken rule.
//
//   node scripts/check-boundaries.js            the whole of packages/server/src
//   node scripts/check-boundaries.js FILE...    only the named files and their direct imports
import { fileURLToPath } from 'node:url';
import { cruise, format } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { MODULE_CYCLE_ALLOWANCES } from '../dependency-cruiser.config.js';

const CONFIG_FILE = './dependency-cruiser.config.js';
const MODULE_PATH = /^packages\/server\/src\/modules\/([^/]+)\//;
/** Tests and test helpers import across modules freely; they make no module depend on another. */
const TEST_CODE = /\.(test|testing|fixtures)\.ts$/;

process.chdir(fileURLToPath(new URL('..', import.meta.url)));
const files = process.argv.slice(2);
const options = await extractDepcruiseOptions(CONFIG_FILE);
if (files.length > 0) {
  // Named files only: their imports are resolved and checked, but not cruised in turn.
  options.doNotFollow = { path: '.' };
}
const { output: result } = await cruise(files.length > 0 ? files : ['packages/server/src'], options);
if (typeof result === 'string') throw new Error('dependency-cruiser returned text where a cruise result was expected');

let failed = false;
const report = await format(result, { outputType: 'err' });
if (result.summary.error > 0) {
  failed = true;
  process.stdout.write(report.output);
}

/** The modules each module imports, from the files that are not tests. */
const edges = new Map();
for (const module of result.modules) {
  const from = MODULE_PATH.exec(module.source)?.[1];
  if (from === undefined || TEST_CODE.test(module.source)) continue;
  for (const dependency of module.dependencies) {
    const to = MODULE_PATH.exec(dependency.resolved)?.[1];
    if (to === undefined || to === from) continue;
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from).add(to);
  }
}

const allowed = new Set(MODULE_CYCLE_ALLOWANCES.map(({ from, to }) => `${from}>${to}`));
for (const { from, to } of MODULE_CYCLE_ALLOWANCES) {
  // An allowance stays only while its edge exists and leads back to where it starts.
  if (!(edges.get(from)?.has(to) ?? false) || findPath(to, from, new Set()) === undefined) {
    if (files.length > 0) continue;
    failed = true;
    console.log(`error module-cycle-allowance: ${from} → ${to} no longer closes a cycle; remove it from ${CONFIG_FILE}`);
  }
}
const cycles = new Set();
for (const [from, tos] of edges) {
  for (const to of tos) {
    if (allowed.has(`${from}>${to}`)) continue;
    const back = findPath(to, from, allowed);
    if (back === undefined) continue;
    // The same cycle is found from each of its edges: name it once, from its first module by name.
    const ring = [from, ...back.slice(0, -1)];
    const first = ring.indexOf([...ring].sort()[0]);
    const rotated = [...ring.slice(first), ...ring.slice(0, first)];
    cycles.add([...rotated, rotated[0]].join(' → '));
  }
}
for (const cycle of cycles) {
  failed = true;
  console.log(`error module-cycle: ${cycle}`);
}

if (failed) process.exit(1);
console.log(`boundaries: ${result.summary.totalCruised} files, ${result.summary.totalDependenciesCruised} imports, no breach`);

/**
 * A path of modules from `start` to `goal` that uses no allowed edge, as [start's successor … goal]
 * prefixed by `start`, or undefined.
 * @param {string} start
 * @param {string} goal
 * @param {Set<string>} skipped edges `from>to` not to follow
 * @returns {string[] | undefined}
 */
function findPath(start, goal, skipped) {
  const seen = new Set([start]);
  const queue = [[start]];
  while (queue.length > 0) {
    const path = queue.shift();
    const last = path[path.length - 1];
    if (last === goal) return path;
    for (const next of edges.get(last) ?? []) {
      if (seen.has(next) || skipped.has(`${last}>${next}`)) continue;
      seen.add(next);
      queue.push([...path, next]);
    }
  }
  return undefined;
}
