import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createService } from '../../main.js';
import { describeEachDialect, testConfig, useTestDatabase } from '../../test/database.js';
import { verifyLedger } from '../ledger/ledger.verify.js';
import type { RecurringGrant } from './recurring-grants.schemas.js';
import { expectStatus, walletsClient } from './wallets.fixtures.js';

/**
 * Recurring grants' credits as an operator runs them (docs/adr/0022-recurring-grants.md): two
 * `svc worker` processes (the compiled CLI) on one database (PostgreSQL; and SQLite, where one
 * `svc serve` and one `svc worker` may share the file), one of them killed with SIGKILL while both
 * are crediting. The processes have no test clock, so the periods are real days:
 * each recurring grant starts long enough ago that hundreds of its periods are due at once, which
 * the workers credit over several runs, racing each other on the same keys. Asserted: every period
 * credited exactly once, nothing else, the ledger sound, every grant moved on to its next period;
 * and a period starting while a worker runs is credited within 5 s of its start.
 */

const ROOT = fileURLToPath(new URL('../../../../../', import.meta.url));
const SVC = join(ROOT, 'packages/server/bin/svc.js');
const DAY_MS = 86_400_000;
const GRANTS = 20;
const PERIODS = 250;
const POLL_MS = 100;
/** Settings of the service that must come from the test, never from the environment vitest runs in. */
const SERVICE_VARIABLE =
  /^(NODE_ENV|HOST|PORT|DATA_DIR|DATABASE_URL|DATABASE_POOL_SIZE|DATABASE_PREPARED_STATEMENTS|SQLITE_SYNCHRONOUS|REDIS_URL|LOG_LEVEL|SVC_SECRET_KEY|RATE_LIMIT_\w+|TRUST_PROXY|TLS_\w+|CORS_ORIGINS|WEBHOOK_\w+|EVENT_RETENTION_DAYS|SHUTDOWN_TIMEOUT_\w+|SMTP_URL|SECRETS_\w+)$/;
const SECRETS_ENCRYPTION_KEYS = `test:${randomBytes(32).toString('base64')}`;

const children = new Set<ChildProcess>();
const dataDir = mkdtempSync(join(tmpdir(), 'svc-recurring-grants-'));

/** `svc worker` in a process group of its own; resolves once it says it runs. */
async function startWorker(databaseUrl: string): Promise<{ child: ChildProcess; output: () => string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !SERVICE_VARIABLE.test(name)));
  const child = spawn(process.execPath, [SVC, 'worker'], {
    cwd: ROOT,
    env: {
      ...inherited,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      SECRETS_ENCRYPTION_KEYS,
      DATABASE_URL: databaseUrl,
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  await until(
    () => output.includes('"worker running"'),
    30_000,
    () => `the worker did not start: ${output}`,
  );
  return { child, output: () => output };
}

async function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Gone already.
  }
  await Promise.race([exited, sleep(15_000)]);
}

