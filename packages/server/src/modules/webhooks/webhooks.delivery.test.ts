import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../db/transaction.js';
import { createService, type Service, startService } from '../../main.js';
import { type Clock, isoTime, systemClock } from '../../lib/clock.js';
import { describeEachDialect, testConfig, useTestDatabase } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { manualClock, type Receiver, startReceiver } from '../../test/webhook-receiver.js';
import { type EventType, type NewEvent, recordEvent } from '../events/events.service.js';
import { nextAttemptDelaySeconds, parseRetryAfter } from './webhooks.delivery.js';
import type { WebhookDelivery, WebhookEndpointWithSecret } from './webhooks.service.js';
import { LEASE_MS } from './webhooks.worker-options.js';

// ---- Test tools ------------------------------------------------------------------------------

/**
 * Signature checks written from the contract's text, independently of webhooks.signing.ts.
 * `x-service-signature` is checked the way Stripe's `constructEvent` does it (parse t and every v1,
 * compare in constant time, 300-s tolerance); `webhook-*` the way Standard Webhooks' `verify` does.
 */
function verifyStripeStyle(header: string, rawBody: string, secret: string, nowSeconds: number): boolean {
  const items = header.split(',').map((item) => item.split('=') as [string, string]);
  const t = items.find(([key]) => key === 't')?.[1];
  if (t === undefined || Math.abs(nowSeconds - Number(t)) > 300) return false;
  const expected = Buffer.from(createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${rawBody}`).digest('hex'));
  return items
    .filter(([key]) => key === 'v1')
    .some(([, value]) => value.length === expected.length && timingSafeEqual(Buffer.from(value), expected));
}

function verifyStandardWebhooks(headers: IncomingHttpHeaders, rawBody: string, secret: string, nowSeconds: number): boolean {
  const id = String(headers['webhook-id']);
  const timestamp = String(headers['webhook-timestamp']);
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest('base64');
  return String(headers['webhook-signature'])
    .split(' ')
    .some((entry) => {
      const [version, signature] = entry.split(',');
      return version === 'v1' && signature === expected;
    });
}

// The third-party verifiers a receiver would use: Stripe's (x-service-signature) and Standard Webhooks'.

const FAST_ENV = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE: '0,1,1' };
/** Short, so hanging receivers cost little; long enough that a busy test machine never trips it on a healthy one. */
const ATTEMPT_TIMEOUT_MS = 1000;

function tools(ctx: () => { service: Service }, clock: Clock) {
  const service = () => ctx().service;
  return {
    async project(): Promise<{ projectId: string; auth: { authorization: string } }> {
      const { project, secretKey } = await service().projects.createProject({ name: 'webhooks' });
      return { projectId: project.id, auth: { authorization: `Bearer ${secretKey}` } };
    },
    async endpoint(auth: { authorization: string }, url: string, events: string[] = ['*']): Promise<WebhookEndpointWithSecret> {
      const response = await service().app.inject({ method: 'POST', url: '/v1/webhooks', headers: auth, payload: { url, events } });
      expect(response.statusCode).toBe(201);
      return response.json();
    },
    async record(projectId: string, type: EventType, data: Record<string, unknown> = {}): Promise<string> {
      return inTransaction(service().db, (trx) => recordEvent(trx, { projectId, type, data, createdAt: isoTime(clock.now()) } as NewEvent));
    },
    async deliveries(auth: { authorization: string }, endpointId: string, query = ''): Promise<WebhookDelivery[]> {
      const response = await service().app.inject({ method: 'GET', url: `/v1/webhooks/${endpointId}/deliveries${query}`, headers: auth });
      expect(response.statusCode).toBe(200);
      return response.json<{ data: WebhookDelivery[] }>().data;
    },
    drain: () => service().webhooks.worker.drain(),
    nowSeconds: () => Math.floor(clock.now().getTime() / 1000),
  };
}

// ---- Delivery ----------------------------------------------------------------------------------

describeEachDialect('webhook delivery', (dialect) => {
  const clock = manualClock();
  const ctx = useTestService(dialect, {
    env: FAST_ENV,
    serviceOptions: {
      clock,
      webhooks: { timeoutMs: ATTEMPT_TIMEOUT_MS, worker: { concurrencyMax: 8, endpointInFlightMax: 2, endpointQueuedMax: 4 } },
    },
  });
  const t = tools(ctx, clock);
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it('sends the envelope to a subscribed endpoint, signed in both schemes with the endpoint secret', async () => {
    const { projectId, auth } = await t.project();
    const endpoint = await t.endpoint(auth, receiver.url('/signed'), ['wallet.credit.added']);
    const eventId = await t.record(projectId, 'wallet.credit.added', { wallet_id: 'wlt_1', amount: 5, balance: 5 });
    await t.drain();

    const [request] = receiver.at('/signed');
    expect(receiver.at('/signed')).toHaveLength(1);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['webhook-id']).toBe(eventId);
    expect(request?.headers['webhook-timestamp']).toBe(String(t.nowSeconds()));
    expect(request?.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(request?.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const body = request?.body ?? '';
    expect(Object.keys(JSON.parse(body) as object)).toEqual(['id', 'type', 'created_at', 'data', 'idempotency_key']);
    expect(JSON.parse(body)).toEqual({
      id: eventId,
      type: 'wallet.credit.added',
      created_at: isoTime(clock.now()),
      data: { wallet_id: 'wlt_1', amount: 5, balance: 5 },
      idempotency_key: eventId,
    });
    expect(verifyStripeStyle(String(request?.headers['x-service-signature']), body, endpoint.secret, t.nowSeconds())).toBe(true);
    expect(verifyStandardWebhooks(request!.headers, body, endpoint.secret, t.nowSeconds())).toBe(true);
    // A wrong secret, a changed body or a stale timestamp fail.
    expect(verifyStripeStyle(String(request?.headers['x-service-signature']), body, `${endpoint.secret}x`, t.nowSeconds())).toBe(false);
    expect(verifyStandardWebhooks(request!.headers, `${body} `, endpoint.secret, t.nowSeconds())).toBe(false);
    expect(verifyStripeStyle(String(request?.headers['x-service-signature']), body, endpoint.secret, t.nowSeconds() + 301)).toBe(false);

    const [delivery] = await t.deliveries(auth, endpoint.id);
    expect(delivery).toMatchObject({ event_id: eventId, event_type: 'wallet.credit.added', status: 'succeeded', attempt_count: 1 });
    expect(delivery?.attempts).toEqual([
      {
        attempt: 1,
        kind: 'scheduled',
        created_at: isoTime(clock.now()),
        status_code: 200,
        latency_ms: expect.any(Number),
        error: null,
        response_body: 'ok',
      },
    ]);
  });

  it('fans out one delivery per subscribed, enabled endpoint of the event’s project, and nothing to others', async () => {
    const { projectId, auth } = await t.project();
    const other = await t.project();
    const exact = await t.endpoint(auth, receiver.url('/fan/exact'), ['wallet.credit.added', 'user.created']);
    const star = await t.endpoint(auth, receiver.url('/fan/star'), ['*']);
    await t.endpoint(auth, receiver.url('/fan/unsubscribed'), ['user.created']);
    const disabled = await t.endpoint(auth, receiver.url('/fan/disabled'), ['*']);
    await t.endpoint(other.auth, receiver.url('/fan/other-project'), ['*']);
    const patch = await ctx().service.app.inject({
      method: 'PATCH',
      url: `/v1/webhooks/${disabled.id}`,
      headers: auth,
      payload: { enabled: false },
    });
    expect(patch.json()).toMatchObject({ enabled: false });

    const eventId = await t.record(projectId, 'wallet.credit.added', { wallet_id: 'wlt_2' });
    await t.drain();
    await t.drain();
    expect(receiver.at('/fan/exact').map((request) => request.headers['webhook-id'])).toEqual([eventId]);
    expect(receiver.at('/fan/star').map((request) => request.headers['webhook-id'])).toEqual([eventId]);
    expect(receiver.at('/fan/unsubscribed')).toHaveLength(0);
    expect(receiver.at('/fan/disabled')).toHaveLength(0);
    expect(receiver.at('/fan/other-project')).toHaveLength(0);
    expect(await t.deliveries(auth, disabled.id)).toEqual([]);
    expect(await t.deliveries(auth, exact.id)).toHaveLength(1);
    expect(await t.deliveries(auth, star.id)).toHaveLength(1);

    // Switched back on, the endpoint gets the events that happen from then on.
    await ctx().service.app.inject({ method: 'PATCH', url: `/v1/webhooks/${disabled.id}`, headers: auth, payload: { enabled: true } });
    const later = await t.record(projectId, 'user.created', { user_id: 'usr_1', email: 'a@example.com' });
    await t.drain();
    expect(receiver.at('/fan/disabled').map((request) => request.headers['webhook-id'])).toEqual([later]);
  });

  it('holds pending deliveries of an endpoint while it is disabled and sends them once it is enabled again', async () => {
    const { projectId, auth } = await t.project();
    receiver.answer('/paused', (_request, seen) => (seen === 1 ? { status: 500 } : { status: 200 }));
    const endpoint = await t.endpoint(auth, receiver.url('/paused'));
    await t.record(projectId, 'user.updated', { user_id: 'usr_2' });
    await t.drain(); // the first attempt fails; the next is due in 1 s
    const patch = (enabled: boolean) =>
      ctx().service.app.inject({ method: 'PATCH', url: `/v1/webhooks/${endpoint.id}`, headers: auth, payload: { enabled } });
    await patch(false);
    clock.advance(5000);
    await t.drain();
    expect(receiver.at('/paused')).toHaveLength(1);
    expect((await t.deliveries(auth, endpoint.id)).map((delivery) => delivery.status)).toEqual(['pending']);
    await patch(true);
    await t.drain();
    expect(receiver.at('/paused')).toHaveLength(2);
    expect((await t.deliveries(auth, endpoint.id)).map((delivery) => delivery.status)).toEqual(['succeeded']);
  });

  it('retries a failing receiver on the schedule, counting each delay from the previous failure', async () => {
    const { projectId, auth } = await t.project();
    receiver.answer('/flaky', (_request, seen) => (seen <= 2 ? { status: 500, body: 'not yet' } : { status: 204 }));
    const endpoint = await t.endpoint(auth, receiver.url('/flaky'));
    await t.record(projectId, 'session.created', { session_id: 'svc_ses_x', user_id: 'usr_3' });
    const start = clock.now().getTime();

    await t.drain();
    expect(receiver.at('/flaky')).toHaveLength(1);
    clock.advance(999);
    await t.drain();
    expect(receiver.at('/flaky')).toHaveLength(1); // not due yet
    clock.advance(1);
    await t.drain();
    expect(receiver.at('/flaky')).toHaveLength(2);
    clock.advance(1000);
    await t.drain();
    expect(receiver.at('/flaky')).toHaveLength(3);

    const [delivery] = await t.deliveries(auth, endpoint.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 3, next_attempt_at: null });
    expect(delivery?.attempts.map((attempt) => [attempt.status_code, Date.parse(attempt.created_at) - start])).toEqual([
      [500, 0],
      [500, 1000],
      [204, 2000],
    ]);
    expect(delivery?.attempts[0]).toMatchObject({ error: 'HTTP 500', response_body: 'not yet' });
    // Every attempt carried the same event and idempotency key.
    const keys = receiver.at('/flaky').map((request) => (JSON.parse(request.body) as { idempotency_key: string }).idempotency_key);
    expect(new Set(keys).size).toBe(1);
  });

  it('marks a delivery failed after the last scheduled attempt, then sends again only by hand', async () => {
    const { projectId, auth } = await t.project();
    let healthy = false;
    receiver.answer('/down', () => (healthy ? { status: 200, body: 'back' } : { status: 503, body: 'down' }));
    const endpoint = await t.endpoint(auth, receiver.url('/down'));
    await t.record(projectId, 'user.deleted', { user_id: 'usr_4' });
    for (let step = 0; step < 3; step += 1) {
      await t.drain();
      clock.advance(1000);
    }
    clock.advance(3_600_000);
    await t.drain();
    expect(receiver.at('/down')).toHaveLength(3); // the schedule has three entries: three attempts
    let [delivery] = await t.deliveries(auth, endpoint.id, '?status=failed');
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 3, next_attempt_at: null });
    expect(await t.deliveries(auth, endpoint.id, '?status=pending')).toEqual([]);

    const retry = (id: string) =>
      ctx().service.app.inject({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/deliveries/${id}/retry`, headers: auth });
    const stillDown = await retry(delivery!.id);
    expect(stillDown.statusCode).toBe(200);
    expect(stillDown.json()).toMatchObject({ status: 'failed', attempt_count: 4 });
    expect(stillDown.json<WebhookDelivery>().attempts.at(-1)).toMatchObject({ attempt: 4, kind: 'manual', status_code: 503 });
    healthy = true;
    const back = await retry(delivery!.id);
    expect(back.json()).toMatchObject({ status: 'succeeded', attempt_count: 5 });
    expect(receiver.at('/down')).toHaveLength(5);
    await t.drain();
    expect(receiver.at('/down')).toHaveLength(5);
    [delivery] = await t.deliveries(auth, endpoint.id, '?status=succeeded');
    expect(delivery?.attempts.map((attempt) => attempt.kind)).toEqual(['scheduled', 'scheduled', 'scheduled', 'manual', 'manual']);

    const missing = await retry('del_0000000000000000000000');
    expect(missing.statusCode).toBe(404);
  });

  it('counts a receiver that does not answer in time as a failure, and does not follow redirects', async () => {
    const { projectId, auth } = await t.project();
    receiver.answer('/hang', () => 'hang');
    receiver.answer('/moved', () => ({ status: 302, headers: { location: '/moved-target' } }));
    const hanging = await t.endpoint(auth, receiver.url('/hang'));
    const moved = await t.endpoint(auth, receiver.url('/moved'));
    await t.record(projectId, 'user.email_verified', { user_id: 'usr_5' });
    await t.drain();
    const [timedOut] = await t.deliveries(auth, hanging.id);
    expect(timedOut?.attempts[0]).toMatchObject({ status_code: null, response_body: null });
    expect(timedOut?.attempts[0]?.error).toMatch(/^timeout/);
    expect(timedOut?.attempts[0]?.latency_ms).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS - 50);
    expect(timedOut?.status).toBe('pending');
    const [redirected] = await t.deliveries(auth, moved.id);
    expect(redirected?.attempts[0]).toMatchObject({ status_code: 302, error: 'redirect not followed (HTTP 302)' });
    expect(receiver.at('/moved-target')).toHaveLength(0);
    await ctx().service.app.inject({ method: 'DELETE', url: `/v1/webhooks/${hanging.id}`, headers: auth });
    await ctx().service.app.inject({ method: 'DELETE', url: `/v1/webhooks/${moved.id}`, headers: auth });
  });

  it('stores at most 4 KiB of a response body', async () => {
    const { projectId, auth } = await t.project();
    receiver.answer('/verbose', () => ({ status: 200, body: 'é'.repeat(5000) }));
    const endpoint = await t.endpoint(auth, receiver.url('/verbose'));
    await t.record(projectId, 'organization.created', { organization_id: 'org_1' });
    await t.drain();
    const [delivery] = await t.deliveries(auth, endpoint.id);
    expect(Buffer.byteLength(delivery?.attempts[0]?.response_body ?? '')).toBeLessThanOrEqual(4096 + 2);
    expect(delivery?.attempts[0]?.response_body?.startsWith('éé')).toBe(true);
  });

  it('records a response body with NUL bytes (which PostgreSQL text refuses) without failing the other attempts of its batch', async () => {
    const { projectId, auth } = await t.project();
    receiver.answer('/nul', () => ({ status: 200, body: 'a\0b' }));
    receiver.answer('/plain', () => ({ status: 200, body: 'ok' }));
    const nul = await t.endpoint(auth, receiver.url('/nul'));
    const plain = await t.endpoint(auth, receiver.url('/plain'));
    await t.record(projectId, 'organization.created', { organization_id: 'org_1' });
    await t.drain();
    const [nulDelivery] = await t.deliveries(auth, nul.id);
    const [plainDelivery] = await t.deliveries(auth, plain.id);
    expect(nulDelivery).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    expect(nulDelivery?.attempts[0]?.response_body).toBe('a\uFFFDb');
    expect(plainDelivery).toMatchObject({ status: 'succeeded', attempt_count: 1 });
  });

  it('keeps the old secret signing beside the new one for 24 hours after a rotation', async () => {
    const { projectId, auth } = await t.project();
    const endpoint = await t.endpoint(auth, receiver.url('/rotating'));
    const rotated = await ctx().service.app.inject({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/rotate-secret`, headers: auth });
    expect(rotated.statusCode).toBe(200);
    const { secret: newSecret } = rotated.json<WebhookEndpointWithSecret>();
    expect(newSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newSecret).not.toBe(endpoint.secret);

    await t.record(projectId, 'wallet.transfer.sent', { transfer_id: 'txn_1' });
    await t.drain();
    const [during] = receiver.at('/rotating');
    expect(String(during?.headers['x-service-signature']).match(/v1=/g)).toHaveLength(2);
    expect(String(during?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [endpoint.secret, newSecret]) {
      expect(verifyStripeStyle(String(during?.headers['x-service-signature']), during!.body, secret, t.nowSeconds())).toBe(true);
      expect(verifyStandardWebhooks(during!.headers, during!.body, secret, t.nowSeconds())).toBe(true);
    }

    clock.advance(24 * 60 * 60 * 1000 + 1000);
    await t.record(projectId, 'wallet.transfer.received', { transfer_id: 'txn_1' });
    await t.drain();
    const after = receiver.at('/rotating')[1];
    expect(String(after?.headers['x-service-signature']).match(/v1=/g)).toHaveLength(1);
    expect(verifyStripeStyle(String(after?.headers['x-service-signature']), after!.body, newSecret, t.nowSeconds())).toBe(true);
    expect(verifyStandardWebhooks(after!.headers, after!.body, newSecret, t.nowSeconds())).toBe(true);
    expect(verifyStripeStyle(String(after?.headers['x-service-signature']), after!.body, endpoint.secret, t.nowSeconds())).toBe(false);
    expect(verifyStandardWebhooks(after!.headers, after!.body, endpoint.secret, t.nowSeconds())).toBe(false);
  });

  it('sends webhook.test to the one endpoint asked for, and logs the event', async () => {
    const { auth } = await t.project();
    const target = await t.endpoint(auth, receiver.url('/test-target'), ['wallet.credit.added']);
    await t.endpoint(auth, receiver.url('/test-bystander'), ['*']);
    const response = await ctx().service.app.inject({ method: 'POST', url: `/v1/webhooks/${target.id}/test`, headers: auth });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({
      object: 'webhook_delivery',
      endpoint_id: target.id,
      event_type: 'webhook.test',
      status: 'pending',
    });
    await t.drain();
    const [request] = receiver.at('/test-target');
    expect(JSON.parse(request?.body ?? '{}')).toMatchObject({ type: 'webhook.test', data: { endpoint_id: target.id } });
    expect(receiver.at('/test-bystander')).toHaveLength(0);
    const events = await ctx().service.app.inject({ method: 'GET', url: '/v1/events?type=webhook.test', headers: auth });
    expect(events.json<{ data: { id: string }[] }>().data.map((event) => event.id)).toEqual([request?.headers['webhook-id']]);
  });

  it('keeps a slow endpoint to its in-flight limit so the others are sent at once', async () => {
    const { projectId, auth } = await t.project();
    receiver.answer('/slow', () => 'hang');
    const slow = await t.endpoint(auth, receiver.url('/slow'));
    const fast = await t.endpoint(auth, receiver.url('/fast'));
    for (let index = 0; index < 6; index += 1) await t.record(projectId, 'user.updated', { user_id: `usr_${index}` });
    const worker = ctx().service.webhooks.worker;
    const first = await worker.tick();
    // The fan-out goes as far as the worker has room (8 attempts), each endpoint taking at most 4
    // of them with 2 requests open: the slow one opens its 2, which hang, and 2 more wait behind
    // them; the fast one's go through. The other 2 events wait in the outbox for room.
    expect(first).toEqual({ dispatched: 4, started: 8 });
    // The fast endpoint's deliveries keep flowing while the slow ones still hang (until the timeout).
    for (let pass = 0; pass < 50 && receiver.at('/fast').length < 6; pass += 1) {
      await sleep(5);
      await worker.tick();
    }
    expect(receiver.at('/fast')).toHaveLength(6);
    expect(receiver.at('/slow')).toHaveLength(2);
    expect((await t.deliveries(auth, slow.id)).every((delivery) => delivery.attempt_count === 0)).toBe(true);
    await worker.idle();
    await ctx().service.app.inject({ method: 'DELETE', url: `/v1/webhooks/${slow.id}`, headers: auth });
    expect((await t.deliveries(auth, fast.id)).every((delivery) => delivery.status === 'succeeded')).toBe(true);
  });

  it('deletes events past EVENT_RETENTION_DAYS with their deliveries, but never an event not yet fanned out', async () => {
    const { projectId, auth } = await t.project();
    const endpoint = await t.endpoint(auth, receiver.url('/retention'));
    const old = await t.record(projectId, 'organization.member.added', { organization_id: 'org_1', user_id: 'usr_1' });
    await t.drain();
    expect(await t.deliveries(auth, endpoint.id)).toHaveLength(1);
    const waiting = await t.record(projectId, 'organization.member.removed', { organization_id: 'org_1', user_id: 'usr_1' });
    clock.advance(31 * 24 * 60 * 60 * 1000);
    const job = ctx().service.jobs.find((candidate) => candidate.name === 'event-retention');
    await job?.run();
    const get = (id: string) => ctx().service.app.inject({ method: 'GET', url: `/v1/events/${id}`, headers: auth });
    expect((await get(old)).statusCode).toBe(404);
    expect(await t.deliveries(auth, endpoint.id)).toEqual([]);
    expect((await get(waiting)).statusCode).toBe(200);
    await t.drain();
    expect(receiver.at('/retention').map((request) => request.headers['webhook-id'])).toEqual([old, waiting]);
  });

  it('delivers the events the auth and wallet routes write to the outbox', async () => {
    const { auth } = await t.project();
    await t.endpoint(auth, receiver.url('/produced'), ['*']);
    const signup = await ctx().service.app.inject({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: auth,
      payload: { email: 'webhooks-e2e@example.com', password: 'Tq7!vexo-plumb-webhooks-e2e', name: 'Hook' },
    });
    expect(signup.statusCode).toBe(201);
    const userId = signup.json<{ user: { id: string } }>().user.id;
    const wallet = await ctx().service.app.inject({
      method: 'POST',
      url: '/v1/wallets',
      headers: auth,
      payload: { user_id: userId, currency: 'USD' },
    });
    expect(wallet.statusCode).toBe(201);
    const walletId = wallet.json<{ id: string }>().id;
    const credit = await ctx().service.app.inject({
      method: 'POST',
      url: `/v1/wallets/${walletId}/credits`,
      headers: auth,
      payload: { amount: 250, description: 'welcome' },
    });
    expect(credit.statusCode).toBe(201);
    await t.drain();
    const bodies = receiver.at('/produced').map((request) => JSON.parse(request.body) as { type: string; data: Record<string, unknown> });
    expect(bodies.map((body) => body.type)).toEqual(expect.arrayContaining(['user.created', 'session.created', 'wallet.credit.added']));
    expect(bodies.find((body) => body.type === 'user.created')?.data).toMatchObject({ user_id: userId, email: 'webhooks-e2e@example.com' });
    expect(bodies.find((body) => body.type === 'wallet.credit.added')?.data).toMatchObject({
      wallet_id: walletId,
      transaction_id: credit.json<{ id: string }>().id,
      amount: 250,
      balance: 250,
    });
  });
});

describe('next attempt delay', () => {
  it('follows the schedule, honours Retry-After up to its longest delay, and ends after the last entry', () => {
    const schedule = [0, 10, 60, 300, 1800];
    expect([1, 2, 3, 4].map((made) => nextAttemptDelaySeconds(schedule, made, null))).toEqual([10, 60, 300, 1800]);
    expect(nextAttemptDelaySeconds(schedule, 5, null)).toBeUndefined();
    expect(nextAttemptDelaySeconds(schedule, 1, 120)).toBe(120);
    expect(nextAttemptDelaySeconds(schedule, 1, 5)).toBe(10);
    expect(nextAttemptDelaySeconds(schedule, 1, 999_999)).toBe(1800);
    const now = new Date('2026-11-20T12:00:00.000Z');
    expect(parseRetryAfter('42', now)).toBe(42);
    expect(parseRetryAfter('Fri, 20 Nov 2026 12:01:00 GMT', now)).toBe(60);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});

// ---- Durability --------------------------------------------------------------------------------

describeEachDialect('webhook delivery durability', (dialect) => {
  const database = useTestDatabase(dialect);
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  async function open(clock: Clock, options: { timeoutMs?: number; retrySchedule?: string } = {}): Promise<Service> {
    const config = testConfig(database().url, {
      ...FAST_ENV,
      WEBHOOK_RETRY_SCHEDULE: options.retrySchedule ?? FAST_ENV.WEBHOOK_RETRY_SCHEDULE,
      RATE_LIMIT_KEY_PER_SECOND: '0',
      RATE_LIMIT_IP_PER_SECOND: '0',
    });
    return createService(config, { clock, webhooks: { timeoutMs: options.timeoutMs ?? 5000 } });
  }

  it('loses nothing when a worker dies mid-delivery: its leases expire and a new process delivers everything', async () => {
    const clockA = manualClock();
    const first = await open(clockA, { timeoutMs: 1500 });
    const tA = tools(() => ({ service: first }), clockA);
    const { projectId, auth } = await tA.project();
    let phase: 'crash' | 'recovered' = 'crash';
    const answered: string[] = [];
    receiver.answer('/crash', (request) => {
      if (phase === 'crash') return 'hang';
      answered.push(String(request.headers['webhook-id']));
      return { status: 200 };
    });
    const endpoint = await tA.endpoint(auth, receiver.url('/crash'));
    const before = [];
    for (let index = 0; index < 10; index += 1) before.push(await tA.record(projectId, 'user.created', { user_id: `usr_${index}` }));
    const tick = await first.webhooks.worker.tick(); // claims and sends; the receiver never answers
    expect(tick).toEqual({ dispatched: 10, started: 10 });
    for (let wait = 0; wait < 200 && receiver.at('/crash').length < 10; wait += 1) await sleep(5);
    expect(receiver.at('/crash')).toHaveLength(10);
    // The "crash": the first worker is never stopped and never records; more events arrive meanwhile.
    const after = [];
    for (let index = 0; index < 5; index += 1) after.push(await tA.record(projectId, 'user.updated', { user_id: `usr_${index}` }));

    const clockB = manualClock();
    clockB.advance(LEASE_MS + 1000);
    const second = await open(clockB);
    try {
      phase = 'recovered';
      await second.webhooks.worker.drain();
      const deliveries = await tools(() => ({ service: second }), clockB).deliveries(auth, endpoint.id, '?limit=100');
      expect(deliveries).toHaveLength(15);
      expect(deliveries.every((delivery) => delivery.status === 'succeeded')).toBe(true);
      expect(answered.sort()).toEqual([...before, ...after].sort());
    } finally {
      // The dead worker's requests time out now; it finds its leases gone and changes no status.
      await first.webhooks.worker.idle();
      await first.close();
      const deliveries = await tools(() => ({ service: second }), clockB).deliveries(auth, endpoint.id, '?limit=100');
      expect(deliveries.every((delivery) => delivery.status === 'succeeded')).toBe(true);
      await second.close();
    }
  });

  it('picks up after a graceful restart: pending retries continue in the next process', async () => {
    const clock = manualClock();
    const first = await open(clock);
    const tFirst = tools(() => ({ service: first }), clock);
    const { projectId, auth } = await tFirst.project();
    let up = false;
    receiver.answer('/restart', () => (up ? { status: 200 } : { status: 500 }));
    const endpoint = await tFirst.endpoint(auth, receiver.url('/restart'));
    for (let index = 0; index < 5; index += 1) await tFirst.record(projectId, 'session.revoked', { session_id: `svc_ses_${index}` });
    await tFirst.drain();
    await first.close();

    up = true;
    clock.advance(1000);
    const second = await open(clock);
    try {
      await second.webhooks.worker.drain();
      const deliveries = await tools(() => ({ service: second }), clock).deliveries(auth, endpoint.id);
      expect(deliveries.map((delivery) => [delivery.status, delivery.attempt_count])).toEqual(Array(5).fill(['succeeded', 2]));
    } finally {
      await second.close();
    }
  });

  it('runs the worker inside a started service (npm start) and stops it gracefully', async () => {
    const config = testConfig(database().url, { ...FAST_ENV, HOST: '127.0.0.1', PORT: '0', RATE_LIMIT_KEY_PER_SECOND: '0' });
    const running = await startService(config);
    try {
      const live = tools(() => ({ service: running.service }), systemClock);
      const { projectId, auth } = await live.project();
      const endpoint = await live.endpoint(auth, receiver.url('/live'));
      const eventId = await live.record(projectId, 'user.created', { user_id: 'usr_live' });
      for (let wait = 0; wait < 250 && receiver.at('/live').length === 0; wait += 1) await sleep(20);
      expect(receiver.at('/live').map((request) => request.headers['webhook-id'])).toEqual([eventId]);
      // Signed with the real time here, so real verifiers with their 5-minute tolerance accept it.
      const [request] = receiver.at('/live');
      expect(verifyStripeStyle(String(request?.headers['x-service-signature']), request!.body, endpoint.secret, live.nowSeconds())).toBe(
        true,
      );
      const stripe = new Stripe('sk_test_unused');
      const header = String(request?.headers['x-service-signature']);
      expect(stripe.webhooks.constructEvent(request!.body, header, endpoint.secret).id).toBe(eventId);
      const verifier = new Webhook(endpoint.secret);
      expect(verifier.verify(request!.body, request!.headers as Record<string, string>)).toMatchObject({ id: eventId });
    } finally {
      await running.stop();
    }
  });

  it('two workers on one database never send the same attempt twice', async () => {
    const count = dialect === 'postgres' ? 1000 : 200;
    const clock = manualClock();
    const workers = [await open(clock, { retrySchedule: '0,0,0' }), await open(clock, { retrySchedule: '0,0,0' })];
    try {
      const tA = tools(() => ({ service: workers[0]! }), clock);
      const { projectId, auth } = await tA.project();
      // The first attempt of every event fails, the second succeeds: both workers race for retries too.
      receiver.answer('/race', (_request, seen) => (seen === 1 ? { status: 500 } : { status: 200 }));
      const endpoint = await tA.endpoint(auth, receiver.url('/race'));
      await inTransaction(workers[0]!.db, async (trx) => {
        for (let index = 0; index < count; index += 1) {
          await recordEvent(trx, {
            projectId,
            type: 'wallet.credit.added',
            data: { index },
            createdAt: isoTime(clock.now()),
          } as unknown as NewEvent);
        }
      });
      for (let round = 0; round < 20 && receiver.at('/race').length < count * 2; round += 1) {
        await Promise.all(workers.map((service) => service.webhooks.worker.drain()));
      }
      const perEvent = new Map<string, number>();
      for (const request of receiver.at('/race')) {
        const id = String(request.headers['webhook-id']);
        perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
      }
      expect(perEvent.size).toBe(count);
      expect([...perEvent.values()].every((sent) => sent === 2)).toBe(true);
      const statuses = await workers[1]!.db.kysely
        .selectFrom('webhook_deliveries')
        .select(['status', 'attempt_count'])
        .where('endpoint_id', '=', endpoint.id)
        .execute();
      expect(statuses).toHaveLength(count);
      expect(statuses.every((row) => row.status === 'succeeded' && row.attempt_count === 2)).toBe(true);
    } finally {
      for (const service of workers) await service.close();
    }
  });
});
