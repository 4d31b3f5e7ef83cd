import type { HTTPMethods, InjectOptions, LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Service } from '../../main.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { bearer, eventsOf, signup, testClock } from '../auth/auth.testing.js';

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code, body: response.body }).toMatchObject({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

interface OrganizationBody {
  id: string;
  object: 'organization';
  name: string;
  slug: string;
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
}

/** The audit entries of one resource: action and outcome, sorted (entries of one instant have no order). */
async function auditOf(service: Service, projectId: string, resourceId: string): Promise<Array<{ action: string; outcome: string }>> {
  return service.db.kysely
    .selectFrom('audit_log')
    .select(['action', 'outcome'])
    .where('project_id', '=', projectId)
    .where('resource_id', '=', resourceId)
    .orderBy('action')
    .orderBy('outcome')
    .execute();
}

let slugCounter = 0;
const uniqueSlug = (base = 'team') => `${base}-${Date.now().toString(36)}-${(slugCounter += 1)}`;

describeEachDialect('organizations', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const api = (method: HTTPMethods, url: string, payload?: object, auth = ctx().auth) =>
    call({ method, url, headers: auth, ...(payload === undefined ? {} : { payload }) });
  const createOrganization = async (payload: object = {}): Promise<OrganizationBody> => {
    const response = await api('POST', '/v1/organizations', { name: 'Acme', slug: uniqueSlug(), ...payload });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<OrganizationBody>();
  };
  const addMember = async (organizationId: string, userId: string, role?: string) => {
    const response = await api('POST', `/v1/organizations/${organizationId}/members`, {
      user_id: userId,
      ...(role === undefined ? {} : { role }),
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ role: string }>();
  };
  const newUser = async () => (await signup(call, ctx().secretKey)).userId;

  /** A second project with its own key, for cross-project checks. */
  let other: { auth: { authorization: string }; secretKey: string };
  beforeAll(async () => {
    const { secretKey } = await ctx().service.projects.createProject({ name: 'Other project' });
    other = { auth: { authorization: `Bearer ${secretKey}` }, secretKey };
  });

  describe('POST /v1/organizations', () => {
    it('creates an organization with a slug derived from the name; event organization.created; audited', async () => {
      clock.advance(1000);
      const name = `Café Zürich & Co ${Date.now().toString(36)}`;
      const response = await api('POST', '/v1/organizations', { name: `  ${name} `, metadata: { plan: 'pro' } });
      expect(response.statusCode).toBe(201);
      const organization = response.json<OrganizationBody>();
      expect(organization).toEqual({
        id: expect.stringMatching(/^org_[0-9A-Za-z]{22}$/),
        object: 'organization',
        name,
        slug: expect.stringMatching(/^cafe-zurich-co-[a-z0-9]+$/),
        metadata: { plan: 'pro' },
        created_at: clock.now().toISOString(),
        updated_at: clock.now().toISOString(),
      });
      expect(await eventsOf(ctx().service, ctx().projectId, 'organization.created')).toContainEqual({
        organization_id: organization.id,
        name,
        slug: organization.slug,
      });
      expect(await auditOf(ctx().service, ctx().projectId, organization.id)).toEqual([
        { action: 'organization.create', outcome: 'success' },
      ]);
    });

    it('keeps a given slug; a taken slug (given or derived) is 409 organization_slug_taken', async () => {
      const slug = uniqueSlug('taken');
      expect((await createOrganization({ slug })).slug).toBe(slug);
      expectError(await api('POST', '/v1/organizations', { name: 'Another', slug }), 409, 'organization_slug_taken', 'slug');
      const name = `Derived ${uniqueSlug()}`;
      expect((await api('POST', '/v1/organizations', { name })).statusCode).toBe(201);
      expectError(await api('POST', '/v1/organizations', { name }), 409, 'organization_slug_taken', 'slug');
      // The same slug in another project is fine: slugs are unique per project.
      expect((await api('POST', '/v1/organizations', { name: 'Other', slug }, other.auth)).statusCode).toBe(201);
    });

    it('refuses bad input with catalog codes', async () => {
      expectError(await api('POST', '/v1/organizations', {}), 400, 'parameter_missing', 'name');
      expectError(await api('POST', '/v1/organizations', { name: '   ' }), 400, 'parameter_invalid', 'name');
      expectError(await api('POST', '/v1/organizations', { name: 5 }), 400, 'parameter_invalid', 'name');
      for (const slug of ['Upper', 'under_score', '-lead', 'trail-', 'dou--ble', '', 'x'.repeat(65)]) {
        expectError(await api('POST', '/v1/organizations', { name: 'Acme', slug }), 400, 'parameter_invalid', 'slug');
      }
      expectError(await api('POST', '/v1/organizations', { name: '日本語' }), 400, 'parameter_missing', 'slug');
      expectError(await api('POST', '/v1/organizations', { name: 'Acme', metadata: { plan: 1 } }), 400, 'parameter_invalid');
      expectError(await api('POST', '/v1/organizations', { name: 'Acme', owner: 'me' }), 400, 'parameter_unknown', 'owner');
      const session = await signup(call, ctx().secretKey);
      expectError(await api('POST', '/v1/organizations', { name: 'Acme' }, bearer(session.token)), 403, 'secret_key_required');
    });
  });

  describe('GET, PATCH, DELETE /v1/organizations/{id}', () => {
    it('retrieves, lists newest first with pagination, and updates', async () => {
      const ids: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        clock.advance(1000);
        ids.push((await createOrganization()).id);
      }
      expect((await api('GET', `/v1/organizations/${ids[0]!}`)).json().id).toBe(ids[0]);
      const first = await api('GET', '/v1/organizations?limit=2');
      expect(first.json<{ data: OrganizationBody[] }>().data.map((item) => item.id)).toEqual([ids[2], ids[1]]);
      expect(first.json().has_more).toBe(true);
      const second = await api('GET', `/v1/organizations?limit=2&starting_after=${ids[1]!}`);
      expect(second.json().data[0].id).toBe(ids[0]);
      expectError(await api('GET', '/v1/organizations?limit=101'), 400, 'parameter_invalid', 'limit');
      expectError(
        await api('GET', '/v1/organizations?starting_after=org_0000000000000000000000'),
        404,
        'resource_missing',
        'starting_after',
      );

      clock.advance(1000);
      const slug = uniqueSlug('renamed');
      const patched = await api('PATCH', `/v1/organizations/${ids[0]!}`, { name: 'Renamed', slug, metadata: { a: 'b' } });
      expect(patched.statusCode).toBe(200);
      expect(patched.json()).toMatchObject({
        id: ids[0],
        name: 'Renamed',
        slug,
        metadata: { a: 'b' },
        updated_at: clock.now().toISOString(),
      });
      const taken = (await api('GET', `/v1/organizations/${ids[1]!}`)).json<OrganizationBody>().slug;
      expectError(await api('PATCH', `/v1/organizations/${ids[0]!}`, { slug: taken }), 409, 'organization_slug_taken', 'slug');
      expectError(await api('PATCH', `/v1/organizations/${ids[0]!}`, { slug: 'Bad Slug' }), 400, 'parameter_invalid', 'slug');
      expectError(await api('PATCH', `/v1/organizations/${ids[0]!}`, { id: 'org_x' }), 400, 'parameter_unknown', 'id');
      expectError(await api('PATCH', '/v1/organizations/org_0000000000000000000000', { name: 'x' }), 404, 'resource_missing', 'id');
      expectError(await api('GET', '/v1/organizations/org_0000000000000000000000'), 404, 'resource_missing', 'id');
      // Requests refused by schema validation never reach the service, so only these are audited.
      expect(await auditOf(ctx().service, ctx().projectId, ids[0]!)).toEqual([
        { action: 'organization.create', outcome: 'success' },
        { action: 'organization.update', outcome: 'organization_slug_taken' },
        { action: 'organization.update', outcome: 'success' },
      ]);
    });

    it('delete removes the memberships (member.removed, reason organization_deleted) and invitations; then 404', async () => {
      const organization = await createOrganization();
      const [owner, member] = [await newUser(), await newUser()];
      await addMember(organization.id, owner, 'owner');
      await addMember(organization.id, member);
      expect((await api('POST', `/v1/organizations/${organization.id}/invitations`, { email: 'later@example.com' })).statusCode).toBe(201);
      const response = await api('DELETE', `/v1/organizations/${organization.id}`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ id: organization.id, object: 'organization', deleted: true });
      expectError(await api('GET', `/v1/organizations/${organization.id}`), 404, 'resource_missing');
      expectError(await api('DELETE', `/v1/organizations/${organization.id}`), 404, 'resource_missing');
      const removed = (await eventsOf(ctx().service, ctx().projectId, 'organization.member.removed')).filter(
        (data) => data['organization_id'] === organization.id,
      );
      expect(removed).toHaveLength(2);
      expect(removed).toContainEqual({ organization_id: organization.id, user_id: owner, role: 'owner', reason: 'organization_deleted' });
      const left = await ctx()
        .service.db.kysely.selectFrom('organization_invitations')
        .select('id')
        .where('organization_id', '=', organization.id)
        .execute();
      expect(left).toEqual([]);
    });

    it('an organization of another project answers 404 on every route', async () => {
      const organization = await createOrganization();
      const user = await newUser();
      await addMember(organization.id, user, 'owner');
      const base = `/v1/organizations/${organization.id}`;
      expectError(await api('GET', base, undefined, other.auth), 404, 'resource_missing');
      expectError(await api('PATCH', base, { name: 'x' }, other.auth), 404, 'resource_missing');
      expectError(await api('DELETE', base, undefined, other.auth), 404, 'resource_missing');
      expectError(await api('GET', `${base}/members`, undefined, other.auth), 404, 'resource_missing');
      expectError(await api('POST', `${base}/members`, { user_id: user }, other.auth), 404, 'resource_missing');
      expectError(await api('PATCH', `${base}/members/${user}`, { role: 'admin' }, other.auth), 404, 'resource_missing');
      expectError(await api('DELETE', `${base}/members/${user}`, undefined, other.auth), 404, 'resource_missing');
      expectError(await api('POST', `${base}/authorize`, { user_id: user, permission: 'x' }, other.auth), 404, 'resource_missing');
      expectError(await api('GET', `${base}/invitations`, undefined, other.auth), 404, 'resource_missing');
      expectError(await api('POST', `${base}/invitations`, { email: 'a@example.com' }, other.auth), 404, 'resource_missing');
      expect(
        (await api('GET', '/v1/organizations', undefined, other.auth)).json<{ data: OrganizationBody[] }>().data.map((item) => item.id),
      ).not.toContain(organization.id);
      // A user of another project cannot be added here.
      const stranger = (await signup(call, other.secretKey)).userId;
      expectError(await api('POST', `${base}/members`, { user_id: stranger }), 404, 'resource_missing', 'user_id');
      expect((await api('GET', base)).json().name).toBe('Acme');
    });
  });

  describe('members', () => {
    it('adds (default role member), lists, changes roles and removes; events and audit entries', async () => {
      const organization = await createOrganization();
      const base = `/v1/organizations/${organization.id}/members`;
      const [alice, bob, carol] = [await newUser(), await newUser(), await newUser()];
      clock.advance(1000);
      const added = await api('POST', base, { user_id: alice, role: 'owner' });
      expect(added.statusCode).toBe(201);
      expect(added.json()).toEqual({
        object: 'organization_membership',
        organization_id: organization.id,
        user_id: alice,
        role: 'owner',
        created_at: clock.now().toISOString(),
        updated_at: clock.now().toISOString(),
      });
      clock.advance(1000);
      expect((await addMember(organization.id, bob)).role).toBe('member');
      clock.advance(1000);
      await addMember(organization.id, carol, 'admin');
      expect(await eventsOf(ctx().service, ctx().projectId, 'organization.member.added')).toContainEqual({
        organization_id: organization.id,
        user_id: bob,
        role: 'member',
      });

      const page = await api('GET', `${base}?limit=2`);
      expect(page.json<{ data: Array<{ user_id: string }> }>().data.map((item) => item.user_id)).toEqual([carol, bob]);
      expect(page.json().has_more).toBe(true);
      const rest = await api('GET', `${base}?starting_after=${bob}`);
      expect(rest.json()).toMatchObject({ has_more: false, data: [{ user_id: alice, role: 'owner' }] });
      expectError(await api('GET', `${base}?starting_after=usr_0000000000000000000000`), 404, 'resource_missing', 'starting_after');

      const changed = await api('PATCH', `${base}/${bob}`, { role: 'admin' });
      expect(changed.statusCode).toBe(200);
      expect(changed.json()).toMatchObject({ user_id: bob, role: 'admin' });
      const removed = await api('DELETE', `${base}/${carol}`);
      expect(removed.json()).toEqual({
        object: 'organization_membership',
        organization_id: organization.id,
        user_id: carol,
        deleted: true,
      });
      expect(await eventsOf(ctx().service, ctx().projectId, 'organization.member.removed')).toContainEqual({
        organization_id: organization.id,
        user_id: carol,
        role: 'admin',
        reason: 'removed',
      });
      expect((await auditOf(ctx().service, ctx().projectId, organization.id)).map((entry) => entry.action)).toEqual([
        'organization.create',
        'organization_member.add',
        'organization_member.add',
        'organization_member.add',
        'organization_member.remove',
        'organization_member.update',
      ]);
    });

    it('refuses duplicates, unknown users and roles, and non-members with catalog codes', async () => {
      const organization = await createOrganization();
      const base = `/v1/organizations/${organization.id}/members`;
      const user = await newUser();
      await addMember(organization.id, user);
      expectError(await api('POST', base, { user_id: user }), 409, 'organization_member_exists', 'user_id');
      expectError(await api('POST', base, { user_id: 'usr_0000000000000000000000' }), 404, 'resource_missing', 'user_id');
      expectError(await api('POST', base, { user_id: await newUser(), role: 'astronaut' }), 400, 'parameter_invalid', 'role');
      expectError(await api('POST', base, { user_id: await newUser(), role: 'Not A Key' }), 400, 'parameter_invalid', 'role');
      expectError(await api('POST', base, { role: 'member' }), 400, 'parameter_missing', 'user_id');
      expectError(await api('POST', base, { user_id: user, colour: 'red' }), 400, 'parameter_unknown', 'colour');
      expectError(await api('PATCH', `${base}/${user}`, { role: 'astronaut' }), 400, 'parameter_invalid', 'role');
      expectError(await api('PATCH', `${base}/${user}`, {}), 400, 'parameter_missing', 'role');
      expectError(await api('PATCH', `${base}/usr_0000000000000000000000`, { role: 'admin' }), 404, 'resource_missing', 'user_id');
      expectError(await api('DELETE', `${base}/usr_0000000000000000000000`), 404, 'resource_missing', 'user_id');
      expectError(await api('GET', '/v1/organizations/org_0000000000000000000000/members'), 404, 'resource_missing', 'id');
    });

    it('the last owner can be neither demoted nor removed (409 organization_owner_required)', async () => {
      const organization = await createOrganization();
      const base = `/v1/organizations/${organization.id}/members`;
      const [first, second] = [await newUser(), await newUser()];
      await addMember(organization.id, first, 'owner');
      expectError(await api('PATCH', `${base}/${first}`, { role: 'admin' }), 409, 'organization_owner_required');
      expectError(await api('DELETE', `${base}/${first}`), 409, 'organization_owner_required');
      // Setting the role it already has is no demotion.
      expect((await api('PATCH', `${base}/${first}`, { role: 'owner' })).statusCode).toBe(200);
      await addMember(organization.id, second, 'owner');
      expect((await api('PATCH', `${base}/${first}`, { role: 'member' })).statusCode).toBe(200);
      expectError(await api('DELETE', `${base}/${second}`), 409, 'organization_owner_required');
      expect((await api('DELETE', `${base}/${first}`)).statusCode).toBe(200);
      expect((await api('GET', base)).json().data).toMatchObject([{ user_id: second, role: 'owner' }]);
      expect((await auditOf(ctx().service, ctx().projectId, organization.id)).map((entry) => entry.outcome)).toContain(
        'organization_owner_required',
      );
    });

    it('concurrent demotions and removals of the last two owners never leave zero owners', async () => {
      for (let round = 0; round < 6; round += 1) {
        const organization = await createOrganization();
        const base = `/v1/organizations/${organization.id}/members`;
        const [first, second] = [await newUser(), await newUser()];
        await addMember(organization.id, first, 'owner');
        await addMember(organization.id, second, 'owner');
        await addMember(organization.id, await newUser(), 'member');
        const requests =
          round % 3 === 0
            ? [api('PATCH', `${base}/${first}`, { role: 'member' }), api('PATCH', `${base}/${second}`, { role: 'admin' })]
            : round % 3 === 1
              ? [api('DELETE', `${base}/${first}`), api('DELETE', `${base}/${second}`)]
              : [api('DELETE', `${base}/${first}`), api('PATCH', `${base}/${second}`, { role: 'member' })];
        const responses = await Promise.all(requests);
        const outcomes = responses
          .map((response) => (response.statusCode === 200 ? 'done' : response.json<{ error: { code: string } }>().error.code))
          .sort();
        expect(outcomes).toEqual(['done', 'organization_owner_required']);
        const owners = (await api('GET', base)).json<{ data: Array<{ role: string }> }>().data.filter((member) => member.role === 'owner');
        expect(owners).toHaveLength(1);
      }
    });
  });

  describe('POST /v1/organizations/{id}/authorize', () => {
    it('answers from the database every time: role changes and role permission changes count at once', async () => {
      const organization = await createOrganization();
      const url = `/v1/organizations/${organization.id}/authorize`;
      const roleKey = `billing_${Date.now().toString(36)}`;
      expect((await api('POST', '/v1/roles', { key: roleKey, name: 'Billing', permissions: ['invoices:read'] })).statusCode).toBe(201);
      const user = await newUser();
      const authorize = async (permission: string) => (await api('POST', url, { user_id: user, permission })).json<unknown>();

      expect(await authorize('invoices:read')).toEqual({ allowed: false, role: null });
      await addMember(organization.id, user, roleKey);
      expect(await authorize('invoices:read')).toEqual({ allowed: true, role: roleKey });
      expect(await authorize('invoices:write')).toEqual({ allowed: false, role: roleKey });

      expect((await api('PATCH', `/v1/roles/${roleKey}`, { permissions: ['invoices:*'] })).statusCode).toBe(200);
      expect(await authorize('invoices:write')).toEqual({ allowed: true, role: roleKey });
      expect(await authorize('members:write')).toEqual({ allowed: false, role: roleKey });

      expect((await api('PATCH', `/v1/organizations/${organization.id}/members/${user}`, { role: 'admin' })).statusCode).toBe(200);
      expect(await authorize('members:write')).toEqual({ allowed: true, role: 'admin' });
      expect((await api('PATCH', `/v1/organizations/${organization.id}/members/${user}`, { role: 'member' })).statusCode).toBe(200);
      expect(await authorize('members:write')).toEqual({ allowed: false, role: 'member' });

      // A member whose custom role was deleted is refused, not failed.
      expect((await api('PATCH', `/v1/organizations/${organization.id}/members/${user}`, { role: roleKey })).statusCode).toBe(200);
      expect((await api('DELETE', `/v1/roles/${roleKey}`)).statusCode).toBe(200);
      expect(await authorize('invoices:read')).toEqual({ allowed: false, role: roleKey });

      expect((await api('DELETE', `/v1/organizations/${organization.id}/members/${user}`)).statusCode).toBe(200);
      expect(await authorize('invoices:read')).toEqual({ allowed: false, role: null });
      expectError(await api('POST', url, { user_id: user }), 400, 'parameter_missing', 'permission');
      expectError(await api('POST', url, { user_id: user, permission: 'has space' }), 400, 'parameter_invalid', 'permission');
      expectError(
        await api('POST', '/v1/organizations/org_0000000000000000000000/authorize', { user_id: user, permission: 'x' }),
        404,
        'resource_missing',
      );
    });
  });

  describe('GET /v1/users/me/organizations', () => {
    it("lists the session user's memberships with their organizations, newest first, paged", async () => {
      const account = await signup(call, ctx().secretKey);
      const [first, second] = [await createOrganization({ name: 'First' }), await createOrganization({ name: 'Second' })];
      clock.advance(1000);
      await addMember(first.id, account.userId, 'owner');
      clock.advance(1000);
      await addMember(second.id, account.userId, 'member');
      await addMember((await createOrganization()).id, await newUser(), 'owner');
      const me = (query = '') => call({ method: 'GET', url: `/v1/users/me/organizations${query}`, headers: bearer(account.token) });
      const response = await me();
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({
        object: 'list',
        has_more: false,
        data: [
          { object: 'organization_membership', organization_id: second.id, user_id: account.userId, role: 'member', organization: second },
          { organization_id: first.id, role: 'owner', organization: { id: first.id, name: 'First' } },
        ],
      });
      const page = await me('?limit=1');
      expect(page.json()).toMatchObject({ has_more: true, data: [{ organization_id: second.id }] });
      expect((await me(`?starting_after=${second.id}`)).json()).toMatchObject({ has_more: false, data: [{ organization_id: first.id }] });
      expectError(await me('?starting_after=org_0000000000000000000000'), 404, 'resource_missing', 'starting_after');
      expectError(await api('GET', '/v1/users/me/organizations'), 403, 'session_token_required');
      expectError(await call({ method: 'GET', url: '/v1/users/me/organizations' }), 401, 'credential_missing');
    });
  });

  describe('deleting a user', () => {
    it("removes the user's memberships (member.removed, reason user_deleted)", async () => {
      const organization = await createOrganization();
      const [owner, member] = [await newUser(), await newUser()];
      await addMember(organization.id, owner, 'owner');
      await addMember(organization.id, member, 'admin');
      expect((await api('DELETE', `/v1/users/${member}`)).statusCode).toBe(200);
      expect((await api('GET', `/v1/organizations/${organization.id}/members`)).json().data).toMatchObject([{ user_id: owner }]);
      expect(await eventsOf(ctx().service, ctx().projectId, 'organization.member.removed')).toContainEqual({
        organization_id: organization.id,
        user_id: member,
        role: 'admin',
        reason: 'user_deleted',
      });
    });

    it("refuses to delete an organization's last owner (409), and deletes once another owner exists", async () => {
      const organization = await createOrganization();
      const [owner, next] = [await newUser(), await newUser()];
      await addMember(organization.id, owner, 'owner');
      expectError(await api('DELETE', `/v1/users/${owner}`), 409, 'organization_owner_required');
      expect((await api('GET', `/v1/users/${owner}`)).statusCode).toBe(200);
      await addMember(organization.id, next, 'owner');
      expect((await api('DELETE', `/v1/users/${owner}`)).statusCode).toBe(200);
      expect((await api('GET', `/v1/organizations/${organization.id}/members`)).json().data).toMatchObject([
        { user_id: next, role: 'owner' },
      ]);
    });
  });
});
