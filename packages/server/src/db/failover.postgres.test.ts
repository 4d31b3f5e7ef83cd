import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService } from '../main.js';
import { randomBase62 } from '../lib/ids.js';
import { testConfig } from '../test/database.js';
import { type Cluster, clusterUnavailableReason, Clusters } from '../test/postgres-cluster.js';
import { type ServeProcess, startServeProcess, stopServeProcess } from '../test/serve-process.js';
import { walletsClient } from '../modules/wallets/wallets.fixtures.js';

/**
 * A failover under load, with two PostgreSQL 15 clusters of the test's own: a primary that waits
 * for its standby on every commit (`synchronous_standby_names = '*'`) and a streaming standby made
 * with `pg_basebackup -R`. The service runs as `svc serve` with a DATABASE_URL naming both hosts
 * and `target_session_attrs=read-write`. Many clients credit one wallet, each request with an
 * Idempotency-Key and sent again with it after a 503 (half the clients), or without a key and not
 * sent again (the other half, which takes the service's path without a request transaction); the
 * primary is killed
 * (`pg_ctl stop -m immediate`) and the standby promoted. The service must write again without a
 * restart, answer only 2xx or 503 with `Retry-After` (never 500), and every acknowledged credit
 * must be on the new primary, exactly once, and nothing else but what a 503 left undecided
 * (docs/operations.md, "The standby and a failover, step
 * by step").
 */

const unavailable = clusterUnavailableReason();
const required = process.env['SVC_TEST_REQUIRE_SERVICES'] === '1';
if (unavailable !== undefined && !required) {
  process.stdout.write(`\nSKIPPING the failover test: ${unavailable} (PostgreSQL 15 server programs are needed).\n\n`);
}

const CLIENTS = 16;
/** Answers before the kill, so that the kill comes under load. */
const ANSWERS_BEFORE_KILL = 150;
/** Answers after the promotion before the clients stop. */
const ANSWERS_AFTER_PROMOTION = 150;
/** Requests per client at the most. */
const REQUESTS_PER_CLIENT_MAX = 400;
const RUN_DEADLINE_MS = 40_000;
/** The clients send a request again this soon after a 503 (the service says 1 s; shorter here to measure the switch finely). */
const RETRY_PAUSE_MS = 50;
const REQUEST_TIMEOUT_MS = 15_000;

interface Acknowledged {
  readonly key: string;
  readonly keyed: boolean;
  readonly transactionId: string;
  readonly amount: number;
  readonly sentAt: number;
  readonly at: number;
}

