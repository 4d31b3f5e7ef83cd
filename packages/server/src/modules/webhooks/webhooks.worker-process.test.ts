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
import { assert } from '../../lib/assert.js';
import { inTransaction } from '../../db/transaction.js';
import { createService, type Service } from '../../main.js';
import { isoTime, systemClock } from '../../lib/clock.js';
import { describeEachDialect, testConfig, useTestDatabase } from '../../test/database.js';
import { countUndispatchedEvents } from '../events/event-log.service.js';
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
 * twice (at-least-once: it de-duplicates by `idempotency_key`) and the log shows both sends. A
 * worker under another identity takes over a dead worker's leases once its heartbeat is stale,
 * and never those of a live worker, however long its attempts take.
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

/** Resolves once the heartbeat row of the worker run under `identity` has been renewed `count` times from now. */
async function heartbeats(service: Service, identity: string, count: number, explain: () => string): Promise<void> {
  const lastSeen = async () =>
    (await service.db.kysely.selectFrom('webhook_workers').select('last_seen').where('id', 'like', `${identity}.%`).executeTakeFirst())
      ?.last_seen;
  let seen = await lastSeen();
  let renewed = 0;
  await until(
    async () => {
      const now = await lastSeen();
      if (now !== undefined && now !== seen) renewed += 1;
      seen = now;
      return renewed >= count;
    },
    10_000,
    () => `the heartbeat of ${identity} was renewed ${renewed} times, not ${count}\n${explain()}`,
  );
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

/** Deliveries of the endpoint not yet succeeded. */
async function unfinished(service: Service, endpointId: string): Promise<number> {
  return (await deliveryRows(service, endpointId)).filter((row) => row.status !== 'succeeded').length;
}

/** The delivery log of an endpoint's deliveries, by event. */
async function attemptLog(service: Service, endpointId: string) {
  const attempts = await service.db.kysely
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .select(['d.event_id', 'a.attempt_number', 'a.status_code', 'a.error'])
    .where('d.endpoint_id', '=', endpointId)
    .orderBy('a.attempt_number')
    .execute();
  const byEvent = new Map<string, typeof attempts>();
  for (const attempt of attempts) byEvent.set(attempt.event_id, [...(byEvent.get(attempt.event_id) ?? []), attempt]);
  return byEvent;
}

/** What a worker process logged when it stopped: its totals. */
function sentBy(worker: WorkerProcess): number | undefined {
  const stopped = worker.log().find((line) => line['msg'] === 'worker stopped');
  return (stopped?.['webhook_attempts'] as { sent?: number } | undefined)?.sent;
}

const TAKEN_OVER = 'webhook worker: took over the leases of a dead worker';
/** A dead worker's deliveries must go out again within this long after the kill. */
const TAKE_OVER_MS_MAX = 10_000;

/**
 * A worker killed with SIGKILL while its requests hang: its heartbeat row goes stale, and another
 * worker, under another identity, frees its leases and sends its deliveries within 10 s of the
 * kill, long before the 60-s leases expire (docs/adr/0006-webhook-delivery.md, "Dead workers").
 */
describeEachDialect('svc worker killed, its leases taken over by another identity', (dialect) => {
  const database = useTestDatabase(dialect);
  const EVENTS = 20;

  /**
   * Starts worker `first`, writes EVENTS events and waits until all of them hang open at the
   * receiver; then (after `beforeKill`) the receiver answers at once and `first` is killed. Returns
   * the time of the kill.
   */
  async function killHolding(
    service: Service,
    env: Record<string, string>,
    receiver: Awaited<ReturnType<typeof startReceiver>>,
    beforeKill: () => Promise<void> = async () => undefined,
  ) {
    const { projectId, endpointId } = await setUp(service, receiver.url);
    const first = new WorkerProcess({ ...env, WEBHOOK_WORKER_ID: 'first' });
    await first.running();
    const eventIds = await recordEvents(service, projectId, EVENTS);
    await until(
      () => receiver.arrivals.length >= EVENTS,
      20_000,
      () => `the first worker did not send every event: ${receiver.arrivals.length}\n${first.describe()}`,
    );
    await beforeKill();
    receiver.setHold(0);
    expect((await first.signal('SIGKILL')).signal).toBe('SIGKILL');
    const killedAtMs = Date.now();
    const leased = await deliveryRows(service, endpointId);
    expect(leased.every((row) => row.status === 'pending' && row.lease_id?.startsWith('first.') === true)).toBe(true);
    expect(leased).toHaveLength(EVENTS);
    return { endpointId, eventIds, killedAtMs, leasedUntilMs: Math.min(...leased.map((row) => Date.parse(row.leased_until ?? ''))) };
  }

  async function expectTakenOver(
    service: Service,
    taker: WorkerProcess,
    killed: Awaited<ReturnType<typeof killHolding>>,
    receiver: Awaited<ReturnType<typeof startReceiver>>,
    what: string,
  ) {
    await until(
      async () => (await unfinished(service, killed.endpointId)) === 0,
      30_000,
      () => `not every delivery succeeded\n${taker.describe()}`,
    );
    const resent = receiver.arrivals.filter((arrival) => arrival.atMs > killed.killedAtMs && arrival.answered);
    const deliveredMs = Math.max(...resent.map((arrival) => arrival.atMs)) - killed.killedAtMs;
    function logged(message: string): number {
      return Date.parse(String(taker.log().find((line) => line['msg'] === message)?.['time'])) - killed.killedAtMs;
    }
    console.info(
      `webhook take-over [${dialect}] ${what}: ${resent.length} deliveries sent again ${deliveredMs} ms after the SIGKILL ` +
        `(taker running at ${logged('worker running')} ms, leases taken over at ${logged(TAKEN_OVER)} ms)`,
    );
    expect([...new Set(resent.map((arrival) => arrival.eventId))].sort()).toEqual([...killed.eventIds].sort());
    expect(resent).toHaveLength(EVENTS);
    // A worker started after the kill cannot send before it runs (starting Node and opening the
    // database take seconds on a loaded machine, and are not the worker's doing): then within 2 s.
    expect(deliveredMs).toBeLessThan(Math.max(TAKE_OVER_MS_MAX, logged('worker running') + 2000));
    expect(Date.now()).toBeLessThan(killed.leasedUntilMs);
    const takeOver = taker.log().find((line) => line['msg'] === TAKEN_OVER);
    expect(takeOver?.['deliveries'], taker.describe()).toBe(EVENTS);
    expect(String(takeOver?.['dead_worker_run'])).toMatch(/^first\./);
    // Each delivery's log: the dead worker's possible send, then the success.
    for (const [eventId, log] of await attemptLog(service, killed.endpointId)) {
      expect(
        log.map((attempt) => attempt.status_code),
        eventId,
      ).toEqual([null, 200]);
      expect(log[0]?.error).toMatch(/^interrupted: /);
    }
    const workers = await service.db.kysely.selectFrom('webhook_workers').select('id').execute();
    // The dead worker's heartbeat row went with its leases; the taker's own is there.
    expect(workers.map((worker) => worker.id.split('.')[0])).toEqual(['second']);
  }

  it("a worker started under a new identity after the kill sends the dead one's deliveries within 10 s of it, or 2 s of its start when starting takes longer", async () => {
    const env = { DATABASE_URL: database().url, WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_LEASE_SECONDS: '60' };
    // Every request hangs (past the kill) until the test lets the receiver answer.
    const receiver = await startReceiver({ holdMs: 60_000, status: () => 200 });
    const service = await createService(testConfig(database().url, { WEBHOOK_ALLOW_PRIVATE: '1', SECRETS_ENCRYPTION_KEYS }));
    try {
      const killed = await killHolding(service, env, receiver);
      // Started after the kill, as a replacement on another host would be: its start-up counts.
      const second = new WorkerProcess({ ...env, WEBHOOK_WORKER_ID: 'second' });
      await second.running();
      await expectTakenOver(service, second, killed, receiver, 'restarted under a new identity');
      expect((await second.signal('SIGTERM')).code).toBe(0);
      expect(sentBy(second)).toBe(EVENTS);
    } finally {
      await service.close();
      await receiver.close();
    }
  }, 90_000);

  // PostgreSQL only (left out on SQLite, which serves one process): two workers at once.
  if (dialect === 'postgres')
    it("a worker already running sends the dead one's deliveries within 10 s of the kill", async () => {
      const env = { DATABASE_URL: database().url, WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_LEASE_SECONDS: '60' };
      const receiver = await startReceiver({ holdMs: 60_000, status: () => 200 });
      const service = await createService(testConfig(database().url, { WEBHOOK_ALLOW_PRIVATE: '1', SECRETS_ENCRYPTION_KEYS }));
      try {
        // Started once the first holds every lease, so that it has nothing to claim until the kill
        // (started earlier, it could claim some of the events itself); running, and beating, at the kill.
        let second: WorkerProcess | undefined;
        const killed = await killHolding(service, env, receiver, async () => {
          second = new WorkerProcess({ ...env, WEBHOOK_WORKER_ID: 'second' });
          await second.running();
        });
        assert(second !== undefined, 'the second worker was started before the kill');
        await expectTakenOver(service, second, killed, receiver, 'a second worker already running');
        expect((await second.signal('SIGTERM')).code).toBe(0);
      } finally {
        await service.close();
        await receiver.close();
      }
    }, 90_000);
});

describe.skipIf(inject('postgresAdminUrl') === '')('a live svc worker with slow attempts, beside another', () => {
  const database = useTestDatabase('postgres');

  it('keeps its leases through 8.5-s attempts: the other worker takes nothing over and sends nothing', async () => {
    const EVENTS = 5;
    const HOLD_MS = 8500;
    const env = { DATABASE_URL: database().url, WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_LEASE_SECONDS: '60', WEBHOOK_IDLE_POLL_MS: '100' };
    // Each attempt takes 8.5 s, under the 10-s request timeout and longer than the 5 s after which
    // a silent worker is taken for dead: only the heartbeat tells the other worker this one lives.
    const receiver = await startReceiver({ holdMs: HOLD_MS, status: () => 200 });
    const service = await createService(testConfig(database().url, { WEBHOOK_ALLOW_PRIVATE: '1', SECRETS_ENCRYPTION_KEYS }));
    try {
      const { projectId, endpointId } = await setUp(service, receiver.url);
      const first = new WorkerProcess({ ...env, WEBHOOK_WORKER_ID: 'first' });
      await first.running();
      const eventIds = await recordEvents(service, projectId, EVENTS);
      await until(
        () => receiver.arrivals.length >= EVENTS,
        20_000,
        () => `the first worker did not send every event\n${first.describe()}`,
      );
      const second = new WorkerProcess({ ...env, WEBHOOK_WORKER_ID: 'second' });
      await second.running();
      await until(
        async () => (await unfinished(service, endpointId)) === 0,
        30_000,
        () => `not every delivery succeeded\n${first.describe()}\n${second.describe()}`,
      );
      // Two more beats of the second worker after the last answer (at each it looks for dead
      // workers): it still takes nothing over.
      await heartbeats(service, 'second', 2, () => second.describe());
      for (const worker of [first, second]) expect((await worker.signal('SIGTERM')).code, worker.describe()).toBe(0);

      expect([...countBy(receiver.arrivals, (arrival) => arrival.eventId).entries()].sort()).toEqual(
        [...eventIds].sort().map((eventId) => [eventId, 1]),
      );
      expect(receiver.arrivals.every((arrival) => arrival.answered)).toBe(true);
      for (const [eventId, log] of await attemptLog(service, endpointId)) {
        expect(
          log.map((attempt) => attempt.status_code),
          eventId,
        ).toEqual([200]);
      }
      expect(second.log().some((line) => line['msg'] === TAKEN_OVER)).toBe(false);
      expect(sentBy(first)).toBe(EVENTS);
      expect(sentBy(second)).toBe(0);
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
      // Committed in 20 transactions, each once a worker has fanned out the one before, so that
      // each is found by a poll of its own, of whichever worker looks first: both find some.
      const eventIds: string[] = [];
      for (let batch = 0; batch < 20; batch += 1) {
        eventIds.push(...(await recordEvents(service, projectId, count / 20, batch * (count / 20))));
        await until(
          async () => (await countUndispatchedEvents(service.db)) === 0,
          10_000,
          () => `batch ${batch} was not fanned out\n${pair.map((worker) => worker.describe()).join('\n')}`,
        );
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
