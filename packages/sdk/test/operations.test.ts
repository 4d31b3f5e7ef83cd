import { describe, expect, expectTypeOf, it } from 'vitest';
import { type Organization, ServiceError, SvcSessionClient, type OperationId } from '../src/index.js';
import { PagedList } from '../src/pagination.js';
import { PASSWORD, uniqueEmail, useSdkService } from './harness.js';

interface DocumentOperation {
  readonly operationId: string;
  readonly security: ReadonlyArray<Record<string, readonly string[]>>;
}

describe('client.operations: one method per operationId of the OpenAPI document (no route may be missing)', () => {
  const ctx = useSdkService();

  it('has a method for every operationId the server documents, on the client whose credential it takes', async () => {
    const response = await ctx().service.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    const document = response.json<{ paths: Record<string, Record<string, DocumentOperation>> }>();
    const documented = Object.values(document.paths).flatMap((item) => Object.values(item));
    expect(documented.length).toBeGreaterThan(90);
    const secret = ctx().client().operations as Record<string, unknown>;
    const session = ctx().client().withSession('svc_ses_x.y').operations as Record<string, unknown>;
    const missing: string[] = [];
    for (const operation of documented) {
      const schemes = operation.security.flatMap((requirement) => Object.keys(requirement));
      // Public: no requirement, or an empty one among them (/metrics: none, or METRICS_TOKEN when set).
      const open = operation.security.length === 0 || operation.security.some((requirement) => Object.keys(requirement).length === 0);
      const onSecret = open || schemes.some((scheme) => scheme.startsWith('secretKey'));
      const onSession = open || schemes.includes('sessionToken');
      if (onSecret && typeof secret[operation.operationId] !== 'function') missing.push(`SvcClient ${operation.operationId}`);
      if (onSession && typeof session[operation.operationId] !== 'function') missing.push(`SvcSessionClient ${operation.operationId}`);
      if (!onSecret && operation.operationId in secret) missing.push(`SvcClient must not offer ${operation.operationId}`);
    }
    expect(missing).toEqual([]);
  });

  it('types each method from the document: path, query, body and response; a session-only operation is not on SvcClient', () => {
    const svc = ctx().client();
    expectTypeOf(svc.operations.getOrganization).parameter(0).toExtend<{ path: { id: string } }>();
    expectTypeOf(svc.operations.getOrganization).returns.resolves.toEqualTypeOf<Organization>();
    expectTypeOf(svc.operations.listOrganizations).returns.toEqualTypeOf<PagedList<Organization>>();
    // @ts-expect-error: the path parameter is required
    expectTypeOf(svc.operations.getOrganization).parameter(0).toExtend<{ path?: undefined }>();
    expectTypeOf<'acceptInvitation'>().toExtend<OperationId>();
    // @ts-expect-error: accepting an invitation needs the user's session token
    expect(svc.operations.acceptInvitation).toBeUndefined();
  });

  it('calls organizations, members, invitations, API keys and audit logs, with pages and typed errors', async () => {
    const svc = ctx().client();
    const { user } = await svc.auth.signUp({ email: uniqueEmail(), password: PASSWORD, name: 'Grace' });
    const { user: second } = await svc.auth.signUp({ email: uniqueEmail(), password: PASSWORD, name: 'Alan' });
    const organization = await svc.operations.createOrganization({ body: { name: 'Analytical Engines' } });
    expect(organization).toMatchObject({ object: 'organization', name: 'Analytical Engines' });
    expect(await svc.operations.getOrganization({ path: { id: organization.id } })).toEqual(organization);
    expect((await svc.operations.listOrganizations({ query: { limit: 100 } })).data.map((item) => item.id)).toContain(organization.id);

    await svc.operations.addOrganizationMember({ path: { id: organization.id }, body: { user_id: user.id, role: 'owner' } });
    await svc.operations.addOrganizationMember({ path: { id: organization.id }, body: { user_id: second.id } });
    // Members page by user id: two pages of one, walked by the iterator.
    const members = await svc.operations
      .listOrganizationMembers({ path: { id: organization.id }, query: { limit: 1 } })
      .toArray({ limit: 10 });
    expect(members.map((member) => member.user_id).sort()).toEqual([user.id, second.id].sort());
    // Domains page by their name.
    for (const domain of ['a.example.com', 'b.example.com'])
      await svc.operations.addOrganizationDomain({ path: { id: organization.id }, body: { domain, verification: 'manual' } });
    const domains = await svc.operations
      .listOrganizationDomains({ path: { id: organization.id }, query: { limit: 1 } })
      .toArray({ limit: 10 });
    expect(domains.map((domain) => domain.domain).sort()).toEqual(['a.example.com', 'b.example.com']);

    const invitation = await svc.operations.createOrganizationInvitation({
      path: { id: organization.id },
      body: { email: uniqueEmail(), role: 'member' },
    });
    expect(invitation).toMatchObject({ object: 'invitation', organization_id: organization.id });

    const refused = await svc.operations
      .addOrganizationMember({ path: { id: organization.id }, body: { user_id: second.id } })
      .catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(ServiceError);
    expect(refused).toMatchObject({ status: 409, code: 'organization_member_exists' });

    const key = await svc.operations.createApiKey({ body: { name: 'ci' } });
    expect((await svc.operations.revokeApiKey({ path: { id: key.id } })).id).toBe(key.id);
    const entries = await svc.operations.listAuditLogs({ query: { limit: 5 } });
    expect(entries.data.length).toBeGreaterThan(0);
    // JSON lines, not one JSON document: returned as text.
    const exported = await svc.operations.exportAuditLogs();
    expect(typeof exported).toBe('string');
    expect(exported.trim().split('\n').length).toBeGreaterThan(0);
  });

  it('reads the operations outside /v1 and the non-JSON answers as text', async () => {
    const svc = ctx().client();
    expect(await svc.operations.getHealth()).toEqual({ status: 'ok' });
    const metrics = await svc.operations.getMetrics();
    expectTypeOf(metrics).toEqualTypeOf<string>();
    expect(metrics).toContain('# HELP');
    expect(await svc.operations.getOpenApiDocument()).toMatchObject({ openapi: '3.1.0' });
  });

  it('sends a form body where the operation takes one (the SAML ACS), not JSON', async () => {
    const refused = await ctx()
      .client()
      .operations.receiveSamlAssertion({
        path: { connection_id: 'sso_0000000000000000000000' },
        body: { SAMLResponse: 'PHNhbWxwOlJlc3BvbnNlLz4=' },
      })
      .catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(ServiceError);
    // Read as a form, the request reaches the connection lookup; as JSON it would be a 415.
    expect((refused as ServiceError).code).not.toBe('unsupported_media_type');
    expect((refused as ServiceError).status).toBe(404);
  });

  it('gives the session client the end-user operations', async () => {
    const svc = ctx().client();
    const { user, session } = await svc.auth.signUp({ email: uniqueEmail(), password: PASSWORD, name: 'Ada' });
    const organization = await svc.operations.createOrganization({ body: { name: 'Difference Engines' } });
    await svc.operations.addOrganizationMember({ path: { id: organization.id }, body: { user_id: user.id } });
    const me = new SvcSessionClient({ sessionToken: session.id, baseUrl: ctx().baseUrl });
    expect(await me.operations.getCurrentUser()).toMatchObject({ id: user.id });
    const memberships = await me.operations.listCurrentUserOrganizations().toArray({ limit: 10 });
    expect(memberships.map((membership) => membership.organization.id)).toEqual([organization.id]);
  });
});
