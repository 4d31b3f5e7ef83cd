import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'bench/**/*.test.ts'],
    globalSetup: ['packages/server/src/test/global-setup.ts'],
    // Storage tests open their own database per file; two workers keep this 2-core machine busy
    // without making the database servers the bottleneck.
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // In CI a JSON report is written too; .ci/run prints its counts as one plain closing line.
    reporters: process.env['CI'] === 'true' ? ['default', 'json'] : ['default'],
    outputFile: { json: 'test-results/vitest.json' },
  },
});
