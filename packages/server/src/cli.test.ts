import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { describeDatabase } from './cli.js';
import { type Dialect, openDatabase } from './db/database.js';
import { randomBase62 } from './lib/ids.js';
import { SecretBox, sealedKeyId } from './lib/secret-box.js';
import { createTestDatabase, describeEachDialect, type TestDatabase } from './test/database.js';

/**
 * The real processes: the compiled `svc` CLI and `npm start`, as an operator runs them. Every child
 * is started in a process group of its own and killed with its group after the file, whatever
 * happened; every wait has a deadline.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SVC = join(ROOT, 'packages/server/bin/svc.js');
const CLI_TIMEOUT_MS = 30_000;
const START_TIMEOUT_MS = 45_000;
const STOP_TIMEOUT_MS = 10_000;

/** Settings of the service that must come from the test, never from the environment vitest runs in. */
const SERVICE_VARIABLE =
  /^(NODE_ENV|HOST|PORT|DATA_DIR|DATABASE_URL|DATABASE_POOL_SIZE|DATABASE_PREPARED_STATEMENTS|SQLITE_SYNCHRONOUS|REDIS_URL|LOG_LEVEL|SVC_SECRET_KEY|RATE_LIMIT_\w+|TRUST_PROXY|TLS_\w+|CORS_ORIGINS|WEBHOOK_\w+|EVENT_RETENTION_DAYS|SHUTDOWN_TIMEOUT_\w+|SMTP_URL|EMAIL_\w+|PUBLIC_URL|PASSWORD_RESET_URL|SESSION_TTL|REFRESH_TTL|REFRESH_REUSE_GRACE_SECONDS|METRICS_TOKEN|SECRETS_\w+)$/;

type Env = Readonly<Record<string, string>>;

function childEnv(env: Env): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !SERVICE_VARIABLE.test(name)));
  return { ...inherited, NODE_ENV: 'development', LOG_LEVEL: 'info', ...env };
}

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

class Child {
  stdout = '';
  stderr = '';
  exit: Exit | undefined;
  readonly exited: Promise<Exit>;
  readonly process: ChildProcess;

