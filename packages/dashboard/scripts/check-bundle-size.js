// Fails the build when the JavaScript the first page loads is over budget (250 KB gzipped).
// "The first page" is what dist/index.html loads: its module scripts and modulepreload links.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const BUDGET_GZIP_BYTES = 250 * 1000;

/** The gzipped bytes of each script the first page loads, from a built dist/ directory. */
export function measureFirstPage(distDir) {
  const html = readFileSync(join(distDir, 'index.html'), 'utf8');
  const sources = new Set();
  for (const match of html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)) sources.add(match[1]);
  for (const match of html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g)) sources.add(match[1]);
  const files = [...sources].map((source) => {
    const path = join(distDir, source.replace(/^\/dashboard\//, ''));
    const body = readFileSync(path);
    return { source, bytes: body.length, gzipBytes: gzipSync(body, { level: 9 }).length };
  });
  return { files, totalGzipBytes: files.reduce((sum, file) => sum + file.gzipBytes, 0) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const distDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
  const { files, totalGzipBytes } = measureFirstPage(distDir);
  if (files.length === 0) {
    console.error('check-bundle-size: dist/index.html loads no script; is the build broken?');
    process.exit(1);
  }
  for (const file of files)
    console.log(`  ${file.source}: ${(file.bytes / 1000).toFixed(1)} kB, ${(file.gzipBytes / 1000).toFixed(1)} kB gzipped`);
  const verdict = totalGzipBytes <= BUDGET_GZIP_BYTES ? 'within' : 'OVER';
  console.log(
    `first page JavaScript: ${(totalGzipBytes / 1000).toFixed(1)} kB gzipped, ${verdict} the ${BUDGET_GZIP_BYTES / 1000} kB budget`,
  );
  if (totalGzipBytes > BUDGET_GZIP_BYTES) process.exit(1);
}
