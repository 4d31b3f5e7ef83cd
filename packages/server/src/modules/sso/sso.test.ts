import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { decodeJwt } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { signInAtProvider, useOidcProvider } from '../../test/oauth-providers.js';
import {
  authnRequestIdOf,
  decodeResponse,
  encodeResponse,
  makeSamlIdp,
  makeSamlSigningKeyPair,
  type TestSamlIdp,
} from '../../test/saml-idp.js';
import { useTestService } from '../../test/service.js';
import { eventsOf } from '../auth/auth.testing.js';

const PUBLIC_URL = 'https://sso.svc.test';
const APP = 'https://app.example.com/sso/callback';
const OTHER_APP = 'https://app.example.com/sso/other';
const OIDC_CALLBACK = `${PUBLIC_URL}/v1/auth/sso/oidc/callback`;

function expectError(response: LightMyRequestResponse, status: number, code: string): { message: string; param?: string } {
  const body = response.json<{ error: { code: string; message: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code, message: body.error.message }).toMatchObject({ status, code });
  return body.error;
}

// One OpenID provider and SAML signing keys for the whole file; loopback HTTPS, self-signed.
const provider = useOidcProvider({
  clients: [{ client_id: 'sso-client', client_secret: 'sso-secret', redirect_uris: [OIDC_CALLBACK] }],
});
const idpKeys = makeSamlSigningKeyPair('corp idp');
const attackerKeys = makeSamlSigningKeyPair('attacker');
const env: Record<string, string> = { OAUTH_ALLOW_PRIVATE: '1', PUBLIC_URL };
const oauthOptions = provider.oauthOptions;

beforeAll(() => {
  provider.oidc.accounts.set('alice', { email: 'alice@oidc.example', email_verified: true, name: 'Alice' });
  provider.oidc.accounts.set('mallory', { email: 'mallory@elsewhere.example', email_verified: true, name: 'Mallory' });
});

