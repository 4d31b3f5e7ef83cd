import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** Where `npm run build` puts the dashboard: packages/dashboard/dist, from src/ or dist/ of the server alike. */
export const DASHBOARD_DIST_DIR = fileURLToPath(new URL('../../../../dashboard/dist/', import.meta.url));

/** The built page is a few hundred KiB; anything much larger is not ours and is not served. */
const FILE_BYTES_MAX = 5 * 1024 * 1024;
const FILES_MAX = 500;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

export interface StaticFile {
  readonly body: Buffer;
  /** The same bytes gzipped, for clients that accept it; undefined when it would not be smaller. */
  readonly gzipped: Buffer | undefined;
  readonly contentType: string;
}

export interface DashboardFiles {
  /** index.html, or undefined when the dashboard has not been built. */
  readonly index: StaticFile | undefined;
  /** Everything else by its path below the build directory, e.g. `assets/index-3f2a.js`. */
  readonly files: ReadonlyMap<string, StaticFile>;
}

/**
 * Reads the built dashboard into memory once, at start: a handful of files, served from memory
 * with their gzip made ahead of time, and nothing on disk is opened per request (no path to traverse).
 */
export function loadDashboardFiles(dir: string = DASHBOARD_DIST_DIR, options: LoadDashboardOptions = {}): DashboardFiles {
  const sleep = options.sleep ?? sleepSync;
  // A build publishes dist/ by renaming directories (packages/dashboard/scripts/build.js): a file
  // listed just before the rename is gone just after, and between the build's two renames there is
  // no dist/ at all, only the old build beside it as dist-old-<pid>. Reading again then finds the
  // new build.
  for (let attempt = 1; ; attempt += 1) {
    try {
      const loaded = readDashboardFiles(dir);
      if (loaded.index !== undefined || attempt >= LOAD_ATTEMPTS_MAX || !publishing(dir)) return loaded;
    } catch (error) {
      if (attempt >= LOAD_ATTEMPTS_MAX || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    sleep(PUBLISH_WAIT_MS);
  }
}

export interface LoadDashboardOptions {
  /** Blocks between two reads while a build is being published (default: the thread sleeps); tests see each wait. */
  readonly sleep?: (milliseconds: number) => void;
}

/** Up to about half a second in all for a build being published; the two renames take microseconds. */
const LOAD_ATTEMPTS_MAX = 50;
const PUBLISH_WAIT_MS = 10;

/** Whether a build is between its two renames: the previous build set aside, the new one not yet in place. */
function publishing(dir: string): boolean {
  const parent = join(dir, '..');
  try {
    return readdirSync(parent).some((name) => name.startsWith('dist-old-'));
  } catch {
    return false;
  }
}

function sleepSync(milliseconds: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, milliseconds);
}

function readDashboardFiles(dir: string): DashboardFiles {
  const files = new Map<string, StaticFile>();
  if (!existsSync(join(dir, 'index.html'))) return { index: undefined, files };
  for (const path of walk(dir)) {
    const extension = extname(path);
    const contentType = CONTENT_TYPES[extension];
    if (contentType === undefined) continue;
    const body = readFileSync(path);
    if (body.length > FILE_BYTES_MAX) continue;
    const gzipped = COMPRESSIBLE.has(extension) ? gzipSync(body, { level: 9 }) : undefined;
    const file: StaticFile = { body, gzipped: gzipped !== undefined && gzipped.length < body.length ? gzipped : undefined, contentType };
    files.set(relative(dir, path).split(sep).join('/'), file);
    if (files.size >= FILES_MAX) break;
  }
  const index = files.get('index.html');
  files.delete('index.html');
  return { index, files };
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}
