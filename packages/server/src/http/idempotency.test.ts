import { setTimeout as sleep } from 'node:timers/promises';
import { Type } from '@sinclair/typebox';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { idempotencyCleanupJob } from '../jobs/idempotency-cleanup.job.js';
import { createService, type Service } from '../main.js';
import type { Clock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';
import { createTestDatabase, describeEachDialect, type TestDatabase, testConfig } from '../test/database.js';
import { useTestService } from '../test/service.js';
import type { RouteModule } from '../lib/routes.js';
import { IDEMPOTENCY_RETENTION_MS } from './idempotency.js';
import { openResponse, SEALED_REQUEST_HASH, storedFingerprint } from '../lib/idempotency.sealing.js';
import { sealPlaintextSecrets } from '../security/plaintext-sealing.js';
import { StrictObject } from '../lib/schemas.js';

/** A clock the tests move by hand. */
function manualClock(): Clock & { advance(milliseconds: number): void } {
  let now = Date.parse('2026-11-20T12:00:00.000Z');
  return { now: () => new Date(now), advance: (milliseconds) => void (now += milliseconds) };
}

/** Counts executions of each test route, so "exactly once" can be checked directly. */
function countingRoutes(executions: Map<string, number>, written: (item: string) => Promise<void> = async () => undefined): RouteModule {
  const count = (name: string) => {
    const next = (executions.get(name) ?? 0) + 1;
    executions.set(name, next);
    return next;
  };
  return (app) => {
    app.post(
      '/v1/test/orders',
      {
        config: { credential: 'secret' },
        schema: {
          body: StrictObject({ item: Type.String(), quantity: Type.Integer({ minimum: 1 }), delay_ms: Type.Optional(Type.Integer()) }),
        },
      },
      async (request, reply) => {
        const body = request.body as { item: string; quantity: number; delay_ms?: number };
        const execution = count(`orders:${body.item}`);
        if (body.delay_ms !== undefined) await sleep(body.delay_ms);
        return reply.code(201).send({ item: body.item, quantity: body.quantity, execution });
      },
    );
    app.post('/v1/test/other', { config: { credential: 'secret' } }, () => ({ other: count('other') }));
    // Writes through the service's database: inside the request's transaction when keyed.
    app.post<{ Body: { item: string; fail: boolean } }>('/v1/test/write', { config: { credential: 'secret' } }, async (request, reply) => {
      await written(request.body.item);
      if (request.body.fail) throw new Error('failed after writing');
      return reply.code(201).send({ written: request.body.item });
    });
    app.post('/v1/test/flaky', { config: { credential: 'secret' } }, () => {
      if (count('flaky') === 1) throw new Error('the database went away');
      return { recovered: true };
    });
    app.post('/v1/test/refuse', { config: { credential: 'secret' } }, () => {
      count('refuse');
      throw new ApiError('insufficient_credits', 'Wallet has 0 credits; 5 requested.', { param: 'amount' });
    });
    app.post('/v1/test/secret', { config: { credential: 'secret', idempotency: { mode: 'off' } } }, () => ({ token: count('secret') }));
  };
}

describeEachDialect('Idempotency-Key', (dialect) => {
  const executions = new Map<string, number>();
  const clock = manualClock();
  let write: (item: string) => Promise<void> = async () => undefined;
  const ctx = useTestService(dialect, { serviceOptions: { routeModules: [countingRoutes(executions, (item) => write(item))], clock } });
  beforeAll(() => {
    write = async (item) => {
      await ctx()
        .service.db.kysely.insertInto('test_orders' as never)
        .values({ item })
        .execute();
    };
  });
  const send = (options: { url?: string; key?: string; body?: unknown; auth?: Record<string, string> }) => {
    const request: InjectOptions = {
      method: 'POST',
      url: options.url ?? '/v1/test/orders',
      headers: { ...(options.auth ?? ctx().auth), ...(options.key === undefined ? {} : { 'idempotency-key': options.key }) },
      ...(options.body === undefined ? {} : { payload: options.body as Record<string, unknown> }),
    };
    return ctx().service.app.inject(request);
  };

  it('replays the original status and body with Idempotent-Replayed, applying nothing twice', async () => {
    const first = await send({ key: 'replay-1', body: { item: 'replay', quantity: 2 } });
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const second = await send({ key: 'replay-1', body: { quantity: 2, item: 'replay' } });
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json()).toEqual(first.json());
    expect(executions.get('orders:replay')).toBe(1);
  });

  it('runs every request that has no key', async () => {
    await send({ body: { item: 'nokey', quantity: 1 } });
    await send({ body: { item: 'nokey', quantity: 1 } });
    expect(executions.get('orders:nokey')).toBe(2);
  });

  it('answers the same key with a different body with 422 idempotency_key_reused naming the field', async () => {
    await send({ key: 'mismatch-1', body: { item: 'mismatch', quantity: 1 } });
    const response = await send({ key: 'mismatch-1', body: { item: 'mismatch', quantity: 3 } });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toMatchObject({ error: { code: 'idempotency_key_reused', param: 'quantity', type: 'invalid_request_error' } });
    expect(executions.get('orders:mismatch')).toBe(1);
  });

  it('answers the same key on another route with 422 idempotency_key_reused', async () => {
    await send({ key: 'route-1', body: { item: 'route', quantity: 1 } });
    const response = await send({ key: 'route-1', url: '/v1/test/other' });
    expect(response.json()).toMatchObject({ error: { code: 'idempotency_key_reused' } });
    expect(executions.get('other')).toBeUndefined();
  });

  it('does not keep a request refused by validation, so it can be corrected and sent again', async () => {
    const refused = await send({ key: 'fix-1', body: { item: 'fix', quantity: 0 } });
    expect(refused.json()).toMatchObject({ error: { code: 'parameter_invalid', param: 'quantity' } });
    const corrected = await send({ key: 'fix-1', body: { item: 'fix', quantity: 1 } });
    expect(corrected.statusCode).toBe(201);
    expect(executions.get('orders:fix')).toBe(1);
  });

  it('does not keep a request refused by authentication', async () => {
    const refused = await send({
      key: 'auth-1',
      body: { item: 'auth', quantity: 1 },
      auth: { authorization: 'Bearer svc_sk_wrongwrongwrongwrongwrongwrongwrong1' },
    });
    expect(refused.statusCode).toBe(401);
    expect((await send({ key: 'auth-1', body: { item: 'auth', quantity: 1 } })).statusCode).toBe(201);
  });

  it('remembers a refusal from the operation itself, so a retry cannot change the outcome', async () => {
    const first = await send({ key: 'refuse-1', url: '/v1/test/refuse' });
    expect(first.statusCode).toBe(422);
    const second = await send({ key: 'refuse-1', url: '/v1/test/refuse' });
    expect(second.statusCode).toBe(422);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json()).toEqual(first.json());
    expect(executions.get('refuse')).toBe(1);
  });

  it('frees the key after a 5xx, so the retry runs', async () => {
    expect((await send({ key: 'flaky-1', url: '/v1/test/flaky' })).statusCode).toBe(500);
    const retry = await send({ key: 'flaky-1', url: '/v1/test/flaky' });
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });

  it('refuses a malformed key with 400 parameter_invalid', async () => {
    for (const key of ['x'.repeat(256), 'has space', 'ünïcode']) {
      const response = await ctx().service.app.inject({
        method: 'POST',
        url: '/v1/test/other',
        headers: { ...ctx().auth, 'idempotency-key': key },
      });
      expect(response.json()).toMatchObject({ error: { code: 'parameter_invalid', param: 'Idempotency-Key' } });
    }
  });

  it('never stores the response of a route that opts out', async () => {
    await send({ key: 'secret-1', url: '/v1/test/secret' });
    const second = await send({ key: 'secret-1', url: '/v1/test/secret' });
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    const rows = await ctx().service.db.kysely.selectFrom('idempotency_keys').selectAll().where('key', '=', 'secret-1').execute();
    expect(rows).toEqual([]);
  });

  it('scopes keys per project', async () => {
    const other = await ctx().service.projects.createProject({ name: 'Other' });
    await send({ key: 'shared-key', body: { item: 'scoped', quantity: 1 } });
    const response = await send({
      key: 'shared-key',
      body: { item: 'scoped', quantity: 1 },
      auth: { authorization: `Bearer ${other.secretKey}` },
    });
    expect(response.headers['idempotent-replayed']).toBeUndefined();
    expect(executions.get('orders:scoped')).toBe(2);
  });

  it('runs exactly one of many concurrent requests with the same key; the others get 409 or the replay', async () => {
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => send({ key: 'race-1', body: { item: 'race', quantity: 1, delay_ms: 150 } })),
    );
    expect(executions.get('orders:race')).toBe(1);
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses.filter((status) => status === 201 || status === 409)).toHaveLength(12);
    const conflicts = responses.filter((response) => response.statusCode === 409);
    for (const conflict of conflicts) expect(conflict.json()).toMatchObject({ error: { code: 'idempotency_key_in_use' } });
    const winners = responses.filter((response) => response.statusCode === 201 && response.headers['idempotent-replayed'] === undefined);
    expect(winners).toHaveLength(1);
  });

  it('frees at once a key that an older release left claimed without its change', async () => {
    // Before keys were written inside the change's transaction, a request claimed its key first
    // ("running", with a lease) and could die before finishing: such a row means nothing ran with it.
    const now = clock.now();
    await ctx()
      .service.db.kysely.insertInto('idempotency_keys')
      .values({
        project_id: ctx().projectId,
        scope: '',
        key: 'crashed-1',
        request_hash: await hashOf('crashed-1'),
        request_fields: '{}',
        state: 'running',
        lock_id: 'dead-lock',
        locked_until: new Date(now.getTime() + 60_000).toISOString(),
        response_status: null,
        response_body: null,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS).toISOString(),
      })
      .execute();
    const response = await send({ key: 'crashed-1', url: '/v1/test/other' });
    expect(response.statusCode).toBe(200);
    expect((await send({ key: 'crashed-1', url: '/v1/test/other' })).headers['idempotent-replayed']).toBe('true');
  });

  it('commits what the request wrote with its key, and nothing of a request that failed', async () => {
    await ctx().service.db.kysely.schema.createTable('test_orders').ifNotExists().addColumn('item', 'text').execute();
    const written = async (item: string) =>
      (
        await ctx()
          .service.db.kysely.selectFrom('test_orders' as never)
          .selectAll()
          .where('item' as never, '=', item as never)
          .execute()
      ).length;
    expect((await send({ key: 'write-1', url: '/v1/test/write', body: { item: 'kept', fail: false } })).statusCode).toBe(201);
    expect(await written('kept')).toBe(1);
    expect(
      (await send({ key: 'write-1', url: '/v1/test/write', body: { item: 'kept', fail: false } })).headers['idempotent-replayed'],
    ).toBe('true');
    expect(await written('kept')).toBe(1);
    // A 5xx after the write: the write and the key roll back together; the retry runs once.
    expect((await send({ key: 'write-2', url: '/v1/test/write', body: { item: 'failed', fail: true } })).statusCode).toBe(500);
    expect(await written('failed')).toBe(0);
    expect((await send({ key: 'write-2', url: '/v1/test/write', body: { item: 'failed', fail: false } })).statusCode).toBe(201);
    expect(await written('failed')).toBe(1);
  });

  it('answers 409 only while the first request runs, and replays once it has committed', async () => {
    const first = send({ key: 'slow-1', body: { item: 'slow', quantity: 1, delay_ms: 300 } });
    await sleep(50);
    expect((await send({ key: 'slow-1', body: { item: 'slow', quantity: 1, delay_ms: 300 } })).statusCode).toBe(409);
    expect((await first).statusCode).toBe(201);
    const again = await send({ key: 'slow-1', body: { item: 'slow', quantity: 1, delay_ms: 300 } });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(executions.get('orders:slow')).toBe(1);
  });

  it('forgets a key after 24 hours; the cleanup job deletes expired keys and never ledger keys', async () => {
    await send({ key: 'old-1', body: { item: 'old', quantity: 1 } });
    await ctx()
      .service.db.kysely.insertInto('idempotency_keys')
      .values({
        project_id: ctx().projectId,
        scope: 'wlt_forever',
        key: 'forever-1',
        request_hash: 'h',
        request_fields: '{}',
        state: 'completed',
        lock_id: null,
        locked_until: null,
        response_status: 201,
        response_body: '{}',
        created_at: clock.now().toISOString(),
        expires_at: null,
      })
      .execute();
    clock.advance(IDEMPOTENCY_RETENTION_MS + 1);
    const again = await send({ key: 'old-1', body: { item: 'old', quantity: 1 } });
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(executions.get('orders:old')).toBe(2);

    clock.advance(IDEMPOTENCY_RETENTION_MS + 1);
    await idempotencyCleanupJob(ctx().service.db, clock).run();
    const left = await ctx().service.db.kysely.selectFrom('idempotency_keys').select('key').execute();
    expect(left.map((row) => row.key)).toEqual(['forever-1']);
  });

  // Bug guarded: the whole response was stored in clear for 24 hours, so a route answering with a
  // credential (POST /v1/api-keys, log in, webhook creation) left it readable in the table.
  it('stores every response and request fingerprint sealed, bound to its key, and replays it byte for byte', async () => {
    const first = await send({ key: 'sealed-1', body: { item: 'sealed-item', quantity: 3 } });
    const row = await ctx()
      .service.db.kysely.selectFrom('idempotency_keys')
      .selectAll()
      .where('key', '=', 'sealed-1')
      .executeTakeFirstOrThrow();
    expect(row.request_hash).toBe(SEALED_REQUEST_HASH);
    expect(row.response_body).toMatch(/^v2\./);
    expect(JSON.stringify(row)).not.toContain('sealed-item');
    const name = { projectId: ctx().projectId, scope: '', key: 'sealed-1' };
    expect(openResponse(ctx().service.secrets, name, row.response_body)).toBe(first.body);
    // Bound to its key: under another key (or project) it does not open.
    expect(() => openResponse(ctx().service.secrets, { ...name, key: 'sealed-2' }, row.response_body)).toThrow();
    const again = await send({ key: 'sealed-1', body: { item: 'sealed-item', quantity: 3 } });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
  });

  it('replays a key an older version stored in clear, and seals it at the next start', async () => {
    const hash = await hashOf('plain-1');
    const body = JSON.stringify({ other: 'from before sealing' });
    await ctx()
      .service.db.kysely.insertInto('idempotency_keys')
      .values({
        project_id: ctx().projectId,
        scope: '',
        key: 'plain-1',
        request_hash: hash,
        request_fields: '{}',
        state: 'completed',
        lock_id: null,
        locked_until: null,
        response_status: 200,
        response_body: body,
        created_at: clock.now().toISOString(),
        expires_at: new Date(clock.now().getTime() + IDEMPOTENCY_RETENTION_MS - 1000).toISOString(),
      })
      .execute();
    const replay = await send({ key: 'plain-1', url: '/v1/test/other' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(body);
    await sealPlaintextSecrets(ctx().service.db, ctx().service.secrets, { everyRow: false });
    const row = await ctx()
      .service.db.kysely.selectFrom('idempotency_keys')
      .selectAll()
      .where('key', '=', 'plain-1')
      .executeTakeFirstOrThrow();
    expect(row.request_hash).toBe(SEALED_REQUEST_HASH);
    expect(row.response_body).not.toContain('from before sealing');
    const sealedReplay = await send({ key: 'plain-1', url: '/v1/test/other' });
    expect(sealedReplay.body).toBe(body);
    expect((await send({ key: 'plain-1', url: '/v1/test/orders', body: { item: 'x', quantity: 1 } })).statusCode).toBe(422);
  });

  // Ledger keys are the ledger's own (docs/adr/0004-idempotency.md): a key the hook holds for
  // another route neither answers nor blocks a ledger request.
  it('keeps ledger keys apart from the keys the hook claims', async () => {
    await send({ key: 'shared-with-ledger', url: '/v1/test/other' });
    const response = await ctx().service.app.inject({
      method: 'POST',
      url: '/v1/wallets/transfer',
      headers: { ...ctx().auth, 'idempotency-key': 'shared-with-ledger' },
      payload: { from_wallet_id: 'wlt_a', to_wallet_id: 'wlt_b', amount: 1 },
    });
    expect(response.statusCode, response.body).toBe(404);
    expect(response.json<{ error: { code: string } }>().error.code).toBe('resource_missing');
  });

  /** The hash the hook computes for an empty-bodied POST to /v1/test/other, via a throwaway request. */
  async function hashOf(key: string): Promise<string> {
    const probeKey = `${key}-probe`;
    await send({ key: probeKey, url: '/v1/test/other' });
    const row = await ctx()
      .service.db.kysely.selectFrom('idempotency_keys')
      .select(['request_hash', 'request_fields'])
      .where('key', '=', probeKey)
      .executeTakeFirstOrThrow();
    // The hook keeps the hash sealed inside request_fields (http/idempotency.sealing.ts).
    return storedFingerprint(ctx().service.secrets, { projectId: ctx().projectId, scope: '', key: probeKey }, row).hash;
  }
});

