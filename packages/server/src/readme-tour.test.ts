import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from './modules/events/event-types.js';

/**
 * The README's curl tour, run as written: its `sh` blocks, in order, in one bash, against a real
 * `svc serve` on SQLite. Regression test for a tour that did not run (variables never set, a
 * webhook receiver that needed a setting the tour did not mention). Nothing is rewritten: the tour
 * calls `$BASE`, which it sets from `PORT`, and its receiver listens on `RECEIVER_PORT`; the test
 * sets both to free ports, as a reader with another port would. The server is started by the test
 * instead of the tour's `npm start`.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SVC = join(ROOT, 'packages/server/bin/svc.js');
const START_TIMEOUT_MS = 45_000;
const TOUR_TIMEOUT_MS = 90_000;

/** The `sh` blocks between the tour's heading and the end of its section. */
export function tourBlocks(readme: string): string[] {
  const start = readme.indexOf('## A 5-minute tour with curl');
  const end = readme.indexOf('\n## ', start + 1);
  if (start < 0 || end < 0) throw new Error('the README has no tour section');
  const section = readme.slice(start, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Environment without the variables of a service the developer may run beside the tests. */
function cleanEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(DATABASE_URL|REDIS_URL|PORT|HOST|DATA_DIR|SMTP_URL|SVC_SECRET_KEY|NODE_ENV)$/.test(name),
    ),
  );
  return {
    ...inherited,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_KEY_PER_SECOND: '0',
    RATE_LIMIT_IP_PER_SECOND: '0',
    ...extra,
  };
}

function killGroup(child: ChildProcess | undefined): void {
  if (child?.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

describe('the README tour', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-tour-'));
  let server: ChildProcess | undefined;
  let port = 0;
  let serverLog = '';

  beforeAll(async () => {
    port = await freePort();
    server = spawn(process.execPath, [SVC, 'serve'], {
      cwd: ROOT,
      env: cleanEnv({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: '1' }),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout?.setEncoding('utf8').on('data', (chunk: string) => (serverLog += chunk));
    server.stderr?.setEncoding('utf8').on('data', (chunk: string) => (serverLog += chunk));
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline || server.exitCode !== null) throw new Error(`the server did not start:\n${serverLog}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, START_TIMEOUT_MS + 5_000);

  afterAll(() => {
    killGroup(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    'runs block after block and shows what the README says it shows',
    async () => {
      const blocks = tourBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
      expect(blocks.length).toBeGreaterThan(5);
      // The first block starts the server, which the test has done.
      expect(blocks[0]?.trim()).toBe('WEBHOOK_ALLOW_PRIVATE=1 npm start');
      // No address or port is written out: every call goes through $BASE.
      expect(blocks.join('\n')).not.toMatch(/(localhost|127\.0\.0\.1):\d/);
      const receiverPort = await freePort();
      // As pasted into an interactive shell, but stopping at the first command that fails.
      const script = ['set -eu', ...blocks.slice(1)].join('\n');

      const shell = spawn('bash', ['-c', script], {
        cwd: ROOT,
        env: cleanEnv({ DATA_DIR: dataDir, PORT: String(port), RECEIVER_PORT: String(receiverPort) }),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      shell.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => {
          killGroup(shell);
          resolve(null);
        }, TOUR_TIMEOUT_MS);
        shell.once('exit', (exitCode) => {
          clearTimeout(timer);
          resolve(exitCode);
        });
      });
      killGroup(shell);

      expect(code, output).toBe(0);
      expect(output).toMatch(/^svc_sk_\w+$/m);
      expect(output).toContain('"code":"credential_missing"');
      expect(output).toContain('"code":"invalid_api_key"');
      expect(output).toMatch(/^usr_\w+ wlt_\w+ wlt_\w+$/m);
      expect(output).toMatch(/idempotent-replayed: true/i);
      expect(output).toContain('"code":"insufficient_credits"');
      expect(output).toContain(
        '{"credits":60,"currency":"USD","available":60,"debt":0,"credit_limit":0,"categories":[{"category":"default","remaining":60}]}',
      );
      expect(output).toContain("[ 'transfer_out', 'debit', 'credit' ]");
      // The session's balance, as node prints an object too wide for one line.
      expect(output).toContain(
        "  available: 60,\n  debt: 0,\n  credit_limit: 0,\n  categories: [ { category: 'default', remaining: 60 } ]\n}",
      );
      expect(output).toMatch(/^204$/m);
      expect(output).toMatch(/^session_revoked$/m);
      expect(output).toMatch(/webhook evt_\w+ webhook\.test: signature valid/);
      expect(output).toMatch(/webhook evt_\w+ wallet\.credit\.added: signature valid/);
      expect(output).toContain("[ 'succeeded', 'succeeded' ]");
      // The event catalog's size, as the tour prints it and as the README says it.
      expect(output).toMatch(new RegExp(`^${EVENT_TYPES.length}$`, 'm'));
      expect(blocks.join('\n')).toContain(`| json 'data.length'\n# ${EVENT_TYPES.length}\n`);
      expect(output).toContain("'wallet.debit insufficient_credits'");
      expect(output).not.toContain('SIGNATURE INVALID');
    },
    TOUR_TIMEOUT_MS + 10_000,
  );
});