async function until(done: () => boolean | Promise<boolean>, timeoutMs: number, explain: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${explain()}`);
    await sleep(POLL_MS);
  }
}

beforeAll(async () => {
  // bin/svc.js runs dist/: bring it up to date with the sources (incremental, so usually quick).
  await promisify(execFile)(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'packages/server/tsconfig.build.json'],
    {
      cwd: ROOT,
      timeout: 120_000,
    },
  );
}, 150_000);

afterAll(async () => {
  await Promise.all([...children].map((child) => kill(child, 'SIGKILL')));
  rmSync(dataDir, { recursive: true, force: true });
});

describeEachDialect('recurring grants under two svc worker processes on one database', (dialect) => {
  const database = useTestDatabase(dialect);

  it('credits every period exactly once though one worker is killed mid-run; a new period within 5 s of its start', async () => {
    const service = await createService(testConfig(database().url, { SECRETS_ENCRYPTION_KEYS }));
    try {
      const { project, secretKey } = await service.projects.createProject({ name: 'recurring grants' });
      const client = await walletsClient(service, { projectId: project.id, secretKey });
      // Each started PERIODS days ago, less half a day: PERIODS periods are due, the next begins in 12 hours.
      const startsAt = new Date(Date.now() - PERIODS * DAY_MS + DAY_MS / 2).toISOString();
      const grants: RecurringGrant[] = [];
      for (let index = 0; index < GRANTS; index += 1) {
        const wallet = await client.createWallet();
        const body = { amount: index + 1, interval: 'day', expires: 'never', starts_at: startsAt };
        grants.push(expectStatus<RecurringGrant>(await client.request('POST', `/v1/wallets/${wallet.id}/recurring-grants`, body), 201));
      }
      const credited = async () => {
        const row = await service.db.kysely
          .selectFrom('ledger_transactions')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('project_id', '=', project.id)
          .where('recurring_grant_id', 'is not', null)
          .executeTakeFirstOrThrow();
        return Number(row.n);
      };

      // Started together, so both are at work when the first credits appear.
      const [first, second] = await Promise.all([startWorker(database().url), startWorker(database().url)]);
      // Killed while the work is under way: some periods credited, most not.
      await until(
        async () => (await credited()) > 0,
        30_000,
        () => `no credit made\n${first.output()}\n${second.output()}`,
      );
      await kill(first.child, 'SIGKILL');
      const atKill = await credited();
      expect(atKill).toBeLessThan(GRANTS * PERIODS);
      await until(
        async () => (await credited()) >= GRANTS * PERIODS,
        90_000,
        () => `not every period credited\n${second.output()}`,
      );
      // A run commits its credits first and moves each grant to its next period after them
      // (recurring-grants.service.ts): wait for the grants too, not for a fixed time.
      const nextGrantAt = new Date(Date.parse(startsAt) + PERIODS * DAY_MS).toISOString();
      const unadvanced = async () => {
        const left: string[] = [];
        for (const grant of grants) {
          const now = expectStatus<RecurringGrant>(await client.request('GET', `/v1/recurring-grants/${grant.id}`), 200);
          if (now.next_grant_at !== nextGrantAt) left.push(grant.id);
        }
        return left;
      };
      await until(
        async () => (await unadvanced()).length === 0,
        30_000,
        () => `grants not moved to their next period\n${second.output()}`,
      );

      const rows = await service.db.kysely
        .selectFrom('ledger_transactions')
        .select(['recurring_grant_id', 'idempotency_key', 'wallet_id', 'amount', 'type'])
        .where('project_id', '=', project.id)
        .where('recurring_grant_id', 'is not', null)
        .execute();
      for (const grant of grants) {
        const mine = rows.filter((row) => row.recurring_grant_id === grant.id);
        expect(mine.map((row) => row.idempotency_key).sort()).toEqual(
          [...Array(PERIODS).keys()].map((index) => `${grant.id}:${index}`).sort(),
        );
        expect(mine.every((row) => row.type === 'credit' && row.wallet_id === grant.wallet_id && row.amount === grant.amount)).toBe(true);
        const now = expectStatus<RecurringGrant>(await client.request('GET', `/v1/recurring-grants/${grant.id}`), 200);
        expect(now.next_grant_at).toBe(nextGrantAt);
      }
      const verification = await verifyLedger(service.db, { projectId: project.id });
      expect(verification.sound, JSON.stringify(verification.checks)).toBe(true);

      // A period that begins while the surviving worker runs: credited within 5 s of its start.
      const wallet = await client.createWallet();
      const soonMs = Date.now() + 1500;
      const body = { amount: 9, interval: 'month', starts_at: new Date(soonMs).toISOString() };
      const soon = expectStatus<RecurringGrant>(await client.request('POST', `/v1/wallets/${wallet.id}/recurring-grants`, body), 201);
      await until(
        async () => (await client.balance(wallet.id)) === 9,
        10_000,
        () => `the new period was not credited\n${second.output()}`,
      );
      const credit = await service.db.kysely
        .selectFrom('ledger_transactions')
        .select(['created_at', 'expires_at'])
        .where('recurring_grant_id', '=', soon.id)
        .executeTakeFirstOrThrow();
      // The promise under test: credited within 5 s of the period's start, measured from that start
      // (the event), to the credit's own time.
      const delayMs = Date.parse(credit.created_at) - soonMs;
      expect(delayMs).toBeGreaterThanOrEqual(0);
      expect(delayMs).toBeLessThan(5000);
      // The surviving worker's run that made this credit began after every earlier period had been
      // credited, and read every grant: it made nothing more for them.
      expect(await credited()).toBe(GRANTS * PERIODS + 1);
      await kill(second.child, 'SIGTERM');
    } finally {
      await service.close();
    }
  }, 240_000);
});
