import { readFileSync } from 'node:fs';

/**
 * The service's version: the `version` of packages/server/package.json (the releases are in
 * CHANGELOG.md at the repository's root). Read from the file one level above this module, which
 * is that package.json from the sources (src/) and from the build (dist/) alike.
 */
export const SERVICE_VERSION: string = readVersion(new URL('../package.json', import.meta.url));

function readVersion(file: URL): string {
  const manifest: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (typeof manifest !== 'object' || manifest === null || !('version' in manifest) || typeof manifest.version !== 'string') {
    throw new Error(`${file.pathname} has no version`);
  }
  return manifest.version;
}