describe.skipIf(unavailable !== undefined && !required)('PostgreSQL failover to a synchronous standby, under load', () => {
  const clusters = new Clusters();
  let primary: Cluster | undefined;
  let standby: Cluster | undefined;
  let server: ServeProcess | undefined;
  let dataDir = '';
  let secretKey = '';
  let walletId = '';

  beforeAll(async () => {
    if (unavailable !== undefined) throw new Error(`SVC_TEST_REQUIRE_SERVICES=1 but ${unavailable}`);
    primary = await clusters.primary();
    standby = await clusters.standby(primary);
    // Until the standby streams, every commit on the primary waits for it.
    await waitForSynchronousStandby(primary);
    const admin = new pg.Client({ connectionString: primary.url('postgres') });
    await admin.connect();
    try {
      await admin.query('create database svc');
    } finally {
      await admin.end();
    }

    dataDir = mkdtempSync(join(tmpdir(), 'svc-failover-'));
    // This process migrates the database and makes the project and the wallet, then leaves.
    const setup = await createService(testConfig(primary.url('svc'), { DATA_DIR: dataDir, LOG_LEVEL: 'error' }));
    try {
      const project = await setup.projects.createProject({ name: 'Failover' });
      secretKey = project.secretKey;
      const client = await walletsClient(setup, { projectId: project.project.id, secretKey });
      walletId = (await client.createWallet()).id;
    } finally {
      await setup.close();
    }
    server = await startServeProcess({
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/svc?target_session_attrs=read-write`,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'fatal',
      RATE_LIMIT_KEY_PER_SECOND: '0',
      RATE_LIMIT_IP_PER_SECOND: '0',
    });
  }, 90_000);

  afterAll(async () => {
    if (server !== undefined) await stopServeProcess(server.child);
    await clusters.removeAll();
    if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('writes to the promoted standby without a restart, answers only 2xx or 503 with Retry-After, and loses no acknowledged credit', async () => {
    const origin = server!.origin;
    const deadline = Date.now() + RUN_DEADLINE_MS;
    const acknowledged: Acknowledged[] = [];
    const refusals: { status: number; retryAfter: string | null; code: string | undefined }[] = [];
    const unexpected: string[] = [];
    let stop = false;
    /** Credits without a key answered 503: each may or may not be on the new primary. */
    let undecided = 0;
    const run = randomBase62(6);

    /**
     * One credit. With a key it is sent again with it until it is acknowledged, or the run's
     * deadline passes; without one, a 503 is its last answer (it may or may not have committed).
     */
    const credit = async (key: string, keyed: boolean, amount: number): Promise<void> => {
      for (;;) {
        const sentAt = Date.now();
        if (sentAt > deadline) {
          unexpected.push(`${key}: no acknowledgement before the deadline`);
          return;
        }
        let response: Response;
        let text: string;
        try {
          response = await fetch(`${origin}/v1/wallets/${walletId}/credits`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${secretKey}`,
              'content-type': 'application/json',
              ...(keyed ? { 'idempotency-key': key } : {}),
            },
            body: JSON.stringify({ amount }),
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
          text = await response.text();
        } catch (error) {
          unexpected.push(`${key}: ${error instanceof Error ? error.message : String(error)}`);
          return;
        }
        if (response.status === 201) {
          const body = JSON.parse(text) as { id: string; amount: number };
          acknowledged.push({ key, keyed, transactionId: body.id, amount: body.amount, sentAt, at: Date.now() });
          return;
        }
        const code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
        refusals.push({ status: response.status, retryAfter: response.headers.get('retry-after'), code });
        if (response.status !== 503) {
          unexpected.push(`${key}: ${response.status} ${text}`);
          return;
        }
        if (!keyed) {
          undecided += 1;
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    };

    const clients = Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let index = 0; index < REQUESTS_PER_CLIENT_MAX && !stop && Date.now() < deadline; index += 1) {
          await credit(`${run}-${client}-${index}`, client % 2 === 0, 1 + ((client * 31 + index * 17) % 97));
        }
      }),
    );

    const waitFor = async (condition: () => boolean): Promise<void> => {
      while (!condition() && Date.now() < deadline && unexpected.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    };

    await waitFor(() => acknowledged.length >= ANSWERS_BEFORE_KILL);
    const acknowledgedAtKill = acknowledged.length;
    const killedAt = Date.now();
    await clusters.kill(primary!);
    await clusters.promote(standby!);
    const promotedAt = Date.now();
    await waitFor(() => acknowledged.filter((one) => one.sentAt > promotedAt).length >= ANSWERS_AFTER_PROMOTION);
    stop = true;
    await clients;

    expect(unexpected, 'every request was answered 201 or 503 and acknowledged before the deadline').toEqual([]);
    for (const refusal of refusals) {
      expect(refusal.status).toBe(503);
      expect(refusal.code).toBe('service_unavailable');
      expect(Number(refusal.retryAfter), 'a 503 carries Retry-After').toBeGreaterThanOrEqual(1);
    }
    const afterKill = acknowledged.filter((one) => one.sentAt > killedAt);
    expect(afterKill.length, 'the service wrote again after the promotion, without a restart').toBeGreaterThanOrEqual(
      ANSWERS_AFTER_PROMOTION,
    );
    const firstWrite = Math.min(...afterKill.map((one) => one.at));

    // Every acknowledged credit is on the new primary, once; nothing is there that was not acknowledged.
    const check = new pg.Client({ connectionString: standby!.url('svc') });
    check.on('error', () => undefined);
    await check.connect();
    try {
      const rows = (
        await check.query<{ id: string; amount: string; idempotency_key: string | null }>(
          "select id, amount::text as amount, idempotency_key from ledger_transactions where wallet_id = $1 and type = 'credit'",
          [walletId],
        )
      ).rows;
      const stored = new Map(rows.map((row) => [row.id, Number(row.amount)]));
      const missing = acknowledged.filter((one) => stored.get(one.transactionId) !== one.amount);
      expect(
        missing.map((one) => one.transactionId),
        'acknowledged credits missing from the new primary',
      ).toEqual([]);
      expect(new Set(acknowledged.map((one) => one.transactionId)).size, 'one transaction per acknowledgement').toBe(acknowledged.length);
      const keyed = new Set(acknowledged.filter((one) => one.keyed).map((one) => one.key));
      const keyedRows = rows.filter((row) => row.idempotency_key !== null && keyed.has(row.idempotency_key));
      expect(keyedRows.length, 'the keyed credits carry their key').toBe(keyed.size);
      expect(new Set(keyedRows.map((row) => row.idempotency_key)).size, 'each key applied once').toBe(keyedRows.length);
      expect(
        rows.length - acknowledged.length,
        'on the new primary, beyond the acknowledged credits, only what a 503 left undecided',
      ).toBeLessThanOrEqual(undecided);
      expect(rows.length).toBeGreaterThanOrEqual(acknowledged.length);
      const balance = Number(
        (await check.query<{ balance: string }>('select balance::text as balance from wallets where id = $1', [walletId])).rows[0]?.balance,
      );
      expect(balance, 'the balance is the sum of the credits stored').toBe([...stored.values()].reduce((sum, amount) => sum + amount, 0));
    } finally {
      await check.end();
    }

    process.stdout.write(
      `\nfailover: ${acknowledged.length} credits acknowledged (${acknowledgedAtKill} before the kill), ${refusals.length} answers 503 (${undecided} to credits without a key); ` +
        `kill to promoted ${promotedAt - killedAt} ms, kill to first acknowledged write ${firstWrite - killedAt} ms, ` +
        `promoted to first acknowledged write ${firstWrite - promotedAt} ms\n`,
    );
  }, 90_000);
});

/** Waits until the primary streams to a standby that confirms commits (`sync_state = 'sync'`). */
async function waitForSynchronousStandby(primary: Cluster): Promise<void> {
  const client = new pg.Client({ connectionString: primary.url('postgres') });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { rows } = await client.query<{ sync_state: string }>('select sync_state from pg_stat_replication');
      if (rows.some((row) => row.sync_state === 'sync')) return;
      if (Date.now() > deadline) throw new Error('the standby did not become synchronous within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await client.end();
  }
}
