import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { decodeJwt } from 'jose';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import {
  type AppleSecretCheck,
  type GitHubStandIn,
  makeTestCertificate,
  type OidcProviderHandle,
  type ScriptedProvider,
  signInAtProvider,
  signJwt,
  startGitHub,
  startOidcProvider,
  startScriptedProvider,
  type TestCertificate,
} from '../../test/oauth-providers.js';
import { useTestService } from '../../test/service.js';
import { eventsOf, signup, testClock } from '../auth/auth.testing.js';
import { auditReader } from '../audit/audit.testing.js';

const APP = 'https://app.example.com/auth/callback';
const OTHER_APP = 'https://evil.example.com/auth/callback';

function expectError(response: LightMyRequestResponse, status: number, code: string): { message: string; param?: string } {
  const body = response.json<{ error: { code: string; message: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code }).toEqual({ status, code });
  return body.error;
}

// One set of stand-in providers for the whole file, on loopback HTTPS with a self-signed certificate.
let certificate: TestCertificate;
let oidc: OidcProviderHandle;
let scripted: ScriptedProvider;
let github: GitHubStandIn;
const appleKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const apple: AppleSecretCheck = {
  clientId: 'com.example.app',
  publicKey: appleKeys.publicKey,
  staticSecret: 'apple-static-secret',
  received: [],
};
const env: Record<string, string> = { OAUTH_ALLOW_PRIVATE: '1' };
const oauthOptions: { trustedCa?: string } = {};

beforeAll(async () => {
  certificate = makeTestCertificate();
  oidc = await startOidcProvider({
    certificate,
    clients: [
      { client_id: 'generic-client', client_secret: 'generic-secret', redirect_uris: [APP] },
      { client_id: 'google-client', client_secret: 'google-secret', redirect_uris: [APP] },
      { client_id: apple.clientId, client_secret: apple.staticSecret, redirect_uris: [APP] },
    ],
    apple,
  });
  scripted = await startScriptedProvider(certificate);
  github = await startGitHub(certificate);
  Object.assign(env, {
    OAUTH_GOOGLE_ISSUER: oidc.issuer,
    OAUTH_APPLE_ISSUER: oidc.issuer,
    OAUTH_GITHUB_URL: github.webUrl,
    OAUTH_GITHUB_API_URL: github.apiUrl,
  });
  // The test CA is made after this process started, so NODE_EXTRA_CA_CERTS cannot name it here;
  // the module's trust seam takes it instead (oauth.ca.test.ts covers NODE_EXTRA_CA_CERTS itself).
  oauthOptions.trustedCa = certificate.certPem;
});

afterAll(async () => {
  await oidc?.close();
  await scripted?.close();
  await github?.close();
  certificate?.remove();
});

