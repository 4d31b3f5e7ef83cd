// Builds the dashboard into a directory of its own, then publishes it as dist/ by two renames. A
// service reads dist/ when it starts, and the test suite builds (`npm start`, `npm run build`)
// while other services start: emptying dist/ and writing it file by file under them let a service
// list a file that was gone a moment later. Now a reader sees the old build or the new one.
import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
// Per process: two builds at once must not write into one directory.
const next = join(root, `dist-next-${process.pid}`);
const old = join(root, `dist-old-${process.pid}`);

try {
  // vite.config.ts still applies; only the output directory differs.
  await build({ root, build: { outDir: next, emptyOutDir: true } });
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(next, dist);
} finally {
  rmSync(next, { recursive: true, force: true });
  rmSync(old, { recursive: true, force: true });
}
