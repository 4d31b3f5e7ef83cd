import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.js';
import { inTransaction } from '../../db/transaction.js';
import { isoTime } from '../../lib/clock.js';
import type { DnsLookup } from '../../lib/outbound-http.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { type EventType, type NewEvent, recordEvent } from '../events/events.service.js';
import { generateWebhookSecret, signatureHeaders } from './webhooks.signing.js';

const PUBLIC_V4 = '93.184.215.14';

/** Names the tests may use; nothing here reaches real DNS, and no test connects anywhere. */
const lookup: DnsLookup = (hostname) => {
  const table: Record<string, string[]> = {
    'hooks.example.com': [PUBLIC_V4],
    'other.example.com': ['2606:4700:4700::1111'],
    'rebind.example.com': ['127.0.0.1'],
    'private.example.com': ['10.20.30.40'],
    'v6.example.com': ['fd00::5'],
  };
  const addresses = table[hostname];
  if (addresses === undefined) return Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }));
  return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
};

describe('webhook signatures', () => {
  it('match a vector computed independently (Python hmac) for both schemes', () => {
    const secret = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
    const body =
      '{"id":"evt_test","type":"webhook.test","created_at":"2026-11-20T12:00:00.000Z","data":{"endpoint_id":"we_1"},"idempotency_key":"evt_test"}';
    expect(signatureHeaders({ eventId: 'evt_test', body, timestampSeconds: 1795262400, secrets: [secret] })).toEqual({
      'x-service-signature': 't=1795262400,v1=da62a85bfa985b215dd15bbdc1e066a41d8fe2b853da9025e65997bdf37ee3d7',
      'webhook-id': 'evt_test',
      'webhook-timestamp': '1795262400',
      'webhook-signature': 'v1,iCWBUYWhqtz/cIDeMt8qDevo+KOG4L9d8G45S+PyLbs=',
    });
  });

  it('secrets are whsec_ and the base64 of 32 random bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });
});

describe('webhook configuration', () => {
  it('reads WEBHOOK_RETRY_SCHEDULE as seconds before each attempt, default 0,10,60,300,1800', () => {
    expect(loadConfig({}).webhookRetryScheduleSeconds).toEqual([0, 10, 60, 300, 1800]);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: ' 0, 1 ,2' }).webhookRetryScheduleSeconds).toEqual([0, 1, 2]);
    for (const bad of ['0,,1', '1.5', '-1', '0,86401', Array(21).fill('1').join(',')]) {
      expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: bad })).toThrow(ConfigError);
    }
    expect(loadConfig({}).eventRetentionDays).toBe(30);
    expect(() => loadConfig({ EVENT_RETENTION_DAYS: '0' })).toThrow(ConfigError);
  });
});