describeEachDialect('sso', (dialect) => {
  const ctx = useTestService(dialect, { env, serviceOptions: { oauth: oauthOptions } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const post = (url: string, payload: object) => call({ method: 'POST', url, headers: ctx().auth, payload });
  const acs = (connectionId: string, form: Record<string, string>) =>
    call({
      method: 'POST',
      url: `/v1/auth/sso/saml/${connectionId}/acs`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
    });
  /** The service's redirect after the identity provider: the application's URI with `code` (and `state`). */
  const landing = (response: LightMyRequestResponse) => {
    expect(response.statusCode, response.body).toBe(303);
    return new URL(response.headers.location as string);
  };
  const exchange = (code: string) => post('/v1/auth/sso/callback', { code });

  async function organization(name: string): Promise<string> {
    const created = await post('/v1/organizations', { name });
    expect(created.statusCode, created.body).toBe(201);
    return created.json<{ id: string }>().id;
  }

  /** The operator's own assertion (`manual`): a connection may name only verified domains. */
  async function verifiedDomain(organizationId: string, domain: string): Promise<void> {
    const added = await post(`/v1/organizations/${organizationId}/domains`, { domain, verification: 'manual' });
    expect(added.statusCode, added.body).toBe(201);
  }

  interface SamlSetup {
    readonly organizationId: string;
    readonly connectionId: string;
    readonly sp: { entityId: string; acsUrl: string };
    readonly idp: TestSamlIdp;
  }

  async function samlConnection(domain: string, options: { allowIdpInitiated?: boolean; defaultRole?: string } = {}): Promise<SamlSetup> {
    const organizationId = await organization(`SAML ${domain}`);
    await verifiedDomain(organizationId, domain);
    const idp = makeSamlIdp({ entityId: `https://idp.${domain}/saml`, ssoUrl: `https://idp.${domain}/sso`, keys: idpKeys });
    const created = await post(`/v1/organizations/${organizationId}/sso-connections`, {
      type: 'saml',
      domains: [domain],
      redirect_uris: [APP, OTHER_APP],
      saml: { idp_entity_id: idp.entityId, idp_sso_url: idp.ssoUrl, idp_certificate: idp.certPem },
      ...(options.allowIdpInitiated === undefined ? {} : { allow_idp_initiated: options.allowIdpInitiated }),
      ...(options.defaultRole === undefined ? {} : { default_role: options.defaultRole }),
    });
    expect(created.statusCode, created.body).toBe(201);
    const connection = created.json<{ id: string; saml: { sp_entity_id: string; acs_url: string } }>();
    return {
      organizationId,
      connectionId: connection.id,
      sp: { entityId: connection.saml.sp_entity_id, acsUrl: connection.saml.acs_url },
      idp,
    };
  }

  /** An organization with `domain` verified and an OIDC connection for it at the test provider. */
  async function oidcConnection(domain: string, options: { defaultRole?: string } = {}) {
    const organizationId = await organization(`OIDC ${domain}`);
    await verifiedDomain(organizationId, domain);
    const created = await post(`/v1/organizations/${organizationId}/sso-connections`, {
      type: 'oidc',
      domains: [domain],
      redirect_uris: [APP],
      ...(options.defaultRole === undefined ? {} : { default_role: options.defaultRole }),
      oidc: { issuer: provider.oidc.issuer, client_id: 'sso-client', client_secret: 'sso-secret' },
    });
    expect(created.statusCode, created.body).toBe(201);
    return { organizationId, connectionId: created.json<{ id: string }>().id };
  }

  /** The outcomes of the refused sign-ins through a connection, from the audit log. */
  async function refusalsOf(connectionId: string): Promise<string[]> {
    const rows = await ctx()
      .service.db.kysely.selectFrom('audit_log')
      .select('outcome')
      .where('action', '=', 'user.sso_login')
      .where('resource_id', '=', connectionId)
      .execute();
    return rows.map((row) => row.outcome);
  }

  /** POST /auth/sso for `email`; the AuthnRequest id in the identity provider's URL. */
  async function startSaml(email: string, state?: string): Promise<string> {
    const started = await post('/v1/auth/sso', { email, redirect_uri: APP, ...(state === undefined ? {} : { state }) });
    expect(started.statusCode, started.body).toBe(200);
    return authnRequestIdOf(started.json<{ url: string }>().url);
  }

  describe('connections', () => {
    it('creates, lists and deletes a connection; the OIDC client secret is never returned', async () => {
      const organizationId = await organization('Connections');
      await verifiedDomain(organizationId, 'connections.example');
      const created = await post(`/v1/organizations/${organizationId}/sso-connections`, {
        type: 'oidc',
        domains: ['Connections.Example'],
        redirect_uris: [APP],
        oidc: { issuer: provider.oidc.issuer, client_id: 'sso-client', client_secret: 'sso-secret' },
      });
      expect(created.statusCode, created.body).toBe(201);
      const connection = created.json<{ id: string }>();
      expect(connection).toMatchObject({
        object: 'sso_connection',
        organization_id: organizationId,
        type: 'oidc',
        domains: ['connections.example'],
        default_role: 'member',
        allow_idp_initiated: false,
        oidc: { issuer: provider.oidc.issuer, client_id: 'sso-client', redirect_uri: OIDC_CALLBACK },
        saml: null,
      });
      expect(created.body).not.toContain('sso-secret');
      const listed = await call({ method: 'GET', url: `/v1/organizations/${organizationId}/sso-connections`, headers: ctx().auth });
      expect(listed.json()).toMatchObject({ object: 'list', data: [{ id: connection.id }], has_more: false });
      expect(listed.body).not.toContain('sso-secret');
      const stored = await ctx()
        .service.db.kysely.selectFrom('sso_connections')
        .selectAll()
        .where('id', '=', connection.id)
        .executeTakeFirstOrThrow();
      expect(stored.oidc_client_secret_sealed).not.toContain('sso-secret');

      const deleted = await call({
        method: 'DELETE',
        url: `/v1/organizations/${organizationId}/sso-connections/${connection.id}`,
        headers: ctx().auth,
      });
      expect(deleted.json()).toEqual({ id: connection.id, object: 'sso_connection', deleted: true });
      const again = await call({
        method: 'DELETE',
        url: `/v1/organizations/${organizationId}/sso-connections/${connection.id}`,
        headers: ctx().auth,
      });
      expectError(again, 404, 'resource_missing');
      const audit = await ctx()
        .service.db.kysely.selectFrom('audit_log')
        .select(['action', 'outcome'])
        .where('resource_id', '=', connection.id)
        .execute();
      expect(audit.map((row) => row.action).sort()).toEqual(['sso_connection.create', 'sso_connection.delete', 'sso_connection.delete']);
    });

    it("refuses another organization's domain, a second connection, bad certificates and unknown roles", async () => {
      const first = await samlConnection('taken.example');
      const organizationId = await organization('Second');
      const body = {
        type: 'saml',
        domains: ['TAKEN.example'],
        redirect_uris: [APP],
        saml: { idp_entity_id: 'https://idp/x', idp_sso_url: 'https://idp.example/sso', idp_certificate: idpKeys.certPem },
      };
      // The first organization has verified taken.example: the second can neither verify it nor name it.
      expectError(
        await post(`/v1/organizations/${organizationId}/domains`, { domain: 'taken.example', verification: 'manual' }),
        409,
        'domain_taken',
      );
      expectError(await post(`/v1/organizations/${organizationId}/sso-connections`, body), 422, 'domain_unverified');
      await verifiedDomain(first.organizationId, 'free.example');
      await verifiedDomain(organizationId, 'free2.example');
      expectError(
        await post(`/v1/organizations/${first.organizationId}/sso-connections`, { ...body, domains: ['free.example'] }),
        409,
        'sso_connection_exists',
      );
      const badCertificate = { ...body, domains: ['free2.example'], saml: { ...body.saml, idp_certificate: 'not a certificate' } };
      expect(
        expectError(await post(`/v1/organizations/${organizationId}/sso-connections`, badCertificate), 400, 'parameter_invalid').param,
      ).toBe('saml.idp_certificate');
      const badRole = { ...body, domains: ['free2.example'], default_role: 'no-such-role' };
      expectError(await post(`/v1/organizations/${organizationId}/sso-connections`, badRole), 400, 'parameter_invalid');
      const badRedirect = { ...body, domains: ['free2.example'], redirect_uris: ['http://app.example.com/cb'] };
      expectError(await post(`/v1/organizations/${organizationId}/sso-connections`, badRedirect), 400, 'parameter_invalid');
      const oidcWithSaml = { ...body, type: 'oidc', domains: ['free2.example'] };
      expectError(await post(`/v1/organizations/${organizationId}/sso-connections`, oidcWithSaml), 400, 'parameter_invalid');
      expectError(
        await post('/v1/organizations/org_missing/sso-connections', { ...body, domains: ['free.example'] }),
        404,
        'resource_missing',
      );
    });

    it('serves the SP metadata publicly at a stable URL', async () => {
      const setup = await samlConnection('metadata.example');
      const metadata = await call({ method: 'GET', url: `/v1/auth/sso/saml/${setup.connectionId}/metadata` });
      expect(metadata.statusCode).toBe(200);
      expect(metadata.headers['content-type']).toContain('application/samlmetadata+xml');
      expect(metadata.body).toContain(`entityID="${setup.sp.entityId}"`);
      expect(metadata.body).toContain(`Location="${setup.sp.acsUrl}"`);
      expect(setup.sp.entityId).toBe(`${PUBLIC_URL}/v1/auth/sso/saml/${setup.connectionId}/metadata`);
      expectError(await call({ method: 'GET', url: '/v1/auth/sso/saml/ssoc_missing/metadata' }), 404, 'resource_missing');
    });
  });

  describe('starting a sign-in', () => {
    it('routes by email domain or organization and checks the redirect URI', async () => {
      const setup = await samlConnection('routing.example');
      const byEmail = await post('/v1/auth/sso', { email: 'someone@Routing.Example', redirect_uri: APP });
      expect(new URL(byEmail.json<{ url: string }>().url).origin).toBe('https://idp.routing.example');
      const byOrganization = await post('/v1/auth/sso', { organization_id: setup.organizationId, redirect_uri: APP });
      expect(byOrganization.statusCode).toBe(200);
      expectError(await post('/v1/auth/sso', { email: 'someone@nowhere.example', redirect_uri: APP }), 404, 'sso_connection_not_found');
      expectError(await post('/v1/auth/sso', { organization_id: 'org_none', redirect_uri: APP }), 404, 'sso_connection_not_found');
      expectError(
        await post('/v1/auth/sso', { email: 'someone@routing.example', redirect_uri: 'https://evil.example/cb' }),
        400,
        'redirect_uri_not_allowed',
      );
      expectError(await post('/v1/auth/sso', { redirect_uri: APP }), 400, 'parameter_missing');
      expectError(
        await post('/v1/auth/sso', { email: 'a@routing.example', organization_id: setup.organizationId, redirect_uri: APP }),
        400,
        'parameter_invalid',
      );
    });
  });

  describe('OIDC', () => {
    it('signs in at a real OpenID provider: state, PKCE, nonce, ID token; JIT user and membership; then reuses them', async () => {
      const { organizationId } = await oidcConnection('oidc.example', { defaultRole: 'admin' });

      async function signIn(): Promise<LightMyRequestResponse> {
        const started = await post('/v1/auth/sso', { email: 'alice@oidc.example', redirect_uri: APP, state: 'app-state-1' });
        const url = new URL(started.json<{ url: string }>().url);
        expect(url.searchParams.get('code_challenge_method')).toBe('S256');
        expect(url.searchParams.get('nonce')).not.toBeNull();
        const back = await signInAtProvider(provider.certificate, url.href, 'alice');
        if (back.kind !== 'redirect') throw new Error('expected a redirect back');
        expect(back.url.href.startsWith(OIDC_CALLBACK)).toBe(true);
        const redirected = landing(await call({ method: 'GET', url: `${back.url.pathname}${back.url.search}` }));
        expect(`${redirected.origin}${redirected.pathname}`).toBe(APP);
        expect(redirected.searchParams.get('state')).toBe('app-state-1');
        // The provider's code and state stay between the provider and the service.
        expect(redirected.searchParams.get('code')).not.toBe(back.url.searchParams.get('code'));
        return exchange(redirected.searchParams.get('code') ?? '');
      }

      const first = await signIn();
      expect(first.statusCode, first.body).toBe(200);
      const signedIn = first.json<{
        user: { id: string; email: string; email_verified: boolean };
        session: { id: string };
        organization_id: string;
      }>();
      expect(signedIn).toMatchObject({ user: { email: 'alice@oidc.example', email_verified: true }, organization_id: organizationId });
      const member = await post(`/v1/organizations/${organizationId}/authorize`, { user_id: signedIn.user.id, permission: 'anything' });
      expect(member.json()).toMatchObject({ role: 'admin' });

      const second = await signIn();
      expect(second.json<{ user: { id: string } }>().user.id).toBe(signedIn.user.id);
      const created_events = (await eventsOf(ctx().service, ctx().projectId, 'user.created')).filter(
        (event) => event['user_id'] === signedIn.user.id,
      );
      expect(created_events).toHaveLength(1);
      const added = (await eventsOf(ctx().service, ctx().projectId, 'organization.member.added')).filter(
        (event) => event['user_id'] === signedIn.user.id,
      );
      expect(added).toHaveLength(1);
      const sessions = (await eventsOf(ctx().service, ctx().projectId, 'session.created')).filter(
        (event) => event['user_id'] === signedIn.user.id,
      );
      expect(sessions).toHaveLength(2);
    });

    it("refuses an unknown or replayed state, and an address outside the organization's verified domains", async () => {
      expectError(await call({ method: 'GET', url: '/v1/auth/sso/oidc/callback?state=forged&code=x' }), 400, 'sso_request_invalid');
      const started = await post('/v1/auth/sso', { email: 'mallory@oidc.example', redirect_uri: APP });
      const back = await signInAtProvider(provider.certificate, started.json<{ url: string }>().url, 'mallory');
      if (back.kind !== 'redirect') throw new Error('expected a redirect back');
      const path = `${back.url.pathname}${back.url.search}`;
      // mallory's ID token says elsewhere.example, not oidc.example.
      expectError(await call({ method: 'GET', url: path }), 403, 'sso_domain_mismatch');
      expectError(await call({ method: 'GET', url: path }), 400, 'sso_request_invalid');
    });
  });

  describe('SAML', () => {
    it('SP-initiated: signature, InResponseTo, JIT provisioning with the default role, state handed back', async () => {
      const setup = await samlConnection('saml.example', { defaultRole: 'admin' });
      const requestId = await startSaml('bob@saml.example', 'state-xyz');
      const response = await setup.idp.loginResponse(setup.sp, { email: 'bob@saml.example', inResponseTo: requestId });
      const redirected = landing(await acs(setup.connectionId, { SAMLResponse: response }));
      expect(`${redirected.origin}${redirected.pathname}`).toBe(APP);
      expect(redirected.searchParams.get('state')).toBe('state-xyz');
      const code = redirected.searchParams.get('code') ?? '';
      const signedIn = await exchange(code);
      expect(signedIn.statusCode, signedIn.body).toBe(200);
      const body = signedIn.json<{ user: { id: string }; session: { id: string; jwt: string }; organization_id: string }>();
      expect(body).toMatchObject({ user: { email: 'bob@saml.example', email_verified: true }, organization_id: setup.organizationId });
      expect(decodeJwt(body.session.jwt)).toMatchObject({ sub: body.user.id, amr: ['sso'] });
      const validated = await post('/v1/sessions/validate', { session_id: body.session.id });
      expect(validated.json()).toMatchObject({ valid: true });
      expect(
        (await post(`/v1/organizations/${setup.organizationId}/authorize`, { user_id: body.user.id, permission: 'x' })).json(),
      ).toMatchObject({
        role: 'admin',
      });
      // The code is single use.
      expectError(await exchange(code), 400, 'sso_code_invalid');
      // The request is single use too: a fresh assertion for the same request is refused.
      const late = await setup.idp.loginResponse(setup.sp, { email: 'bob@saml.example', inResponseTo: requestId });
      expectError(await acs(setup.connectionId, { SAMLResponse: late }), 400, 'sso_request_invalid');

      // A second sign-in reuses the user and the membership.
      const again = await setup.idp.loginResponse(setup.sp, {
        email: 'bob@saml.example',
        inResponseTo: await startSaml('bob@saml.example'),
      });
      const second = await exchange(landing(await acs(setup.connectionId, { SAMLResponse: again })).searchParams.get('code') ?? '');
      expect(second.json<{ user: { id: string } }>().user.id).toBe(body.user.id);
      const audit = await ctx()
        .service.db.kysely.selectFrom('audit_log')
        .select(['action', 'outcome'])
        .where('action', '=', 'user.sso_login')
        .where('resource_id', '=', body.user.id)
        .execute();
      expect(audit).toHaveLength(2);
    });

    it('two first sign-ins of one person at once make one user and one membership', async () => {
      const setup = await samlConnection('race.example');
      const codes: string[] = [];
      for (let index = 0; index < 2; index += 1) {
        const response = await setup.idp.loginResponse(setup.sp, {
          email: 'carol@race.example',
          inResponseTo: await startSaml('carol@race.example'),
        });
        codes.push(landing(await acs(setup.connectionId, { SAMLResponse: response })).searchParams.get('code') ?? '');
      }
      const signedIn = await Promise.all(codes.map((code) => exchange(code)));
      for (const response of signedIn) expect(response.statusCode, response.body).toBe(200);
      const [first, second] = signedIn.map((response) => response.json<{ user: { id: string } }>().user.id);
      expect(second).toBe(first);
      const members = await call({ method: 'GET', url: `/v1/organizations/${setup.organizationId}/members`, headers: ctx().auth });
      expect(members.json<{ data: { user_id: string }[] }>().data.map((member) => member.user_id)).toEqual([first]);
      const events = await ctx()
        .service.db.kysely.selectFrom('events')
        .select('type')
        .where('type', 'in', ['user.created', 'organization.member.added'])
        .where('data', 'like', `%${first}%`)
        .execute();
      expect(events.map((event) => event.type).sort()).toEqual(['organization.member.added', 'user.created']);
    });

    it('accepts a response signed on the response only, and a NotBefore within the 60 s skew', async () => {
      const setup = await samlConnection('response-signed.example');
      const response = await setup.idp.loginResponse(setup.sp, {
        email: 'carol@response-signed.example',
        inResponseTo: await startSaml('carol@response-signed.example'),
        sign: 'response',
        overrides: { ConditionsNotBefore: new Date(Date.now() + 30_000).toISOString() },
      });
      expect(decodeResponse(response)).not.toMatch(/<saml:Assertion[^>]*>(?:(?!<\/saml:Assertion>).)*<ds:Signature/);
      const redirected = landing(await acs(setup.connectionId, { SAMLResponse: response }));
      expect((await exchange(redirected.searchParams.get('code') ?? '')).statusCode).toBe(200);
    });

    it('refuses unsigned responses, another key, signature wrapping, replays, expiry, wrong audience and wrong recipient', async () => {
      const setup = await samlConnection('attacks.example');
      const email = 'dave@attacks.example';
      const signed = async (options: Partial<Parameters<TestSamlIdp['loginResponse']>[1]> = {}) =>
        setup.idp.loginResponse(setup.sp, { email, inResponseTo: await startSaml(email), ...options });
      const refused = async (response: string, status: number, code: string) =>
        expectError(await acs(setup.connectionId, { SAMLResponse: response }), status, code);

      // Unsigned: the signature taken out.
      const unsigned = decodeResponse(await signed()).replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, '');
      await refused(encodeResponse(unsigned), 400, 'sso_signature_invalid');

      // Signed by a key that is not the connection's certificate (the certificate travels in KeyInfo).
      const attacker = makeSamlIdp({ entityId: setup.idp.entityId, ssoUrl: setup.idp.ssoUrl, keys: attackerKeys });
      await refused(await attacker.loginResponse(setup.sp, { email, inResponseTo: await startSaml(email) }), 400, 'sso_signature_invalid');

      // Signature wrapping: a forged assertion beside, or around, the genuinely signed one.
      const genuine = decodeResponse(await signed());
      const assertion = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(genuine)?.[0] ?? '';
      expect(assertion).toContain('<ds:Signature');
      const forged = assertion
        .replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/, '')
        .replace(/ID="[^"]+"/, 'ID="_forged"')
        .replaceAll(email, 'ceo@attacks.example');
      await refused(encodeResponse(genuine.replace(assertion, `${forged}${assertion}`)), 400, 'sso_signature_invalid');
      const wrapped = forged.replace('</saml:Assertion>', `${assertion}</saml:Assertion>`);
      await refused(encodeResponse(genuine.replace(assertion, wrapped)), 400, 'sso_signature_invalid');
      // The signed assertion with its content changed.
      await refused(encodeResponse(genuine.replaceAll(email, 'ceo@attacks.example')), 400, 'sso_signature_invalid');

      // Replay: the same assertion twice.
      const once = await signed();
      landing(await acs(setup.connectionId, { SAMLResponse: once }));
      await refused(once, 400, 'sso_assertion_replayed');

      // Expired, and not yet valid beyond the skew.
      const past = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
      await refused(
        await signed({
          overrides: { ConditionsNotBefore: past(20), ConditionsNotOnOrAfter: past(10), SubjectConfirmationDataNotOnOrAfter: past(10) },
        }),
        400,
        'sso_assertion_expired',
      );
      await refused(await signed({ overrides: { ConditionsNotBefore: past(-5) } }), 400, 'sso_assertion_expired');

      // Meant for another service provider; sent to another ACS URL.
      await refused(await signed({ overrides: { Audience: 'https://other-sp.example/metadata' } }), 400, 'sso_audience_mismatch');
      await refused(await signed({ overrides: { SubjectRecipient: 'https://other-sp.example/acs' } }), 400, 'sso_destination_mismatch');
      await refused(
        await signed({ sign: 'both', overrides: { Destination: 'https://other-sp.example/acs' } }),
        400,
        'sso_destination_mismatch',
      );

      // Another identity provider's issuer, an unknown request, an address outside the domains.
      await refused(await signed({ overrides: { Issuer: 'https://someone-else/saml' } }), 400, 'sso_response_invalid');
      await refused(await signed({ inResponseTo: '_0123456789abcdef0123456789abcdef01234567' }), 400, 'sso_request_invalid');
      await refused(await signed({ email: 'eve@elsewhere.example' }), 403, 'sso_domain_mismatch');
      expectError(await acs(setup.connectionId, { RelayState: 'x' }), 400, 'parameter_missing');
      await refused('bm90IHhtbA==', 400, 'sso_response_invalid');

      // Nobody was signed in or created by any of this but the one genuine replayed assertion's first use.
      const users = await ctx().service.db.kysely.selectFrom('users').select('email').where('email', 'like', '%attacks.example').execute();
      expect(users).toEqual([]);
      const refusals = await refusalsOf(setup.connectionId);
      expect(refusals).toContain('sso_signature_invalid');
      expect(refusals).toContain('sso_assertion_replayed');
    });

    it('IdP-initiated: refused unless the connection allows it; then lands on the RelayState when it is allowed', async () => {
      const closed = await samlConnection('closed.example');
      const unsolicited = await closed.idp.loginResponse(closed.sp, { email: 'frank@closed.example' });
      expectError(await acs(closed.connectionId, { SAMLResponse: unsolicited }), 403, 'sso_idp_initiated_not_allowed');

      const open = await samlConnection('open.example', { allowIdpInitiated: true });
      const first = landing(
        await acs(open.connectionId, { SAMLResponse: await open.idp.loginResponse(open.sp, { email: 'frank@open.example' }) }),
      );
      expect(`${first.origin}${first.pathname}`).toBe(APP);
      expect(first.searchParams.get('state')).toBeNull();
      const relayed = landing(
        await acs(open.connectionId, {
          SAMLResponse: await open.idp.loginResponse(open.sp, { email: 'frank@open.example' }),
          RelayState: OTHER_APP,
        }),
      );
      expect(`${relayed.origin}${relayed.pathname}`).toBe(OTHER_APP);
      const foreign = landing(
        await acs(open.connectionId, {
          SAMLResponse: await open.idp.loginResponse(open.sp, { email: 'frank@open.example' }),
          RelayState: 'https://evil.example/',
        }),
      );
      expect(`${foreign.origin}${foreign.pathname}`).toBe(APP);
      const signedIn = await exchange(first.searchParams.get('code') ?? '');
      expect(signedIn.json()).toMatchObject({ user: { email: 'frank@open.example' }, organization_id: open.organizationId });
    });

    it('links an existing user of a connection domain and refuses a banned one', async () => {
      const setup = await samlConnection('existing.example');
      const signup = await post('/v1/auth/signup', {
        email: 'grace@existing.example',
        password: 'correct horse battery staple 7',
        name: 'Grace',
      });
      expect(signup.statusCode, signup.body).toBe(201);
      const userId = signup.json<{ user: { id: string } }>().user.id;
      const response = await setup.idp.loginResponse(setup.sp, {
        email: 'grace@existing.example',
        inResponseTo: await startSaml('grace@existing.example'),
      });
      const signedIn = await exchange(landing(await acs(setup.connectionId, { SAMLResponse: response })).searchParams.get('code') ?? '');
      expect(signedIn.json()).toMatchObject({ user: { id: userId, email_verified: true } });

      expect((await post(`/v1/users/${userId}/ban`, {})).statusCode).toBe(200);
      const banned = await setup.idp.loginResponse(setup.sp, {
        email: 'grace@existing.example',
        inResponseTo: await startSaml('grace@existing.example'),
      });
      expectError(
        await exchange(landing(await acs(setup.connectionId, { SAMLResponse: banned })).searchParams.get('code') ?? ''),
        403,
        'user_banned',
      );
    });

    it('deleting the organization deletes its connection', async () => {
      const setup = await samlConnection('gone.example');
      const deleted = await call({ method: 'DELETE', url: `/v1/organizations/${setup.organizationId}`, headers: ctx().auth });
      expect(deleted.statusCode, deleted.body).toBe(200);
      expectError(await post('/v1/auth/sso', { email: 'x@gone.example', redirect_uri: APP }), 404, 'sso_connection_not_found');
    });
  });

  describe("only within the organization's verified domains", () => {
    /** What a refused sign-in must not have written for `email`: no user, and no link or session of anyone through the connection. */
    async function nothingWritten(email: string, connectionId: string): Promise<void> {
      const db = ctx().service.db.kysely;
      expect(await db.selectFrom('users').select('id').where('email', '=', email).execute()).toEqual([]);
      expect(await db.selectFrom('user_identities').select('user_id').where('provider', '=', `sso:${connectionId}`).execute()).toEqual([]);
    }

    async function sessionsOf(userId: string): Promise<number> {
      const rows = await ctx().service.db.kysely.selectFrom('sessions').select('user_id').where('user_id', '=', userId).execute();
      return rows.length;
    }

    async function member(organizationId: string, email: string): Promise<string> {
      const signup = await post('/v1/auth/signup', { email, password: 'correct horse battery staple 5', name: 'Member' });
      expect(signup.statusCode, signup.body).toBe(201);
      const userId = signup.json<{ user: { id: string } }>().user.id;
      expect((await post(`/v1/organizations/${organizationId}/members`, { user_id: userId })).statusCode).toBe(201);
      return userId;
    }

    async function startSamlFor(organizationId: string): Promise<string> {
      const started = await post('/v1/auth/sso', { organization_id: organizationId, redirect_uri: APP });
      expect(started.statusCode, started.body).toBe(200);
      return authnRequestIdOf(started.json<{ url: string }>().url);
    }

    it('a connection names only verified domains (422 domain_unverified), pending ones included', async () => {
      const organizationId = await organization('Unverified corp');
      const pending = await post(`/v1/organizations/${organizationId}/domains`, { domain: 'pending.example', verification: 'dns' });
      expect(pending.json()).toMatchObject({ status: 'pending' });
      await verifiedDomain(organizationId, 'checked.example');
      const body = {
        type: 'saml',
        redirect_uris: [APP],
        saml: {
          idp_entity_id: 'https://idp.checked.example/saml',
          idp_sso_url: 'https://idp.checked.example/sso',
          idp_certificate: idpKeys.certPem,
        },
      };
      for (const domains of [['pending.example'], ['never-added.example'], ['checked.example', 'pending.example']]) {
        const refused = expectError(
          await post(`/v1/organizations/${organizationId}/sso-connections`, { ...body, domains }),
          422,
          'domain_unverified',
        );
        expect(refused.param).toBe('domains');
      }
      const created = await post(`/v1/organizations/${organizationId}/sso-connections`, { ...body, domains: ['Checked.example'] });
      expect(created.statusCode, created.body).toBe(201);
    });

    it('SAML: an address outside the verified domains of a non-member is refused (403 sso_domain_mismatch), nothing written', async () => {
      const setup = await samlConnection('saml-rule.example', { allowIdpInitiated: true });
      for (const response of [
        await setup.idp.loginResponse(setup.sp, {
          email: 'stranger@outside.example',
          inResponseTo: await startSamlFor(setup.organizationId),
        }),
        await setup.idp.loginResponse(setup.sp, { email: 'stranger@outside.example' }),
      ]) {
        expectError(await acs(setup.connectionId, { SAMLResponse: response }), 403, 'sso_domain_mismatch');
      }
      await nothingWritten('stranger@outside.example', setup.connectionId);
      const codes = await ctx()
        .service.db.kysely.selectFrom('sso_codes')
        .select('email')
        .where('connection_id', '=', setup.connectionId)
        .execute();
      expect(codes).toEqual([]);
      expect(await refusalsOf(setup.connectionId)).toEqual(['sso_domain_mismatch', 'sso_domain_mismatch']);
    });

    it('SAML: a member is let in from outside the verified domains; a verified domain lets anyone in', async () => {
      const setup = await samlConnection('saml-members.example');
      const userId = await member(setup.organizationId, 'contractor@freelance.example');
      const response = await setup.idp.loginResponse(setup.sp, {
        email: 'contractor@freelance.example',
        inResponseTo: await startSamlFor(setup.organizationId),
      });
      const signedIn = await exchange(landing(await acs(setup.connectionId, { SAMLResponse: response })).searchParams.get('code') ?? '');
      expect(signedIn.statusCode, signedIn.body).toBe(200);
      expect(signedIn.json()).toMatchObject({ user: { id: userId }, organization_id: setup.organizationId });

      const inDomain = await setup.idp.loginResponse(setup.sp, {
        email: 'newcomer@saml-members.example',
        inResponseTo: await startSamlFor(setup.organizationId),
      });
      const newcomer = await exchange(landing(await acs(setup.connectionId, { SAMLResponse: inDomain })).searchParams.get('code') ?? '');
      expect(newcomer.statusCode, newcomer.body).toBe(200);
      expect(newcomer.json()).toMatchObject({ user: { email: 'newcomer@saml-members.example' } });
    });

    it('the exchange checks again: a membership removed after the IdP answered gets no session and no link', async () => {
      const setup = await samlConnection('saml-late.example');
      const userId = await member(setup.organizationId, 'leaver@freelance-late.example');
      const response = await setup.idp.loginResponse(setup.sp, {
        email: 'leaver@freelance-late.example',
        inResponseTo: await startSamlFor(setup.organizationId),
      });
      const code = landing(await acs(setup.connectionId, { SAMLResponse: response })).searchParams.get('code') ?? '';
      const sessionsBefore = await sessionsOf(userId);
      const removed = await call({
        method: 'DELETE',
        url: `/v1/organizations/${setup.organizationId}/members/${userId}`,
        headers: ctx().auth,
      });
      expect(removed.statusCode, removed.body).toBe(200);
      expectError(await exchange(code), 403, 'sso_domain_mismatch');
      expect(await sessionsOf(userId)).toBe(sessionsBefore);
      const links = await ctx().service.db.kysely.selectFrom('user_identities').select('user_id').where('user_id', '=', userId).execute();
      expect(links).toEqual([]);
      const members = await call({ method: 'GET', url: `/v1/organizations/${setup.organizationId}/members`, headers: ctx().auth });
      expect(members.json<{ data: unknown[] }>().data).toEqual([]);
    });

    it('OIDC: a non-member outside the domains is refused with nothing written; once a member, let in', async () => {
      const { organizationId, connectionId } = await oidcConnection('oidc-members.example');
      const signIn = async () => {
        const started = await post('/v1/auth/sso', { organization_id: organizationId, redirect_uri: APP });
        const back = await signInAtProvider(provider.certificate, started.json<{ url: string }>().url, 'mallory');
        if (back.kind !== 'redirect') throw new Error('expected a redirect back');
        return call({ method: 'GET', url: `${back.url.pathname}${back.url.search}` });
      };
      // mallory@elsewhere.example: not a domain of the organization, and not a member.
      expectError(await signIn(), 403, 'sso_domain_mismatch');
      await nothingWritten('mallory@elsewhere.example', connectionId);

      const userId = await member(organizationId, 'mallory@elsewhere.example');
      const signedIn = await exchange(landing(await signIn()).searchParams.get('code') ?? '');
      expect(signedIn.statusCode, signedIn.body).toBe(200);
      expect(signedIn.json()).toMatchObject({ user: { id: userId }, organization_id: organizationId });
    });

    it("removing a domain takes it off the organization's connection", async () => {
      const setup = await samlConnection('removed.example');
      const removed = await call({
        method: 'DELETE',
        url: `/v1/organizations/${setup.organizationId}/domains/removed.example`,
        headers: ctx().auth,
      });
      expect(removed.statusCode, removed.body).toBe(200);
      const listed = await call({ method: 'GET', url: `/v1/organizations/${setup.organizationId}/sso-connections`, headers: ctx().auth });
      expect(listed.json()).toMatchObject({ data: [{ id: setup.connectionId, domains: [] }] });
      expectError(await post('/v1/auth/sso', { email: 'someone@removed.example', redirect_uri: APP }), 404, 'sso_connection_not_found');
      const response = await setup.idp.loginResponse(setup.sp, {
        email: 'someone@removed.example',
        inResponseTo: await startSamlFor(setup.organizationId),
      });
      expectError(await acs(setup.connectionId, { SAMLResponse: response }), 403, 'sso_domain_mismatch');
      await nothingWritten('someone@removed.example', setup.connectionId);
    });
  });
});