  constructor(command: string, args: readonly string[], env: Env) {
    this.process = spawn(command, args, { cwd: ROOT, env: childEnv(env), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.process.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.process.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => {
      this.process.once('error', (error) => {
        this.stderr += String(error);
        this.exit = { code: null, signal: null };
        resolve(this.exit);
      });
      // 'exit', not 'close': a grandchild that outlives its parent would keep the pipes open.
      this.process.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
    children.add(this);
  }

  get pid(): number {
    if (this.process.pid === undefined) throw new Error(`the process did not start: ${this.stderr}`);
    return this.process.pid;
  }

  /** The stdout lines that are JSON objects (the service's log, and the CLI's answers). */
  jsonLines(): Record<string, unknown>[] {
    // Complete lines only: the last one may still be arriving.
    const lines = this.stdout.split('\n').slice(0, -1);
    return lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  describe(): string {
    return `exit ${JSON.stringify(this.exit)}\n--- stdout\n${this.stdout}\n--- stderr\n${this.stderr}`;
  }

  /** Waits for the process to exit, at most `timeoutMs`. */
  async waitForExit(timeoutMs: number): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms\n${this.describe()}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits for the service's `listening` log line and returns its address. */
  async waitForListening(timeoutMs = START_TIMEOUT_MS): Promise<string> {
    const line = await this.waitForLog('listening', timeoutMs);
    if (typeof line['address'] !== 'string') throw new Error(`listening without an address\n${this.describe()}`);
    return line['address'];
  }

  /** Waits for the first log line with this message. */
  async waitForLog(message: string, timeoutMs = START_TIMEOUT_MS): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.jsonLines().find((entry) => entry['msg'] === message);
      if (line !== undefined) return line;
      if (this.exit !== undefined) throw new Error(`exited before logging "${message}"\n${this.describe()}`);
      if (Date.now() > deadline) throw new Error(`no "${message}" after ${timeoutMs} ms\n${this.describe()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Kills the process and everything it started (npm → sh → node share its process group). A group
   * whose leader has exited is killed too when the leader is npm: its server may have outlived it.
   */
  killGroup(): void {
    if (this.process.pid === undefined) return;
    if (this.exit !== undefined && this.process.spawnfile !== 'npm') return;
    try {
      process.kill(-this.process.pid, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
  }
}

const children = new Set<Child>();

afterAll(async () => {
  for (const child of children) child.killGroup();
  await Promise.all([...children].map((child) => child.waitForExit(STOP_TIMEOUT_MS).catch(() => undefined)));
});

interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `svc <args>` to completion. */
async function svc(args: readonly string[], env: Env): Promise<CliResult> {
  const child = new Child(process.execPath, [SVC, ...args], env);
  const { code } = await child.waitForExit(CLI_TIMEOUT_MS);
  return { code, stdout: child.stdout, stderr: child.stderr };
}

/** Runs `svc <args>`, expects exit 0 and exactly one JSON object on stdout, and returns it. */
async function svcJson<T>(args: readonly string[], env: Env): Promise<T> {
  const result = await svc(args, env);
  expect(result.code, result.stderr).toBe(0);
  const lines = result.stdout.split('\n').filter((line) => line !== '');
  expect(lines, result.stdout).toHaveLength(1);
  return JSON.parse(lines[0]!) as T;
}

async function http(
  address: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: unknown }> {
  const response = await fetch(`${address}${path}`, { headers, signal: AbortSignal.timeout(5000) });
  const text = await response.text();
  let body: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json')) body = JSON.parse(text);
  return { status: response.status, headers: response.headers, body };
}

/** Whether anything still answers on `address`. */
async function answers(address: string): Promise<boolean> {
  try {
    await fetch(`${address}/healthz`, { signal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  }
}

interface ApiKeyJson {
  id: string;
  object: string;
  project_id: string;
  name: string | null;
  prefix: string;
  last4: string;
  created_at: string;
  revoked_at: string | null;
}

interface ErrorJson {
  error: { type: string; code: string; message: string; request_id: string };
}

/**
 * A data directory (and on PostgreSQL a fresh database) for the enclosing describe block. On SQLite
 * the database is the default one, `DATA_DIR/svc.sqlite`, as `npm start` makes it.
 */
function useStartEnvironment(dialect: Dialect): () => Env {
  let dataDir: string | undefined;
  let database: TestDatabase | undefined;
  let env: Env | undefined;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    if (dialect === 'postgres') database = await createTestDatabase('postgres');
    env = { DATA_DIR: dataDir, ...(database === undefined ? {} : { DATABASE_URL: database.url }) };
  });
  afterAll(async () => {
    // The processes of this block hold the database open; they are stopped before it is dropped.
    for (const child of children) child.killGroup();
    await Promise.all([...children].map((child) => child.waitForExit(STOP_TIMEOUT_MS).catch(() => undefined)));
    await database?.drop();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });
  return () => {
    if (env === undefined) throw new Error('the environment exists only inside tests');
    return env;
  };
}

beforeAll(async () => {
  // bin/svc.js runs dist/; bring it up to date with the sources (incremental, so usually quick).
  try {
    await promisify(execFile)('npm', ['run', 'build', '--silent'], { cwd: ROOT, timeout: 120_000 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm run build failed; the CLI cannot be tested without it:\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}, 150_000);

describe('svc refusals', () => {
  let dataDir = '';
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  });
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('an unknown command exits 2 with the usage on stderr', async () => {
    const result = await svc(['frobnicate'], { DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown command "frobnicate"');
    expect(result.stderr).toContain('usage: svc');
    expect(result.stdout).toBe('');
  });

  it('--version prints the version of the server package, which is the root package.json one', async () => {
    const manifest = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as { version: string };
    const { version } = manifest('packages/server/package.json');
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(manifest('package.json').version).toBe(version);
    for (const flag of ['--version', '-v']) {
      const result = await svc([flag], { DATA_DIR: dataDir });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(`${version}\n`);
    }
  });

  it('project create without --name exits 2 with the usage on stderr', async () => {
    const result = await svc(['project', 'create'], { DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--name is required');
    expect(result.stderr).toContain('usage: svc');
    expect(result.stdout).toBe('');
  });

  it('key create without --project exits 2', async () => {
    const result = await svc(['key', 'create'], { DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--project is required');
  });

  it('refuses to start with an invalid SVC_SECRET_KEY, naming it', async () => {
    for (const invalid of ['svc_sk_short', `svc_sk_${randomBase62(129)}`, `sk_${randomBase62(43)}`]) {
      const server = new Child(process.execPath, [SVC, 'serve'], { DATA_DIR: dataDir, PORT: '0', SVC_SECRET_KEY: invalid });
      const { code } = await server.waitForExit(CLI_TIMEOUT_MS);
      expect(code, server.describe()).not.toBe(0);
      expect(server.stderr).toContain('SVC_SECRET_KEY');
      expect(server.jsonLines().some((line) => line['msg'] === 'listening')).toBe(false);
    }
  });

  it('refuses to start with NODE_ENV=production and WEBHOOK_ALLOW_PRIVATE=1, naming the variable', async () => {
    const server = new Child(process.execPath, [SVC, 'serve'], {
      DATA_DIR: dataDir,
      PORT: '0',
      NODE_ENV: 'production',
      WEBHOOK_ALLOW_PRIVATE: '1',
    });
    const { code } = await server.waitForExit(CLI_TIMEOUT_MS);
    expect(code, server.describe()).not.toBe(0);
    expect(server.stderr).toContain('WEBHOOK_ALLOW_PRIVATE');
    expect(server.jsonLines().some((line) => line['msg'] === 'listening')).toBe(false);
  });
});

describeEachDialect('svc CLI and npm start', (dialect) => {
  const env = useStartEnvironment(dialect);
  let projectId = '';
  let projectKey = '';
  let secondKey: { id: string; secretKey: string } | undefined;

  it('svc migrate applies the migrations once', async () => {
    const first = await svcJson<{ applied: string[] }>(['migrate'], env());
    expect(Object.keys(first)).toEqual(['applied']);
    expect(first.applied.length).toBeGreaterThan(0);
    expect(first.applied.every((name) => typeof name === 'string' && name !== '')).toBe(true);
    expect(await svcJson(['migrate'], env())).toEqual({ applied: [] });
  });

  it('svc project create prints one JSON object: the project and its secret key', async () => {
    const created = await svcJson<{ project: { id: string; name: string }; secret_key: string }>(
      ['project', 'create', '--name', 'Acme Inc'],
      env(),
    );
    expect(created).toEqual({
      project: { id: expect.stringMatching(/^prj_[0-9A-Za-z]{22}$/), name: 'Acme Inc' },
      secret_key: expect.stringMatching(/^svc_sk_[0-9A-Za-z]{43}$/),
    });
    projectId = created.project.id;
    projectKey = created.secret_key;
  });

  it('svc key create prints the key record and the secret key; key list never shows a secret key', async () => {
    const created = await svcJson<{ api_key: ApiKeyJson; secret_key: string }>(
      ['key', 'create', '--project', projectId, '--name', 'ci'],
      env(),
    );
    expect(Object.keys(created).sort()).toEqual(['api_key', 'secret_key']);
    expect(created.secret_key).toMatch(/^svc_sk_[0-9A-Za-z]{43}$/);
    expect(created.api_key).toMatchObject({
      id: expect.stringMatching(/^key_/),
      object: 'api_key',
      project_id: projectId,
      name: 'ci',
      prefix: created.secret_key.slice(0, 'svc_sk_'.length + 4),
      last4: created.secret_key.slice(-4),
      revoked_at: null,
    });
    secondKey = { id: created.api_key.id, secretKey: created.secret_key };

    const listResult = await svc(['key', 'list', '--project', projectId], env());
    expect(listResult.code, listResult.stderr).toBe(0);
    for (const secret of [projectKey, created.secret_key]) {
      expect(listResult.stdout).not.toContain(secret);
      expect(listResult.stdout).not.toContain(secret.slice('svc_sk_'.length, -4));
    }
    const list = JSON.parse(listResult.stdout) as { object: string; data: ApiKeyJson[]; has_more: boolean };
    expect(list.object).toBe('list');
    expect(list.has_more).toBe(false);
    expect(list.data).toHaveLength(2);
    expect(list.data.map((key) => key.id)).toContain(created.api_key.id);
    expect(list.data.map((key) => key.last4).sort()).toEqual([projectKey.slice(-4), created.secret_key.slice(-4)].sort());
    for (const key of list.data) expect(Object.keys(key)).not.toContain('secret_key');
  });

  it('svc key create for a project that does not exist exits 1', async () => {
    const result = await svc(['key', 'create', '--project', 'prj_doesnotexist'], env());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('resource_missing');
    expect(result.stdout).toBe('');
  });

  it('svc signing-keys rotate prints the key that signs from now on; the private key is stored sealed', async () => {
    const created = await svcJson<{ project: { id: string } }>(['project', 'create', '--name', 'Signing'], env());
    type SigningKeyJson = { object: string; kid: string; alg: string; status: string; created_at: string };
    const first = await svcJson<SigningKeyJson>(['signing-keys', 'rotate', '--project', created.project.id], env());
    expect(first).toEqual({
      object: 'signing_key',
      kid: expect.stringMatching(/^sjk_/),
      alg: 'ES256',
      status: 'signing',
      created_at: expect.any(String),
      activated_at: expect.any(String),
      retired_at: null,
    });
    const second = await svcJson<SigningKeyJson>(['signing-keys', 'rotate', '--project', created.project.id], env());
    expect(second.kid).not.toBe(first.kid);
    const db = openDatabase(loadConfig({ DATA_DIR: env()['DATA_DIR'], DATABASE_URL: env()['DATABASE_URL'] }).database);
    try {
      const rows = await db.kysely
        .selectFrom('session_signing_keys')
        .selectAll()
        .where('project_id', '=', created.project.id)
        .orderBy('created_at')
        .execute();
      expect(rows.map((row) => [row.kid, row.retired_at === null])).toEqual(
        expect.arrayContaining([
          [first.kid, false],
          [second.kid, true],
        ]),
      );
      for (const row of rows) {
        expect(sealedKeyId(row.private_key_sealed)).toBeDefined();
        expect(row.private_key_sealed).not.toContain('PRIVATE KEY');
      }
      // Sealed under this file's keyring: the secrets rotation test below brings a ring of its own
      // and counts every sealed value of the database as one it must open.
      await db.kysely.deleteFrom('session_signing_keys').where('project_id', '=', created.project.id).execute();
    } finally {
      await db.destroy();
    }
    const missing = await svc(['signing-keys', 'rotate', '--project', 'prj_doesnotexist'], env());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('resource_missing');
  });

  it('svc secrets rotate re-seals under the first key, prints counts per column, and is idempotent', async () => {
    const keyA = randomBytes(32);
    const keyB = randomBytes(32);
    const ring = (...keys: [string, Buffer][]) => keys.map(([id, key]) => `${id}:${key.toString('base64')}`).join(',');
    const created = await svcJson<{ project: { id: string } }>(['project', 'create', '--name', 'Rotation'], {
      ...env(),
      SECRETS_ENCRYPTION_KEYS: ring(['a', keyA]),
    });
    const projectId = created.project.id;
    const context = `webhook_endpoint:${projectId}:we_cli_rotation`;
    const db = openDatabase(loadConfig({ DATA_DIR: env()['DATA_DIR'], DATABASE_URL: env()['DATABASE_URL'] }).database);
    try {
      const now = new Date().toISOString();
      await db.kysely
        .insertInto('webhook_endpoints')
        .values({
          id: 'we_cli_rotation',
          project_id: projectId,
          url: 'https://hooks.example.com/cli',
          events: '["*"]',
          failed_deliveries: 0,
          description: null,
          enabled: 1,
          secret: '',
          previous_secret: null,
          secret_sealed: new SecretBox([{ id: 'a', key: keyA }]).seal('whsec_cli', context),
          previous_secret_sealed: null,
          previous_secret_expires_at: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      type Report = {
        key_id: string;
        columns: Record<string, { resealed: number; current: number; unreadable: number }>;
        unreadable: number;
      };
      const rotate = { ...env(), SECRETS_ENCRYPTION_KEYS: ring(['b', keyB], ['a', keyA]) };
      const report = await svcJson<Report>(['secrets', 'rotate'], rotate);
      expect(report.key_id).toBe('b');
      expect(report.columns['webhook_endpoints.secret_sealed']).toMatchObject({ resealed: 1, current: 0, unreadable: 0 });
      expect(Object.keys(report.columns)).toContain('idempotency_keys.response_body');
      const row = await db.kysely.selectFrom('webhook_endpoints').selectAll().where('id', '=', 'we_cli_rotation').executeTakeFirstOrThrow();
      expect(sealedKeyId(row.secret_sealed ?? '')).toBe('b');
      expect(new SecretBox([{ id: 'b', key: keyB }]).open(row.secret_sealed ?? '', context)).toBe('whsec_cli');
      const again = await svcJson<Report>(['secrets', 'rotate', '--batch-rows', '1'], rotate);
      expect(again.columns['webhook_endpoints.secret_sealed']).toMatchObject({ resealed: 0, current: 1 });
      // A ring that cannot open a value: reported, left as it is, exit 1.
      const lost = await svc(['secrets', 'rotate'], { ...env(), SECRETS_ENCRYPTION_KEYS: ring(['c', randomBytes(32)]) });
      expect(lost.code).toBe(1);
      expect(lost.stderr).toContain('open with no key of the ring');
      expect((JSON.parse(lost.stdout) as Report).unreadable).toBe(1);
    } finally {
      await db.destroy();
    }
  });

  describe('npm start', () => {
    let server: Child | undefined;
    let address = '';

    beforeAll(async () => {
      // Exactly as the README says, with the OS choosing the port.
      server = new Child('npm', ['start'], { ...env(), PORT: '0' });
      address = await server.waitForListening();
    }, START_TIMEOUT_MS + 5000);

    it('answers /healthz and /readyz', async () => {
      const health = await http(address, '/healthz');
      expect(health.status).toBe(200);
      const ready = await http(address, '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready' });
    });

    it('serves GET /v1/project with the key from svc project create', async () => {
      const bearer = await http(address, '/v1/project', { authorization: `Bearer ${projectKey}` });
      expect(bearer.status).toBe(200);
      expect(bearer.body).toMatchObject({ id: projectId, object: 'project', name: 'Acme Inc' });
      const header = await http(address, '/v1/project', { 'x-api-key': projectKey });
      expect(header.status).toBe(200);
    });

    it('refuses a wrong key with 401 invalid_api_key and the Request-Id in header and body', async () => {
      const response = await http(address, '/v1/project', { authorization: `Bearer svc_sk_${randomBase62(43)}` });
      expect(response.status).toBe(401);
      const { error } = response.body as ErrorJson;
      expect(error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
      expect(response.headers.get('request-id')).toMatch(/^req_/);
      expect(error.request_id).toBe(response.headers.get('request-id'));
    });

    it('refuses a key revoked with svc key revoke, once the server has let go of its cached lookup', async () => {
      const key = secondKey!;
      // The server has now looked the key up (and keeps the answer for up to a second).
      expect((await http(address, '/v1/project', { authorization: `Bearer ${key.secretKey}` })).status).toBe(200);

      const revoked = await svcJson<ApiKeyJson>(['key', 'revoke', '--project', projectId, key.id], env());
      expect(revoked).toMatchObject({ id: key.id, project_id: projectId, revoked_at: expect.any(String) });
      const revokedAt = Date.now();

      let response = await http(address, '/v1/project', { authorization: `Bearer ${key.secretKey}` });
      while (response.status === 200 && Date.now() - revokedAt < 3000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        response = await http(address, '/v1/project', { authorization: `Bearer ${key.secretKey}` });
      }
      expect(response.status).toBe(401);
      expect((response.body as ErrorJson).error.code).toBe('invalid_api_key');
      // The project's other key is untouched.
      expect((await http(address, '/v1/project', { authorization: `Bearer ${projectKey}` })).status).toBe(200);
    });

    // What `docker stop` and Kubernetes do: SIGTERM to the main process, here npm. npm forwards it
    // to the script's shell; unless the start script `exec`s node, the shell dies of the signal and
    // the server is left running, orphaned.
    it('stops gracefully on SIGTERM to the npm process: exit 0 and the port closed', async () => {
      const running = server!;
      process.kill(running.pid, 'SIGTERM');
      const exit = await running.waitForExit(STOP_TIMEOUT_MS);
      expect(exit, running.describe()).toEqual({ code: 0, signal: null });
      // The server itself stopped, not only npm in front of it.
      expect(await answers(address), `the server still answers after npm exited\n${running.describe()}`).toBe(false);
      expect(running.jsonLines().some((line) => line['msg'] === 'stopped')).toBe(true);
    });
  });
});

describeEachDialect('SVC_SECRET_KEY on start', (dialect) => {
  const env = useStartEnvironment(dialect);

  /** `svc serve`, run with node directly, so SIGTERM goes straight to the server. */
  async function startServer(secretKey: string): Promise<{ server: Child; address: string }> {
    const server = new Child(process.execPath, [SVC, 'serve'], { ...env(), PORT: '0', SVC_SECRET_KEY: secretKey });
    return { server, address: await server.waitForListening() };
  }

  async function stopServer(server: Child): Promise<void> {
    process.kill(server.pid, 'SIGTERM');
    const exit = await server.waitForExit(STOP_TIMEOUT_MS);
    expect(exit, server.describe()).toEqual({ code: 0, signal: null });
    expect(server.jsonLines().some((line) => line['msg'] === 'stopped')).toBe(true);
  }

  it('creates a default project with that key on first start, and nothing on a later start with another key', async () => {
    const firstKey = `svc_sk_${randomBase62(43)}`;
    const first = await startServer(firstKey);
    const created = first.server.jsonLines().filter((line) => line['msg'] === 'created the default project from SVC_SECRET_KEY');
    expect(created).toHaveLength(1);
    const project = await http(first.address, '/v1/project', { authorization: `Bearer ${firstKey}` });
    expect(project.status).toBe(200);
    expect(project.body).toMatchObject({ id: created[0]!['project_id'], object: 'project', name: 'Default project' });
    // The key is never written to the log.
    expect(first.server.stdout).not.toContain(firstKey);
    await stopServer(first.server);

    const secondKey = `svc_sk_${randomBase62(43)}`;
    const second = await startServer(secondKey);
    expect(second.server.jsonLines().some((line) => line['msg'] === 'created the default project from SVC_SECRET_KEY')).toBe(false);
    const refused = await http(second.address, '/v1/project', { authorization: `Bearer ${secondKey}` });
    expect(refused.status).toBe(401);
    expect((refused.body as ErrorJson).error.code).toBe('invalid_api_key');
    const again = await http(second.address, '/v1/project', { authorization: `Bearer ${firstKey}` });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: created[0]!['project_id'] });
    await stopServer(second.server);

    const db = openDatabase(loadConfig({ NODE_ENV: 'test', ...env() }).database);
    try {
      expect(await db.kysely.selectFrom('projects').select('id').execute()).toEqual([{ id: created[0]!['project_id'] }]);
      expect(await db.kysely.selectFrom('api_keys').select('project_id').execute()).toHaveLength(1);
    } finally {
      await db.destroy();
    }
  });
});

describeEachDialect('first start of several processes at once', (dialect) => {
  const env = useStartEnvironment(dialect);

  // Regression: on an empty database, `serve` and `worker` started together both ran the
  // migrations (SQLite: "table projects already exists") and both created the default project (the
  // second insert of the same key failed); either way one process did not start.
  it('two servers and a worker on an empty database all start, with one schema and one default project', async () => {
    const secretKey = `svc_sk_${randomBase62(43)}`;
    const started = { ...env(), PORT: '0', SVC_SECRET_KEY: secretKey };
    const servers = [new Child(process.execPath, [SVC, 'serve'], started), new Child(process.execPath, [SVC, 'serve'], started)];
    const worker = new Child(process.execPath, [SVC, 'worker'], started);
    const addresses = await Promise.all(servers.map((server) => server.waitForListening()));
    await worker.waitForLog('worker running');

    for (const address of addresses) {
      expect((await http(address, '/v1/project', { authorization: `Bearer ${secretKey}` })).status).toBe(200);
    }
    const created = [...servers, worker].flatMap((child) =>
      child.jsonLines().filter((line) => line['msg'] === 'created the default project from SVC_SECRET_KEY'),
    );
    expect(created).toHaveLength(1);

    for (const child of [...servers, worker]) {
      process.kill(child.pid, 'SIGTERM');
      expect(await child.waitForExit(STOP_TIMEOUT_MS), child.describe()).toEqual({ code: 0, signal: null });
    }
    const db = openDatabase(loadConfig({ NODE_ENV: 'test', ...env() }).database);
    try {
      expect(await db.kysely.selectFrom('projects').select('id').execute()).toHaveLength(1);
      expect(await db.kysely.selectFrom('api_keys').select('project_id').execute()).toHaveLength(1);
    } finally {
      await db.destroy();
    }
  });
});

describe('describeDatabase', () => {
  it('names the SQLite file, and a PostgreSQL URL without its password', () => {
    expect(describeDatabase({ dialect: 'sqlite', file: '/srv/data/svc.sqlite', synchronous: 'full' })).toBe('SQLite /srv/data/svc.sqlite');
    expect(
      describeDatabase({ dialect: 'postgres', url: 'postgres://svc:s3cr:et@db.internal:5432/svc', poolSize: 10, preparedStatements: true }),
    ).toBe('PostgreSQL postgres://svc:***@db.internal:5432/svc');
    expect(
      describeDatabase({ dialect: 'postgres', url: 'postgresql://svc@h1:5432,h2:5433/svc', poolSize: 10, preparedStatements: true }),
    ).toBe('PostgreSQL postgresql://svc@h1:5432,h2:5433/svc');
  });
});
