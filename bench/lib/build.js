import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const BUILD_TIMEOUT_MS = 5 * 60_000;

/**
 * Brings packages/server/dist up to date with `npm run build --silent` (incremental, so quick
 * when nothing changed). When the build fails but an older dist exists, the run goes on with a
 * warning; with BENCH_SKIP_BUILD=1 dist is only checked for.
 */
export function ensureBuild(root, options) {
  const entry = join(root, 'packages/server/dist/cli.js');
  if (options.skipBuild) {
    if (!existsSync(entry)) throw new Error(`BENCH_SKIP_BUILD=1 but ${entry} is missing; run npm run build`);
    return 'skipped (BENCH_SKIP_BUILD=1)';
  }
  const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS });
  if (result.error === undefined && result.status === 0) return 'npm run build: up to date';
  const output = `${result.error?.message ?? ''}${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
  if (!existsSync(entry)) throw new Error(`npm run build failed and there is no dist to fall back on:\n${output}`);
  console.error(`bench: WARNING: npm run build failed; measuring the existing (possibly stale) dist:\n${output}`);
  return 'npm run build FAILED; existing dist used';
}
