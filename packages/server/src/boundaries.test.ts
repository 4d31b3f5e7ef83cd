import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The boundary check of `npm run lint` (scripts/check-boundaries.js, dependency-cruiser.config.js):
// it passes on the tree as it is, and names the rule of each breach planted into the tree.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SRC = 'packages/server/src';
const TAG = `planted-boundary-${String(process.pid)}`;

interface Plant {
  readonly path: string;
  readonly source: string;
  /** The rules the check names for this file; none for a file that may do what it does. */
  readonly rules: readonly string[];
}

const PLANTS: readonly Plant[] = [
  {
    path: `${SRC}/modules/projects/${TAG}-parent-path.ts`,
    source: `import * as store from '../../modules/users/users.store.js';\nexport const planted = store;\n`,
    rules: ['module-surface'],
  },
  {
    path: `${SRC}/modules/projects/${TAG}-dot-path.ts`,
    source: `import * as store from './../users/users.store.js';\nexport const planted = store;\n`,
    rules: ['module-surface'],
  },
  {
    path: `${SRC}/modules/projects/${TAG}-reexport.service.ts`,
    source: `export { UsersStore } from '../users/users.store.js';\n`,
    rules: ['module-surface', 'no-reexport-of-module-internals'],
  },
  {
    path: `${SRC}/modules/projects/${TAG}-dynamic.ts`,
    source: `export const planted = () => import('../users/users.store.js');\n`,
    rules: ['module-surface'],
  },
  {
    path: `${SRC}/modules/projects/${TAG}-http.ts`,
    source: `import * as errors from '../../http/errors.js';\nexport const planted = errors;\n`,
    rules: ['modules-not-http'],
  },
  {
    path: `${SRC}/modules/projects/${TAG}-wiring.module.ts`,
    source: `import * as store from '../users/users.store.js';\nexport const planted = store;\n`,
    rules: ['module-surface-wiring'],
  },
  {
    // Test helpers may reach into another module's store: not a breach.
    path: `${SRC}/modules/projects/${TAG}-reach.testing.ts`,
    source: `import * as store from '../users/users.store.js';\nexport const planted = store;\n`,
    rules: [],
  },
  {
    path: `${SRC}/lib/${TAG}.ts`,
    source: `import * as service from '../modules/projects/projects.service.js';\nexport const planted = service;\n`,
    rules: ['lib-imports-no-layer-above'],
  },
  {
    path: `${SRC}/db/${TAG}.ts`,
    source: `import * as service from '../modules/users/users.service.js';\nexport const planted = service;\n`,
    rules: ['db-imports-no-layer-above'],
  },
  {
    path: `${SRC}/jobs/${TAG}.job.ts`,
    source: `import * as store from '../modules/users/users.store.js';\nexport const planted = store;\n`,
    rules: ['jobs-use-module-services'],
  },
  {
    path: `${SRC}/security/${TAG}.ts`,
    source: `import * as store from '../modules/users/users.store.js';\nexport const planted = store;\n`,
    rules: ['security-uses-module-surfaces'],
  },
  {
    path: `${SRC}/http/${TAG}.ts`,
    source: `import * as store from '../modules/users/users.store.js';\nexport const planted = store;\n`,
    rules: ['http-uses-module-surfaces'],
  },
  {
    // The wallets API uses the ledger through ledger.service.ts and its schemas, never the write path.
    path: `${SRC}/modules/wallets/${TAG}-ledger-internal.ts`,
    source: `import * as write from '../ledger/ledger.write.js';\nexport const planted = write;\n`,
    rules: ['module-surface', 'ledger-public-entry-points'],
  },
  {
    path: `${SRC}/modules/ledger/${TAG}-inner.service.ts`,
    source: `export const planted = 1;\n`,
    rules: [],
  },
  {
    // A service of the ledger other than ledger.service.ts is not one of its entry points.
    path: `${SRC}/modules/wallets/${TAG}-ledger-service.ts`,
    source: `import * as inner from '../ledger/${TAG}-inner.service.js';\nexport const planted = inner;\n`,
    rules: ['ledger-public-entry-points'],
  },
  {
    // Two services that need each other: projects → stats → projects.
    path: `${SRC}/modules/projects/${TAG}-cycle.service.ts`,
    source: `import * as other from '../stats/${TAG}-cycle.service.js';\nexport const planted = other;\n`,
    rules: [],
  },
  {
    path: `${SRC}/modules/stats/${TAG}-cycle.service.ts`,
    source: `import * as other from '../projects/${TAG}-cycle.service.js';\nexport const planted = other;\n`,
    rules: [],
  },
];

function checkBoundaries(files: readonly string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['scripts/check-boundaries.js', ...files], { cwd: REPO }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, output: stdout + stderr });
    });
  });
}

describe('module boundaries (npm run lint)', () => {
  // The whole tree is parsed: about 5 s alone, several times that beside other test files.
  it('passes on the tree as it is', { timeout: 90_000 }, async () => {
    const { code, output } = await checkBoundaries([]);
    expect(output).toContain('no breach');
    expect(code).toBe(0);
  });

  it('names the rule each planted breach breaks, on resolved paths', async () => {
    try {
      for (const plant of PLANTS) writeFileSync(`${REPO}${plant.path}`, plant.source, { flag: 'wx' });
      const { code, output } = await checkBoundaries(PLANTS.map((plant) => plant.path));

      expect(code).toBe(1);
      for (const plant of PLANTS) {
        for (const rule of plant.rules) expect(output).toContain(`error ${rule}: ${plant.path} →`);
        if (plant.rules.length === 0) expect(output).not.toMatch(new RegExp(`error [a-z-]+: ${plant.path.replaceAll('.', '\\.')} `));
      }
      expect(output).toContain(`error module-cycle: projects → stats → projects`);
    } finally {
      for (const plant of PLANTS) rmSync(`${REPO}${plant.path}`, { force: true });
    }
  });
});
