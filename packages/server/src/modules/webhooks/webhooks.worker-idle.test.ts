import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../db/transaction.js';
import { isoTime, systemClock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { type Receiver, startReceiver } from '../../test/webhook-receiver.js';
import { recordEvent } from '../events/events.service.js';
import { IdleBackoff } from './webhooks.worker-pause.js';

/**
 * An idle worker polls less (docs/adr/0006-webhook-delivery.md, "Idle workers poll less"): each
 * empty pass doubles the wait up to the idle interval, and events recorded in the same process
 * wake the fan-out at once. A real receiver on 127.0.0.1 and the worker's own loops.
 */

describe('IdleBackoff', () => {
  it('doubles after each empty pass up to the idle interval, and is back at the base after work or a wake', () => {
    const backoff = new IdleBackoff(100, 1000);
    const waits = [];
    for (let pass = 0; pass < 6; pass += 1) {
      waits.push(backoff.waitMs);
      backoff.passed(false);
    }
    expect(waits).toEqual([100, 200, 400, 800, 1000, 1000]);
    backoff.passed(true);
    expect(backoff.waitMs).toBe(100);
    backoff.passed(false);
    backoff.reset();
    expect(backoff.waitMs).toBe(100);
    // An idle interval below the base is the base.
    expect(new IdleBackoff(100, 10).waitMs).toBe(100);
  });
});

/** Waits until `done` holds, polling every 20 ms, at most `timeoutMs`; returns the elapsed ms. */
async function within(timeoutMs: number, done: () => boolean): Promise<number> {
  const started = performance.now();
  while (!done()) {
    if (performance.now() - started > timeoutMs) throw new Error(`not done within ${timeoutMs} ms`);
    await sleep(20);
  }
  return performance.now() - started;
}

describeEachDialect('webhook worker, idle', (dialect) => {
  // The idle interval is a minute here: a fan-out that waited for it would fail these tests.
  const ctx = useTestService(dialect, {
    env: { WEBHOOK_ALLOW_PRIVATE: '1' },
    serviceOptions: { clock: systemClock, webhooks: { timeoutMs: 2000, worker: { pollIntervalMs: 20, idlePollIntervalMs: 60_000 } } },
  });
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await ctx().service.webhooks.worker.stop();
    await receiver.close();
  });

  /** A project with an endpoint for every event at `path` of the receiver. */
  async function projectWithEndpoint(name: string, path: string): Promise<string> {
    const service = ctx().service;
    const { project, secretKey } = await service.projects.createProject({ name });
    const created = await service.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { authorization: `Bearer ${secretKey}` },
      payload: { url: receiver.url(path), events: ['*'] },
    });
    expect(created.statusCode).toBe(201);
    return project.id;
  }

  // Waits of 20, 40, ... ms: after 3 s of empty passes (at 20, 60, ... 2,540 ms) the next pass is
  // at 5,100 ms, 2 s after an event written at 3 s, unless something wakes the loop.
  const BACKED_OFF_MS = 3000;

  it('delivers an event recorded in its own process at once, though its loops had backed off', async () => {
    const service = ctx().service;
    const projectId = await projectWithEndpoint('idle', '/idle');
    service.webhooks.worker.start();
    for (let n = 0; n < 2; n += 1) {
      await sleep(BACKED_OFF_MS);
      await inTransaction(service.db, (trx) =>
        recordEvent(trx, {
          projectId,
          type: 'user.created',
          data: { user_id: `usr_idle${n}`, email: `idle${n}@example.com` },
          createdAt: isoTime(new Date()),
        }),
      );
      const elapsed = await within(5_000, () => receiver.at('/idle').length === n + 1);
      expect(elapsed).toBeLessThan(1_000);
    }
  });

  it('finds an event another process wrote at its next poll, not at once, and loses none', async () => {
    const service = ctx().service;
    const projectId = await projectWithEndpoint('idle-elsewhere', '/elsewhere');
    await sleep(BACKED_OFF_MS);
    // As another process would write it: a row in the outbox, with no wake in this one.
    const id = newId('evt');
    await service.db.kysely
      .insertInto('events')
      .values({
        id,
        project_id: projectId,
        type: 'user.created',
        data: JSON.stringify({ user_id: 'usr_elsewhere', email: 'elsewhere@example.com' }),
        idempotency_key: id,
        created_at: isoTime(new Date()),
      })
      .execute();
    await sleep(1000);
    expect(receiver.at('/elsewhere')).toHaveLength(0);
    // Not lost: the next pass, here woken by an event of this process, fans out both.
    await inTransaction(service.db, (trx) =>
      recordEvent(trx, {
        projectId,
        type: 'user.created',
        data: { user_id: 'usr_here', email: 'here@example.com' },
        createdAt: isoTime(new Date()),
      }),
    );
    await within(5_000, () => receiver.at('/elsewhere').length === 2);
  });
});
