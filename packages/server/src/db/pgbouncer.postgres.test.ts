import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pgbouncerCommand, startTestPgbouncer, type TestPgbouncer } from '../test/pgbouncer.js';
import { useTestDatabase } from '../test/database.js';
import { openDatabase } from './database.js';
import { fixedQuery, runFixed } from './fixed-query.js';

/**
 * The service behind PgBouncer 1.18 in `pool_mode = transaction` (docs/operations.md, "Poolers"):
 * with the default DATABASE_PREPARED_STATEMENTS=true it cannot work there, and with false the
 * wallet, ledger, session and webhook test files pass through it.
 */

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const VITEST = join(ROOT, 'node_modules/vitest/vitest.mjs');

/** Run again with every connection of the service through the pooler; their PostgreSQL halves only. */
const POOLED_TEST_FILES = [
  'packages/server/src/modules/wallets/wallets.test.ts',
  'packages/server/src/modules/ledger/ledger.test.ts',
  'packages/server/src/modules/sessions/sessions.test.ts',
  'packages/server/src/modules/webhooks/webhooks.test.ts',
  'packages/server/src/modules/webhooks/webhooks.delivery.test.ts',
];
/** The files above take about 40 s of CPU; the rest is room for a busy machine. */
const POOLED_RUN_TIMEOUT_MS = 300_000;
/**
 * SVC_TEST_POOLED_PASS=0 leaves the pooled run out (docs/configuration.md, "Test-only variables"):
 * .ci/run runs the suite on two Node versions and the pooled run once.
 */
const POOLED_PASS = process.env['SVC_TEST_POOLED_PASS'] !== '0';

const READ = fixedQuery<{ n: number }>('select cast(? as int) as n');

describe.skipIf(inject('postgresAdminUrl') === '' || pgbouncerCommand === '')('PgBouncer in transaction mode', () => {
  const database = useTestDatabase('postgres');

  describe('with its defaults', () => {
    let pooler: TestPgbouncer | undefined;
    beforeAll(async () => {
      pooler = await startTestPgbouncer();
    });
    afterAll(async () => {
      await pooler?.stop();
    });

    it('refuses a connection of the default configuration, whose jit=off startup option it does not know', async () => {
      const db = openDatabase({ dialect: 'postgres', url: pooler!.through(database().url), poolSize: 1, preparedStatements: true });
      try {
        await expect(runFixed(db, READ, [1])).rejects.toThrow('unsupported startup parameter: options');
      } finally {
        await db.destroy();
      }
    });

    it('serves DATABASE_PREPARED_STATEMENTS=false', async () => {
      const db = openDatabase({ dialect: 'postgres', url: pooler!.through(database().url), poolSize: 4, preparedStatements: false });
      try {
        const results = await Promise.all(Array.from({ length: 8 }, (_, index) => runFixed(db, READ, [index])));
        expect(results).toEqual(Array.from({ length: 8 }, (_, index) => [{ n: index }]));
      } finally {
        await db.destroy();
      }
    });
  });

  describe('told to drop the startup option, with one server connection', () => {
    let pooler: TestPgbouncer | undefined;
    beforeAll(async () => {
      pooler = await startTestPgbouncer({ defaultPoolSize: 1, ignoreStartupParameters: ['options'] });
    });
    afterAll(async () => {
      await pooler?.stop();
    });

    // Each client connection prepares its statement once, on whichever server connection it holds
    // then; the next client to hold that server connection prepares the same name again.
    it('breaks named prepared statements: a second client finds the name taken', async () => {
      const db = openDatabase({ dialect: 'postgres', url: pooler!.through(database().url), poolSize: 4, preparedStatements: true });
      try {
        const results = await Promise.allSettled(Array.from({ length: 8 }, (_, index) => runFixed(db, READ, [index])));
        const failures = results.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []));
        expect(failures.length).toBeGreaterThan(0);
        expect(failures[0]).toMatch(/prepared statement "svc_[0-9a-f]{32}" already exists/);
      } finally {
        await db.destroy();
      }
    });

    it('serves the same reads with DATABASE_PREPARED_STATEMENTS=false', async () => {
      const db = openDatabase({ dialect: 'postgres', url: pooler!.through(database().url), poolSize: 4, preparedStatements: false });
      try {
        const results = await Promise.all(Array.from({ length: 8 }, (_, index) => runFixed(db, READ, [index])));
        expect(results).toEqual(Array.from({ length: 8 }, (_, index) => [{ n: index }]));
      } finally {
        await db.destroy();
      }
    });
  });

  // Left out, not skipped, when SVC_TEST_POOLED_PASS=0: the run's counts show no skipped test.
  if (POOLED_PASS)
    describe('in front of the wallet, ledger, session and webhook test files', () => {
      let pooler: TestPgbouncer | undefined;
      let reportDirectory: string | undefined;
      beforeAll(async () => {
        pooler = await startTestPgbouncer();
        reportDirectory = mkdtempSync(join(tmpdir(), 'svc-pooled-run-'));
      });
      afterAll(async () => {
        await pooler?.stop();
        if (reportDirectory !== undefined) rmSync(reportDirectory, { recursive: true, force: true });
      });

      it(
        'passes them with DATABASE_PREPARED_STATEMENTS=false, every database of theirs used through the pooler',
        async () => {
          const report = join(reportDirectory!, 'report.json');
          const poolerUrl = pooler!.through(inject('postgresAdminUrl'));
          const args = [
            VITEST,
            'run',
            ...POOLED_TEST_FILES,
            '--testNamePattern',
            '\\[postgres\\]',
            '--reporter=json',
            `--outputFile=${report}`,
          ];
          // CI=true would make the child write (and overwrite) the parent run's report.
          const env = { ...process.env, CI: 'false', TEST_DATABASE_POOLER_URL: poolerUrl };
          const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
          let stderr = '';
          child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
          const timer = setTimeout(() => child.kill('SIGKILL'), POOLED_RUN_TIMEOUT_MS - 10_000);
          const code = await new Promise<number | null>((resolve) => child.once('exit', resolve)).finally(() => clearTimeout(timer));
          const results = JSON.parse(readFileSync(report, 'utf8')) as {
            numPassedTests: number;
            numFailedTests: number;
            testResults: { name: string; status: string }[];
          };
          expect({ code, failed: results.numFailedTests }, stderr).toEqual({ code: 0, failed: 0 });
          expect(results.testResults.map((file) => file.name.slice(ROOT.length)).sort()).toEqual([...POOLED_TEST_FILES].sort());
          expect(results.numPassedTests).toBeGreaterThan(100);
          // A database per file at least, each reached through the pooler: PgBouncer logs each one it
          // adds for `* =` at its first client (and forgets it once the file drops it).
          const pooled = new Set(pooler!.log().match(/registered new auto-database: db=svc_test_\w+/g));
          expect(pooled.size).toBeGreaterThanOrEqual(POOLED_TEST_FILES.length);
        },
        POOLED_RUN_TIMEOUT_MS,
      );
    });
});