describe.skipIf(inject('postgresAdminUrl') === '')('Idempotency-Key across two service instances on one PostgreSQL', () => {
  const executions = new Map<string, number>();
  let database: TestDatabase | undefined;
  const services: Service[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    for (let index = 0; index < 2; index += 1) {
      services.push(
        await createService(testConfig(database.url, { RATE_LIMIT_KEY_PER_SECOND: '0', RATE_LIMIT_IP_PER_SECOND: '0' }), {
          routeModules: [countingRoutes(executions)],
        }),
      );
    }
  });
  afterAll(async () => {
    for (const service of services) await service.close();
    await database?.drop();
  });

  it('runs exactly one of concurrent same-key requests spread over both', async () => {
    const [first, second] = services as [Service, Service];
    const { secretKey } = await first.projects.createProject({ name: 'Shared' });
    const send = (service: Service) =>
      service.app.inject({
        method: 'POST',
        url: '/v1/test/orders',
        headers: { authorization: `Bearer ${secretKey}`, 'idempotency-key': 'two-nodes' },
        payload: { item: 'two-nodes', quantity: 1, delay_ms: 100 },
      });
    const responses = await Promise.all(Array.from({ length: 10 }, (_, index) => send(index % 2 === 0 ? first : second)));
    expect(executions.get('orders:two-nodes')).toBe(1);
    expect(responses.every((response) => response.statusCode === 201 || response.statusCode === 409)).toBe(true);
    const replay = await send(second);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toMatchObject({ item: 'two-nodes', execution: 1 });
  });
});
