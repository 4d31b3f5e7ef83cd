import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { signInAtProvider, type TestAccount, useCorpProvider, useOidcProvider } from '../../test/oauth-providers.js';
import { SoftwareAuthenticator } from '../../test/software-authenticator.js';
import { configureRelyingParty, ORIGIN, passkeyClient, registerPasskey, signInOptions } from '../passkeys/passkeys.testing.js';
import { authnRequestIdOf, makeSamlIdp, makeSamlSigningKeyPair } from '../../test/saml-idp.js';
import { useTestService } from '../../test/service.js';
import { auditReader } from '../audit/audit.testing.js';
import { eventsOf, signup, type SignedUp } from '../auth/auth.testing.js';

/**
 * The one identity-linking rule (docs/adr/0014-identity-linking.md) through every flow that meets
 * an existing account by email, against the real test identity providers: oidc-provider for SSO
 * OIDC and OAuth, samlify for SAML.
 *
 * Bug guarded ("SSO can take over a pre-registered account"): an SSO sign-in was
 * linked to an existing user by email although that user's address had never been verified, and
 * then marked it verified, so the password of whoever registered the address first kept working on
 * the real owner's account; an OIDC IdP's `email_verified: false` was dropped on the way.
 */

const PUBLIC_URL = 'https://sso.svc.test';
const SSO_APP = 'https://app.example.com/sso/callback';
const OAUTH_APP = 'https://app.example.com/auth/callback';
const OIDC_CALLBACK = `${PUBLIC_URL}/v1/auth/sso/oidc/callback`;

const provider = useOidcProvider({
  clients: [
    { client_id: 'sso-client', client_secret: 'sso-secret', redirect_uris: [OIDC_CALLBACK] },
    { client_id: 'generic-client', client_secret: 'generic-secret', redirect_uris: [OAUTH_APP] },
  ],
});
const idpKeys = makeSamlSigningKeyPair('linking idp');
const env: Record<string, string> = { OAUTH_ALLOW_PRIVATE: '1', PUBLIC_URL };
const oauthOptions = provider.oauthOptions;

function expectError(response: LightMyRequestResponse, status: number, code: string): void {
  expect({ status: response.statusCode, code: response.json<{ error?: { code: string } }>().error?.code }).toEqual({ status, code });
}

interface SignIn {
  readonly user: { id: string; email: string; email_verified: boolean };
  readonly session: { id: string };
}

