import { afterAll, beforeAll, expect, it } from 'vitest';
import { inTransaction } from '../../db/transaction.js';
import { addMilliseconds, isoTime } from '../../lib/clock.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { manualClock, type Receiver, startReceiver } from '../../test/webhook-receiver.js';
import { EVENT_CATALOG } from '../events/event-types.js';
import { schemaErrors } from '../wallets/wallets.fixtures.js';
import { type EventType, type NewEvent, recordEvent } from '../events/events.service.js';
import type { WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from './webhooks.service.js';

/**
 * Webhook operations (docs/api.md section 4): the automatic switch-off of a failing endpoint and
 * its notice to the others, recovery, the per-endpoint rate, and a restarted worker taking back
 * its own leases. A real receiver on 127.0.0.1; the clock is moved by hand (5 days pass in a line).
 */

const FAST_ENV = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE: '0,1,1' };
const DISABLE_AFTER_MS = 432_000 * 1000;
const WORKER_ID = 'wtest';

describeEachDialect('webhook operations', (dialect) => {
  const clock = manualClock();
  const ctx = useTestService(dialect, {
    env: FAST_ENV,
    serviceOptions: {
      clock,
      webhooks: {
        timeoutMs: 1000,
        // One request at a time per endpoint: what is sent in order also arrives in order.
        worker: { concurrencyMax: 64, endpointInFlightMax: 1, identity: () => WORKER_ID },
      },
    },
  });
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  const inject = (method: 'GET' | 'POST' | 'PATCH', url: string, auth: { authorization: string }, payload?: object, headers = {}) =>
    ctx().service.app.inject({ method, url, headers: { ...auth, ...headers }, ...(payload === undefined ? {} : { payload }) });
  async function project() {
    const { project: created, secretKey } = await ctx().service.projects.createProject({ name: 'operations' });
    return { projectId: created.id, auth: { authorization: `Bearer ${secretKey}` } };
  }
  async function endpoint(auth: { authorization: string }, path: string, events: string[], extra: object = {}) {
    const response = await inject('POST', '/v1/webhooks', auth, { url: receiver.url(path), events, ...extra });
    expect(response.statusCode).toBe(201);
    return response.json<WebhookEndpointWithSecret>();
  }
  const getEndpoint = async (auth: { authorization: string }, id: string) =>
    (await inject('GET', `/v1/webhooks/${id}`, auth)).json<WebhookEndpoint>();
  const record = (projectId: string, type: EventType, data: Record<string, unknown>) =>
    inTransaction(ctx().service.db, (trx) => recordEvent(trx, { projectId, type, data, createdAt: isoTime(clock.now()) } as NewEvent));
  const user = (n: number) => ({ user_id: `usr_${n}`, email: `u${n}@example.com` });
  const drain = () => ctx().service.webhooks.worker.drain();
  /** Runs the retry schedule (0, 1, 1 s) to its end. */
  async function drainSchedule() {
    await drain();
    clock.advance(1000);
    await drain();
    clock.advance(1000);
    await drain();
  }
  const deliveries = async (auth: { authorization: string }, id: string) =>
    (await inject('GET', `/v1/webhooks/${id}/deliveries?limit=100`, auth)).json<{ data: WebhookDelivery[] }>().data;
  const ids = (path: string) => receiver.at(path).map((request) => String(request.headers['webhook-id']));

  it('switches off an endpoint that has failed for WEBHOOK_DISABLE_AFTER_SECONDS with 5 failed deliveries, tells the others, and holds its deliveries until it is on again', async () => {
    const { projectId, auth } = await project();
    let dead = true;
    receiver.answer('/auto/dead', () => (dead ? { status: 500 } : { status: 200 }));
    const failing = await endpoint(auth, '/auto/dead', ['*']);
    await endpoint(auth, '/auto/observer', ['webhook_endpoint.disabled']);
    await endpoint(auth, '/auto/unsubscribed', ['user.created']);
    const start = clock.now();

    for (let n = 0; n < 5; n += 1) await record(projectId, 'user.created', user(n));
    await drainSchedule();
    expect((await deliveries(auth, failing.id)).map((delivery) => delivery.status)).toEqual(Array(5).fill('failed'));
    // Five failed deliveries, but not failing for long enough yet.
    expect(await getEndpoint(auth, failing.id)).toMatchObject({ enabled: true, disabled_reason: null });

    clock.advance(DISABLE_AFTER_MS);
    const held = await record(projectId, 'user.updated', user(5));
    await drain();
    expect(await getEndpoint(auth, failing.id)).toMatchObject({ enabled: false, disabled_reason: 'failing' });
    await drain();
    const notices = receiver.at('/auto/observer');
    expect(notices).toHaveLength(1);
    const notice = JSON.parse(notices[0]?.body ?? '{}') as { data: unknown };
    expect(schemaErrors(EVENT_CATALOG['webhook_endpoint.disabled'].data, notice.data), JSON.stringify(notice)).toEqual([]);
    expect(notice).toMatchObject({
      type: 'webhook_endpoint.disabled',
      data: { endpoint_id: failing.id, reason: 'failing', failing_since: isoTime(start), failed_deliveries: 5 },
    });
    // Neither the endpoint itself nor one not subscribed to the notice gets it.
    expect(receiver.at('/auto/unsubscribed').map((request) => JSON.parse(request.body) as { type: string })).not.toContainEqual(
      expect.objectContaining({ type: 'webhook_endpoint.disabled' }),
    );
    expect(receiver.at('/auto/dead').filter((request) => request.body.includes('webhook_endpoint.disabled'))).toEqual([]);

    // Switched off, its pending delivery is neither attempted nor failed, however long it waits.
    const sentBefore = receiver.at('/auto/dead').length;
    clock.advance(60_000);
    await drain();
    expect(receiver.at('/auto/dead')).toHaveLength(sentBefore);
    const pending = (await deliveries(auth, failing.id)).find((delivery) => delivery.event_id === held);
    expect(pending).toMatchObject({ status: 'pending', attempt_count: 1 });

    const audit = await inject('GET', '/v1/audit-logs?action=webhook_endpoint.disable', auth);
    expect(audit.json<{ data: unknown[] }>().data).toEqual([
      expect.objectContaining({ actor: { type: 'system' }, resource: { type: 'webhook_endpoint', id: failing.id } }),
    ]);

    // Switched on again: the reason is cleared, the held delivery goes out.
    dead = false;
    const patched = await inject('PATCH', `/v1/webhooks/${failing.id}`, auth, { enabled: true });
    expect(patched.json()).toMatchObject({ enabled: true, disabled_reason: null });
    await drain();
    expect(ids('/auto/dead').at(-1)).toBe(held);
    expect((await deliveries(auth, failing.id)).find((delivery) => delivery.event_id === held)?.status).toBe('succeeded');

    // The failure window starts afresh: one more failure after re-enabling does not switch it off.
    dead = true;
    clock.advance(DISABLE_AFTER_MS);
    await record(projectId, 'user.created', user(6));
    await drainSchedule();
    expect(await getEndpoint(auth, failing.id)).toMatchObject({ enabled: true, disabled_reason: null });
    dead = false;
  });

  it('keeps an endpoint on when a success broke its failures, or when fewer than 5 deliveries failed', async () => {
    const { projectId, auth } = await project();
    let answer = 500;
    receiver.answer('/auto/flaky', () => ({ status: answer }));
    const flaky = await endpoint(auth, '/auto/flaky', ['user.created']);
    for (let n = 0; n < 4; n += 1) await record(projectId, 'user.created', user(n));
    await drainSchedule();
    clock.advance(DISABLE_AFTER_MS);
    // Failing for 5 days, but only 4 failed deliveries (the fifth is still being retried).
    await record(projectId, 'user.created', user(4));
    await drain();
    expect(await getEndpoint(auth, flaky.id)).toMatchObject({ enabled: true });

    // A manual retry that succeeds clears the failure window.
    answer = 200;
    const [first] = (await deliveries(auth, flaky.id)).slice(-1);
    const retried = await inject('POST', `/v1/webhooks/${flaky.id}/deliveries/${first?.id ?? ''}/retry`, auth);
    expect(retried.json()).toMatchObject({ status: 'succeeded' });
    answer = 500;
    clock.advance(2000);
    await drain();
    for (let n = 5; n < 10; n += 1) await record(projectId, 'user.created', user(n));
    await drainSchedule();
    expect(await getEndpoint(auth, flaky.id)).toMatchObject({ enabled: true, disabled_reason: null });
    answer = 200;
  });

  it('says manual for an endpoint switched off by PATCH, and null once on again', async () => {
    const { auth } = await project();
    const created = await endpoint(auth, '/manual', ['*']);
    expect(created).toMatchObject({ enabled: true, disabled_reason: null, rate_limit_per_second: null });
    expect((await inject('PATCH', `/v1/webhooks/${created.id}`, auth, { enabled: false })).json()).toMatchObject({
      enabled: false,
      disabled_reason: 'manual',
    });
    expect((await getEndpoint(auth, created.id)).disabled_reason).toBe('manual');
    expect((await inject('PATCH', `/v1/webhooks/${created.id}`, auth, { enabled: true })).json()).toMatchObject({
      enabled: true,
      disabled_reason: null,
    });
  });

  it('takes rate_limit_per_second on create and update, null to remove it, and refuses anything but a whole number from 1', async () => {
    const { auth } = await project();
    const created = await endpoint(auth, '/rated', ['*'], { rate_limit_per_second: 5 });
    expect(created.rate_limit_per_second).toBe(5);
    expect((await inject('PATCH', `/v1/webhooks/${created.id}`, auth, { rate_limit_per_second: 50 })).json()).toMatchObject({
      rate_limit_per_second: 50,
    });
    expect((await getEndpoint(auth, created.id)).rate_limit_per_second).toBe(50);
    for (const bad of [0, -1, 1.5, '5', true, 10_001]) {
      const refusedCreate = await inject('POST', '/v1/webhooks', auth, {
        url: receiver.url('/x'),
        events: ['*'],
        rate_limit_per_second: bad,
      });
      expect(refusedCreate.statusCode).toBe(400);
      expect(refusedCreate.json()).toMatchObject({ error: { code: 'parameter_invalid', param: 'rate_limit_per_second' } });
      const refusedUpdate = await inject('PATCH', `/v1/webhooks/${created.id}`, auth, { rate_limit_per_second: bad });
      expect(refusedUpdate.statusCode).toBe(400);
    }
    expect((await getEndpoint(auth, created.id)).rate_limit_per_second).toBe(50);
    expect((await inject('PATCH', `/v1/webhooks/${created.id}`, auth, { rate_limit_per_second: null })).json()).toMatchObject({
      rate_limit_per_second: null,
    });
  });

  it('caps a throttled endpoint at its rate, drops nothing, and does not slow an endpoint beside it', async () => {
    const { projectId, auth } = await project();
    const throttled = await endpoint(auth, '/rate/throttled', ['user.created'], { rate_limit_per_second: 5 });
    const free = await endpoint(auth, '/rate/free', ['user.created']);
    const events: string[] = [];
    for (let n = 0; n < 15; n += 1) events.push(await record(projectId, 'user.created', user(n)));
    await drain();

    expect(new Set(ids('/rate/throttled'))).toEqual(new Set(events));
    expect(new Set(ids('/rate/free'))).toEqual(new Set(events));
    const times = (path: string) => receiver.at(path).map((request) => request.atMs);
    const throttledTimes = times('/rate/throttled');
    const freeTimes = times('/rate/free');
    // 15 attempts evenly spaced at 5 a second: 14 gaps of 200 ms (a little less for timer jitter).
    expect((throttledTimes.at(-1) ?? 0) - (throttledTimes[0] ?? 0)).toBeGreaterThanOrEqual(14 * 190);
    for (let index = 5; index < throttledTimes.length; index += 1) {
      // Never more than 5 starts in any second.
      expect((throttledTimes[index] ?? 0) - (throttledTimes[index - 5] ?? 0)).toBeGreaterThanOrEqual(950);
    }
    // The free endpoint had all of its events long before the throttled one was half way.
    expect(Math.max(...freeTimes)).toBeLessThan(throttledTimes[7] ?? 0);
    for (const delivery of [...(await deliveries(auth, throttled.id)), ...(await deliveries(auth, free.id))]) {
      expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    }
  });

  it('recovers: sends again, in event order, every subscribed event since a time that was not delivered, once', async () => {
    const { projectId, auth } = await project();
    let answer = 200;
    receiver.answer('/recover', () => ({ status: answer }));
    const target = await endpoint(auth, '/recover', ['user.created', 'user.updated']);
    const other = await endpoint(auth, '/recover/other', ['*']);
    const since = isoTime(clock.now());
    clock.advance(1);
    const delivered = await record(projectId, 'user.created', user(1));
    await drain();
    answer = 500;
    clock.advance(1);
    const failedA = await record(projectId, 'user.updated', user(2));
    clock.advance(1);
    const failedB = await record(projectId, 'user.created', user(3));
    await drainSchedule();
    await inject('PATCH', `/v1/webhooks/${target.id}`, auth, { enabled: false });
    clock.advance(1);
    const missed = await record(projectId, 'user.created', user(4));
    const unsubscribed = await record(projectId, 'user.deleted', user(5));
    await inject('POST', `/v1/webhooks/${other.id}/test`, auth);
    await drain();
    await inject('PATCH', `/v1/webhooks/${target.id}`, auth, { enabled: true });
    answer = 200;
    const before = receiver.at('/recover').length;

    const recovered = await inject('POST', `/v1/webhooks/${target.id}/recover`, auth, { since }, { 'idempotency-key': 'recover-1' });
    expect(recovered.statusCode).toBe(202);
    expect(recovered.json()).toEqual({ object: 'recovery', deliveries: 3 });
    await drain();
    expect(ids('/recover').slice(before)).toEqual([failedA, failedB, missed]);
    expect(ids('/recover')).not.toContain(unsubscribed);
    expect(ids('/recover').filter((id) => id === delivered)).toHaveLength(1);
    const statuses = new Map((await deliveries(auth, target.id)).map((delivery) => [delivery.event_id, delivery.status]));
    expect([failedA, failedB, missed].map((id) => statuses.get(id))).toEqual(['succeeded', 'succeeded', 'succeeded']);

    // The same key replays the answer; a new recovery finds nothing left to send.
    const replayed = await inject('POST', `/v1/webhooks/${target.id}/recover`, auth, { since }, { 'idempotency-key': 'recover-1' });
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.json()).toEqual({ object: 'recovery', deliveries: 3 });
    expect((await inject('POST', `/v1/webhooks/${target.id}/recover`, auth, { since })).json()).toEqual({
      object: 'recovery',
      deliveries: 0,
    });
    // A "*" endpoint's recovery does not take another endpoint's test event.
    expect((await inject('POST', `/v1/webhooks/${other.id}/recover`, auth, { since })).json()).toEqual({
      object: 'recovery',
      deliveries: 0,
    });
  });

  it('refuses a recovery from the future, from beyond the event retention, without a time, or of an unknown endpoint', async () => {
    const { auth } = await project();
    const target = await endpoint(auth, '/recover/refused', ['*']);
    const now = clock.now();
    const cases: [unknown, string][] = [
      [{ since: isoTime(addMilliseconds(now, 1000)) }, 'parameter_invalid'],
      [{ since: isoTime(addMilliseconds(now, -31 * 24 * 60 * 60 * 1000)) }, 'parameter_invalid'],
      [{ since: 'yesterday' }, 'parameter_invalid'],
      [{ since: 12 }, 'parameter_invalid'],
      [{}, 'parameter_missing'],
      [{ since: isoTime(now), until: isoTime(now) }, 'parameter_unknown'],
    ];
    for (const [body, code] of cases) {
      const response = await inject('POST', `/v1/webhooks/${target.id}/recover`, auth, body as object);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: { code } });
    }
    const missing = await inject('POST', '/v1/webhooks/we_missing/recover', auth, { since: isoTime(now) });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'resource_missing' } });
    const secretless = await ctx().service.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${target.id}/recover`,
      payload: { since: isoTime(now) },
    });
    expect(secretless.statusCode).toBe(401);
  });

  it('at start takes back the leases held under its own identity, and leaves other workers’ alone', async () => {
    const { projectId, auth } = await project();
    const target = await endpoint(auth, '/resume', ['user.created']);
    const mine = await record(projectId, 'user.created', user(1));
    const theirs = await record(projectId, 'user.created', user(2));
    // As a worker that died mid-delivery leaves them: fanned out, leased for another minute.
    const { db } = ctx().service;
    const leasedUntil = isoTime(addMilliseconds(clock.now(), 60_000));
    await db.kysely
      .updateTable('events')
      .set({ dispatched_at: isoTime(clock.now()) })
      .where('id', 'in', [mine, theirs])
      .execute();
    for (const [eventId, leaseId] of [
      [mine, `${WORKER_ID}.crashed`],
      [theirs, 'wother.alive'],
    ] as const) {
      await db.kysely
        .insertInto('webhook_deliveries')
        .values({
          id: `del_resume_${leaseId.replace('.', '_')}_${dialect}`,
          project_id: projectId,
          endpoint_id: target.id,
          event_id: eventId,
          event_type: 'user.created',
          status: 'pending',
          attempt_count: 0,
          scheduled_attempt_count: 0,
          next_attempt_at: isoTime(clock.now()),
          lease_id: leaseId,
          leased_until: leasedUntil,
          last_attempt_at: null,
          created_at: isoTime(clock.now()),
          updated_at: isoTime(clock.now()),
        })
        .execute();
    }
    await drain();
    expect(receiver.at('/resume')).toHaveLength(0);

    expect(await ctx().service.webhooks.worker.resumeOwnLeases()).toBe(1);
    await drain();
    expect(ids('/resume')).toEqual([mine]);
    clock.advance(60_000);
    await drain();
    expect(ids('/resume')).toEqual([mine, theirs]);
  });
});
