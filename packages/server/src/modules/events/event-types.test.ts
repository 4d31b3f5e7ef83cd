import { readFileSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import type { DnsLookup } from '../../lib/outbound-http.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { SoftwareAuthenticator } from '../../test/software-authenticator.js';
import { configureRelyingParty, ORIGIN, passkeyClient, registerPasskey } from '../passkeys/passkeys.testing.js';
import { expectStatus, schemaErrors, walletsClient } from '../wallets/wallets.fixtures.js';
import { eventEnvelopeJson } from './event-log.service.js';
import { EVENT_CATALOG, EVENT_TYPES } from './event-types.js';
import { timeStep, totpCode } from '../mfa/totp.js';
import { settleExpired } from '../wallets/holds.service.js';
import { systemClock } from '../../lib/clock.js';

/** Every name resolves to one public address; the test sends nothing anywhere. */
const lookup: DnsLookup = () => Promise.resolve([{ address: '93.184.215.14', family: 4 }]);

/** The types of docs/api.md section 5's events table ("a · b" cells name several). */
function documentedEventTypes(): string[] {
  const api = readFileSync(new URL('../../../../../docs/api.md', import.meta.url), 'utf8');
  const section = api.slice(api.indexOf('## 5. Events'), api.indexOf('## 6.'));
  return section
    .split('\n')
    .filter((line) => /^\| [a-z_]+\.[a-z_.]+/.test(line))
    .flatMap((line) => (line.split('|')[1] ?? '').split('·').map((type) => type.trim()));
}

interface EventTypeEntry {
  readonly type: string;
  readonly description: string;
  readonly schema: Record<string, unknown>;
}

describe('the event catalog', () => {
  it('holds exactly the types of the documented events table, each with a description and an object schema', () => {
    expect([...EVENT_TYPES].sort()).toEqual(documentedEventTypes().sort());
    for (const type of EVENT_TYPES) {
      expect(EVENT_CATALOG[type].description.length, type).toBeGreaterThan(0);
      expect(EVENT_CATALOG[type].data, type).toMatchObject({ type: 'object', additionalProperties: false });
    }
  });
});

// The route reads no storage, but the flows whose events are checked below run on both dialects
// (the ledger's events go through the events module's recordEvents on both, in one insert per flush).
describeEachDialect('GET /v1/event-types and the events the service emits', (dialect) => {
  const ctx = useTestService(dialect, { serviceOptions: { webhooks: { lookup } } });

  it('lists every event type with its schema, for a secret key only', async () => {
    const { secretKey } = await ctx().service.projects.createProject({ name: 'catalog' });
    const response = await ctx().service.app.inject({
      method: 'GET',
      url: '/v1/event-types',
      headers: { authorization: `Bearer ${secretKey}` },
    });
    const body = expectStatus<{ object: string; data: EventTypeEntry[]; has_more: boolean }>(response, 200);
    expect(body.object).toBe('list');
    expect(body.has_more).toBe(false);
    expect(body.data.map((entry) => entry.type)).toEqual([...EVENT_TYPES]);
    for (const entry of body.data) {
      expect(entry.schema, entry.type).toEqual(JSON.parse(JSON.stringify(EVENT_CATALOG[entry.type as keyof typeof EVENT_CATALOG].data)));
      expect(entry.description).toBe(EVENT_CATALOG[entry.type as keyof typeof EVENT_CATALOG].description);
    }
    expect((await ctx().service.app.inject({ method: 'GET', url: '/v1/event-types' })).statusCode).toBe(401);
  });

  it('publishes one OpenAPI webhook per event type, a POST of the envelope with that data schema', async () => {
    const document = (await ctx().service.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{
      webhooks: Record<
        string,
        { post: { operationId: string; requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } } }
      >;
    }>();
    expect(Object.keys(document.webhooks)).toEqual([...EVENT_TYPES]);
    for (const type of EVENT_TYPES) {
      const schema = document.webhooks[type]?.post.requestBody.content['application/json']?.schema;
      expect(Object.keys(schema?.properties ?? {}), type).toEqual(['id', 'type', 'created_at', 'data', 'idempotency_key']);
      expect(schema?.properties['data'], type).toEqual(JSON.parse(JSON.stringify(EVENT_CATALOG[type].data)));
    }
  });

  it('emits events whose webhook bodies validate against the catalog and the OpenAPI webhooks (property over real flows)', async () => {
    const service = ctx().service;
    const { project, secretKey } = await service.projects.createProject({ name: 'catalog-flows' });
    const authorization = `Bearer ${secretKey}`;
    const post = async (
      url: string,
      payload: Record<string, unknown>,
      status: number,
      headers: Record<string, string> = { authorization },
    ) => expectStatus<Record<string, unknown>>(await service.app.inject({ method: 'POST', url, headers, payload }), status);

    // Wallets: credit, debit below the low-balance threshold, transfer, a reversal of part of the debit.
    const wallets = await walletsClient(service, { projectId: project.id, secretKey });
    const source = await wallets.createWallet({ low_balance_threshold: 50 });
    const target = await wallets.createWallet();
    await wallets.credit(source.id, 100, { description: 'top-up' });
    const debit = await wallets.debit(source.id, 40);
    await wallets.transfer(source.id, target.id, 20);
    await post(`/v1/transactions/${debit.id}/reverse`, { amount: 1 }, 201);
    // Holds (captured, voided, expired) and a grant that expires, settled by the expiry job's step.
    const captured = await post(`/v1/wallets/${source.id}/holds`, { amount: 5 }, 201);
    await post(`/v1/holds/${String(captured['id'])}/capture`, { amount: 3 }, 200);
    const voided = await post(`/v1/wallets/${source.id}/holds`, { amount: 5 }, 201);
    await post(`/v1/holds/${String(voided['id'])}/void`, {}, 200);
    await post(`/v1/wallets/${source.id}/holds`, { amount: 5, expires_in: 1 }, 201);
    await wallets.credit(target.id, 5, { expires_at: new Date(Date.now() + 1000).toISOString() });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await settleExpired({ db: service.db, clock: systemClock, ledger: service.ledger });
    // Users and sessions: sign-up, log-in, log-out.
    const signup = await post('/v1/auth/signup', { email: 'catalog@example.com', password: 'correct horse battery staple 9' }, 201);
    const user = signup['user'] as { id: string };
    const login = await post(
      '/v1/auth/login?format=token',
      { email: 'catalog@example.com', password: 'correct horse battery staple 9' },
      200,
    );
    await service.app.inject({
      method: 'POST',
      url: '/v1/auth/logout',
      headers: { authorization: `Bearer ${String(login['session'])}` },
      payload: {},
    });
    // Organizations: create, add a member, verify a domain.
    const organization = await post('/v1/organizations', { name: 'Catalog' }, 201);
    await post(`/v1/organizations/${String(organization['id'])}/members`, { user_id: user.id, role: 'member' }, 201);
    await post(`/v1/organizations/${String(organization['id'])}/domains`, { domain: 'catalog.example', verification: 'manual' }, 201);
    // Webhooks: the test event.
    const endpoint = await post('/v1/webhooks', { url: 'https://hooks.example.com/in', events: ['*'] }, 201);
    await post(`/v1/webhooks/${String(endpoint['id'])}/test`, {}, 201);
    // A user's change and deletion, and a member's removal (with their reasons).
    const inject = (method: 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
      service.app.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload }) });
    expect((await inject('PATCH', `/v1/users/${user.id}`, { name: 'Renamed' })).statusCode).toBe(200);
    expect((await inject('DELETE', `/v1/organizations/${String(organization['id'])}/members/${user.id}`)).statusCode).toBeLessThan(300);
    const relogged = await post('/v1/auth/login', { email: 'catalog@example.com', password: 'correct horse battery staple 9' }, 200);
    // Passkeys: one registered with the software authenticator, then removed.
    const passkeys = passkeyClient(service, secretKey);
    await configureRelyingParty(passkeys);
    const sessionToken = (relogged['session'] as { id: string }).id;
    const passkey = await registerPasskey(passkeys, sessionToken, new SoftwareAuthenticator({ origin: ORIGIN }));
    expect((await passkeys.call('DELETE', `/v1/users/me/passkeys/${passkey.id}`, undefined, sessionToken)).statusCode).toBe(200);
    // A second factor: enabled by the user, reset by the administrator.
    const asUser = { authorization: `Bearer ${(signup['session'] as { id: string }).id}` };
    const totp = await post('/v1/users/me/mfa/totp', {}, 201, asUser);
    await post('/v1/users/me/mfa/totp/verify', { code: totpCode(String(totp['secret']), timeStep(new Date())) }, 200, asUser);
    expect((await inject('DELETE', `/v1/users/${user.id}/mfa`)).statusCode).toBe(200);
    expect((await inject('DELETE', `/v1/users/${user.id}`)).statusCode).toBeLessThan(300);

    const rows = await service.db.kysely
      .selectFrom('events')
      .select(['id', 'project_id', 'type', 'data', 'idempotency_key', 'created_at'])
      .where('project_id', '=', project.id)
      .orderBy('created_at')
      .execute();
    // Every catalog type but the two that need an emailed token (verification, invitation), and
    // `webhook_endpoint.disabled`, which takes days of failures (webhooks.operations.test.ts
    // produces it with a clock moved by hand and checks its data against this catalog).
    const emitted = new Set(rows.map((row) => row.type));
    const notHere = new Set(['user.email_verified', 'organization.invitation.accepted', 'webhook_endpoint.disabled']);
    expect([...emitted].sort()).toEqual(EVENT_TYPES.filter((type) => !notHere.has(type)).sort());
    const document = (await service.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{
      webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: TSchema }> } } }>;
    }>();
    for (const row of rows) {
      expect(EVENT_TYPES, row.type).toContain(row.type);
      const body: unknown = JSON.parse(eventEnvelopeJson(row));
      const data = (body as { data: unknown }).data;
      expect(schemaErrors(EVENT_CATALOG[row.type as keyof typeof EVENT_CATALOG].data, data), `${row.type} ${JSON.stringify(data)}`).toEqual(
        [],
      );
      const envelope = document.webhooks[row.type]?.post.requestBody.content['application/json']?.schema;
      expect(envelope, row.type).toBeDefined();
      expect(schemaErrors(envelope as TSchema, body), `${row.type} ${JSON.stringify(body)}`).toEqual([]);
    }
  });
});
