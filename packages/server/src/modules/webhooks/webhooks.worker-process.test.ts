import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { inTransaction } from '../../db/transaction.js';
import { createService, type Service } from '../../main.js';
import { isoTime, systemClock } from '../../lib/clock.js';
import { describeEachDialect, testConfig, useTestDatabase } from '../../test/database.js';
import { type NewEvent, recordEvent } from '../events/events.service.js';
import type { WebhookEndpointWithSecret } from './webhooks.service.js';

/**
 * The delivery worker as an operator runs it: `svc worker` processes (the compiled CLI) on a fresh
 * database, sending to a real receiver on 127.0.0.1. One worker is killed with SIGKILL while its
 * requests are in flight and another is started; two workers share one PostgreSQL database. The
 * test process writes the events, as the API would. Every child is killed in afterAll and every
 * wait has a deadline.
 *
 * What the design promises (docs/api.md section 6, docs/adr/0006-webhook-delivery.md), and what is
 * asserted: no delivery is lost; no attempt is sent twice while its lease is alive; an attempt
 * whose result was never recorded (its worker died) is sent again by the restarted worker, which
 * takes back its own leases at start instead of waiting them out, so a receiver may see that event
 * twice (at-least-once: it de-duplicates by `idempotency_key`) and the log shows both sends.
 */

const ROOT = fileURLToPath(new URL('../../../../../', import.meta.url));
const SVC = join(ROOT, 'packages/server/bin/svc.js');
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
const POLL_MS = 50;

/** Settings of the service that must come from the test, never from the environment vitest runs in. */
const SERVICE_VARIABLE =
  /^(NODE_ENV|HOST|PORT|DATA_DIR|DATABASE_URL|DATABASE_POOL_SIZE|DATABASE_PREPARED_STATEMENTS|SQLITE_SYNCHRONOUS|REDIS_URL|LOG_LEVEL|SVC_SECRET_KEY|RATE_LIMIT_\w+|TRUST_PROXY|TLS_\w+|CORS_ORIGINS|WEBHOOK_\w+|EVENT_RETENTION_DAYS|SHUTDOWN_TIMEOUT_\w+|SMTP_URL|SECRETS_\w+)$/;
/**
 * The keyring the test's own service and every worker share: endpoints' secrets are sealed
 * (docs/adr/0015-secrets-at-rest.md), so processes of one deployment need the same key.
 */
const SECRETS_ENCRYPTION_KEYS = `test:${randomBytes(32).toString('base64')}`;

// ---- Processes -------------------------------------------------------------------------------

const workers = new Set<WorkerProcess>();
/** The workers' DATA_DIR (nothing should be written there; the database is DATABASE_URL). */
const dataDir = mkdtempSync(join(tmpdir(), 'svc-worker-process-'));

/** `svc worker` in a process group of its own, its JSON log kept. */
class WorkerProcess {
  stdout = '';
  stderr = '';
  readonly process: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(env: Readonly<Record<string, string>>) {
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !SERVICE_VARIABLE.test(name)));
    this.process = spawn(process.execPath, [SVC, 'worker'], {
      cwd: ROOT,
      env: { ...inherited, NODE_ENV: 'development', LOG_LEVEL: 'info', DATA_DIR: dataDir, SECRETS_ENCRYPTION_KEYS, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.process.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.process.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => {
      this.process.once('error', () => resolve({ code: null, signal: null }));
      this.process.once('exit', (code, signal) => resolve({ code, signal }));
    });
    workers.add(this);
  }

  log(): Record<string, unknown>[] {
    return this.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  describe(): string {
    return `--- stdout\n${this.stdout}\n--- stderr\n${this.stderr}`;
  }

  async running(): Promise<void> {
    await until(
      () => this.log().some((line) => line['msg'] === 'worker running'),
      START_TIMEOUT_MS,
      () => `the worker did not start\n${this.describe()}`,
    );
  }

  /** Signals the whole group and waits (bounded) for the process to exit. */
  async signal(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.process.exitCode === null && this.process.signalCode === null && this.process.pid !== undefined) {
      try {
        process.kill(-this.process.pid, signal);
      } catch {
        // Gone already.
      }
    }
    return Promise.race([
      this.exited,
      sleep(STOP_TIMEOUT_MS).then(() => {
        throw new Error(`still running ${STOP_TIMEOUT_MS} ms after ${signal}\n${this.describe()}`);
      }),
    ]);
  }
}

