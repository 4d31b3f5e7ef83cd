import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServeProcess, stopServeProcess, SVC } from '../test/serve-process.js';
import { projectWithWallet, sqliteServeEnv } from '../test/sqlite-serve.js';
import { SqliteDriver } from './sqlite-driver.js';

/**
 * `svc backup` and `svc restore` on SQLite (CONTRACT 9.5): a backup taken while 32 clients credit a
 * running `svc serve` holds every credit acknowledged before the backup began, passes its checks,
 * and a service started on its restore serves and verifies.
 */

const CLIENTS = 32;
const CREDITS_PER_CLIENT_MAX = 200;
const LOAD_DEADLINE_MS = 60_000;
const LOAD_BEFORE_BACKUP_MS = 1_000;
const CLI_TIMEOUT_MS = 60_000;

const run = promisify(execFile);

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function svc(args: readonly string[], env: Readonly<Record<string, string>>): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [SVC, ...args], { env, timeout: CLI_TIMEOUT_MS });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('svc backup and svc restore (SQLite)', () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-backup-'));
  const dataDir = join(root, 'data');
  const secretsKey = randomBytes(32).toString('base64');
  let server: ServeProcess | undefined;
  let restored: ServeProcess | undefined;
  let secretKey = '';
  let walletId = '';

  beforeAll(async () => {
    ({ secretKey, walletId } = await projectWithWallet({ dataDir, secretsKey, name: 'Backup' }));
    server = await startServeProcess(sqliteServeEnv(dataDir, secretsKey));
  }, 90_000);

  afterAll(async () => {
    if (server !== undefined) await stopServeProcess(server.child);
    if (restored !== undefined) await stopServeProcess(restored.child);
    rmSync(root, { recursive: true, force: true });
  });

  it('a backup under 32 concurrent writers holds every credit acknowledged before it began; its restore serves and verifies', async () => {
    const origin = server!.origin;
    const acknowledged: { id: string; at: number }[] = [];
    const deadline = Date.now() + LOAD_DEADLINE_MS;
    let stop = false;
    const credit = async (): Promise<void> => {
      const response = await fetch(`${origin}/v1/wallets/${walletId}/credits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 3 }),
        signal: AbortSignal.timeout(20_000),
      });
      const body = (await response.json()) as { id?: string };
      expect(response.status, JSON.stringify(body)).toBe(201);
      acknowledged.push({ id: body.id!, at: Date.now() });
    };
    const load = Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let index = 0; index < CREDITS_PER_CLIENT_MAX && !stop && Date.now() < deadline; index += 1) await credit();
      }),
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, LOAD_BEFORE_BACKUP_MS));
      const file = join(root, 'copy.sqlite');
      const backupStartedAt = Date.now();
      const backup = await svc(['backup', file], sqliteServeEnv(dataDir, secretsKey));
      const backupEndedAt = Date.now();
      stop = true;
      await load;
      expect(backup.code, backup.stderr).toBe(0);
      const summary = JSON.parse(backup.stdout) as Record<string, unknown>;
      expect(summary).toMatchObject({ file, integrity_check: 'ok', ledger_sound: true, projects: 1, wallets: 1 });
      console.info(`backup: ${JSON.stringify(summary)}; CLI ${backupEndedAt - backupStartedAt} ms`);

      const before = acknowledged.filter((one) => one.at < backupStartedAt);
      const during = acknowledged.filter((one) => one.at >= backupStartedAt && one.at <= backupEndedAt);
      expect(before.length).toBeGreaterThan(0);
      expect(during.length, 'credits were acknowledged while the backup ran').toBeGreaterThan(0);
      const copy = new SqliteDriver(file, { readonly: true, fileMustExist: true });
      try {
        const ids = new Set((copy.prepare('select id from ledger_transactions').all() as { id: string }[]).map((row) => row.id));
        expect(before.filter((one) => !ids.has(one.id))).toEqual([]);
        expect(summary['transactions']).toBe(ids.size);
      } finally {
        copy.close();
      }

      const restoredDir = join(root, 'restored');
      const restoreEnv = sqliteServeEnv(restoredDir, secretsKey);
      const restore = await svc(['restore', file], restoreEnv);
      expect(restore.code, restore.stderr).toBe(0);
      expect(JSON.parse(restore.stdout)).toMatchObject({
        integrity_check: 'ok',
        ledger_sound: true,
        database: join(restoredDir, 'svc.sqlite'),
      });

      restored = await startServeProcess(restoreEnv);
      const wallet = await fetch(`${restored.origin}/v1/wallets/${walletId}`, { headers: { authorization: `Bearer ${secretKey}` } });
      expect(wallet.status).toBe(200);
      expect(((await wallet.json()) as { balance: number }).balance).toBe(3 * (summary['transactions'] as number));
      await stopServeProcess(restored.child);
      restored = undefined;
      const verify = await svc(['ledger', 'verify'], restoreEnv);
      expect(verify.code, verify.stderr).toBe(0);
      expect(JSON.parse(verify.stdout)).toMatchObject({ sound: true });
    } finally {
      stop = true;
      await load.catch(() => undefined);
    }
  }, 120_000);

  it('refuses to overwrite an existing FILE', async () => {
    const file = join(root, 'taken.sqlite');
    writeFileSync(file, 'something');
    const result = await svc(['backup', file], sqliteServeEnv(dataDir, secretsKey));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('already exists');
  }, 30_000);

  it('restore refuses a DATA_DIR that is not empty, and leaves it as it was', async () => {
    const file = join(root, 'for-restore.sqlite');
    expect((await svc(['backup', file], sqliteServeEnv(dataDir, secretsKey))).code).toBe(0);
    const busy = join(root, 'busy');
    mkdirSync(busy);
    writeFileSync(join(busy, 'notes.txt'), 'mine');
    const result = await svc(['restore', file], sqliteServeEnv(busy, secretsKey));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is not empty');
    expect(existsSync(join(busy, 'svc.sqlite'))).toBe(false);
  }, 60_000);

  it('refuses a copy that fails integrity_check, and leaves no database behind', async () => {
    const file = join(root, 'broken.sqlite');
    writeFileSync(file, randomBytes(8192));
    const target = join(root, 'from-broken');
    const result = await svc(['restore', file], sqliteServeEnv(target, secretsKey));
    expect(result.code).toBe(1);
    expect(existsSync(join(target, 'svc.sqlite'))).toBe(false);
  }, 30_000);

  it('on PostgreSQL, svc backup says to use pg_dump or the platform', async () => {
    const result = await svc(['backup', join(root, 'pg.sqlite')], {
      ...sqliteServeEnv(dataDir, secretsKey),
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('pg_dump');
    expect(existsSync(join(root, 'pg.sqlite'))).toBe(false);
  }, 30_000);
});
