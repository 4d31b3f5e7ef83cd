import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { signInAtProvider, useCorpProvider, useOidcProvider } from '../../test/oauth-providers.js';
import { useTestService } from '../../test/service.js';
import { auditReader } from '../audit/audit.testing.js';
import { eventsOf, signup, testClock } from '../auth/auth.testing.js';
import { codeAt, enrolTotp } from './mfa.testing.js';

/**
 * OAuth and SSO sign-ins of a user with an authenticator need its code too (docs/adr/0016-mfa.md):
 * the code exchange (`POST /v1/auth/oauth/{provider}/callback`, `POST /v1/auth/sso/callback`)
 * answers `mfa_required` with an `mfa_token` instead of a session. Against the real test OpenID
 * provider (oidc-provider on loopback HTTPS).
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
const env: Record<string, string> = { OAUTH_ALLOW_PRIVATE: '1', PUBLIC_URL };

describeEachDialect('second factor after OAuth and SSO', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { env, serviceOptions: { oauth: provider.oauthOptions, clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const post = (url: string, payload: object) => call({ method: 'POST', url, headers: ctx().auth, payload });
  let account = 0;

  useCorpProvider(ctx, provider, { client_id: 'generic-client', client_secret: 'generic-secret', redirect_uri: OAUTH_APP });

  /** A verified password user with an active authenticator, and a login name at the provider for the same address. */
  async function userWithAuthenticator(email: string) {
    const user = await signup(call, ctx().secretKey, { email });
    await ctx()
      .service.db.kysely.updateTable('users')
      .set({ email_verified_at: clock.now().toISOString() })
      .where('id', '=', user.userId)
      .execute();
    const totp = await enrolTotp(call, user.token, clock);
    account += 1;
    const login = `mfa-account-${account}`;
    provider.oidc.accounts.set(login, { email, email_verified: true, name: 'Factor User' });
    return { user, totp, login };
  }

  function challenge(response: LightMyRequestResponse) {
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<{ mfa_required: boolean; mfa_token: string; methods: string[]; session?: unknown }>();
    expect(body).toMatchObject({ mfa_required: true, methods: ['totp', 'recovery_code'] });
    expect(body.session).toBeUndefined();
    return body;
  }

  it('OAuth: the callback answers {mfa_required, mfa_token, methods, created} and no session; the code finishes it', async () => {
    const { user, totp, login } = await userWithAuthenticator('oauth-factor@corp.example');
    const sessionsBefore = (await eventsOf(ctx().service, ctx().projectId, 'session.created')).length;
    const started = await post('/v1/auth/oauth/corp', { redirect_uri: OAUTH_APP });
    expect(started.statusCode, started.body).toBe(200);
    const back = await signInAtProvider(provider.certificate, started.json<{ url: string }>().url, login);
    if (back.kind !== 'redirect') throw new Error('expected a redirect back');
    const params = Object.fromEntries(back.url.searchParams);
    const callback = await post('/v1/auth/oauth/corp/callback', { code: params['code'], state: params['state'], iss: params['iss'] });
    const body = challenge(callback);
    expect(Object.keys(body).sort()).toEqual(['created', 'methods', 'mfa_required', 'mfa_token']);
    expect(callback.json()).toMatchObject({ created: false });
    expect((await eventsOf(ctx().service, ctx().projectId, 'session.created')).length).toBe(sessionsBefore);
    const entries = await auditReader(ctx().service, ctx().secretKey).all({ action: 'user.oauth_login', resource_id: user.userId });
    expect(entries[0]?.changes).toMatchObject({ mfa_required: true });

    const finished = await post('/v1/auth/mfa/verify', { mfa_token: body.mfa_token, code: codeAt(totp.secret, clock) });
    expect(finished.statusCode, finished.body).toBe(200);
    expect(finished.json()).toMatchObject({ user: { id: user.userId } });
  });

  it('SSO: the code exchange answers {mfa_required, mfa_token, methods, organization_id} and no session; a recovery code finishes it', async () => {
    const created = await post('/v1/organizations', { name: 'Factor Corp' });
    const organizationId = created.json<{ id: string }>().id;
    // A connection names only the organization's verified domains.
    await post(`/v1/organizations/${organizationId}/domains`, { domain: 'factor-sso.example', verification: 'manual' });
    const connection = await post(`/v1/organizations/${organizationId}/sso-connections`, {
      type: 'oidc',
      domains: ['factor-sso.example'],
      redirect_uris: [SSO_APP],
      oidc: { issuer: provider.oidc.issuer, client_id: 'sso-client', client_secret: 'sso-secret' },
    });
    expect(connection.statusCode, connection.body).toBe(201);
    const { user, totp, login } = await userWithAuthenticator('sso-factor@factor-sso.example');
    const started = await post('/v1/auth/sso', { email: user.email, redirect_uri: SSO_APP });
    expect(started.statusCode, started.body).toBe(200);
    const back = await signInAtProvider(provider.certificate, started.json<{ url: string }>().url, login);
    if (back.kind !== 'redirect') throw new Error('expected a redirect back');
    const landing = await call({ method: 'GET', url: `${back.url.pathname}${back.url.search}` });
    expect(landing.statusCode, landing.body).toBe(303);
    // The browser goes back to the application with the service's one-time code, as without a factor.
    const code = new URL(landing.headers.location as string).searchParams.get('code') ?? '';
    const exchanged = await post('/v1/auth/sso/callback', { code });
    const body = challenge(exchanged);
    expect(exchanged.json()).toMatchObject({ organization_id: organizationId });

    const finished = await post('/v1/auth/mfa/verify', { mfa_token: body.mfa_token, recovery_code: totp.recoveryCodes[0] });
    expect(finished.statusCode, finished.body).toBe(200);
    expect(finished.json()).toMatchObject({ user: { id: user.userId } });
    const members = await call({ method: 'GET', url: `/v1/organizations/${organizationId}/members`, headers: ctx().auth });
    expect(JSON.stringify(members.json())).toContain(user.userId);
  });
});
