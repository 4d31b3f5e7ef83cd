import type { HTTPMethods, InjectOptions, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { bearer, eventsOf, signup, testClock, uniqueEmail } from '../auth/auth.testing.js';
import { ROLE_REMOVAL_USERS_PER_TRANSACTION } from './roles.service.js';

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code }).toEqual({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

const nameOf = (token: string) => token.slice(0, token.indexOf('.'));
/** The ids of a list response, in order. */
const idsOf = (response: LightMyRequestResponse) => response.json<{ data: Array<{ id: string }> }>().data.map((item) => item.id);

describeEachDialect('users', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const api = (method: HTTPMethods, url: string, payload?: object) =>
    call({ method, url, headers: ctx().auth, ...(payload === undefined ? {} : { payload }) });

  describe('GET /v1/users/me', () => {
    it("answers the session's user", async () => {
      const account = await signup(call, ctx().secretKey, { name: 'Me Myself' });
      const response = await call({ method: 'GET', url: '/v1/users/me', headers: bearer(account.token) });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual(account.body.user);
    });
  });

  describe('GET /v1/users/{id} and GET /v1/users', () => {
    it('retrieves a user with its linked identities (none after a password sign-up); an unknown or malformed id is 404', async () => {
      const account = await signup(call, ctx().secretKey);
      expect((await api('GET', `/v1/users/${account.userId}`)).json()).toEqual({ ...account.body.user, identities: [] });
      expectError(await api('GET', '/v1/users/usr_0000000000000000000000'), 404, 'resource_missing', 'id');
      expectError(await api('GET', '/v1/users/nope'), 404, 'resource_missing');
    });

    it('finds a user by ?email=, case-insensitively', async () => {
      const account = await signup(call, ctx().secretKey);
      const response = await api('GET', `/v1/users?email=${encodeURIComponent(account.email.toUpperCase())}`);
      expect(response.json()).toEqual({ object: 'list', data: [account.body.user], has_more: false });
      expect((await api('GET', `/v1/users?email=${encodeURIComponent(uniqueEmail('absent'))}`)).json().data).toEqual([]);
    });

    it('lists newest first and pages with limit and starting_after', async () => {
      const ids: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        clock.advance(1000);
        ids.push((await signup(call, ctx().secretKey)).userId);
      }
      const first = await api('GET', '/v1/users?limit=2');
      expect(idsOf(first)).toEqual([ids[2], ids[1]]);
      expect(first.json().has_more).toBe(true);
      const second = await api('GET', `/v1/users?limit=2&starting_after=${ids[1]!}`);
      expect(second.json().data[0].id).toBe(ids[0]);
      expectError(await api('GET', '/v1/users?limit=0'), 400, 'parameter_invalid', 'limit');
      expectError(await api('GET', '/v1/users?limit=101'), 400, 'parameter_invalid', 'limit');
      expectError(await api('GET', '/v1/users?starting_after=usr_0000000000000000000000'), 404, 'resource_missing', 'starting_after');
      expectError(await api('GET', '/v1/users?colour=red'), 400, 'parameter_unknown', 'colour');
    });
  });

  describe('PATCH /v1/users/{id}', () => {
    it('changes name, metadata and roles; event user.updated', async () => {
      const account = await signup(call, ctx().secretKey);
      clock.advance(1000);
      const response = await api('PATCH', `/v1/users/${account.userId}`, {
        name: ' Grace ',
        metadata: { plan: 'pro' },
        roles: ['admin', 'member'],
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ name: 'Grace', metadata: { plan: 'pro' }, roles: ['admin', 'member'], email: account.email });
      expect(response.json().updated_at).toBe(clock.now().toISOString());
      expect(response.json().created_at).toBe(account.body.user.created_at);
      expect(await eventsOf(ctx().service, ctx().projectId, 'user.updated')).toContainEqual({
        user_id: account.userId,
        email: account.email,
      });
    });

    it('refuses unknown roles, bad metadata, unknown fields and the email', async () => {
      const account = await signup(call, ctx().secretKey);
      const url = `/v1/users/${account.userId}`;
      expectError(await api('PATCH', url, { roles: ['member', 'astronaut'] }), 400, 'parameter_invalid', 'roles[1]');
      expectError(await api('PATCH', url, { roles: ['Not A Key'] }), 400, 'parameter_invalid');
      expectError(await api('PATCH', url, { metadata: { plan: 5 } }), 400, 'parameter_invalid');
      expectError(await api('PATCH', url, { metadata: { ['k'.repeat(41)]: 'v' } }), 400, 'parameter_invalid');
      expectError(await api('PATCH', url, { email: 'other@example.com' }), 400, 'parameter_unknown', 'email');
      expectError(await api('PATCH', url, { banned: true }), 400, 'parameter_unknown', 'banned');
      expectError(await api('PATCH', '/v1/users/usr_0000000000000000000000', { name: 'x' }), 404, 'resource_missing');
    });
  });

  describe('ban and unban', () => {
    it('a ban revokes every session (reason user_banned) at once and blocks log in; unban lifts the block', async () => {
      const account = await signup(call, ctx().secretKey);
      const response = await api('POST', `/v1/users/${account.userId}/ban`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ id: account.userId, banned: true });
      expectError(await call({ method: 'GET', url: '/v1/users/me', headers: bearer(account.token) }), 401, 'session_revoked');
      expectError(await api('POST', '/v1/sessions/refresh', { refresh_token: account.refreshToken }), 401, 'refresh_token_invalid');
      expect(await eventsOf(ctx().service, ctx().projectId, 'session.revoked')).toContainEqual({
        session_id: nameOf(account.token),
        user_id: account.userId,
        reason: 'user_banned',
      });
      expectError(await api('POST', '/v1/auth/login', { email: account.email, password: account.password }), 403, 'user_banned');
      // Banning twice is harmless.
      expect((await api('POST', `/v1/users/${account.userId}/ban`)).json().banned).toBe(true);
      const unbanned = await api('POST', `/v1/users/${account.userId}/unban`);
      expect(unbanned.json().banned).toBe(false);
      expect((await api('POST', '/v1/auth/login', { email: account.email, password: account.password })).statusCode).toBe(200);
      expectError(await api('POST', '/v1/users/usr_0000000000000000000000/ban'), 404, 'resource_missing');
      expectError(await api('POST', '/v1/users/usr_0000000000000000000000/unban'), 404, 'resource_missing');
    });
  });

  describe('DELETE /v1/users/{id}', () => {
    it('deletes the user, revokes its sessions (reason user_deleted), emits user.deleted; the email is free again', async () => {
      const account = await signup(call, ctx().secretKey);
      const response = await api('DELETE', `/v1/users/${account.userId}`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ id: account.userId, object: 'user', deleted: true });
      expectError(await api('GET', `/v1/users/${account.userId}`), 404, 'resource_missing');
      expectError(await call({ method: 'GET', url: '/v1/users/me', headers: bearer(account.token) }), 401, 'session_revoked');
      expect((await api('POST', '/v1/sessions/validate', { session_id: account.token })).json()).toEqual({
        valid: false,
        reason: 'revoked',
      });
      expect(await eventsOf(ctx().service, ctx().projectId, 'user.deleted')).toContainEqual({
        user_id: account.userId,
        email: account.email,
      });
      expect(await eventsOf(ctx().service, ctx().projectId, 'session.revoked')).toContainEqual({
        session_id: nameOf(account.token),
        user_id: account.userId,
        reason: 'user_deleted',
      });
      expectError(await api('POST', '/v1/auth/login', { email: account.email, password: account.password }), 401, 'invalid_credentials');
      expectError(await api('DELETE', `/v1/users/${account.userId}`), 404, 'resource_missing');
      expect((await signup(call, ctx().secretKey, { email: account.email })).userId).not.toBe(account.userId);
    });
  });

  describe('wallets see users through the users module', () => {
    it('POST /v1/wallets needs a user of the project (404 otherwise)', async () => {
      const account = await signup(call, ctx().secretKey);
      const created = await api('POST', '/v1/wallets', { user_id: account.userId, currency: 'USD' });
      expect(created.statusCode).toBe(201);
      expectError(
        await api('POST', '/v1/wallets', { user_id: 'usr_0000000000000000000000', currency: 'USD' }),
        404,
        'resource_missing',
        'user_id',
      );
    });
  });
});

