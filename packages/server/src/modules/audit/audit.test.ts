import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { runCli } from '../../cli.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { sha256Hex } from '../../lib/crypto.js';
import { randomBase62 } from '../../lib/ids.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { bearer, strongPassword, testClock, uniqueEmail } from '../auth/auth.testing.js';
import { insertEmailToken } from '../auth/email-tokens.store.js';
import { createUser } from '../wallets/wallets.fixtures.js';
import { SYSTEM_AUDIT_CONTEXT } from './audit.context.js';
import type { AuditEntry } from './audit.schemas.js';
import { type AuditReader, auditReader } from './audit.testing.js';

const HOUR_MS = 60 * 60 * 1000;

describeEachDialect('audit log', (dialect) => {
  // A local receiver for the webhook tests: the manual retry makes a real request to it.
  let receiver: Server;
  let receiverUrl = '';
  beforeAll(async () => {
    receiver = createServer((_request, response) => response.writeHead(200).end('ok'));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  const clock = testClock();
  const ctx = useTestService(dialect, { env: { WEBHOOK_ALLOW_PRIVATE: '1' }, serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const send = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = ctx().auth) =>
    call({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  const post = (url: string, payload?: unknown, headers?: Record<string, string>) => send('POST', url, payload ?? {}, headers);
  let audit: AuditReader;
  let keyId: string;
  /** Every secret this file handed out; none may appear in any entry. */
  const secrets: string[] = [];

  beforeAll(async () => {
    audit = auditReader(ctx().service, ctx().secretKey);
    const [key] = await ctx().service.projects.listKeys(ctx().projectId);
    keyId = key!.id;
    secrets.push(ctx().secretKey);
  });

  /** The one entry a request left, checked against what every entry of a secret-key request carries. */
  async function onlyEntry(response: LightMyRequestResponse, expected: Partial<AuditEntry>): Promise<AuditEntry> {
    const entries = await audit.of(response);
    expect(entries, `entries of ${response.headers['request-id'] as string}`).toHaveLength(1);
    const entry = entries[0]!;
    expect(entry).toMatchObject({ object: 'audit_log', request_id: response.headers['request-id'], ...expected });
    expect(entry.id).toMatch(/^aud_[0-9a-z]{9}[0-9A-Za-z]{22}$/);
    // A money movement is read from the ledger, which keeps its request's IP and user agent too
    // (docs/adr/0019-audit-reads-the-ledger.md).
    expect(entry.ip).toBe('127.0.0.1');
    expect(entry.user_agent).toBe('lightMyRequest');
    return entry;
  }
  const byKey = () => ({ type: 'secret_key' as const, id: keyId });

  it('records each wallet action once: actor, resource, outcome, request id and the balances', async () => {
    const userId = await createUser(ctx().service, ctx().projectId);
    const created = await post('/v1/wallets', { user_id: userId, currency: 'USD' });
    const walletId = created.json<{ id: string }>().id;
    await onlyEntry(created, {
      action: 'wallet.create',
      actor: byKey(),
      resource: { type: 'wallet', id: walletId },
      outcome: 'success',
      changes: { user_id: userId, currency: 'USD' },
    });
    const other = (await post('/v1/wallets', { user_id: userId, currency: 'USD' })).json<{ id: string }>().id;

    await onlyEntry(await send('PATCH', `/v1/wallets/${walletId}`, { low_balance_threshold: 5 }), {
      action: 'wallet.update',
      changes: { metadata_changed: false, low_balance_threshold_before: null, low_balance_threshold_after: 5 },
    });
    const credit = await post(`/v1/wallets/${walletId}/credits`, { amount: 100 });
    await onlyEntry(credit, {
      action: 'wallet.credit',
      actor: byKey(),
      resource: { type: 'wallet', id: walletId },
      outcome: 'success',
      changes: { transaction_id: credit.json<{ id: string }>().id, amount: 100, balance_before: 0, balance_after: 100 },
    });
    await onlyEntry(await post(`/v1/wallets/${walletId}/debits`, { amount: 30 }), {
      action: 'wallet.debit',
      changes: { amount: 30, balance_before: 100, balance_after: 70 },
    });
    await onlyEntry(await post(`/v1/wallets/${walletId}/debits`, { amount: 1000 }), {
      action: 'wallet.debit',
      outcome: 'insufficient_credits',
      resource: { type: 'wallet', id: walletId },
    });
    const transfer = await post('/v1/wallets/transfer', { from_wallet_id: walletId, to_wallet_id: other, amount: 20 });
    await onlyEntry(transfer, {
      action: 'wallet.transfer',
      outcome: 'success',
      resource: { type: 'wallet', id: walletId },
      changes: {
        transaction_id: transfer.json<{ id: string }>().id,
        to_wallet_id: other,
        amount: 20,
        from_balance_before: 70,
        from_balance_after: 50,
        to_balance_before: 0,
        to_balance_after: 20,
      },
    });
    // The refused transfer is recorded with its error code; nothing else changed.
    const refused = await post('/v1/wallets/transfer', { from_wallet_id: walletId, to_wallet_id: other, amount: 5000 });
    expect(refused.statusCode).toBe(422);
    await onlyEntry(refused, {
      action: 'wallet.transfer',
      outcome: 'insufficient_credits',
      changes: { to_wallet_id: other, amount: 5000 },
    });
    await onlyEntry(await post('/v1/wallets/transfer', { from_wallet_id: walletId, to_wallet_id: walletId, amount: 1 }), {
      action: 'wallet.transfer',
      outcome: 'same_wallet',
    });
    // Reversals (docs/adr/0024-reversals.md): read from the ledger about the wallet given back to (or,
    // a credit's, taken from); a refused one about the transaction named.
    const creditId = credit.json<{ id: string }>().id;
    const reversal = await post(`/v1/transactions/${creditId}/reverse`, { amount: 10 });
    await onlyEntry(reversal, {
      action: 'wallet.reversal',
      outcome: 'success',
      resource: { type: 'wallet', id: walletId },
      changes: {
        transaction_id: reversal.json<{ id: string }>().id,
        reverses: creditId,
        amount: 10,
        balance_before: 50,
        balance_after: 40,
      },
    });
    await onlyEntry(await post(`/v1/transactions/${creditId}/reverse`, { amount: 1000 }), {
      action: 'wallet.reversal',
      outcome: 'reversal_exceeds_original',
      resource: { type: 'transaction', id: creditId },
    });
    const transferId = transfer.json<{ id: string }>().id;
    await onlyEntry(await post(`/v1/transactions/${transferId}/reverse`, { amount: 10 }), {
      action: 'wallet.reversal',
      resource: { type: 'wallet', id: walletId },
      changes: { reverses: transferId, amount: 10, balance_before: 40, balance_after: 50, from_wallet_id: other },
    });

    await onlyEntry(await post(`/v1/wallets/${walletId}/freeze`), {
      action: 'wallet.freeze',
      changes: { status_before: 'active', status_after: 'frozen' },
    });
    await onlyEntry(await post(`/v1/wallets/${walletId}/credits`, { amount: 1 }), { action: 'wallet.credit', outcome: 'wallet_frozen' });
    await onlyEntry(await post(`/v1/wallets/${walletId}/unfreeze`), {
      action: 'wallet.unfreeze',
      changes: { status_before: 'frozen', status_after: 'active' },
    });
    await onlyEntry(await post(`/v1/wallets/${walletId}/close`), { action: 'wallet.close', outcome: 'wallet_not_empty' });
    await post(`/v1/wallets/${walletId}/debits`, { amount: 50 });
    await onlyEntry(await post(`/v1/wallets/${walletId}/close`), {
      action: 'wallet.close',
      outcome: 'success',
      changes: { status_before: 'active', status_after: 'closed' },
    });
    await onlyEntry(await post(`/v1/wallets/wlt_${randomBase62(22)}/credits`, { amount: 1 }), {
      action: 'wallet.credit',
      outcome: 'resource_missing',
    });
  });

  it('records a keyed refusal once, and a replay of it or of a success adds nothing', async () => {
    const userId = await createUser(ctx().service, ctx().projectId);
    const walletId = (await post('/v1/wallets', { user_id: userId, currency: 'EUR' })).json<{ id: string }>().id;
    const keyed = (key: string, amount: number) =>
      send('POST', `/v1/wallets/${walletId}/debits`, { amount }, { ...ctx().auth, 'idempotency-key': key });
    const refused = await keyed('debit-1', 10);
    expect(refused.statusCode).toBe(422);
    await onlyEntry(refused, { action: 'wallet.debit', outcome: 'insufficient_credits' });
    const replayed = await keyed('debit-1', 10);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(await audit.of(replayed)).toHaveLength(0);

    const credited = await send(
      'POST',
      `/v1/wallets/${walletId}/credits`,
      { amount: 10 },
      { ...ctx().auth, 'idempotency-key': 'credit-1' },
    );
    await onlyEntry(credited, { action: 'wallet.credit', outcome: 'success', changes: { balance_after: 10 } });
    const again = await send('POST', `/v1/wallets/${walletId}/credits`, { amount: 10 }, { ...ctx().auth, 'idempotency-key': 'credit-1' });
    expect(await audit.of(again)).toHaveLength(0);
  });

  it('records sign up, log in (refused, throttled, banned), refresh, reuse, log out, revocations and password changes', async () => {
    const email = uniqueEmail('audit');
    const password = strongPassword('audit');
    secrets.push(password);
    const signedUp = await post('/v1/auth/signup', { email, password, name: 'Ada' });
    const userId = signedUp.json<{ user: { id: string } }>().user.id;
    const signupSession = signedUp.json<{ session: { id: string; refresh_token: string } }>().session;
    secrets.push(signupSession.id, signupSession.refresh_token);
    const sessionName = (token: string) => token.split('.')[0]!;
    await onlyEntry(signedUp, {
      action: 'user.signup',
      actor: byKey(),
      resource: { type: 'user', id: userId },
      changes: { session_id: sessionName(signupSession.id) },
    });
    await onlyEntry(await post('/v1/auth/signup', { email, password, name: 'Ada' }), { action: 'user.signup', outcome: 'email_taken' });

    const wrong = await post('/v1/auth/login', { email, password: `${password}x` });
    expect(wrong.statusCode).toBe(401);
    await onlyEntry(wrong, {
      action: 'user.login',
      outcome: 'invalid_credentials',
      resource: { type: 'user', id: userId },
      changes: { email },
    });
    await onlyEntry(await post('/v1/auth/login', { email: uniqueEmail('nobody'), password }), {
      action: 'user.login',
      outcome: 'invalid_credentials',
      resource: { type: 'user', id: null },
    });
    const login = await post('/v1/auth/login', { email, password });
    const session = login.json<{ session: { id: string; refresh_token: string } }>().session;
    secrets.push(session.id, session.refresh_token);
    await onlyEntry(login, { action: 'user.login', outcome: 'success', changes: { session_id: sessionName(session.id) } });

    const refreshed = await post('/v1/sessions/refresh', { refresh_token: session.refresh_token });
    const next = refreshed.json<{ session: { id: string; refresh_token: string } }>().session;
    secrets.push(next.id, next.refresh_token);
    await onlyEntry(refreshed, {
      action: 'session.refresh',
      resource: { type: 'session', id: sessionName(next.id) },
      changes: { previous_session_id: sessionName(session.id), user_id: userId },
    });
    clock.advance(60_000);
    const reused = await post('/v1/sessions/refresh', { refresh_token: session.refresh_token });
    expect(reused.statusCode).toBe(401);
    await onlyEntry(reused, {
      action: 'session.refresh_token_reused',
      outcome: 'refresh_token_reused',
      resource: { type: 'session', id: sessionName(session.id) },
      changes: { user_id: userId, sessions_revoked: 1 },
    });
    await onlyEntry(await post('/v1/sessions/refresh', { refresh_token: `svc_rt_${'A'.repeat(43)}` }), {
      action: 'session.refresh',
      outcome: 'refresh_token_invalid',
    });

    // A session's own requests name the session, never its token, and its user.
    const changed = await post(
      '/v1/auth/password/change',
      { current_password: password, new_password: `${password}2` },
      bearer(signupSession.id),
    );
    expect(changed.statusCode).toBe(200);
    secrets.push(`${password}2`);
    await onlyEntry(changed, {
      action: 'user.password_change',
      actor: { type: 'session', id: sessionName(signupSession.id), user_id: userId },
      resource: { type: 'user', id: userId },
    });
    await onlyEntry(
      await post('/v1/auth/password/change', { current_password: 'not-it-at-all', new_password: password }, bearer(signupSession.id)),
      {
        action: 'user.password_change',
        outcome: 'invalid_credentials',
      },
    );
    const logout = await post('/v1/auth/logout', {}, bearer(signupSession.id));
    expect(logout.statusCode).toBe(204);
    await onlyEntry(logout, {
      action: 'session.logout',
      actor: { type: 'session', id: sessionName(signupSession.id), user_id: userId },
      resource: { type: 'session', id: sessionName(signupSession.id) },
    });

    // The throttle: ten failures, then the eleventh attempt is locked out (429 rate_limited).
    const throttledEmail = uniqueEmail('throttled');
    for (let attempt = 0; attempt < 10; attempt += 1) await post('/v1/auth/login', { email: throttledEmail, password: 'wrong-password-1' });
    await onlyEntry(await post('/v1/auth/login', { email: throttledEmail, password: 'wrong-password-1' }), {
      action: 'user.login',
      outcome: 'rate_limited',
    });

    const login2 = (await post('/v1/auth/login', { email, password: `${password}2` })).json<{ session: { id: string } }>().session.id;
    secrets.push(login2);
    await onlyEntry(await post(`/v1/sessions/${sessionName(login2)}/revoke`), {
      action: 'session.revoke',
      resource: { type: 'session', id: sessionName(login2) },
      changes: { user_id: userId, revoked_before: false },
    });
    // Revoking by the whole token names the session only.
    await onlyEntry(await post('/v1/auth/logout', { session_id: login2 }), {
      action: 'session.logout',
      actor: byKey(),
      resource: { type: 'session', id: sessionName(login2) },
      changes: { revoked_before: true },
    });
    await onlyEntry(await post(`/v1/users/${userId}/sessions/revoke`), {
      action: 'user.sessions_revoke',
      resource: { type: 'user', id: userId },
    });

    // Email tokens, made here as the email job would send them.
    const emailToken = async (purpose: 'verify_email' | 'password_reset') => {
      const token = randomBase62(43);
      secrets.push(token);
      const now = clock.now();
      await insertEmailToken(ctx().service.db.kysely, {
        token_hash: sha256Hex(token),
        project_id: ctx().projectId,
        user_id: userId,
        purpose,
        email,
        expires_at: new Date(now.getTime() + HOUR_MS).toISOString(),
        used_at: null,
        created_at: now.toISOString(),
      });
      return token;
    };
    await onlyEntry(await post('/v1/auth/verify-email', { token: await emailToken('verify_email') }), {
      action: 'user.email_verify',
      resource: { type: 'user', id: userId },
      changes: { verified_before: false },
    });
    await onlyEntry(await post('/v1/auth/verify-email', { token: randomBase62(43) }), {
      action: 'user.email_verify',
      outcome: 'token_invalid',
    });
    const link = await call({ method: 'GET', url: `/v1/auth/verify-email?token=${await emailToken('verify_email')}` });
    await onlyEntry(link, { action: 'user.email_verify', actor: { type: 'anonymous' }, changes: { verified_before: true } });
    await onlyEntry(await post('/v1/auth/verify-email/send', { user_id: userId }), {
      action: 'user.verification_email_send',
      changes: { email_queued: false },
    });
    await onlyEntry(await post('/v1/auth/password/forgot', { email }), {
      action: 'user.password_forgot',
      resource: { type: 'user', id: userId },
      changes: { email_queued: true },
    });
    const newPassword = strongPassword('reset');
    secrets.push(newPassword);
    await onlyEntry(await post('/v1/auth/password/reset', { token: await emailToken('password_reset'), password: newPassword }), {
      action: 'user.password_reset',
      resource: { type: 'user', id: userId },
    });

    await onlyEntry(await send('PATCH', `/v1/users/${userId}`, { name: 'Ada L.' }), { action: 'user.update', changes: { fields: 'name' } });
    await onlyEntry(await send('PATCH', `/v1/users/${userId}`, { roles: ['nope'] }), {
      action: 'user.update',
      outcome: 'parameter_invalid',
    });
    await onlyEntry(await post(`/v1/users/${userId}/ban`), { action: 'user.ban', changes: { banned_before: false } });
    await onlyEntry(await post('/v1/auth/login', { email, password: newPassword }), { action: 'user.login', outcome: 'user_banned' });
    await onlyEntry(await post(`/v1/users/${userId}/unban`), { action: 'user.unban', changes: { banned_before: true } });
    await onlyEntry(await send('DELETE', `/v1/users/${userId}`), { action: 'user.delete', resource: { type: 'user', id: userId } });
    await onlyEntry(await send('DELETE', `/v1/users/${userId}`), { action: 'user.delete', outcome: 'resource_missing' });
  });

  it('records role changes', async () => {
    await onlyEntry(await post('/v1/roles', { key: 'auditor', name: 'Auditor', permissions: ['audit:read'] }), {
      action: 'role.create',
      resource: { type: 'role', id: 'auditor' },
      changes: { permissions: 'audit:read' },
    });
    await onlyEntry(await post('/v1/roles', { key: 'auditor', name: 'Auditor', permissions: [] }), {
      action: 'role.create',
      outcome: 'role_key_taken',
    });
    await onlyEntry(await send('PATCH', '/v1/roles/auditor', { permissions: ['audit:read', 'audit:export'] }), {
      action: 'role.update',
      changes: { permissions: 'audit:read,audit:export' },
    });
    await onlyEntry(await send('DELETE', '/v1/roles/auditor'), { action: 'role.delete', resource: { type: 'role', id: 'auditor' } });
    await onlyEntry(await send('DELETE', '/v1/roles/admin'), { action: 'role.delete', outcome: 'parameter_invalid' });
  });

  it('records webhook endpoint changes and a retry by hand, naming the URL by its host only', async () => {
    const created = await post('/v1/webhooks', { url: `${receiverUrl}?token=receiver-secret`, events: ['*'] });
    const endpoint = created.json<{ id: string; secret: string }>();
    secrets.push(endpoint.secret, 'receiver-secret');
    await onlyEntry(created, {
      action: 'webhook_endpoint.create',
      resource: { type: 'webhook_endpoint', id: endpoint.id },
      changes: { url_host: new URL(receiverUrl).host, events: '*' },
    });
    await onlyEntry(await post('/v1/webhooks', { url: 'ftp://example.com', events: ['*'] }), {
      action: 'webhook_endpoint.create',
      outcome: 'webhook_url_invalid',
    });
    await onlyEntry(await send('PATCH', `/v1/webhooks/${endpoint.id}`, { description: 'audit' }), {
      action: 'webhook_endpoint.update',
      changes: { fields: 'description' },
    });
    const rotated = await post(`/v1/webhooks/${endpoint.id}/rotate-secret`);
    secrets.push(rotated.json<{ secret: string }>().secret);
    await onlyEntry(rotated, { action: 'webhook_endpoint.rotate_secret', resource: { type: 'webhook_endpoint', id: endpoint.id } });
    const tested = await post(`/v1/webhooks/${endpoint.id}/test`);
    const deliveryId = tested.json<{ id: string }>().id;
    await onlyEntry(tested, { action: 'webhook_endpoint.test', changes: { delivery_id: deliveryId } });
    const retried = await post(`/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}/retry`);
    expect(retried.statusCode).toBe(200);
    await onlyEntry(retried, {
      action: 'webhook_delivery.retry',
      resource: { type: 'webhook_delivery', id: deliveryId },
      changes: { endpoint_id: endpoint.id, status: 'succeeded', status_code: 200 },
    });
    await onlyEntry(await send('DELETE', `/v1/webhooks/${endpoint.id}`), { action: 'webhook_endpoint.delete' });
    await onlyEntry(await send('DELETE', `/v1/webhooks/${endpoint.id}`), {
      action: 'webhook_endpoint.delete',
      outcome: 'resource_missing',
    });
  });

  it('records secret keys created and revoked by the CLI with the system actor', async () => {
    const { apiKey, secretKey } = await ctx().service.projects.createKey(ctx().projectId, { name: 'ci' });
    secrets.push(secretKey);
    clock.advance(1);
    await ctx().service.projects.revokeKey(ctx().projectId, apiKey.id);
    await ctx().service.projects.revokeKey(ctx().projectId, apiKey.id);
    const entries = (await audit.all({ resource_id: apiKey.id })).reverse();
    expect(entries.map((entry) => [entry.action, entry.actor, entry.request_id, entry.ip])).toEqual([
      ['secret_key.create', { type: 'system' }, null, null],
      ['secret_key.revoke', { type: 'system' }, null, null],
    ]);
    expect(entries[0]!.changes).toEqual({ name: 'ci' });
  });

  it('filters by action, actor, resource and time; pages newest first; GET one; 404 across projects', async () => {
    const all = await audit.all();
    const times = all.map((entry) => entry.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    const credits = await audit.all({ action: 'wallet.credit' });
    expect(credits.length).toBeGreaterThan(0);
    expect(credits.every((entry) => entry.action === 'wallet.credit')).toBe(true);
    expect((await audit.all({ actor_id: keyId })).every((entry) => entry.actor.type === 'secret_key')).toBe(true);
    const resourceId = credits[0]!.resource.id!;
    expect((await audit.all({ resource_id: resourceId })).every((entry) => entry.resource.id === resourceId)).toBe(true);
    const middle = all[Math.floor(all.length / 2)]!.created_at;
    expect((await audit.all({ since: middle })).every((entry) => entry.created_at >= middle)).toBe(true);
    expect((await audit.all({ until: middle })).every((entry) => entry.created_at < middle)).toBe(true);
    const bad = await call({ method: 'GET', url: '/v1/audit-logs?action=wallet.explode', headers: ctx().auth });
    expect(bad.json<{ error: { code: string; param: string } }>().error).toMatchObject({ code: 'parameter_invalid', param: 'action' });

    const first = all[0]!;
    const one = await call({ method: 'GET', url: `/v1/audit-logs/${first.id}`, headers: ctx().auth });
    expect(one.json()).toEqual(first);
    const other = await ctx().service.projects.createProject({ name: 'Other' });
    secrets.push(other.secretKey);
    const foreign = await call({ method: 'GET', url: `/v1/audit-logs/${first.id}`, headers: { 'x-api-key': other.secretKey } });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json<{ error: { code: string } }>().error.code).toBe('resource_missing');
    const theirs = await auditReader(ctx().service, other.secretKey).all();
    expect(theirs.map((entry) => entry.action)).toEqual(['secret_key.create']);
  });

  it('exports the log as JSON lines, oldest first, with since and until', async () => {
    const response = await call({ method: 'GET', url: '/v1/audit-logs/export', headers: ctx().auth });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = response.body
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditEntry);
    const all = await audit.all();
    expect(lines.map((entry) => entry.id)).toEqual(all.map((entry) => entry.id).reverse());
    const since = lines[Math.floor(lines.length / 2)]!.created_at;
    const later = await call({ method: 'GET', url: `/v1/audit-logs/export?since=${since}`, headers: ctx().auth });
    expect(
      later.body
        .trimEnd()
        .split('\n')
        .every((line) => (JSON.parse(line) as AuditEntry).created_at >= since),
    ).toBe(true);
    const bad = await call({ method: 'GET', url: '/v1/audit-logs/export?since=yesterday', headers: ctx().auth });
    expect(bad.statusCode).toBe(400);
  });

  it('never holds a password, token, secret or key (every entry of this file, every project)', async () => {
    const rows = await ctx().service.db.kysely.selectFrom('audit_log').selectAll().execute();
    expect(rows.length).toBeGreaterThan(50);
    const text = JSON.stringify(rows);
    for (const needle of ['svc_sk_', 'whsec_', 'svc_rt_', ...secrets]) expect(text, needle).not.toContain(needle);
    // Sessions appear by name only: never a name followed by its secret half.
    expect(text).not.toMatch(/svc_ses_[0-9A-Za-z]{24}\./);
  });

  it('seals concurrent writes into one chain per project that verifies, and finds one altered row', async () => {
    const { service, projectId } = ctx();
    const userId = await createUser(service, projectId);
    const walletIds = await Promise.all(
      [1, 2, 3].map(async () => (await post('/v1/wallets', { user_id: userId, currency: 'USD' })).json<{ id: string }>().id),
    );
    // Many credits at once (PostgreSQL batches a wallet's credits into one statement; SQLite group
    // commits), sign-ups beside them, and sealing racing the writes.
    const writes = [
      ...Array.from({ length: 60 }, (_, index) => post(`/v1/wallets/${walletIds[index % 3]!}/credits`, { amount: 1 + index })),
      ...Array.from({ length: 4 }, () => post('/v1/auth/signup', { email: uniqueEmail('burst'), password: strongPassword('b') })),
      service.audit.seal(projectId),
      service.audit.seal(projectId),
    ];
    const results = await Promise.all(writes);
    for (const result of results.slice(0, 64)) expect((result as LightMyRequestResponse).statusCode).toBe(201);
    await Promise.all([service.audit.seal(projectId), service.audit.seal(projectId)]);
    const report = await service.audit.verify(projectId);
    expect(report).toMatchObject({ ok: true, broken: null });
    const all = await audit.all();
    expect(report.links_checked).toBe(all.length);
    // Every entry is sealed: hash and prev_hash link up in chain order.
    expect(all.every((entry) => entry.hash !== null && entry.prev_hash !== null)).toBe(true);

    const linkOf = async (entryId: string) =>
      (await service.db.kysely.selectFrom('audit_chain').select('seq').where('entry_id', '=', entryId).executeTakeFirstOrThrow()).seq;
    const victim = all.find((entry) => entry.action === 'user.signup')!;
    await service.db.kysely.updateTable('audit_log').set({ changes: '{"amount":999999}' }).where('id', '=', victim.id).execute();
    const broken = await service.audit.verify(projectId);
    expect(broken.ok).toBe(false);
    expect(broken.broken).toMatchObject({ problem: 'entry_altered', entry_id: victim.id, seq: await linkOf(victim.id) });
    await service.db.kysely
      .updateTable('audit_log')
      .set({ changes: JSON.stringify(victim.changes) })
      .where('id', '=', victim.id)
      .execute();
    expect((await service.audit.verify(projectId)).ok).toBe(true);

    // A credit is read from the ledger and chained like an entry: a changed amount breaks its link.
    const credit = all.find((entry) => entry.action === 'wallet.credit')!;
    const transactionId = credit.changes['transaction_id'] as string;
    await tamperingLedger(async (db) => {
      await db.updateTable('ledger_transactions').set({ amount: 999_999 }).where('id', '=', transactionId).execute();
    });
    expect((await service.audit.verify(projectId)).broken).toMatchObject({
      problem: 'entry_altered',
      entry_id: credit.id,
      seq: await linkOf(credit.id),
    });
    await tamperingLedger(async (db) => {
      await db
        .updateTable('ledger_transactions')
        .set({ amount: credit.changes['amount'] as number })
        .where('id', '=', transactionId)
        .execute();
    });
    expect((await service.audit.verify(projectId)).ok).toBe(true);
    // A movement's link deleted: the chain has a gap, found as such.
    const link = await service.db.kysely.selectFrom('audit_chain').selectAll().where('entry_id', '=', credit.id).executeTakeFirstOrThrow();
    await service.db.kysely.deleteFrom('audit_chain').where('entry_id', '=', credit.id).execute();
    expect((await service.audit.verify(projectId)).ok).toBe(false);
    await service.db.kysely.insertInto('audit_chain').values(link).execute();
    expect((await service.audit.verify(projectId)).ok).toBe(true);
  });

  /** Runs `change` with the ledger's append-only triggers lifted (a test of tampering only). */
  async function tamperingLedger(change: (db: Kysely<Database>) => Promise<void>): Promise<void> {
    const db = ctx().service.db.kysely;
    if (dialect === 'postgres') {
      await sql`alter table ledger_transactions disable trigger ledger_transactions_append_only`.execute(db);
      try {
        await change(db);
      } finally {
        await sql`alter table ledger_transactions enable trigger ledger_transactions_append_only`.execute(db);
      }
      return;
    }
    await sql`drop trigger ledger_transactions_no_update`.execute(db);
    try {
      await change(db);
    } finally {
      await sql
        .raw(
          'create trigger ledger_transactions_no_update before update on ledger_transactions ' +
            "begin select raise(abort, 'ledger_transactions is append-only'); end",
        )
        .execute(db);
    }
  }

  it('shows the credits, transfers and refusals of a wallet from the ledger; a credit writes no audit row', async () => {
    const { service, projectId } = ctx();
    const userId = await createUser(service, projectId);
    const [walletId, otherId] = await Promise.all(
      [1, 2].map(async () => (await post('/v1/wallets', { user_id: userId, currency: 'USD' })).json<{ id: string }>().id),
    );
    const rows = () => service.db.kysely.selectFrom('audit_log').select('id').execute();
    const before = (await rows()).length;
    const credit = await post(`/v1/wallets/${walletId!}/credits`, { amount: 50 });
    expect(credit.statusCode).toBe(201);
    // The money path wrote no audit row: the ledger is the record.
    expect(await rows()).toHaveLength(before);
    const transfer = await post('/v1/wallets/transfer', { from_wallet_id: walletId, to_wallet_id: otherId, amount: 20 });
    expect(transfer.statusCode).toBe(201);
    const refused = await post(`/v1/wallets/${walletId!}/debits`, { amount: 1000 });
    expect(refused.statusCode).toBe(422);

    const entries = await audit.all({ resource_id: walletId! });
    const actor = byKey();
    expect(entries.map((entry) => [entry.action, entry.outcome, entry.actor, entry.request_id])).toEqual([
      ['wallet.debit', 'insufficient_credits', actor, refused.headers['request-id']],
      ['wallet.transfer', 'success', actor, transfer.headers['request-id']],
      ['wallet.credit', 'success', actor, credit.headers['request-id']],
      ['wallet.create', 'success', actor, expect.any(String)],
    ]);
    expect(entries[1]!.changes).toMatchObject({ from_balance_before: 50, from_balance_after: 30, to_balance_after: 20 });
    // The refusal is the only row written, after the response.
    expect(await rows()).toHaveLength(before + 1);
    // One entry per movement, by its id and through the filters; sealed into the chain after commit.
    expect((await call({ method: 'GET', url: `/v1/audit-logs/${entries[2]!.id}`, headers: ctx().auth })).json()).toEqual(entries[2]);
    expect((await audit.all({ resource_id: walletId!, action: 'wallet.credit' })).map((entry) => entry.id)).toEqual([entries[2]!.id]);
    expect(await audit.all({ resource_id: walletId!, actor_id: 'key_nobody' })).toEqual([]);
    expect(await service.audit.verify(projectId)).toMatchObject({ ok: true, broken: null });
    const sealed = await audit.all({ resource_id: walletId! });
    expect(sealed.every((entry) => entry.hash !== null)).toBe(true);
  });

  it('finds an entry deleted from under the chain, and one written around it', async () => {
    const { service } = ctx();
    const { project, secretKey } = await service.projects.createProject({ name: 'Tamper' });
    secrets.push(secretKey);
    const userId = await createUser(service, project.id);
    for (let index = 0; index < 3; index += 1) {
      await post('/v1/wallets', { user_id: userId, currency: 'USD' }, { 'x-api-key': secretKey });
    }
    expect((await service.audit.verify(project.id)).ok).toBe(true);
    const [second] = await service.db.kysely
      .selectFrom('audit_chain')
      .select(['entry_id', 'seq'])
      .where('project_id', '=', project.id)
      .where('seq', '=', 2)
      .execute();
    const row = await service.db.kysely.selectFrom('audit_log').selectAll().where('id', '=', second!.entry_id).executeTakeFirstOrThrow();
    await service.db.kysely.deleteFrom('audit_log').where('id', '=', row.id).execute();
    expect((await service.audit.verify(project.id)).broken).toMatchObject({ problem: 'entry_missing', seq: 2, entry_id: row.id });
    await service.db.kysely.insertInto('audit_log').values(row).execute();
    expect((await service.audit.verify(project.id)).ok).toBe(true);
    await service.db.kysely
      .insertInto('audit_log')
      .values({ ...row, id: `aud_${randomBase62(22)}`, action: 'wallet.close' })
      .execute();
    expect((await service.audit.verify(project.id)).broken).toMatchObject({ problem: 'entry_unchained' });
  });

  it('retention removes a whole old prefix, keeps a checkpoint, and the rest still verifies', async () => {
    const { service } = ctx();
    const { project, secretKey } = await service.projects.createProject({ name: 'Retention' });
    secrets.push(secretKey);
    const userId = await createUser(service, project.id);
    const headers = { 'x-api-key': secretKey };
    // A millisecond apart, so that newest first is one order.
    const create = async () => {
      clock.advance(1);
      await post('/v1/wallets', { user_id: userId, currency: 'USD' }, headers);
    };
    for (let index = 0; index < 3; index += 1) await create();
    await service.audit.seal(project.id);
    clock.advance(400 * 24 * HOUR_MS);
    for (let index = 0; index < 2; index += 1) await create();
    await service.audit.seal(project.id);
    const before = await auditReader(service, secretKey).all();
    expect(before).toHaveLength(6);

    const job = service.jobs.find((candidate) => candidate.name === 'audit-retention')!;
    await job.run();
    const after = await auditReader(service, secretKey).all();
    expect(after.map((entry) => entry.id)).toEqual(before.slice(0, 2).map((entry) => entry.id));
    const report = await service.audit.verify(project.id);
    expect(report).toMatchObject({ ok: true, links_checked: 2, checkpoint: { seq: 4, hash: before[2]!.hash } });
    // A second run finds nothing more to remove, and the checkpoint stays.
    await job.run();
    expect((await service.audit.verify(project.id)).checkpoint).toEqual({ seq: 4, hash: before[2]!.hash });
  });

  it('records a change and its entry in one transaction: a rolled-back change leaves no entry', async () => {
    const { service, projectId } = ctx();
    const before = (await audit.all()).length;
    await expect(
      inTransaction(service.db, async (trx) => {
        await service.audit.record(trx, SYSTEM_AUDIT_CONTEXT, { projectId, action: 'role.create', resource: { type: 'role', id: 'x' } });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await audit.all()).toHaveLength(before);
  });

  it('seals entries queued by an earlier version, and verifies them with the rest', async () => {
    const { service } = ctx();
    const { project, secretKey } = await service.projects.createProject({ name: 'Queued' });
    secrets.push(secretKey);
    const userId = await createUser(service, project.id);
    await post('/v1/wallets', { user_id: userId, currency: 'USD' }, { 'x-api-key': secretKey });
    await service.audit.seal(project.id);
    // As a version before migration 0013 wrote them: an entry and a row in the sealing queue. The
    // first without a transaction id (written before the migration); on PostgreSQL the second
    // with one, as the column's default gives it when the older version runs beside a newer one.
    const queued = ['before', 'beside'].map((id) =>
      service.audit.row(SYSTEM_AUDIT_CONTEXT, { projectId: project.id, action: 'role.create', resource: { type: 'role', id } }),
    );
    await inTransaction(service.db, async (trx) => {
      await trx.insertInto('audit_log').values(queued).execute();
      if (dialect === 'postgres') {
        await trx
          .updateTable('audit_log')
          .set({ txid: null } as never)
          .where('id', '=', queued[0]!.id)
          .execute();
      }
      await trx
        .insertInto('audit_unsealed')
        .values(queued.map((row) => ({ project_id: project.id, entry_id: row.id })))
        .execute();
    });
    await post('/v1/wallets', { user_id: userId, currency: 'USD' }, { 'x-api-key': secretKey });
    // Five, each chained once: the project's key, the two wallets and the two queued entries.
    expect(await service.audit.verify(project.id)).toMatchObject({ ok: true, broken: null, links_checked: 5 });
    expect(await service.db.kysely.selectFrom('audit_unsealed').select('seq').where('project_id', '=', project.id).execute()).toEqual([]);
    const entries = await auditReader(service, secretKey).all();
    expect(entries).toHaveLength(5);
    expect(entries.every((item) => item.hash !== null)).toBe(true);
  });

  it('svc audit verify: exit 0 when the chain holds, 1 naming the first broken link, 2 without --project', async () => {
    const { service, projectId } = ctx();
    const database = service.config.database;
    const saved = { ...process.env };
    process.env['NODE_ENV'] = 'test';
    process.env['DATA_DIR'] = tmpdir();
    process.env['DATABASE_URL'] = database.dialect === 'sqlite' ? `sqlite:${database.file}` : database.url;
    let out = '';
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const walletId = (await post('/v1/wallets', { user_id: await createUser(service, projectId), currency: 'USD' })).json<{
        id: string;
      }>().id;
      await post(`/v1/wallets/${walletId}/debits`, { amount: 1 });
      // Verification seals first: a change made after that is found.
      expect(await runCli(['audit', 'verify', '--project', projectId])).toBe(0);
      expect(JSON.parse(out)).toMatchObject({ project_id: projectId, ok: true, broken: null });
      const victim = (await audit.all({ action: 'wallet.debit' }))[0]!;
      await service.db.kysely.updateTable('audit_log').set({ outcome: 'success', ip: '10.0.0.1' }).where('id', '=', victim.id).execute();
      out = '';
      expect(await runCli(['audit', 'verify', '--project', projectId])).toBe(1);
      expect(JSON.parse(out)).toMatchObject({ ok: false, broken: { problem: 'entry_altered', entry_id: victim.id } });
      await service.db.kysely
        .updateTable('audit_log')
        .set({ outcome: victim.outcome, ip: victim.ip })
        .where('id', '=', victim.id)
        .execute();
      expect(await runCli(['audit', 'verify', '--project', projectId])).toBe(0);
      expect(await runCli(['audit', 'verify', '--project', `prj_${randomBase62(22)}`])).toBe(1);
      expect(await runCli(['audit', 'verify'])).toBe(2);
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
      process.env = saved;
    }
  });
});
