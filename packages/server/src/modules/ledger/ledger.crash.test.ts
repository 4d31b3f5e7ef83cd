import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createService } from '../../main.js';
import { randomBase62 } from '../../lib/ids.js';
import { createTestDatabase, describeEachDialect, type TestDatabase, testConfig } from '../../test/database.js';
import { killServeProcess, type ServeProcess, startServeProcess, stopServeProcess, SVC } from '../../test/serve-process.js';
import { createUser, walletsClient } from '../wallets/wallets.fixtures.js';

/**
 * Money under SIGKILL: many clients send credits (single, and in batches with and without keys on
 * their operations, atomic and not), each request with an Idempotency-Key, while the server is
 * killed at random moments and started again. Every request is retried with its key until it gets
 * an answer. Then every balance must equal exactly what the answers say was applied: a key's
 * change and its answer commit together or not at all (docs/adr/0004-idempotency.md), so a retry
 * either replays or applies, never both. A request in flight at a kill must be answered within 10 s
 * of the restart: no lease to wait out (a key's old claim would hold it 60 s). Alone it takes well
 * under a second; with the whole suite on two cores, up to 5.3 s was seen.
 */

const CLIENTS = 8;
const REQUESTS_PER_CLIENT = 20;
const WALLETS = 4;
const BATCH_SIZE = 10;
const KILLS = 3;
const RETRY_PAUSE_MS = 25;
const RUN_DEADLINE_MS = 150_000;
const IN_FLIGHT_ANSWER_MS_MAX = 10_000;

type Kind = 'single' | 'batch' | 'batch-op-keys' | 'atomic-batch';
const KINDS: readonly Kind[] = ['single', 'batch', 'batch-op-keys', 'atomic-batch'];

interface Sent {
  readonly key: string;
  readonly url: string;
  readonly body: unknown;
}

interface Answer {
  readonly status: number;
  readonly body: string;
  /** When the answer arrived (ms since the epoch). */
  readonly at: number;
}

interface BatchResult {
  readonly status: number;
  readonly transaction?: { readonly wallet_id: string; readonly amount: number };
}