describeEachDialect('roles', (dialect) => {
  const ctx = useTestService(dialect);
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const api = (method: HTTPMethods, url: string, payload?: object) =>
    call({ method, url, headers: ctx().auth, ...(payload === undefined ? {} : { payload }) });

  it('has the built-in owner, admin and member, which cannot be changed or deleted', async () => {
    const list = await api('GET', '/v1/roles');
    expect(list.statusCode).toBe(200);
    const keys = list.json<{ data: Array<{ key: string }> }>().data.map((role) => role.key);
    expect(keys).toEqual(expect.arrayContaining(['owner', 'admin', 'member']));
    expect((await api('GET', '/v1/roles/owner')).json()).toMatchObject({
      object: 'role',
      key: 'owner',
      built_in: true,
      permissions: ['*'],
    });
    expectError(await api('PATCH', '/v1/roles/admin', { name: 'Boss' }), 400, 'parameter_invalid', 'key');
    expectError(await api('DELETE', '/v1/roles/member'), 400, 'parameter_invalid', 'key');
    expectError(await api('POST', '/v1/roles', { key: 'owner', name: 'Owner', permissions: [] }), 409, 'role_key_taken', 'key');
  });

  it('creates, reads, lists, changes and deletes a custom role', async () => {
    const created = await api('POST', '/v1/roles', { key: 'billing', name: 'Billing', permissions: ['wallets:read', 'wallets:credit'] });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({
      object: 'role',
      key: 'billing',
      name: 'Billing',
      permissions: ['wallets:read', 'wallets:credit'],
      built_in: false,
    });
    expectError(await api('POST', '/v1/roles', { key: 'billing', name: 'Again', permissions: [] }), 409, 'role_key_taken', 'key');
    expect((await api('GET', '/v1/roles/billing')).json().name).toBe('Billing');
    expect((await api('GET', '/v1/roles')).json().data[0].key).toBe('billing');
    const changed = await api('PATCH', '/v1/roles/billing', { permissions: ['wallets:read'] });
    expect(changed.json()).toMatchObject({ name: 'Billing', permissions: ['wallets:read'] });
    expect((await api('DELETE', '/v1/roles/billing')).json()).toEqual({ key: 'billing', object: 'role', deleted: true });
    expectError(await api('GET', '/v1/roles/billing'), 404, 'resource_missing');
    expectError(await api('PATCH', '/v1/roles/billing', { name: 'x' }), 404, 'resource_missing');
    expectError(await api('DELETE', '/v1/roles/billing'), 404, 'resource_missing');
  });

  it('validates keys and permissions', async () => {
    expectError(await api('POST', '/v1/roles', { key: 'Has Space', name: 'x', permissions: [] }), 400, 'parameter_invalid', 'key');
    expectError(await api('POST', '/v1/roles', { key: 'ok', name: 'x', permissions: ['no spaces allowed'] }), 400, 'parameter_invalid');
    expectError(await api('POST', '/v1/roles', { key: 'ok', name: 'x' }), 400, 'parameter_missing', 'permissions');
    expectError(await api('POST', '/v1/roles', { key: 'ok', name: '', permissions: [] }), 400, 'parameter_invalid', 'name');
  });

  it('gives users custom roles; deleting a role takes it off them (event user.updated)', async () => {
    await api('POST', '/v1/roles', { key: 'support', name: 'Support', permissions: ['users:read'] });
    await api('POST', '/v1/roles', { key: 'support_lead', name: 'Support lead', permissions: ['users:read'] });
    const account = await signup(call, ctx().secretKey);
    expect((await api('PATCH', `/v1/users/${account.userId}`, { roles: ['support', 'support_lead', 'member'] })).statusCode).toBe(200);
    expect((await api('DELETE', '/v1/roles/support')).statusCode).toBe(200);
    expect((await api('GET', `/v1/users/${account.userId}`)).json().roles).toEqual(['support_lead', 'member']);
    const updates = (await eventsOf(ctx().service, ctx().projectId, 'user.updated')).filter((event) => event['user_id'] === account.userId);
    expect(updates).toHaveLength(2);
  });

  // Deleting a role changes its users a page per transaction, the role itself last; what
  // the API shows afterwards is as before: no user keeps the key, each changed one got its event.
  it('takes a deleted role off users over several transactions, with one user.updated each', async () => {
    const { service, projectId } = ctx();
    await api('POST', '/v1/roles', { key: 'sup_port', name: 'Support', permissions: ['users:read'] });
    const holders = ROLE_REMOVAL_USERS_PER_TRANSACTION * 2 + 3;
    const at = new Date().toISOString();
    const user = (index: number, roles: string[]) => ({
      id: `usr_rolepage_${String(index).padStart(5, '0')}`,
      project_id: projectId,
      email: `rolepage-${index}@example.com`,
      email_key: `rolepage-${index}@example.com`,
      name: '',
      password_hash: null,
      email_verified_at: null,
      roles: JSON.stringify(roles),
      metadata: '{}',
      banned_at: null,
      // Some share a creation time, so the pages' (created_at, id) order needs the id too.
      created_at: index % 3 === 0 ? at : new Date(Date.parse(at) + index).toISOString(),
      updated_at: at,
    });
    // The holders, and users holding a key that only looks like it.
    const rows = [
      ...Array.from({ length: holders }, (_, index) => user(index, index % 2 === 0 ? ['sup_port'] : ['member', 'sup_port'])),
      ...Array.from({ length: 40 }, (_, index) => user(holders + index, ['supXport', 'member'])),
    ];
    for (let start = 0; start < rows.length; start += 200) {
      await service.db.kysely
        .insertInto('users')
        .values(rows.slice(start, start + 200))
        .execute();
    }
    expect((await api('DELETE', '/v1/roles/sup_port')).json()).toEqual({ key: 'sup_port', object: 'role', deleted: true });
    expectError(await api('GET', '/v1/roles/sup_port'), 404, 'resource_missing');
    const after = await service.db.kysely.selectFrom('users').select(['id', 'roles']).where('id', 'like', 'usr_rolepage_%').execute();
    const rolesOf = new Map(after.map((row) => [row.id, JSON.parse(row.roles) as string[]]));
    expect(rows.filter((row) => rolesOf.get(row.id)?.includes('sup_port'))).toEqual([]);
    expect(rolesOf.get(rows[1]?.id ?? '')).toEqual(['member']);
    expect(rolesOf.get(rows[holders]?.id ?? '')).toEqual(['supXport', 'member']);
    const updated = (await eventsOf(service, projectId, 'user.updated')).filter((event) =>
      String(event['user_id']).startsWith('usr_rolepage_'),
    );
    expect(updated).toHaveLength(holders);
    expect(new Set(updated.map((event) => event['user_id'])).size).toBe(holders);
  });

  it("keeps roles per project: another project's key does not see them", async () => {
    await api('POST', '/v1/roles', { key: 'auditor', name: 'Auditor', permissions: ['events:read'] });
    const { secretKey } = await ctx().service.projects.createProject({ name: 'Other' });
    const other = await call({ method: 'GET', url: '/v1/roles/auditor', headers: { authorization: `Bearer ${secretKey}` } });
    expectError(other, 404, 'resource_missing');
  });
});