afterAll(async () => {
  await Promise.all([...workers].map((worker) => worker.signal('SIGKILL').catch(() => undefined)));
  rmSync(dataDir, { recursive: true, force: true });
});

beforeAll(async () => {
  // bin/svc.js runs dist/: bring it up to date with the sources (incremental, so usually quick).
  try {
    await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'packages/server/tsconfig.build.json'],
      {
        cwd: ROOT,
        timeout: 120_000,
      },
    );
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`the build failed; the worker process cannot be tested without it:\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}, 150_000);

/** Polls `done` every POLL_MS until it holds, at most `timeoutMs`. */
async function until(done: () => boolean | Promise<boolean>, timeoutMs: number, explain: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${explain()}`);
    await sleep(POLL_MS);
  }
}

// ---- The receiver ------------------------------------------------------------------------------

interface Arrival {
  readonly eventId: string;
  readonly atMs: number;
  /** The 2xx or 5xx was written out completely (the worker was there to take it). */
  answered: boolean;
}

/**
 * A real receiver on 127.0.0.1. `holdMs` delays every answer (a slow endpoint); `status` decides
 * each one from how many times that event has arrived.
 */
async function startReceiver(options: { holdMs: number; status: (seen: number) => number }) {
  const arrivals: Arrival[] = [];
  let holdMs = options.holdMs;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const arrival: Arrival = { eventId: String(request.headers['webhook-id']), atMs: Date.now(), answered: false };
      arrivals.push(arrival);
      const seen = arrivals.filter((other) => other.eventId === arrival.eventId).length;
      response.on('finish', () => (arrival.answered = true));
      const answer = () => {
        if (!response.destroyed) response.writeHead(options.status(seen)).end();
      };
      if (holdMs > 0) setTimeout(answer, holdMs);
      else answer();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    arrivals,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    setHold(milliseconds: number) {
      holdMs = milliseconds;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

// ---- Setting up through the service, as the API would -----------------------------------------

async function setUp(service: Service, url: string): Promise<{ projectId: string; endpointId: string }> {
  const { project, secretKey } = await service.projects.createProject({ name: 'worker processes' });
  const response = await service.app.inject({
    method: 'POST',
    url: '/v1/webhooks',
    headers: { authorization: `Bearer ${secretKey}` },
    payload: { url, events: ['*'] },
  });
  expect(response.statusCode).toBe(201);
  return { projectId: project.id, endpointId: response.json<WebhookEndpointWithSecret>().id };
}

async function recordEvents(service: Service, projectId: string, count: number, from = 0): Promise<string[]> {
  return inTransaction(service.db, async (trx) => {
    const ids: string[] = [];
    for (let index = from; index < from + count; index += 1) {
      ids.push(
        await recordEvent(trx, {
          projectId,
          type: 'wallet.credit.added',
          data: { index },
          createdAt: isoTime(systemClock.now()),
        } as unknown as NewEvent),
      );
    }
    return ids;
  });
}

function deliveryRows(service: Service, endpointId: string) {
  return service.db.kysely
    .selectFrom('webhook_deliveries')
    .select(['id', 'event_id', 'status', 'attempt_count', 'lease_id', 'leased_until'])
    .where('endpoint_id', '=', endpointId)
    .execute();
}

// ---- The tests -----------------------------------------------------------------------------------

describeEachDialect('svc worker, killed mid-delivery', (dialect) => {
  const database = useTestDatabase(dialect);

  it('loses no delivery: the restarted worker takes back its own leases and sends what it had not recorded within 5 s', async () => {
    // The default lease: a worker that waited it out would not finish within the deadline below.
    const env = { DATABASE_URL: database().url, WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_LEASE_SECONDS: '60' };
    const receiver = await startReceiver({ holdMs: 300, status: () => 200 });
    const service = await createService(testConfig(database().url, { WEBHOOK_ALLOW_PRIVATE: '1', SECRETS_ENCRYPTION_KEYS }));
    try {
      const { projectId, endpointId } = await setUp(service, receiver.url);
      const before = await recordEvents(service, projectId, 60);

      // The first worker takes them all on and sends 32 at a time to the slow receiver. It is
      // killed once some answers have come back and other requests are still open.
      const first = new WorkerProcess(env);
      await first.running();
      await until(
        () =>
          receiver.arrivals.filter((arrival) => arrival.answered).length >= 10 && receiver.arrivals.some((arrival) => !arrival.answered),
        20_000,
        () => `no answered and open requests at once: ${JSON.stringify(receiver.arrivals)}\n${first.describe()}`,
      );
      // Which requests are open is read before the signal is sent: the receiver still finishes its
      // answers after the client has died, so reading it after the exit would find none open (a
      // regression test for that flake under load).
      const openAtKill = receiver.arrivals.filter((arrival) => !arrival.answered);
      expect(openAtKill.length).toBeGreaterThan(0);
      expect((await first.signal('SIGKILL')).signal).toBe('SIGKILL');
      const killedAtMs = Date.now();
      const beforeKill = receiver.arrivals.filter((arrival) => arrival.atMs <= killedAtMs);

      const snapshot = await deliveryRows(service, endpointId);
      const recorded = new Set(snapshot.filter((row) => row.status === 'succeeded').map((row) => row.event_id));
      const leasedUntilMs = new Map(
        snapshot.filter((row) => row.leased_until !== null).map((row) => [row.event_id, Date.parse(row.leased_until ?? '')]),
      );
      // Whatever the dead worker had not recorded is still pending under its lease.
      expect(snapshot.filter((row) => row.status === 'pending').every((row) => row.lease_id !== null)).toBe(true);

      // More events while no worker runs, then a new worker with a fast receiver.
      const after = await recordEvents(service, projectId, 20, 60);
      receiver.setHold(0);
      // The same DATA_DIR: the restarted worker finds its identity (the dead process's slot).
      const second = new WorkerProcess(env);
      await second.running();
      // From the moment the new process is up (starting Node and opening the database take seconds
      // on a loaded machine, and are not the worker's doing).
      const runningLine = second.log().find((line) => line['msg'] === 'worker running');
      const restartedAtMs = Date.parse(String(runningLine?.['time']));
      await until(
        async () => (await deliveryRows(service, endpointId)).every((row) => row.status === 'succeeded'),
        20_000,
        () => `not every delivery succeeded\n${second.describe()}`,
      );

      const rows = await deliveryRows(service, endpointId);
      expect(rows).toHaveLength(before.length + after.length);
      expect(rows.every((row) => row.status === 'succeeded' && row.attempt_count >= 1)).toBe(true);
      // Every event got a complete 2xx at least once.
      const answered = new Set(receiver.arrivals.filter((arrival) => arrival.answered).map((arrival) => arrival.eventId));
      expect([...answered].sort()).toEqual([...before, ...after].sort());

      // No worker sent an attempt twice: each event arrived at most once from each of them.
      const afterKill = receiver.arrivals.filter((arrival) => arrival.atMs > killedAtMs);
      expect([...countBy(beforeKill, (arrival) => arrival.eventId).values()].every((count) => count === 1)).toBe(true);
      expect([...countBy(afterKill, (arrival) => arrival.eventId).values()].every((count) => count === 1)).toBe(true);
      // The new worker sent exactly what the dead one had not recorded, and nothing it had.
      const resent = new Set(afterKill.map((arrival) => arrival.eventId));
      expect([...resent].sort()).toEqual([...before, ...after].filter((eventId) => !recorded.has(eventId)).sort());
      // A repeat (an event that arrived from both) is an attempt the dead worker sent and never
      // recorded. The restarted worker took its own leases back at start: every delivery the dead
      // one held arrived within 5 s of the restart, long before its 60-s lease would have expired.
      const repeated = beforeKill.filter((arrival) => resent.has(arrival.eventId));
      expect(repeated.length).toBeGreaterThanOrEqual(openAtKill.length);
      const resumed = second.log().find((line) => line['msg'] === 'webhook worker: resumed the deliveries it held before a restart');
      expect(resumed?.['deliveries'], second.describe()).toBe(leasedUntilMs.size);
      for (const eventId of leasedUntilMs.keys()) {
        expect(recorded.has(eventId)).toBe(false);
        const resentAtMs = afterKill.find((arrival) => arrival.eventId === eventId)?.atMs ?? Infinity;
        expect(resentAtMs - restartedAtMs, eventId).toBeLessThan(5000);
        expect(resentAtMs, eventId).toBeLessThan(leasedUntilMs.get(eventId) ?? 0);
      }
      // The delivery log shows each possible send of the dead worker as an interrupted attempt
      // before the one that succeeded.
      const attempts = await service.db.kysely
        .selectFrom('webhook_attempts as a')
        .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
        .select(['d.event_id', 'a.attempt_number', 'a.status_code', 'a.error'])
        .where('d.endpoint_id', '=', endpointId)
        .orderBy('a.attempt_number')
        .execute();
      for (const eventId of leasedUntilMs.keys()) {
        const log = attempts.filter((attempt) => attempt.event_id === eventId);
        expect(log.map((attempt) => attempt.status_code)).toEqual([null, 200]);
        expect(log[0]?.error).toMatch(/^interrupted: /);
      }
      expect((await second.signal('SIGTERM')).code).toBe(0);
    } finally {
      await service.close();
      await receiver.close();
    }
  }, 90_000);
});

describe.skipIf(inject('postgresAdminUrl') === '')('two svc worker processes on one PostgreSQL', () => {
  const database = useTestDatabase('postgres');

  it('deliver 1,000 events, first attempts and retries, with no attempt sent twice', async () => {
    const count = 1000;
    // Neither worker backs off past 100 ms: both must find some of the events the test writes (from
    // another process, so no wake), or the race this test is about would not happen.
    const env = { DATABASE_URL: database().url, WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE: '0,0,0', WEBHOOK_IDLE_POLL_MS: '100' };
    // The first attempt of every event fails and the second succeeds, so the workers race for the
    // retries too. An attempt sent twice would show as a third arrival.
    const receiver = await startReceiver({ holdMs: 0, status: (seen) => (seen === 1 ? 500 : 200) });
    const service = await createService(testConfig(database().url, { WEBHOOK_ALLOW_PRIVATE: '1', SECRETS_ENCRYPTION_KEYS }));
    try {
      const { projectId, endpointId } = await setUp(service, receiver.url);
      const pair = [new WorkerProcess(env), new WorkerProcess(env)];
      await Promise.all(pair.map((worker) => worker.running()));
      // Committed in 20 transactions, a few milliseconds apart, so both workers find some.
      const eventIds: string[] = [];
      for (let batch = 0; batch < 20; batch += 1) {
        eventIds.push(...(await recordEvents(service, projectId, count / 20, batch * (count / 20))));
        await sleep(20);
      }
      await until(
        async () => (await deliveryRows(service, endpointId)).filter((row) => row.status === 'succeeded').length === count,
        30_000,
        () => `not every delivery succeeded\n${pair.map((worker) => worker.describe()).join('\n')}`,
      );
      for (const worker of pair) expect((await worker.signal('SIGTERM')).code, worker.describe()).toBe(0);

      const perEvent = countBy(receiver.arrivals, (arrival) => arrival.eventId);
      expect([...perEvent.keys()].sort()).toEqual([...eventIds].sort());
      expect([...perEvent.values()].every((arrivals) => arrivals === 2)).toBe(true);
      const rows = await deliveryRows(service, endpointId);
      expect(rows.every((row) => row.status === 'succeeded' && row.attempt_count === 2)).toBe(true);
      // Both processes did part of the work, and between them sent exactly what arrived.
      const sent = pair.map((worker) => {
        const stopped = worker.log().find((line) => line['msg'] === 'worker stopped');
        return (stopped?.['webhook_attempts'] as { sent?: number } | undefined)?.sent ?? 0;
      });
      expect(
        sent.every((attempts) => attempts > 0),
        JSON.stringify(sent),
      ).toBe(true);
      expect(sent[0]! + sent[1]!).toBe(2 * count);
    } finally {
      await service.close();
      await receiver.close();
    }
  }, 60_000);
});