describeEachDialect('oauth', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { env, serviceOptions: { clock, oauth: oauthOptions } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const put = (provider: string, payload: object) =>
    call({ method: 'PUT', url: `/v1/auth/providers/${provider}`, headers: ctx().auth, payload });
  const post = (url: string, payload: object) => call({ method: 'POST', url, headers: ctx().auth, payload });
  const start = (provider: string, payload: object = { redirect_uri: APP }) => post(`/v1/auth/oauth/${provider}`, payload);
  const finish = (provider: string, payload: object) => post(`/v1/auth/oauth/${provider}/callback`, payload);

  /** Start, sign in at the real provider as `login`, and call back with what came back. */
  async function signInWith(provider: string, login: string): Promise<LightMyRequestResponse> {
    const started = await start(provider);
    expect(started.statusCode).toBe(200);
    const landing = await signInAtProvider(certificate, started.json<{ url: string }>().url, login);
    const params = landing.kind === 'redirect' ? Object.fromEntries(landing.url.searchParams) : landing.fields;
    return finish(provider, {
      code: params['code'],
      state: params['state'],
      ...(params['iss'] === undefined ? {} : { iss: params['iss'] }),
    });
  }

  beforeAll(async () => {
    expect(
      (await put('corp', { client_id: 'generic-client', client_secret: 'generic-secret', issuer: oidc.issuer, redirect_uris: [APP] }))
        .statusCode,
    ).toBe(200);
    expect((await put('google', { client_id: 'google-client', client_secret: 'google-secret', redirect_uris: [APP] })).statusCode).toBe(
      200,
    );
    const privateKey = appleKeys.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const appleBody = {
      client_id: apple.clientId,
      apple: { team_id: 'TEAM123456', key_id: 'KEY1234567', private_key: privateKey },
      redirect_uris: [APP],
    };
    expect((await put('apple', appleBody)).statusCode).toBe(200);
    expect((await put('github', { client_id: 'gh-client', client_secret: 'gh-secret', redirect_uris: [APP] })).statusCode).toBe(200);
    expect(
      (
        await put('scripted', {
          client_id: 'scripted-client',
          client_secret: 'scripted-secret',
          issuer: scripted.issuer,
          redirect_uris: [APP],
        })
      ).statusCode,
    ).toBe(200);
  });

  describe('provider configuration', () => {
    it('lists providers without their secrets, and stores the secrets encrypted', async () => {
      const list = await call({ method: 'GET', url: '/v1/auth/providers', headers: ctx().auth });
      expect(list.statusCode).toBe(200);
      const body = list.json<{ data: Array<Record<string, unknown>> }>();
      expect(body.data.map((item) => item['provider'])).toEqual(['apple', 'corp', 'github', 'google', 'scripted']);
      expect(body.data.find((item) => item['provider'] === 'corp')).toMatchObject({
        object: 'oauth_provider',
        kind: 'oidc',
        client_id: 'generic-client',
        issuer: oidc.issuer,
        scopes: ['openid', 'email', 'profile'],
        redirect_uris: [APP],
        apple: null,
      });
      expect(body.data.find((item) => item['provider'] === 'apple')).toMatchObject({
        apple: { team_id: 'TEAM123456', key_id: 'KEY1234567' },
      });
      expect(list.body).not.toContain('secret');
      expect(list.body).not.toContain('PRIVATE KEY');
      const rows = await ctx().service.db.kysely.selectFrom('oauth_providers').select('secret_sealed').execute();
      for (const row of rows) {
        expect(row.secret_sealed).toMatch(/^v2\.default\./);
        expect(row.secret_sealed).not.toContain('secret');
      }
    });

    it('keeps the stored secret when a PUT omits it, and deletes', async () => {
      expect(
        (await put('temp', { client_id: 'x', client_secret: 'generic-secret', issuer: oidc.issuer, redirect_uris: [APP] })).statusCode,
      ).toBe(200);
      const updated = await put('temp', { client_id: 'y', issuer: oidc.issuer, redirect_uris: [APP, 'http://127.0.0.1:3000/cb'] });
      expect(updated.json()).toMatchObject({ client_id: 'y', redirect_uris: [APP, 'http://127.0.0.1:3000/cb'] });
      const deleted = await call({ method: 'DELETE', url: '/v1/auth/providers/temp', headers: ctx().auth });
      expect(deleted.json()).toEqual({ object: 'oauth_provider', provider: 'temp', deleted: true });
      expectError(await call({ method: 'DELETE', url: '/v1/auth/providers/temp', headers: ctx().auth }), 404, 'oauth_provider_unknown');
    });

    it('refuses bad configurations with catalog codes', async () => {
      const base = { client_id: 'c', client_secret: 's', redirect_uris: [APP] };
      expect(expectError(await put('google', { ...base, issuer: oidc.issuer }), 400, 'parameter_invalid').param).toBe('issuer');
      expect(expectError(await put('newcorp', base), 400, 'parameter_missing').param).toBe('issuer');
      expect(expectError(await put('newcorp', { ...base, issuer: 'http://example.com' }), 400, 'parameter_invalid').param).toBe('issuer');
      expect(
        expectError(await put('newcorp', { client_id: 'c', issuer: oidc.issuer, redirect_uris: [APP] }), 400, 'parameter_missing').param,
      ).toBe('client_secret');
      expect(
        expectError(await put('google', { ...base, redirect_uris: ['http://app.example.com/cb'] }), 400, 'parameter_invalid').param,
      ).toBe('redirect_uris[0]');
      expect(expectError(await put('google', { ...base, redirect_uris: [`${APP}?x=1`] }), 400, 'parameter_invalid').param).toBe(
        'redirect_uris[0]',
      );
      expect(expectError(await put('Bad Key', base), 400, 'parameter_invalid').param).toBe('provider');
      const appleBad = {
        client_id: 'c',
        apple: { team_id: 'TEAM123456', key_id: 'KEY1234567', private_key: 'nope' },
        redirect_uris: [APP],
      };
      expect(expectError(await put('apple', appleBad), 400, 'parameter_invalid').param).toBe('apple.private_key');
      expectError(await put('google', { ...base, extra: 1 }), 400, 'parameter_unknown');
      // Discovery of an issuer that does not answer is refused at configuration time.
      expect(expectError(await put('newcorp', { ...base, issuer: 'https://127.0.0.1:1' }), 400, 'parameter_invalid').param).toBe('issuer');
    });

    it('lets exactly one of concurrent new providers take the last of 50 places; an update still passes at 50', async () => {
      // A project of its own, so the file's project keeps room for the other tests' providers.
      const { project, secretKey } = await ctx().service.projects.createProject({ name: 'Provider limit' });
      const db = ctx().service.db.kysely;
      const putHere = (provider: string, payload: object) =>
        call({ method: 'PUT', url: `/v1/auth/providers/${provider}`, headers: { authorization: `Bearer ${secretKey}` }, payload });
      const count = async () =>
        Number(
          (
            await db
              .selectFrom('oauth_providers')
              .select((eb) => eb.fn.countAll<number | string | bigint>().as('count'))
              .where('project_id', '=', project.id)
              .executeTakeFirstOrThrow()
          ).count,
        );
      const body = { client_id: 'generic-client', client_secret: 'generic-secret', issuer: oidc.issuer, redirect_uris: [APP] };
      expect((await putHere('limit-base', body)).statusCode).toBe(200);
      // 48 more rows like it, straight into the table: 49 providers, one place left.
      const base = await db
        .selectFrom('oauth_providers')
        .selectAll()
        .where('project_id', '=', project.id)
        .where('provider', '=', 'limit-base')
        .executeTakeFirstOrThrow();
      await db
        .insertInto('oauth_providers')
        .values(Array.from({ length: 48 }, (_, index) => ({ ...base, provider: `limit-filler-${index}` })))
        .execute();
      expect(await count()).toBe(49);

      // Each passes the early count (49) before any of them inserts; the count in the transaction decides.
      const race = () => Promise.all(Array.from({ length: 6 }, (_, index) => putHere(`limit-new-${index}`, body)));
      let racing: LightMyRequestResponse[];
      if (dialect === 'postgres') {
        // Their transactions are short and would rarely overlap on their own. Inserts into the table
        // are held until all six wait (on the insert, or on the lock taken before counting), so each
        // transaction counts while the others are open: without the lock all six count 49.
        racing = await db.connection().execute(async (blocker) => {
          await sql`begin`.execute(blocker);
          await sql`lock table oauth_providers in share mode`.execute(blocker);
          const responses = race();
          let waiting = 0;
          try {
            for (const deadline = Date.now() + 10_000; waiting < 6 && Date.now() < deadline;) {
              await sleep(10);
              const waiters = await sql<{ count: string }>`
                select count(*) as count from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'
              `.execute(db);
              waiting = Number(waiters.rows[0]?.count ?? 0);
            }
          } finally {
            await sql`commit`.execute(blocker);
          }
          expect(waiting, 'configure transactions waiting together').toBe(6);
          return responses;
        });
      } else {
        // SQLite runs one write transaction at a time (BEGIN IMMEDIATE): they cannot overlap.
        racing = await race();
      }
      const created = racing.filter((response) => response.statusCode === 200);
      expect(created).toHaveLength(1);
      for (const response of racing.filter((item) => item.statusCode !== 200)) {
        expect(expectError(response, 400, 'parameter_invalid')).toMatchObject({
          param: 'provider',
          message: 'A project configures at most 50 providers.',
        });
      }
      expect(await count()).toBe(50);

      // At 50, an update of a configured provider is not a new one: it passes and keeps created_at.
      const updated = await putHere('limit-base', { ...body, client_id: 'changed-client' });
      expect(updated.statusCode, updated.body).toBe(200);
      expect(updated.json()).toMatchObject({ client_id: 'changed-client', created_at: base.created_at });
      expectError(await putHere('limit-one-more', body), 400, 'parameter_invalid');
      expect(await count()).toBe(50);

      // One audit entry per request: the creation, and each refusal recorded on its own after the rollback.
      const audit = auditReader(ctx().service, secretKey);
      const entries = (await audit.all({ action: 'oauth_provider.configure' })).filter((entry) =>
        entry.resource.id?.startsWith('limit-new-'),
      );
      expect(entries.map((entry) => entry.outcome).sort()).toEqual([...Array<string>(5).fill('parameter_invalid'), 'success']);
      expect(entries.find((entry) => entry.outcome === 'success')?.changes).toMatchObject({ created: true });
    });
  });

  describe('start', () => {
    it('answers the provider URL with PKCE S256, a state and a nonce; the state is the caller’s when given', async () => {
      const response = await start('corp', { redirect_uri: APP, state: 'my-own-state-value-0123456789' });
      expect(response.statusCode).toBe(200);
      const { url, state } = response.json<{ url: string; state: string }>();
      expect(state).toBe('my-own-state-value-0123456789');
      const parsed = new URL(url);
      expect(parsed.origin).toBe(oidc.issuer);
      expect(Object.fromEntries(parsed.searchParams)).toMatchObject({
        client_id: 'generic-client',
        redirect_uri: APP,
        response_type: 'code',
        scope: 'openid email profile',
        state,
        code_challenge_method: 'S256',
      });
      expect(parsed.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
      expect(parsed.searchParams.get('nonce')).toMatch(/^[\w-]{43}$/);
      expect(url).not.toContain('generic-secret');
      // A state is single use from the start: the same one again is refused.
      expect(expectError(await start('corp', { redirect_uri: APP, state }), 400, 'parameter_invalid').param).toBe('state');
    });

    it('asks Apple for form_post, and GitHub with PKCE but no nonce', async () => {
      const appleUrl = new URL((await start('apple')).json<{ url: string }>().url);
      expect(appleUrl.searchParams.get('response_mode')).toBe('form_post');
      const githubUrl = new URL((await start('github')).json<{ url: string }>().url);
      expect(`${githubUrl.origin}${githubUrl.pathname}`).toBe(`${github.webUrl}/login/oauth/authorize`);
      expect(githubUrl.searchParams.get('code_challenge_method')).toBe('S256');
      expect(githubUrl.searchParams.get('nonce')).toBeNull();
    });

    it('refuses a redirect URI not on the list, unknown and unconfigured providers', async () => {
      expect(expectError(await start('corp', { redirect_uri: OTHER_APP }), 400, 'redirect_uri_not_allowed').param).toBe('redirect_uri');
      expect(expectError(await start('corp', { redirect_uri: `${APP}/` }), 400, 'redirect_uri_not_allowed').param).toBe('redirect_uri');
      expectError(await start('nobody'), 404, 'oauth_provider_unknown');
      await call({ method: 'DELETE', url: '/v1/auth/providers/github', headers: ctx().auth });
      expectError(await start('github'), 400, 'oauth_provider_not_configured');
      expect((await put('github', { client_id: 'gh-client', client_secret: 'gh-secret', redirect_uris: [APP] })).statusCode).toBe(200);
    });
  });

  describe('callback against a real OpenID provider', () => {
    it('creates a verified user with a session on first sign-in, then signs the same user in', async () => {
      oidc.accounts.set('ada', { email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace' });
      const first = await signInWith('corp', 'ada');
      expect(first.statusCode).toBe(200);
      const body = first.json<{
        user: { id: string; email: string; email_verified: boolean; name: string };
        session: { id: string; jwt: string };
        created: boolean;
      }>();
      expect(body).toMatchObject({ created: true, user: { email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace' } });
      expect(body.session.id).toMatch(/^svc_ses_/);
      expect(decodeJwt(body.session.jwt)).toMatchObject({ sub: body.user.id, amr: ['oauth'] });
      const validated = await post('/v1/sessions/validate', { session_id: body.session.id });
      expect(validated.json()).toMatchObject({ valid: true, user: { id: body.user.id } });
      expect((await eventsOf(ctx().service, ctx().projectId, 'user.created')).some((data) => data['user_id'] === body.user.id)).toBe(true);
      const sessionEvents = await eventsOf(ctx().service, ctx().projectId, 'session.created');
      expect(sessionEvents.some((data) => data['user_id'] === body.user.id)).toBe(true);

      const again = await signInWith('corp', 'ada');
      expect(again.json()).toMatchObject({ created: false, user: { id: body.user.id } });
      const user = await call({ method: 'GET', url: `/v1/users/${body.user.id}`, headers: ctx().auth });
      expect(user.json<{ identities: unknown[] }>().identities).toEqual([
        expect.objectContaining({ object: 'identity', provider: 'corp', subject: 'ada', email: 'ada@example.com' }),
      ]);
      expect(user.body).not.toMatch(/token|secret/i);
    });

    it('writes the audit log: provider configuration, sign-ins and refused sign-ins, never a secret', async () => {
      const audit = async (query: string) => {
        const response = await call({ method: 'GET', url: `/v1/audit-logs?${query}`, headers: ctx().auth });
        expect(response.statusCode, response.body).toBe(200);
        return response.json<{ data: { action: string; outcome: string; resource: { id: string | null }; changes: unknown }[] }>().data;
      };
      const configured = await audit('action=oauth_provider.configure&resource_id=corp');
      // Newest first: the oldest is the PUT that created it.
      expect(configured.at(-1)).toMatchObject({
        outcome: 'success',
        changes: { kind: 'oidc', client_id: 'generic-client', created: true },
      });
      expect(JSON.stringify(configured)).not.toContain('generic-secret');

      oidc.accounts.set('audited', { email: 'audited@example.com', email_verified: true });
      const signedIn = await signInWith('corp', 'audited');
      const userId = signedIn.json<{ user: { id: string } }>().user.id;
      const logins = await audit(`action=user.oauth_login&resource_id=${userId}`);
      expect(logins).toHaveLength(1);
      expect(logins[0]).toMatchObject({ outcome: 'success', changes: { provider: 'corp', user_created: true } });

      const replayed = await finish('corp', { code: 'whatever', state: 'not-a-state-we-issued' });
      expect(replayed.statusCode).toBe(400);
      const refused = (await audit('action=user.oauth_login')).filter((entry) => entry.outcome !== 'success');
      expect(refused.at(0)).toMatchObject({ outcome: replayed.json<{ error: { code: string } }>().error.code, resource: { id: null } });

      const scratch = { client_id: 'scratch-client', client_secret: 'scratch-secret', issuer: oidc.issuer, redirect_uris: [APP] };
      expect((await put('scratch', scratch)).statusCode).toBe(200);
      expect((await call({ method: 'DELETE', url: '/v1/auth/providers/scratch', headers: ctx().auth })).statusCode).toBe(200);
      expect(await audit('action=oauth_provider.delete&resource_id=scratch')).toHaveLength(1);
    });

    it('signs in through the google and apple stand-ins (form_post, ES256 client secret)', async () => {
      oidc.accounts.set('grace', { email: 'grace@example.com', email_verified: true });
      const viaGoogle = await signInWith('google', 'grace');
      expect(viaGoogle.json()).toMatchObject({ created: true, user: { email: 'grace@example.com', email_verified: true } });

      oidc.accounts.set('apple-user', { email: 'relay@privaterelay.example.com', email_verified: true });
      const received = apple.received.length;
      const viaApple = await signInWith('apple', 'apple-user');
      expect(viaApple.json()).toMatchObject({ created: true, user: { email: 'relay@privaterelay.example.com' } });
      const secret = apple.received[received];
      expect(secret).not.toBe('invalid');
      if (secret === undefined || secret === 'invalid') throw new Error('the Apple stand-in got no valid client secret');
      expect(secret.header).toMatchObject({ alg: 'ES256', kid: 'KEY1234567' });
      expect(secret.claims).toMatchObject({ iss: 'TEAM123456', sub: apple.clientId, aud: oidc.issuer });
      expect(Number(secret.claims['exp']) - Number(secret.claims['iat'])).toBeLessThanOrEqual(300);
    });

    it('refuses a replayed state, and a state of another provider', async () => {
      oidc.accounts.set('lin', { email: 'lin@example.com', email_verified: true });
      const started = await start('corp');
      const landing = await signInAtProvider(certificate, started.json<{ url: string }>().url, 'lin');
      if (landing.kind !== 'redirect') throw new Error('expected a redirect');
      const params = Object.fromEntries(landing.url.searchParams);
      expectError(await finish('google', { code: params['code'], state: params['state'] }), 400, 'oauth_state_invalid');
      expect((await finish('corp', { code: params['code'], state: params['state'], iss: params['iss'] })).statusCode).toBe(200);
      expectError(await finish('corp', { code: params['code'], state: params['state'] }), 400, 'oauth_state_invalid');
      expectError(await finish('corp', { code: 'x', state: 'never-issued-state-value' }), 400, 'oauth_state_invalid');
    });

    it('refuses a state older than 10 minutes', async () => {
      const { state } = (await start('corp')).json<{ state: string }>();
      clock.advance(10 * 60 * 1000);
      expectError(await finish('corp', { code: 'whatever', state }), 400, 'oauth_state_invalid');
    });

    it('links to a verified user only on a verified email; never on an unverified one (docs/adr/0014-identity-linking.md)', async () => {
      // The victim has a verified address; the attacker's provider account claims it, unverified.
      const victim = await signup(call, ctx().secretKey, { email: 'victim@example.com' });
      await ctx()
        .service.db.kysely.updateTable('users')
        .set({ email_verified_at: clock.now().toISOString() })
        .where('id', '=', victim.userId)
        .execute();
      oidc.accounts.set('mallory', { email: 'victim@example.com', email_verified: false });
      expectError(await signInWith('corp', 'mallory'), 409, 'email_taken');
      const victimView = await call({ method: 'GET', url: `/v1/users/${victim.userId}`, headers: ctx().auth });
      expect(victimView.json<{ identities: unknown[] }>().identities).toEqual([]);

      // An unverified user is claimed by the provider account that proves the address (its
      // password goes; identity-linking.test.ts covers the claim in full).
      const squatter = await signup(call, ctx().secretKey, { email: 'squatter@example.com' });
      oidc.accounts.set('owner', { email: 'squatter@example.com', email_verified: true });
      expect((await signInWith('corp', 'owner')).json()).toMatchObject({ created: false, user: { id: squatter.userId } });

      // The real owner, verified at the provider, is linked and signed in.
      oidc.accounts.set('victim-real', { email: 'victim@example.com', email_verified: true });
      const linked = await signInWith('corp', 'victim-real');
      expect(linked.json()).toMatchObject({ created: false, user: { id: victim.userId } });
    });

    it('refuses a banned user like log in does', async () => {
      oidc.accounts.set('banned', { email: 'banned@example.com', email_verified: true });
      const userId = (await signInWith('corp', 'banned')).json<{ user: { id: string } }>().user.id;
      expect((await post(`/v1/users/${userId}/ban`, {})).statusCode).toBe(200);
      expectError(await signInWith('corp', 'banned'), 403, 'user_banned');
    });

    it('unlinks an identity only while the user keeps another way to sign in', async () => {
      oidc.accounts.set('solo', { email: 'solo@example.com', email_verified: true });
      const userId = (await signInWith('corp', 'solo')).json<{ user: { id: string } }>().user.id;
      const unlink = (provider: string) =>
        call({ method: 'DELETE', url: `/v1/users/${userId}/identities/${provider}`, headers: ctx().auth });
      expectError(await unlink('corp'), 409, 'identity_last_sign_in_method');
      expectError(await unlink('github'), 404, 'resource_missing');
      const viaGoogle = await signInWith('google', 'solo');
      expect(viaGoogle.json()).toMatchObject({ created: false, user: { id: userId } });
      const unlinked = await unlink('corp');
      expect(unlinked.statusCode).toBe(200);
      expect(unlinked.json<{ identities: Array<{ provider: string }> }>().identities.map((item) => item.provider)).toEqual(['google']);
      expectError(await unlink('google'), 409, 'identity_last_sign_in_method');
    });

    it('records one audit entry per unlink: the key, the user and the provider; a refusal with its error code', async () => {
      const audit = auditReader(ctx().service, ctx().secretKey);
      const [key] = await ctx().service.projects.listKeys(ctx().projectId);
      const actor = { type: 'secret_key', id: key!.id };
      /** The one entry a request left, with what every unlink entry carries. */
      async function onlyEntry(response: LightMyRequestResponse, outcome: string): Promise<void> {
        const entries = await audit.of(response);
        expect(entries, `entries of ${response.headers['request-id'] as string}`).toHaveLength(1);
        expect(entries[0]).toMatchObject({
          object: 'audit_log',
          action: 'user.identity_unlink',
          actor,
          resource: { type: 'user', id: userId },
          outcome,
          changes: { provider: 'corp' },
          request_id: response.headers['request-id'],
          ip: '127.0.0.1',
          user_agent: 'lightMyRequest',
        });
        expect(Object.keys(entries[0]!.changes)).toEqual(['provider']);
      }

      oidc.accounts.set('audited-unlink', { email: 'audited-unlink@example.com', email_verified: true });
      const userId = (await signInWith('corp', 'audited-unlink')).json<{ user: { id: string } }>().user.id;
      const unlink = (provider: string) =>
        call({ method: 'DELETE', url: `/v1/users/${userId}/identities/${provider}`, headers: ctx().auth });

      const lastWay = await unlink('corp');
      expectError(lastWay, 409, 'identity_last_sign_in_method');
      await onlyEntry(lastWay, 'identity_last_sign_in_method');

      expect((await signInWith('google', 'audited-unlink')).json()).toMatchObject({ created: false, user: { id: userId } });
      const unlinked = await unlink('corp');
      expect(unlinked.statusCode).toBe(200);
      await onlyEntry(unlinked, 'success');

      const missing = await unlink('corp');
      expectError(missing, 404, 'resource_missing');
      await onlyEntry(missing, 'resource_missing');

      const all = await audit.all({ action: 'user.identity_unlink', resource_id: userId });
      expect(all.map((entry) => entry.outcome).sort()).toEqual(['identity_last_sign_in_method', 'resource_missing', 'success']);
      // The provider's subject and the client secrets never reach the log.
      expect(JSON.stringify(all)).not.toMatch(/audited-unlink|generic-secret|google-secret/);
    });
  });

  describe('callback refusals (scripted provider)', () => {
    async function startScripted(): Promise<{ state: string; nonce: string }> {
      const url = new URL((await start('scripted')).json<{ url: string }>().url);
      return { state: url.searchParams.get('state') ?? '', nonce: url.searchParams.get('nonce') ?? '' };
    }
    function idToken(claims: Record<string, unknown>, key = scripted.key) {
      const now = Math.floor(clock.now().getTime() / 1000);
      return signJwt(
        {
          iss: scripted.issuer,
          aud: 'scripted-client',
          sub: 'sc-1',
          iat: now,
          exp: now + 300,
          email: 'sc@example.com',
          email_verified: true,
          ...claims,
        },
        key,
        { kid: scripted.kid },
      );
    }
    function answerWith(token: string) {
      scripted.answer = ({ params }) => {
        expect(params.get('code_verifier')).toMatch(/^[\w-]{43}$/);
        expect(params.get('client_secret')).toBe('scripted-secret');
        return { status: 200, body: { access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: token } };
      };
    }

    it('accepts a good ID token', async () => {
      const { state, nonce } = await startScripted();
      answerWith(idToken({ nonce }));
      expect((await finish('scripted', { code: 'c', state })).json()).toMatchObject({ user: { email: 'sc@example.com' } });
    });

    it("records the end user's X-End-User-IP and X-End-User-Agent on the callback's session", async () => {
      const { state, nonce } = await startScripted();
      answerWith(idToken({ nonce }));
      const response = await call({
        method: 'POST',
        url: '/v1/auth/oauth/scripted/callback',
        headers: { ...ctx().auth, 'x-end-user-ip': '198.51.100.23', 'x-end-user-agent': 'Firefox/140' },
        payload: { code: 'c', state },
      });
      expect(response.statusCode).toBe(200);
      const { user, session } = response.json<{ user: { id: string }; session: { id: string } }>();
      const sessions = await call({ method: 'GET', url: `/v1/users/${user.id}/sessions`, headers: ctx().auth });
      const name = session.id.slice(0, session.id.indexOf('.'));
      expect(sessions.json<{ data: Array<{ id: string }> }>().data.find((row) => row.id === name)).toMatchObject({
        ip: '198.51.100.23',
        user_agent: 'Firefox/140',
      });
    });

    it('refuses a wrong nonce, an expired token, a wrong signature, a wrong audience', async () => {
      const otherKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
      const now = Math.floor(clock.now().getTime() / 1000);
      const cases: Array<(nonce: string) => string> = [
        () => idToken({ nonce: 'not-the-nonce' }),
        (nonce) => idToken({ nonce, iat: now - 3600, exp: now - 600 }),
        (nonce) => idToken({ nonce }, otherKey),
        (nonce) => idToken({ nonce, aud: 'someone-else' }),
      ];
      for (const make of cases) {
        const { state, nonce } = await startScripted();
        answerWith(make(nonce));
        const error = expectError(await finish('scripted', { code: 'c', state }), 400, 'oauth_exchange_failed');
        expect(error.message).not.toContain('scripted-secret');
      }
    });

    it("names the provider's error code, and says when the provider is down", async () => {
      const { state } = await startScripted();
      scripted.answer = () => ({ status: 400, body: { error: 'invalid_grant', error_description: 'code expired' } });
      expect(expectError(await finish('scripted', { code: 'c', state }), 400, 'oauth_exchange_failed').message).toContain('invalid_grant');

      // A provider that no longer answers: the generic one points at a closed port.
      const down = await startScriptedProvider(certificate);
      await put('flaky', { client_id: 'f', client_secret: 'f-secret', issuer: down.issuer, redirect_uris: [APP] });
      const started = await start('flaky');
      expect(started.statusCode).toBe(200);
      await down.close();
      const refused = expectError(
        await finish('flaky', { code: 'c', state: started.json<{ state: string }>().state }),
        400,
        'oauth_exchange_failed',
      );
      expect(refused.message).toContain('could not be reached');
    });
  });

  describe('GitHub', () => {
    it('signs in with PKCE and the verified primary email; refuses to link on an unverified one', async () => {
      github.user = { id: 4242, login: 'hubber', name: 'Hub Ber' };
      github.emails = [
        { email: 'old@example.com', primary: false, verified: false },
        { email: 'hubber@example.com', primary: true, verified: true },
      ];
      const { state } = (await start('github')).json<{ state: string }>();
      const signedIn = await finish('github', { code: 'gh-code', state });
      expect(signedIn.json()).toMatchObject({
        created: true,
        user: { email: 'hubber@example.com', email_verified: true, name: 'Hub Ber' },
      });
      const tokenRequest = github.tokenRequests.at(-1);
      expect(tokenRequest?.get('code_verifier')).toMatch(/^[\w-]{43}$/);
      expect(tokenRequest?.get('redirect_uri')).toBe(APP);
      const userId = signedIn.json<{ user: { id: string } }>().user.id;
      const view = await call({ method: 'GET', url: `/v1/users/${userId}`, headers: ctx().auth });
      expect(view.json<{ identities: unknown[] }>().identities).toEqual([expect.objectContaining({ provider: 'github', subject: '4242' })]);

      // Another GitHub account whose only address is the same one, unverified: no link.
      github.user = { id: 777, login: 'mallory', name: null };
      github.emails = [{ email: 'hubber@example.com', primary: true, verified: false }];
      const takeover = (await start('github')).json<{ state: string }>();
      expectError(await finish('github', { code: 'gh-code-2', state: takeover.state }), 409, 'email_taken');
    });

    it("names GitHub's error code", async () => {
      github.tokenError = 'bad_verification_code';
      try {
        const { state } = (await start('github')).json<{ state: string }>();
        expect(expectError(await finish('github', { code: 'stale', state }), 400, 'oauth_exchange_failed').message).toContain(
          'bad_verification_code',
        );
      } finally {
        github.tokenError = undefined;
      }
    });
  });
});
