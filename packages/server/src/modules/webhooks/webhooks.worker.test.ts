import { afterAll, beforeAll, expect, it } from 'vitest';
import { inTransaction } from '../../db/transaction.js';
import { isoTime } from '../../lib/clock.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { manualClock, type Receiver, startReceiver } from '../../test/webhook-receiver.js';
import { recordEvent } from '../events/events.service.js';

/**
 * The delivery worker's batches (docs/adr/0006-webhook-delivery.md, "Fan-out by the worker"): a
 * fan-out takes an event only when its room holds all of the event's deliveries, so a busy worker
 * leaves no due delivery unleased behind it for a claim of its own. A real receiver on 127.0.0.1.
 */

describeEachDialect('webhook worker batches', (dialect) => {
  const clock = manualClock();
  const ctx = useTestService(dialect, {
    env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE: '0,1,1' },
    serviceOptions: { clock, webhooks: { timeoutMs: 1000, worker: { concurrencyMax: 8, endpointInFlightMax: 2 } } },
  });
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it('fans out an event only when the room holds all its deliveries, leasing every one, and delivers the rest in later batches', async () => {
    const service = () => ctx().service;
    const { project, secretKey } = await service().projects.createProject({ name: 'batches' });
    const auth = { authorization: `Bearer ${secretKey}` };
    for (const path of ['/batch/a', '/batch/b', '/batch/c']) {
      const response = await service().app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: auth,
        payload: { url: receiver.url(path), events: ['*'] },
      });
      expect(response.statusCode).toBe(201);
    }
    for (let n = 0; n < 5; n += 1) {
      await inTransaction(service().db, (trx) =>
        recordEvent(trx, {
          projectId: project.id,
          type: 'user.created',
          data: { user_id: `usr_${n}`, email: `u${n}@example.com` },
          createdAt: isoTime(clock.now()),
        }),
      );
    }
    const worker = service().webhooks.worker;

    // Room for 8 attempts, 3 deliveries per event: two events (6 deliveries), not a third with
    // two of its three deliveries leased and one left for a claim.
    const report = await worker.tick();
    expect(report).toEqual({ dispatched: 2, started: 6 });
    const created = await service()
      .db.kysely.selectFrom('webhook_deliveries')
      .select(['lease_id'])
      .where('project_id', '=', project.id)
      .execute();
    expect(created).toHaveLength(6);
    expect(created.every((row) => row.lease_id !== null)).toBe(true);
    await worker.idle();

    await worker.drain();
    for (const path of ['/batch/a', '/batch/b', '/batch/c']) expect(receiver.at(path)).toHaveLength(5);
    const finished = await service()
      .db.kysely.selectFrom('webhook_deliveries')
      .select(['status'])
      .where('project_id', '=', project.id)
      .execute();
    expect(finished.map((row) => row.status)).toEqual(Array.from({ length: 15 }, () => 'succeeded'));
  });
});
