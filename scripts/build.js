// Builds what the service runs and serves: the server's TypeScript (packages/server/dist), the SDK
// (packages/sdk/dist) and the dashboard (packages/dashboard/dist).
//
//   node scripts/build.js              every step (`npm run build`, and `prepare` after npm install)
//   node scripts/build.js --if-changed only the steps whose sources changed (`npm start`)
//
// A step's sources are fingerprinted (the SHA-256 of every input file's path and content) into
// node_modules/.cache/svc-build.json after the step succeeds. With --if-changed a step runs when
// its fingerprint differs from the one recorded, or when its output is missing: a second
// `npm start` answers in about a second instead of waiting some 10 s for three builds. Content,
// not modification times, so that a checkout or a copy that keeps old times still rebuilds.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const stampFile = join(root, 'node_modules', '.cache', 'svc-build.json');
// npm sets npm_execpath to its own CLI when it runs a script; fall back to npm on the PATH.
const npm = process.env['npm_execpath'] ? [process.execPath, process.env['npm_execpath']] : ['npm'];

// Inputs of every step: dependency versions (the compilers included) and the shared compiler options.
const COMMON_INPUTS = ['package.json', 'package-lock.json', 'tsconfig.base.json'];
// Directories whose files are never inputs: dependencies, outputs, the dashboard's builds in progress.
const SKIPPED_DIRECTORIES = /^(node_modules|dist|dist-next-.*|dist-old-.*)$/;

const STEPS = [
  {
    name: 'server',
    inputs: ['packages/server/src', 'packages/server/package.json', 'packages/server/tsconfig.build.json'],
    // Tests are not compiled (tsconfig.build.json excludes them), so editing one needs no build.
    isInput: (file) => !file.endsWith('.test.ts') && !file.startsWith(`packages/server/src/test/`),
    outputs: ['packages/server/dist/main.js', 'packages/server/dist/cli.js'],
    run: () => execFileSync(process.execPath, [tsc, '-b', 'packages/server/tsconfig.build.json'], { cwd: root, stdio: 'inherit' }),
  },
  {
    name: 'sdk',
    inputs: [
      'packages/sdk/src',
      'packages/sdk/scripts',
      'packages/sdk/package.json',
      'packages/sdk/tsconfig.build.json',
      'packages/sdk/tsconfig.build.cjs.json',
    ],
    isInput: () => true,
    outputs: ['packages/sdk/dist/esm/index.js', 'packages/sdk/dist/cjs/index.js'],
    run: () => execFileSync(process.execPath, ['packages/sdk/scripts/build.js'], { cwd: root, stdio: 'inherit' }),
  },
  {
    name: 'dashboard',
    inputs: [
      'packages/dashboard/src',
      'packages/dashboard/scripts',
      'packages/dashboard/index.html',
      'packages/dashboard/package.json',
      'packages/dashboard/tsconfig.json',
      'packages/dashboard/vite.config.ts',
      // The page calls the service through the SDK, which Vite bundles from its source.
      'packages/sdk/src',
    ],
    isInput: (file) => !file.endsWith('.test.ts'),
    outputs: ['packages/dashboard/dist/index.html'],
    // The dashboard's own build script (a Vite build, then the bundle size budget).
    run: () => execFileSync(npm[0], [...npm.slice(1), 'run', 'build', '--silent', '-w', '@svc/dashboard'], { cwd: root, stdio: 'inherit' }),
  },
];

/** Repository-relative paths (with /) of the files under `path`, a file or a directory. */
function filesUnder(path) {
  const absolute = join(root, path);
  if (!existsSync(absolute)) return [];
  if (!statSync(absolute).isDirectory()) return [path];
  const files = [];
  for (const entry of readdirSync(absolute, { withFileTypes: true })) {
    if (entry.isDirectory() && SKIPPED_DIRECTORIES.test(entry.name)) continue;
    const child = `${path}/${entry.name}`;
    if (entry.isDirectory()) files.push(...filesUnder(child));
    else if (entry.isFile()) files.push(child);
  }
  return files;
}

function fingerprint(step) {
  const files = [...COMMON_INPUTS, ...step.inputs].flatMap(filesUnder).filter(step.isInput).sort();
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

function readStamps() {
  try {
    const stamps = JSON.parse(readFileSync(stampFile, 'utf8'));
    return typeof stamps === 'object' && stamps !== null ? stamps : {};
  } catch {
    return {};
  }
}

/** Replaces the file in one rename, so that a build running beside this one never reads half of it. */
function writeStamps(stamps) {
  mkdirSync(dirname(stampFile), { recursive: true });
  const next = `${stampFile}.${process.pid}`;
  writeFileSync(next, `${JSON.stringify(stamps, null, 2)}\n`);
  renameSync(next, stampFile);
}

const ifChanged = process.argv.includes('--if-changed');
const unknown = process.argv.slice(2).filter((argument) => argument !== '--if-changed');
if (unknown.length > 0) {
  console.error(`build: unknown argument ${unknown.join(' ')}; the only option is --if-changed`);
  process.exit(2);
}

const upToDate = [];
for (const step of STEPS) {
  const before = fingerprint(step);
  const outputsExist = step.outputs.every((output) => existsSync(join(root, output)));
  if (ifChanged && outputsExist && readStamps()[step.name] === before) {
    upToDate.push(step.name);
    continue;
  }
  step.run();
  // Re-read: another build may have recorded its own steps meanwhile. The fingerprint is the one
  // taken before the step ran, so a source edited during the build is built next time.
  writeStamps({ ...readStamps(), [step.name]: before });
}
if (upToDate.length > 0) {
  const where = relative(root, stampFile).split(sep).join('/');
  console.error(`build: ${upToDate.join(', ')} up to date (sources unchanged since the build recorded in ${where})`);
}
