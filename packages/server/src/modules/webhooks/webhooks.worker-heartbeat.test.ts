import pino from 'pino';
import { expect, it } from 'vitest';
import { isoTime } from '../../lib/clock.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { manualClock } from '../../test/webhook-receiver.js';
import { noDeliveryMetrics } from './webhooks.metrics.js';
import { INTERRUPTED_ATTEMPT_ERROR, takeOverDeadWorker } from './webhooks.worker-takeover.js';
import { WorkerHeartbeat } from './webhooks.worker-heartbeat.js';
import { HEARTBEAT_STALE_MS } from './webhooks.worker-options.js';

/**
 * Dead workers (docs/adr/0006-webhook-delivery.md): a run whose heartbeat is stale is deleted and
 * its leases freed, with an interrupted attempt in each delivery's log, in one transaction; a run
 * whose heartbeat is fresh keeps its row and its leases. The clock is moved by hand; the real
 * processes are in webhooks.worker-process.test.ts.
 */

describeEachDialect('webhook worker heartbeats', (dialect) => {
  const clock = manualClock();
  const ctx = useTestService(dialect, { env: { WEBHOOK_ALLOW_PRIVATE: '1' }, serviceOptions: { clock } });

  /** A pending delivery of a `webhook.test` event to a new endpoint, leased under `leaseId`. */
  async function leasedDelivery(leaseId: string): Promise<string> {
    const { service } = ctx();
    const { secretKey } = await service.projects.createProject({ name: 'heartbeats' });
    const authorization = `Bearer ${secretKey}`;
    const created = await service.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { authorization },
      payload: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const endpointId = created.json<{ id: string }>().id;
    const sent = await service.app.inject({ method: 'POST', url: `/v1/webhooks/${endpointId}/test`, headers: { authorization } });
    expect(sent.statusCode, sent.body).toBeLessThan(300);
    const delivery = await service.db.kysely
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', endpointId)
      .executeTakeFirstOrThrow();
    await service.db.kysely
      .updateTable('webhook_deliveries')
      .set({ lease_id: leaseId, leased_until: isoTime(new Date(clock.now().getTime() + 60_000)) })
      .where('id', '=', delivery.id)
      .execute();
    return delivery.id;
  }

  async function workerRow(id: string, lastSeenAgoMs: number): Promise<void> {
    const lastSeen = isoTime(new Date(clock.now().getTime() - lastSeenAgoMs));
    await ctx()
      .service.db.kysely.insertInto('webhook_workers')
      .values({ id, host: 'test', pid: 1, started_at: lastSeen, last_seen: lastSeen })
      .execute();
  }

  const delivery = (id: string) =>
    ctx()
      .service.db.kysely.selectFrom('webhook_deliveries')
      .select(['lease_id', 'leased_until', 'attempt_count'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  const attempts = (id: string) =>
    ctx().service.db.kysely.selectFrom('webhook_attempts').select(['status_code', 'error']).where('delivery_id', '=', id).execute();
  const workerIds = async () =>
    (await ctx().service.db.kysely.selectFrom('webhook_workers').select('id').orderBy('id').execute()).map((row) => row.id);

  it('frees the leases of a run whose heartbeat is stale, and never those of a run whose heartbeat is fresh', async () => {
    const dead = await leasedDelivery('dead.r1.lease');
    const live = await leasedDelivery('live.r2.lease');
    // Another run of the identity `dead` whose lease id shares the first characters: not matched.
    const other = await leasedDelivery('dead.r10.lease');
    await workerRow('dead.r1', HEARTBEAT_STALE_MS + 1000);
    await workerRow('live.r2', 1000);
    await workerRow('dead.r10', 1000);
    const staleBefore = isoTime(new Date(clock.now().getTime() - HEARTBEAT_STALE_MS));
    const deps = { db: ctx().service.db, clock };

    expect(await takeOverDeadWorker(deps, 'live.r2', staleBefore)).toBeUndefined();
    expect(await takeOverDeadWorker(deps, 'dead.r1', staleBefore)).toBe(1);
    // Taken over already: the row is gone.
    expect(await takeOverDeadWorker(deps, 'dead.r1', staleBefore)).toBeUndefined();

    expect(await delivery(dead)).toEqual({ lease_id: null, leased_until: null, attempt_count: 1 });
    expect(await attempts(dead)).toEqual([{ status_code: null, error: INTERRUPTED_ATTEMPT_ERROR }]);
    for (const kept of [live, other]) {
      expect((await delivery(kept)).lease_id).not.toBeNull();
      expect(await attempts(kept)).toEqual([]);
    }
    expect(await workerIds()).toEqual(['dead.r10', 'live.r2']);
    await ctx().service.db.kysely.deleteFrom('webhook_workers').execute();
  });

  it('a started heartbeat takes over a stale run at once, renews its own row, and deletes it at stop', async () => {
    const dead = await leasedDelivery('gone.r1.lease');
    await workerRow('gone.r1', HEARTBEAT_STALE_MS + 1);
    let wakes = 0;
    const heartbeat = new WorkerHeartbeat({
      deps: { db: ctx().service.db, clock, metrics: noDeliveryMetrics },
      logger: pino({ level: 'silent' }),
      intervalMs: 20,
      staleMs: HEARTBEAT_STALE_MS,
      onTakenOver: () => (wakes += 1),
    });
    await heartbeat.start('mine');
    expect(heartbeat.runId).toMatch(/^mine\.[A-Za-z0-9]{8}$/);
    const deadline = Date.now() + 5000;
    while (wakes === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(wakes).toBe(1);
    expect((await delivery(dead)).lease_id).toBeNull();
    expect(await workerIds()).toEqual([heartbeat.runId]);
    // Its own leases may start; another run's may not.
    expect(heartbeat.holds(`${heartbeat.runId}.x`)).toBe(true);
    expect(heartbeat.holds('gone.r1.x')).toBe(false);

    clock.advance(1000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const row = await ctx()
      .service.db.kysely.selectFrom('webhook_workers')
      .select('last_seen')
      .where('id', '=', heartbeat.runId)
      .executeTakeFirstOrThrow();
    expect(row.last_seen).toBe(isoTime(clock.now()));

    await heartbeat.stop();
    expect(await workerIds()).toEqual([]);
  });
});
