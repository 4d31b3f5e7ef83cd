import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inTransaction } from '../../db/transaction.js';
import { isoTime, systemClock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { type Receiver, startReceiver } from '../../test/webhook-receiver.js';
import { recordEvent } from '../events/events.service.js';
import type { FanOutWait } from './webhooks.worker-options.js';
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

describeEachDialect('webhook worker, idle', (dialect) => {
  /** The fan-out loop's waits, as they begin, each marked once it is over. */
  const waits: (FanOutWait & { over: boolean })[] = [];
  // The idle interval is a minute here: a fan-out that waited for it would fail these tests.
  const ctx = useTestService(dialect, {
    env: { WEBHOOK_ALLOW_PRIVATE: '1' },
    serviceOptions: {
      clock: systemClock,
      webhooks: {
        timeoutMs: 2000,
        worker: {
          pollIntervalMs: 20,
          idlePollIntervalMs: 60_000,
          onFanOutWait: (wait) => {
            const watched = { ...wait, over: false };
            void wait.ended.then(() => (watched.over = true));
            waits.push(watched);
          },
        },
      },
    },
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

  // Waits of 20, 40, ... ms after empty passes: the first of 2,560 ms begins about 2.5 s after the
  // last work. An event written then is recorded well inside it, however slow the machine.
  const BACKED_OFF_WAIT_MS = 2560;

  /** The fan-out loop's wait now under way, once it has backed off to BACKED_OFF_WAIT_MS or more. */
  async function backedOffWait(): Promise<FanOutWait & { over: boolean }> {
    return vi.waitFor(
      () => {
        const wait = waits.at(-1);
        if (wait === undefined || wait.over || wait.waitMs < BACKED_OFF_WAIT_MS) throw new Error('the fan-out has not backed off yet');
        return wait;
      },
      { timeout: 20_000, interval: 10 },
    );
  }

  /** Bounded only so that a lost delivery fails the test instead of hanging it. */
  const DELIVERED = { timeout: 10_000, interval: 10 };

  it('delivers an event recorded in its own process at once, though its loops had backed off', async () => {
    const service = ctx().service;
    const projectId = await projectWithEndpoint('idle', '/idle');
    service.webhooks.worker.start();
    for (let n = 0; n < 2; n += 1) {
      const backedOff = await backedOffWait();
      await inTransaction(service.db, (trx) =>
        recordEvent(trx, {
          projectId,
          type: 'user.created',
          data: { user_id: `usr_idle${n}`, email: `idle${n}@example.com` },
          createdAt: isoTime(new Date()),
        }),
      );
      // The event cut the long wait short...
      expect(await backedOff.ended).toEqual({ woken: true });
      await vi.waitFor(() => expect(receiver.at('/idle')).toHaveLength(n + 1), DELIVERED);
      // ...and went out from the passes right after it, none of which waited as long again.
      const after = waits.slice(waits.indexOf(backedOff) + 1);
      expect(after.every((wait) => wait.waitMs < BACKED_OFF_WAIT_MS)).toBe(true);
    }
  });

  it('finds an event another process wrote at its next poll, not at once, and loses none', async () => {
    const service = ctx().service;
    const projectId = await projectWithEndpoint('idle-elsewhere', '/elsewhere');
    const backedOff = await backedOffWait();
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
    // A wake ends a wait within a turn or two of the event loop; the row brought none, so the
    // loop is still waiting, and nothing was sent.
    for (let turn = 0; turn < 5; turn += 1) await nextTurn();
    expect(backedOff.over).toBe(false);
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
    expect(await backedOff.ended).toEqual({ woken: true });
    await vi.waitFor(() => expect(receiver.at('/elsewhere')).toHaveLength(2), DELIVERED);
  });
});