describeEachDialect('webhook endpoints API', (dialect) => {
  // WEBHOOK_ALLOW_PRIVATE is off here: every URL rule applies.
  const ctx = useTestService(dialect, { serviceOptions: { webhooks: { lookup } } });
  const call = (options: InjectOptions & { auth?: Record<string, string> }) =>
    ctx().service.app.inject({ ...options, headers: { ...(options.auth ?? ctx().auth), ...options.headers } });
  const create = (payload: Record<string, unknown>, auth?: Record<string, string>) =>
    call({ method: 'POST', url: '/v1/webhooks', payload, ...(auth === undefined ? {} : { auth }) });

  it('creates an endpoint and shows its secret only then', async () => {
    const response = await create({
      url: 'https://hooks.example.com/in',
      events: ['wallet.credit.added', 'user.created'],
      description: 'ops',
    });
    expect(response.statusCode).toBe(201);
    const endpoint = response.json();
    expect(Object.keys(endpoint).sort()).toEqual([
      'created_at',
      'description',
      'disabled_reason',
      'enabled',
      'events',
      'id',
      'object',
      'rate_limit_per_second',
      'secret',
      'url',
    ]);
    expect(endpoint).toMatchObject({
      object: 'webhook_endpoint',
      url: 'https://hooks.example.com/in',
      events: ['wallet.credit.added', 'user.created'],
      description: 'ops',
      enabled: true,
    });
    expect(endpoint.id).toMatch(/^we_[0-9A-Za-z]{22}$/);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const fetched = await call({ method: 'GET', url: `/v1/webhooks/${endpoint.id}` });
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json()).not.toHaveProperty('secret');
    expect(fetched.json()).toEqual({ ...endpoint, secret: undefined });
    const list = await call({ method: 'GET', url: '/v1/webhooks' });
    expect(JSON.stringify(list.json())).not.toContain('whsec_');

    const noDescription = await create({ url: 'https://other.example.com/x', events: ['*'] });
    expect(noDescription.json()).toMatchObject({ description: null, events: ['*'] });
  });

  it('lists endpoints newest first with a cursor', async () => {
    const { project, secretKey } = await ctx().service.projects.createProject({ name: 'list' });
    const auth = { authorization: `Bearer ${secretKey}` };
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      ids.push((await create({ url: `https://hooks.example.com/${index}`, events: ['*'] }, auth)).json().id);
    }
    expect(project.id).toMatch(/^prj_/);
    const first = await call({ method: 'GET', url: '/v1/webhooks?limit=2', auth });
    expect(first.json()).toMatchObject({ object: 'list', has_more: true });
    const firstIds = (first.json().data as { id: string }[]).map((endpoint) => endpoint.id);
    const second = await call({ method: 'GET', url: `/v1/webhooks?limit=2&starting_after=${firstIds[1]}`, auth });
    expect(second.json()).toMatchObject({ has_more: false });
    const allIds = [...firstIds, ...(second.json().data as { id: string }[]).map((endpoint) => endpoint.id)];
    expect(allIds.sort()).toEqual([...ids].sort());
    const unknown = await call({ method: 'GET', url: '/v1/webhooks?starting_after=we_0000000000000000000000', auth });
    expect(unknown.json().error).toMatchObject({ code: 'resource_missing', param: 'starting_after' });
  });

  it('updates url, events, description and enabled, and deletes', async () => {
    const { id } = (await create({ url: 'https://hooks.example.com/a', events: ['user.created'], description: 'first' })).json();
    const patched = await call({
      method: 'PATCH',
      url: `/v1/webhooks/${id}`,
      payload: { url: 'https://other.example.com/b', events: ['session.created', 'session.revoked'], description: null, enabled: false },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      id,
      url: 'https://other.example.com/b',
      events: ['session.created', 'session.revoked'],
      description: null,
      enabled: false,
    });
    expect(patched.json()).not.toHaveProperty('secret');
    const reenabled = await call({ method: 'PATCH', url: `/v1/webhooks/${id}`, payload: { enabled: true } });
    expect(reenabled.json()).toMatchObject({ enabled: true, url: 'https://other.example.com/b' });

    const badType = await call({ method: 'PATCH', url: `/v1/webhooks/${id}`, payload: { events: ['user.created', 'user.exploded'] } });
    expect(badType.statusCode).toBe(400);
    expect(badType.json().error).toMatchObject({ code: 'event_type_unknown', param: 'events[1]' });
    const badUrl = await call({ method: 'PATCH', url: `/v1/webhooks/${id}`, payload: { url: 'https://rebind.example.com/' } });
    expect(badUrl.json().error).toMatchObject({ code: 'webhook_url_forbidden', param: 'url' });

    const deleted = await call({ method: 'DELETE', url: `/v1/webhooks/${id}` });
    expect(deleted.json()).toEqual({ id, object: 'webhook_endpoint', deleted: true });
    expect((await call({ method: 'GET', url: `/v1/webhooks/${id}` })).statusCode).toBe(404);
    expect((await call({ method: 'DELETE', url: `/v1/webhooks/${id}` })).statusCode).toBe(404);
  });

  it('rotates the secret: a new one is shown, the endpoint keeps its id', async () => {
    const created = (await create({ url: 'https://hooks.example.com/rotate', events: ['*'] })).json();
    const rotated = await call({ method: 'POST', url: `/v1/webhooks/${created.id}/rotate-secret` });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json()).toMatchObject({ id: created.id, object: 'webhook_endpoint' });
    expect(rotated.json().secret).toMatch(/^whsec_/);
    expect(rotated.json().secret).not.toBe(created.secret);
  });

  it('refuses bodies that break the rules, each with its own code', async () => {
    const cases: [Record<string, unknown>, string, string | undefined][] = [
      [{ url: 'https://hooks.example.com/', events: ['wallet.credit.nope'] }, 'event_type_unknown', 'events[0]'],
      [{ url: 'https://hooks.example.com/', events: ['*', 'Wallet.Credit.Added'] }, 'event_type_unknown', 'events[1]'],
      [{ url: 'https://hooks.example.com/', events: [] }, 'parameter_invalid', 'events'],
      [{ url: 'https://hooks.example.com/', events: 'user.created' }, 'parameter_invalid', 'events'],
      [{ events: ['*'] }, 'parameter_missing', 'url'],
      [{ url: 'https://hooks.example.com/' }, 'parameter_missing', 'events'],
      [{ url: 'https://hooks.example.com/', events: ['*'], enabled: false }, 'parameter_unknown', 'enabled'],
      [{ url: 'http://hooks.example.com/', events: ['*'] }, 'webhook_url_invalid', 'url'],
      [{ url: 'not a url', events: ['*'] }, 'webhook_url_invalid', 'url'],
      [{ url: 'https://user:pass@hooks.example.com/', events: ['*'] }, 'webhook_url_invalid', 'url'],
    ];
    for (const [payload, code, param] of cases) {
      const response = await create(payload);
      expect({ payload, status: response.statusCode, code: response.json().error?.code, param: response.json().error?.param }).toEqual({
        payload,
        status: 400,
        code,
        param,
      });
    }
  });

  it('refuses URLs that name or resolve to non-public addresses, in every spelling (WEBHOOK_ALLOW_PRIVATE off)', async () => {
    const forbidden = [
      'https://127.0.0.1/',
      'https://127.1/',
      'https://0x7f000001/',
      'https://2130706433/',
      'https://017700000001/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/',
      'https://172.16.0.1/',
      'https://192.168.0.1/',
      'https://100.64.0.1/',
      'https://0.0.0.0/',
      'https://[fc00::1]/',
      'https://[fe80::1]/',
      'https://224.0.0.1/',
      'https://localhost/',
      'https://localhost:8443/hook',
      'https://rebind.example.com/',
      'https://private.example.com/',
      'https://v6.example.com/',
    ];
    for (const url of forbidden) {
      const response = await create({ url, events: ['*'] });
      expect({ url, status: response.statusCode, code: response.json().error?.code }).toEqual({
        url,
        status: 400,
        code: 'webhook_url_forbidden',
      });
    }
  });

  it('answers 404 for another project’s endpoints and deliveries, and lists only its own', async () => {
    const other = await ctx().service.projects.createProject({ name: 'other' });
    const otherAuth = { authorization: `Bearer ${other.secretKey}` };
    const foreign = (await create({ url: 'https://hooks.example.com/foreign', events: ['*'] }, otherAuth)).json();
    const requests: InjectOptions[] = [
      { method: 'GET', url: `/v1/webhooks/${foreign.id}` },
      { method: 'PATCH', url: `/v1/webhooks/${foreign.id}`, payload: { enabled: false } },
      { method: 'DELETE', url: `/v1/webhooks/${foreign.id}` },
      { method: 'POST', url: `/v1/webhooks/${foreign.id}/rotate-secret` },
      { method: 'POST', url: `/v1/webhooks/${foreign.id}/test` },
      { method: 'GET', url: `/v1/webhooks/${foreign.id}/deliveries` },
      { method: 'POST', url: `/v1/webhooks/${foreign.id}/deliveries/del_0000000000000000000000/retry` },
    ];
    for (const request of requests) {
      const response = await call(request);
      expect({ url: request.url, status: response.statusCode, code: response.json().error?.code }).toEqual({
        url: request.url,
        status: 404,
        code: 'resource_missing',
      });
    }
    const mine = await call({ method: 'GET', url: '/v1/webhooks?limit=100' });
    expect((mine.json().data as { id: string }[]).some((endpoint) => endpoint.id === foreign.id)).toBe(false);
    expect((await call({ method: 'GET', url: `/v1/webhooks/${foreign.id}`, auth: otherAuth })).statusCode).toBe(200);
  });

  it('replays a creation sent again with the same Idempotency-Key: one endpoint, one secret', async () => {
    const { secretKey } = await ctx().service.projects.createProject({ name: 'idempotent' });
    const auth = { authorization: `Bearer ${secretKey}` };
    const send = () =>
      call({
        method: 'POST',
        url: '/v1/webhooks',
        auth,
        headers: { 'idempotency-key': 'create-1' },
        payload: { url: 'https://hooks.example.com/i', events: ['*'] },
      });
    const first = await send();
    const second = await send();
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json()).toEqual(first.json());
    expect((await call({ method: 'GET', url: '/v1/webhooks', auth })).json().data).toHaveLength(1);
  });

  it('documents its routes in the OpenAPI document', async () => {
    const document = (await ctx().service.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{
      paths: Record<string, unknown>;
    }>();
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/v1/webhooks',
        '/v1/webhooks/{id}',
        '/v1/webhooks/{id}/rotate-secret',
        '/v1/webhooks/{id}/test',
        '/v1/webhooks/{id}/deliveries',
        '/v1/webhooks/{id}/deliveries/{delivery_id}/retry',
        '/v1/events',
        '/v1/events/{id}',
      ]),
    );
  });

  it('needs a secret key', async () => {
    const response = await ctx().service.app.inject({ method: 'GET', url: '/v1/webhooks' });
    expect(response.statusCode).toBe(401);
    expect((await ctx().service.app.inject({ method: 'GET', url: '/v1/events' })).statusCode).toBe(401);
  });

  it('shows the event log: newest first, by type, one at a time, and only the project’s own', async () => {
    const { project, secretKey } = await ctx().service.projects.createProject({ name: 'events' });
    const auth = { authorization: `Bearer ${secretKey}` };
    const other = await ctx().service.projects.createProject({ name: 'events-other' });
    const record = (projectId: string, type: EventType, data: Record<string, unknown>, at: string) =>
      inTransaction(ctx().service.db, (trx) => recordEvent(trx, { projectId, type, data, createdAt: at } as NewEvent));
    const base = Date.parse('2026-11-20T12:00:00.000Z');
    const at = (seconds: number) => isoTime(new Date(base + seconds * 1000));
    const created = await record(project.id, 'user.created', { user_id: 'usr_a', email: 'a@example.com' }, at(1));
    const credited = await record(project.id, 'wallet.credit.added', { wallet_id: 'wlt_a', amount: 3, balance: 3 }, at(2));
    const updated = await record(project.id, 'user.updated', { user_id: 'usr_a', email: 'a@example.com' }, at(3));
    const foreign = await record(other.project.id, 'user.created', { user_id: 'usr_b', email: 'b@example.com' }, at(4));

    const all = await call({ method: 'GET', url: '/v1/events', auth });
    expect(all.statusCode).toBe(200);
    expect((all.json().data as { id: string }[]).map((event) => event.id)).toEqual([updated, credited, created]);
    expect(all.json().data[1]).toEqual({
      id: credited,
      object: 'event',
      type: 'wallet.credit.added',
      created_at: at(2),
      data: { wallet_id: 'wlt_a', amount: 3, balance: 3 },
      idempotency_key: credited,
    });
    const users = await call({ method: 'GET', url: '/v1/events?type=user.created', auth });
    expect((users.json().data as { id: string }[]).map((event) => event.id)).toEqual([created]);
    const page = await call({ method: 'GET', url: `/v1/events?limit=1&starting_after=${updated}`, auth });
    expect(page.json()).toMatchObject({ has_more: true, data: [{ id: credited }] });
    const unknownType = await call({ method: 'GET', url: '/v1/events?type=user.exploded', auth });
    expect(unknownType.json().error).toMatchObject({ code: 'event_type_unknown', param: 'type' });

    expect((await call({ method: 'GET', url: `/v1/events/${created}`, auth })).json()).toMatchObject({ id: created, type: 'user.created' });
    expect((await call({ method: 'GET', url: `/v1/events/${foreign}`, auth })).statusCode).toBe(404);
    expect((await call({ method: 'GET', url: `/v1/events?starting_after=${foreign}`, auth })).statusCode).toBe(404);
  });
});