describeEachDialect('identity linking', (dialect) => {
  const ctx = useTestService(dialect, { env, serviceOptions: { oauth: oauthOptions } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const post = (url: string, payload: object) => call({ method: 'POST', url, headers: ctx().auth, payload });
  const login = (email: string, password: string) => post('/v1/auth/login', { email, password });
  const validate = async (token: string) => (await post('/v1/sessions/validate', { session_id: token })).json<Record<string, unknown>>();
  let account = 0;

  useCorpProvider(ctx, provider, { client_id: 'generic-client', client_secret: 'generic-secret', redirect_uri: OAUTH_APP });

  /** A password sign-up nobody verified: the squatter's, or an owner who never clicked the link. */
  async function squat(email: string): Promise<SignedUp> {
    const squatter = await signup(call, ctx().secretKey, { email });
    expect(squatter.body.user.email_verified).toBe(false);
    return squatter;
  }

  async function markVerified(userId: string): Promise<void> {
    await ctx()
      .service.db.kysely.updateTable('users')
      .set({ email_verified_at: new Date().toISOString() })
      .where('id', '=', userId)
      .execute();
  }

  /** The squatter's password no longer logs in, and every session it had is revoked. */
  async function expectLockedOut(squatter: SignedUp): Promise<void> {
    expectError(await login(squatter.email, squatter.password), 401, 'invalid_credentials');
    expect(await validate(squatter.token)).toEqual({ valid: false, reason: 'revoked' });
    const revoked = (await eventsOf(ctx().service, ctx().projectId, 'session.revoked')).filter(
      (data) => data['user_id'] === squatter.userId,
    );
    expect(revoked.map((data) => data['session_id'])).toContain(squatter.token.split('.')[0]);
    expect(new Set(revoked.map((data) => data['reason']))).toEqual(new Set(['password_reset']));
  }

  /** The password still logs in and its session is still valid. */
  async function expectUntouched(holder: SignedUp): Promise<void> {
    const again = await login(holder.email, holder.password);
    expect(again.statusCode, again.body).toBe(200);
    expect(await validate(holder.token)).toMatchObject({ valid: true, user: { id: holder.userId } });
  }

  async function claims(userId: string) {
    return auditReader(ctx().service, ctx().secretKey).all({ action: 'user.email_claim', resource_id: userId });
  }

  /** A login name at the OpenID provider with these claims. */
  function providerAccount(claims: TestAccount): string {
    account += 1;
    const login = `account-${account}`;
    provider.oidc.accounts.set(login, claims);
    return login;
  }

  async function organization(name: string): Promise<string> {
    const created = await post('/v1/organizations', { name });
    expect(created.statusCode, created.body).toBe(201);
    return created.json<{ id: string }>().id;
  }

  /** A connection may name only the organization's verified domains; `manual` is the operator's word. */
  async function verifiedDomain(organizationId: string, domain: string): Promise<void> {
    const added = await post(`/v1/organizations/${organizationId}/domains`, { domain, verification: 'manual' });
    expect(added.statusCode, added.body).toBe(201);
  }

  async function oidcConnection(domain: string): Promise<void> {
    const organizationId = await organization(`OIDC ${domain}`);
    await verifiedDomain(organizationId, domain);
    const created = await post(`/v1/organizations/${organizationId}/sso-connections`, {
      type: 'oidc',
      domains: [domain],
      redirect_uris: [SSO_APP],
      oidc: { issuer: provider.oidc.issuer, client_id: 'sso-client', client_secret: 'sso-secret' },
    });
    expect(created.statusCode, created.body).toBe(201);
  }

  /** An SSO sign-in through the OIDC connection of the address's domain, up to `POST /v1/auth/sso/callback`. */
  async function ssoOidc(email: string, login: string): Promise<LightMyRequestResponse> {
    const started = await post('/v1/auth/sso', { email, redirect_uri: SSO_APP });
    expect(started.statusCode, started.body).toBe(200);
    const back = await signInAtProvider(provider.certificate, started.json<{ url: string }>().url, login);
    if (back.kind !== 'redirect') throw new Error('expected a redirect back');
    const landing = await call({ method: 'GET', url: `${back.url.pathname}${back.url.search}` });
    expect(landing.statusCode, landing.body).toBe(303);
    const code = new URL(landing.headers.location as string).searchParams.get('code') ?? '';
    return post('/v1/auth/sso/callback', { code });
  }

  /** A SAML connection for `domain`; returns a sign-in of an address up to `POST /v1/auth/sso/callback`. */
  async function samlConnection(domain: string): Promise<(email: string) => Promise<LightMyRequestResponse>> {
    const organizationId = await organization(`SAML ${domain}`);
    await verifiedDomain(organizationId, domain);
    const idp = makeSamlIdp({ entityId: `https://idp.${domain}/saml`, ssoUrl: `https://idp.${domain}/sso`, keys: idpKeys });
    const created = await post(`/v1/organizations/${organizationId}/sso-connections`, {
      type: 'saml',
      domains: [domain],
      redirect_uris: [SSO_APP],
      saml: { idp_entity_id: idp.entityId, idp_sso_url: idp.ssoUrl, idp_certificate: idp.certPem },
    });
    expect(created.statusCode, created.body).toBe(201);
    const connection = created.json<{ id: string; saml: { sp_entity_id: string; acs_url: string } }>();
    const sp = { entityId: connection.saml.sp_entity_id, acsUrl: connection.saml.acs_url };
    return async (email) => {
      const started = await post('/v1/auth/sso', { email, redirect_uri: SSO_APP });
      const response = await idp.loginResponse(sp, { email, inResponseTo: authnRequestIdOf(started.json<{ url: string }>().url) });
      const landing = await call({
        method: 'POST',
        url: `/v1/auth/sso/saml/${connection.id}/acs`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ SAMLResponse: response }).toString(),
      });
      expect(landing.statusCode, landing.body).toBe(303);
      return post('/v1/auth/sso/callback', { code: new URL(landing.headers.location as string).searchParams.get('code') ?? '' });
    };
  }

  /** An OAuth sign-in with the generic OpenID Connect provider `corp`. */
  async function oauth(login: string): Promise<LightMyRequestResponse> {
    const started = await post('/v1/auth/oauth/corp', { redirect_uri: OAUTH_APP });
    expect(started.statusCode, started.body).toBe(200);
    const back = await signInAtProvider(provider.certificate, started.json<{ url: string }>().url, login);
    if (back.kind !== 'redirect') throw new Error('expected a redirect back');
    const params = Object.fromEntries(back.url.searchParams);
    return post('/v1/auth/oauth/corp/callback', { code: params['code'], state: params['state'], iss: params['iss'] });
  }

  function signedIn(response: LightMyRequestResponse): SignIn {
    expect(response.statusCode, response.body).toBe(200);
    return response.json<SignIn>();
  }

  describe('a sign-in that proves the address claims an account whose address was never verified', () => {
    it('SSO OIDC: the squatter’s password stops working and its sessions are revoked; the owner gets the account', async () => {
      await oidcConnection('claim-oidc.example');
      const squatter = await squat('victim@claim-oidc.example');
      const owner = signedIn(await ssoOidc(squatter.email, providerAccount({ email: squatter.email, email_verified: true })));
      expect(owner.user).toMatchObject({ id: squatter.userId, email_verified: true });
      await expectLockedOut(squatter);
      expect(await validate(owner.session.id)).toMatchObject({ valid: true, user: { id: squatter.userId } });
      expect(await claims(squatter.userId)).toEqual([
        expect.objectContaining({
          outcome: 'success',
          changes: expect.objectContaining({ method: 'sso', password_removed: true, sessions_revoked: 1 }) as unknown,
        }),
      ]);

      // An enterprise IdP that says nothing about verification speaks for its domains all the same.
      const second = await squat('second@claim-oidc.example');
      const secondOwner = signedIn(await ssoOidc(second.email, providerAccount({ email: second.email })));
      expect(secondOwner.user).toMatchObject({ id: second.userId, email_verified: true });
      await expectLockedOut(second);
    });

    it('SAML: the squatter’s password stops working and its sessions are revoked; the owner gets the account', async () => {
      const saml = await samlConnection('claim-saml.example');
      const squatter = await squat('victim@claim-saml.example');
      const owner = signedIn(await saml(squatter.email));
      expect(owner.user).toMatchObject({ id: squatter.userId, email_verified: true });
      await expectLockedOut(squatter);
      expect(await validate(owner.session.id)).toMatchObject({ valid: true });
      expect(await claims(squatter.userId)).toHaveLength(1);
    });

    it('OAuth (generic OIDC): email_verified false is refused and changes nothing; email_verified true claims the account', async () => {
      const squatter = await squat('victim@claim-oauth.example');
      expectError(await oauth(providerAccount({ email: squatter.email, email_verified: false })), 409, 'email_taken');
      await expectUntouched(squatter);

      const owner = signedIn(await oauth(providerAccount({ email: squatter.email, email_verified: true })));
      expect(owner.user).toMatchObject({ id: squatter.userId, email_verified: true });
      expect(owner).toMatchObject({ created: false });
      await expectLockedOut(squatter);
      expect(await claims(squatter.userId)).toEqual([
        expect.objectContaining({ changes: expect.objectContaining({ method: 'oauth', provider: 'corp' }) as unknown }),
      ]);
    });

    it('a passkey the squatter registered goes too, with its event: it no longer signs in (ADR 0014, rule 5)', async () => {
      const passkeys = passkeyClient(ctx().service, ctx().secretKey);
      await configureRelyingParty(passkeys);
      const squatter = await squat('victim@claim-passkey.example');
      const authenticator = new SoftwareAuthenticator({ origin: ORIGIN });
      const passkey = await registerPasskey(passkeys, squatter.token, authenticator);

      signedIn(await oauth(providerAccount({ email: squatter.email, email_verified: true })));
      expect(await claims(squatter.userId)).toEqual([
        expect.objectContaining({ changes: expect.objectContaining({ method: 'oauth', passkeys_removed: 1 }) as unknown }),
      ]);
      expect(await eventsOf(ctx().service, ctx().projectId, 'user.passkey.removed')).toContainEqual(
        expect.objectContaining({ passkey_id: passkey.id, user_id: squatter.userId }),
      );
      const options = await signInOptions(passkeys);
      const refused = await passkeys.call('POST', '/v1/auth/passkey', {
        challenge_id: options.challenge_id,
        response: authenticator.authenticate(options, passkey.credentialId),
      });
      expectError(refused, 401, 'passkey_invalid');
    });

    it('an identity that never proved the address goes too: the squatter’s provider account no longer signs in', async () => {
      const saml = await samlConnection('claim-identity.example');
      const email = 'victim@claim-identity.example';
      // The squatter's provider account claims the address unverified: a new, unverified user.
      const squatterLogin = providerAccount({ email, email_verified: false });
      const squatted = signedIn(await oauth(squatterLogin));
      expect(squatted.user.email_verified).toBe(false);

      const owner = signedIn(await saml(email));
      expect(owner.user).toMatchObject({ id: squatted.user.id, email_verified: true });
      expect(await validate(squatted.session.id)).toEqual({ valid: false, reason: 'revoked' });
      const view = await call({ method: 'GET', url: `/v1/users/${owner.user.id}`, headers: ctx().auth });
      expect(view.json<{ identities: { provider: string }[] }>().identities.map((identity) => identity.provider)).toEqual([
        expect.stringMatching(/^sso:/),
      ]);
      // Unlinked, the squatter's account is an unproven claim on a verified address again.
      expectError(await oauth(squatterLogin), 409, 'email_taken');
      expect(await claims(owner.user.id)).toEqual([
        expect.objectContaining({ changes: expect.objectContaining({ password_removed: false, identities_removed: 'corp' }) as unknown }),
      ]);
    });
  });

  describe('a sign-in that does not prove the address', () => {
    it('SSO OIDC with email_verified false: no link, no verification (409 for a taken address); a free address gets an unverified user', async () => {
      await oidcConnection('unproven.example');
      const holder = await squat('taken@unproven.example');
      expectError(await ssoOidc(holder.email, providerAccount({ email: holder.email, email_verified: false })), 409, 'email_taken');
      await expectUntouched(holder);
      const user = await call({ method: 'GET', url: `/v1/users/${holder.userId}`, headers: ctx().auth });
      expect(user.json()).toMatchObject({ email_verified: false, identities: [] });

      const fresh = signedIn(
        await ssoOidc('fresh@unproven.example', providerAccount({ email: 'fresh@unproven.example', email_verified: false })),
      );
      expect(fresh.user).toMatchObject({ email: 'fresh@unproven.example', email_verified: false });
      expect(await claims(holder.userId)).toEqual([]);
    });
  });

  describe('a verified account is linked, not claimed', () => {
    it('its password and sessions keep working after SSO and OAuth sign-ins that prove the address; an unproven one is refused', async () => {
      await oidcConnection('verified.example');
      const saml = await samlConnection('verified-saml.example');
      for (const email of ['owner@verified.example', 'owner@verified-saml.example']) {
        const holder = await signup(call, ctx().secretKey, { email });
        await markVerified(holder.userId);
        if (email.endsWith('@verified.example')) {
          expectError(await ssoOidc(email, providerAccount({ email, email_verified: false })), 409, 'email_taken');
          const linked = signedIn(await ssoOidc(email, providerAccount({ email, email_verified: true })));
          expect(linked.user.id).toBe(holder.userId);
        } else {
          expect(signedIn(await saml(email)).user.id).toBe(holder.userId);
        }
        const viaOAuth = signedIn(await oauth(providerAccount({ email, email_verified: true })));
        expect(viaOAuth.user.id).toBe(holder.userId);
        await expectUntouched(holder);
        expect(await claims(holder.userId)).toEqual([]);
        const view = await call({ method: 'GET', url: `/v1/users/${holder.userId}`, headers: ctx().auth });
        expect(view.json<{ identities: unknown[] }>().identities).toHaveLength(2);
      }
    });
  });
});