describeEachDialect('money under SIGKILL, every request retried with its key', (dialect) => {
  let database: TestDatabase | undefined;
  let dataDir = '';
  let env: Record<string, string> = {};
  let server: ServeProcess | undefined;
  let secretKey = '';
  let projectId = '';
  const wallets: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    dataDir = mkdtempSync(join(tmpdir(), 'svc-crash-'));
    env = {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'fatal',
      RATE_LIMIT_KEY_PER_SECOND: '0',
      RATE_LIMIT_IP_PER_SECOND: '0',
    };
    // This process migrates the database and makes the project and wallets, then leaves.
    const setup = await createService(testConfig(database.url, { DATA_DIR: dataDir, LOG_LEVEL: 'error' }));
    try {
      const project = await setup.projects.createProject({ name: 'Crash' });
      projectId = project.project.id;
      secretKey = project.secretKey;
      const userId = await createUser(setup, projectId);
      const client = await walletsClient(setup, { projectId, secretKey });
      for (let index = 0; index < WALLETS; index += 1) wallets.push((await client.createWallet({ user_id: userId })).id);
    } finally {
      await setup.close();
    }
    server = await startServeProcess(env);
  }, 90_000);

  afterAll(async () => {
    if (server !== undefined) await stopServeProcess(server.child);
    await database?.drop();
    if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true });
  });

  it('applies every request exactly once, and answers the ones in flight at a kill within 10 s of the restart', async () => {
    const origin = server!.origin;
    const port = server!.port;
    const deadline = Date.now() + RUN_DEADLINE_MS;
    const inFlight = new Set<string>();
    const answers = new Map<string, Answer>();
    const requests: Sent[] = [];

    /** Sends one request with its key until it has an answer: through kills, restarts and 409s. */
    const settle = async (sent: Sent): Promise<Answer> => {
      inFlight.add(sent.key);
      try {
        for (;;) {
          if (Date.now() > deadline) throw new Error(`no answer for ${sent.key} before the deadline`);
          try {
            const response = await fetch(`${origin}${sent.url}`, {
              method: 'POST',
              headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json', 'idempotency-key': sent.key },
              body: JSON.stringify(sent.body),
              signal: AbortSignal.timeout(20_000),
            });
            const body = await response.text();
            // 409: the key's first try is still running (in a process that may be dying); 503: the
            // change could not be committed. Both are answered by sending the same request again.
            if (response.status !== 409 && response.status !== 503 && response.status < 500) {
              return { status: response.status, body, at: Date.now() };
            }
            expect(response.status, body).not.toBe(500);
          } catch (error) {
            if (error instanceof Error && error.name === 'AssertionError') throw error;
            // The server was killed mid-request, or is not listening yet.
          }
          await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
        }
      } finally {
        inFlight.delete(sent.key);
      }
    };

    const run = randomBase62(6);
    const makeRequest = (client: number, index: number): Sent => {
      const kind = KINDS[(client + index) % KINDS.length] ?? 'single';
      const key = `${run}-${client}-${index}`;
      const amount = (n: number) => 1 + ((client * 31 + index * 17 + n * 7) % 97);
      const wallet = (n: number) => wallets[(client + index + n) % WALLETS] ?? '';
      if (kind === 'single') return { key, url: `/v1/wallets/${wallet(0)}/credits`, body: { amount: amount(0) } };
      const operations = Array.from({ length: kind === 'atomic-batch' ? 5 : BATCH_SIZE }, (_, n) => ({
        type: 'credit',
        wallet_id: wallet(n),
        amount: amount(n),
        ...(kind === 'batch-op-keys' ? { idempotency_key: `${key}-op-${n}` } : {}),
      }));
      return { key, url: '/v1/wallets/batch', body: { operations, ...(kind === 'atomic-batch' ? { atomic: true } : {}) } };
    };

    let clientsDone = false;
    const clients = Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let index = 0; index < REQUESTS_PER_CLIENT; index += 1) {
          const sent = makeRequest(client, index);
          requests.push(sent);
          answers.set(sent.key, await settle(sent));
        }
      }),
    ).finally(() => (clientsDone = true));

    // The killer: SIGKILL at a random moment under load, start again on the same port, and note
    // which keys were in flight and when the server answered again.
    const restarts: { readyAt: number; keys: readonly string[] }[] = [];
    // Each kill comes at a random point of its own stretch of the run, counted in answers rather
    // than in time: on a fast machine the whole load can end before a timer would fire.
    const total = CLIENTS * REQUESTS_PER_CLIENT;
    for (let kill = 0; kill < KILLS && !clientsDone; kill += 1) {
      const threshold = Math.floor((total * (kill + 0.2 + Math.random() * 0.6)) / (KILLS + 1));
      while (answers.size < threshold && !clientsDone) await new Promise((resolve) => setTimeout(resolve, 2));
      if (clientsDone) break;
      const keys = [...inFlight];
      await killServeProcess(server!.child);
      server = await startServeProcess(env, port);
      restarts.push({ readyAt: Date.now(), keys });
    }
    await clients;

    expect(restarts.length, 'the server was killed under load').toBe(KILLS);
    expect(
      restarts.some((restart) => restart.keys.length > 0),
      'some requests were in flight at a kill',
    ).toBe(true);
    // Measured from the last restart before the answer: a key may have been in flight at several kills.
    for (const restart of restarts) {
      for (const key of restart.keys) {
        const answer = answers.get(key);
        expect(answer, key).toBeDefined();
        // A request whose answer was already on its way when the kill came has none to wait for.
        const readied = restarts.map((one) => one.readyAt).filter((readyAt) => readyAt <= answer!.at);
        if (readied.length === 0) continue;
        expect(answer!.at - Math.max(...readied), `${key} answered after the restart`).toBeLessThan(IN_FLIGHT_ANSWER_MS_MAX);
      }
    }

    // What the answers say was applied, per wallet.
    const applied = new Map(wallets.map((id) => [id, 0]));
    const add = (walletId: string, amount: number) => applied.set(walletId, (applied.get(walletId) ?? 0) + amount);
    for (const sent of requests) {
      const answer = answers.get(sent.key)!;
      expect([200, 201], answer.body).toContain(answer.status);
      const body = JSON.parse(answer.body) as { wallet_id?: string; amount?: number; results?: BatchResult[] };
      if (body.results === undefined) {
        add(body.wallet_id!, body.amount!);
      } else {
        for (const result of body.results) {
          expect(result.status).toBe(201);
          add(result.transaction!.wallet_id, result.transaction!.amount);
        }
      }
    }
    for (const walletId of wallets) {
      const response = await fetch(`${origin}/v1/wallets/${walletId}/balance`, { headers: { authorization: `Bearer ${secretKey}` } });
      const { credits } = (await response.json()) as { credits: number };
      expect(credits, walletId).toBe(applied.get(walletId));
    }

    // Each key answers its first answer again, byte for byte.
    for (const sent of requests.filter((_, index) => index % 7 === 0)) {
      const response = await fetch(`${origin}${sent.url}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json', 'idempotency-key': sent.key },
        body: JSON.stringify(sent.body),
      });
      expect(response.headers.get('idempotent-replayed')).toBe('true');
      expect(await response.text()).toBe(answers.get(sent.key)!.body);
    }

    const { stdout } = await promisify(execFile)(process.execPath, [SVC, 'ledger', 'verify', '--project', projectId], {
      env: { ...env, LOG_LEVEL: 'silent' },
      timeout: 60_000,
    });
    expect(JSON.parse(stdout)).toMatchObject({ sound: true });
  }, 240_000);
});
