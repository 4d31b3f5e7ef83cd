import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, describeEachDialect, type TestDatabase } from '../../test/database.js';

/**
 * No process may keep accepting a session another process has revoked: each validation reads the
 * database (docs/adr/0009-sessions-and-refresh-chains.md). Guards against a session cache that
 * would let a revoked session live on in a second server: two `svc serve` processes on one
 * database, revoke on the first, validate on the second at once.
 */

const SVC = fileURLToPath(new URL('../../../bin/svc.js', import.meta.url));
const START_TIMEOUT_MS = 45_000;
const SECRET_KEY = `svc_sk_${'a1B2c3D4e5F6g7H8'.repeat(3)}`;

interface Server {
  readonly process: ChildProcess;
  readonly address: Promise<string>;
}

function startServer(env: Record<string, string>): Server {
  const child = spawn(process.execPath, [SVC, 'serve'], {
    env: {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: '0',
      RATE_LIMIT_KEY_PER_SECOND: '0',
      RATE_LIMIT_IP_PER_SECOND: '0',
      REDIS_URL: '',
      ...env,
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const address = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line after ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      for (const line of output.split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; address?: string };
        if (entry.msg === 'listening' && typeof entry.address === 'string') {
          clearTimeout(timer);
          resolve(entry.address);
        }
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('exit', () => reject(new Error(`exited before listening:\n${output}`)));
  });
  return { process: child, address };
}

function stop(server: Server | undefined): void {
  if (server?.process.pid === undefined || server.process.exitCode !== null) return;
  try {
    process.kill(-server.process.pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

async function post(
  address: string,
  path: string,
  body: unknown,
  auth: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${address}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

describeEachDialect('a session revoked by one process', (dialect) => {
  let database: TestDatabase | undefined;
  let dataDir = '';
  const servers: Server[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-sessions-'));
    database = await createTestDatabase(dialect);
    const env = { DATA_DIR: dataDir, DATABASE_URL: database.url, SVC_SECRET_KEY: SECRET_KEY };
    // The first creates the default project with SVC_SECRET_KEY; the second starts on that database.
    servers.push(startServer(env));
    await servers[0]!.address;
    servers.push(startServer(env));
    await servers[1]!.address;
  }, 2 * START_TIMEOUT_MS);

  afterAll(async () => {
    for (const server of servers) stop(server);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is refused by the other process at once', async () => {
    const [first, second] = await Promise.all(servers.map((server) => server.address));
    const signup = await post(
      first!,
      '/v1/auth/signup',
      { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada' },
      SECRET_KEY,
    );
    expect(signup.status, JSON.stringify(signup.body)).toBe(201);
    const token = (signup.body['session'] as { id: string }).id;

    // Both processes have just seen the session as valid.
    for (const address of [first!, second!]) {
      expect((await post(address, '/v1/sessions/validate', { session_id: token }, SECRET_KEY)).body['valid']).toBe(true);
    }
    expect((await post(first!, '/v1/auth/logout', {}, token)).status).toBe(204);
    const afterRevocation = await post(second!, '/v1/sessions/validate', { session_id: token }, SECRET_KEY);
    expect(afterRevocation.body).toEqual({ valid: false, reason: 'revoked' });
    // And as a credential on the second process's session routes.
    const me = await fetch(`${second!}/v1/users/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(401);
    expect(((await me.json()) as { error: { code: string } }).error.code).toBe('session_revoked');
  });
});
