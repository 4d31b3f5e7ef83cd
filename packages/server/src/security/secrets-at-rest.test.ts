import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../db/database.js';
import { runEmailJob, strongPassword, uniqueEmail } from '../modules/auth/auth.testing.js';
import { canonicalJson, sha256Hex } from '../lib/crypto.js';
import type { DnsLookup } from '../lib/outbound-http.js';
import { timeStep, totpCode } from '../modules/mfa/totp.js';
import { describeEachDialect } from '../test/database.js';
import { signInAtProvider, useOidcProvider } from '../test/oauth-providers.js';
import { useTestService } from '../test/service.js';
import { SoftwareAuthenticator } from '../test/software-authenticator.js';
import {
  configureRelyingParty,
  type CreationOptions,
  ORIGIN,
  passkeyClient,
  type RequestOptions,
} from '../modules/passkeys/passkeys.testing.js';
import { tokenIn } from '../test/smtp.js';

/**
 * No credential is ever stored or logged in clear (docs/adr/0015-secrets-at-rest.md).
 *
 * Bugs guarded: the idempotency store kept every response in clear for 24 hours (a new secret key,
 * `whsec_` secrets), webhook secrets sat in clear in `webhook_endpoints`, and the request
 * fingerprint would have kept an unsalted SHA-256 of a password. Every route that issues a
 * credential is called here with an Idempotency-Key and replayed; then every table, every file under
 * DATA_DIR but the development outbox, and the whole debug log are searched for each secret and
 * its secret part. A route added later that stores a credential in clear fails this test.
 */

const PUBLIC_URL = 'https://svc.secrets.test';
const APP = 'https://app.example.com/callback';
const OIDC_CALLBACK = `${PUBLIC_URL}/v1/auth/sso/oidc/callback`;
const OAUTH_CLIENT_SECRET = `oauth-secret-${randomBytes(12).toString('hex')}`;
const SSO_CLIENT_SECRET = `sso-secret-${randomBytes(12).toString('hex')}`;

/** Every webhook host resolves to a public address (the URL check resolves it; nothing is sent here). */
const publicAddress: DnsLookup = () => Promise.resolve([{ address: '93.184.215.14', family: 4 }]);

const provider = useOidcProvider({
  clients: [
    { client_id: 'oauth-client', client_secret: OAUTH_CLIENT_SECRET, redirect_uris: [APP] },
    { client_id: 'sso-client', client_secret: SSO_CLIENT_SECRET, redirect_uris: [OIDC_CALLBACK] },
  ],
});
const env: Record<string, string> = { OAUTH_ALLOW_PRIVATE: '1', PUBLIC_URL, LOG_LEVEL: 'debug' };
const oauthOptions = provider.oauthOptions;

beforeAll(() => {
  provider.oidc.accounts.set('olga', { email: 'olga@oauth.example', email_verified: true, name: 'Olga' });
  provider.oidc.accounts.set('sam', { email: 'sam@sso.example', email_verified: true, name: 'Sam' });
});

describeEachDialect('secrets at rest', (dialect) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-secrets-at-rest-'));
  const logLines: string[] = [];
  // Debug level and no redaction: a credential must not reach the log in the first place.
  const logger = pino({ level: 'debug' }, { write: (line: string) => logLines.push(line) });
  const ctx = useTestService(dialect, {
    // On SQLite the database file sits in DATA_DIR too, so its raw pages are searched as well.
    env: { ...env, DATA_DIR: dataDir, ...(dialect === 'sqlite' ? { DATABASE_URL: `sqlite:${join(dataDir, 'svc.sqlite')}` } : {}) },
    serviceOptions: { logger, oauth: oauthOptions, webhooks: { lookup: publicAddress } },
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  /** Each secret issued or configured, with its secret parts: what must appear nowhere. */
  const secrets = new Map<string, string>();
  const keep = (label: string, value: string | undefined) => {
    expect(value, label).toBeTruthy();
    secrets.set(value ?? '', label);
  };
  let keyNumber = 0;

  /** Sends with a fresh Idempotency-Key, replays with it, and checks the replay is byte for byte the same. */
  async function postTwice(url: string, payload: object, headers: Record<string, string> = ctx().auth): Promise<LightMyRequestResponse> {
    keyNumber += 1;
    const request: InjectOptions = { method: 'POST', url, headers: { ...headers, 'idempotency-key': `scan-${keyNumber}` }, payload };
    const first = await ctx().service.app.inject(request);
    expect(first.statusCode, `${url}: ${first.body}`).toBeLessThan(300);
    const replay = await ctx().service.app.inject(request);
    expect({ url, status: replay.statusCode, replayed: replay.headers['idempotent-replayed'] }).toEqual({
      url,
      status: first.statusCode,
      replayed: 'true',
    });
    expect(replay.body, url).toBe(first.body);
    return first;
  }

  function keepSession(label: string, token: string, refreshToken: string | undefined): void {
    keep(`${label} session token`, token);
    keep(`${label} session secret`, token.split('.')[1]);
    if (refreshToken !== undefined) keep(`${label} refresh token`, refreshToken);
  }

  async function outboxTokens(): Promise<string[]> {
    await runEmailJob(ctx().service);
    const outbox = join(dataDir, 'outbox');
    // Security notices (a password reset's) carry no token: nothing to take from them.
    const texts = readdirSync(outbox).map((file) => readFileSync(join(outbox, file), 'utf8'));
    return texts.filter((text) => !text.includes('Security notice')).map(tokenIn);
  }

  it('issues every kind of credential with an Idempotency-Key, and stores or logs none of them in clear', async () => {
    const { service } = ctx();
    keep('the project secret key', ctx().secretKey);

    // A secret key.
    const created = (await postTwice('/v1/api-keys', { name: 'scan' })).json<{ secret_key: string }>();
    keep('a new secret key', created.secret_key);
    keep('a new secret key, random part', created.secret_key.slice('svc_sk_'.length));

    // Sign-up, log in (both shapes), refresh. The password and its plain SHA-256 (what a request
    // fingerprint would hold) must not be stored either.
    const email = uniqueEmail('scan');
    const password = strongPassword('scan');
    keep('the password', password);
    keep("the password's unsalted SHA-256", sha256Hex(canonicalJson(password)));
    const signedUp = (await postTwice('/v1/auth/signup', { email, password, name: 'Scan' })).json<{
      session: { id: string; refresh_token: string };
    }>();
    keepSession('sign-up', signedUp.session.id, signedUp.session.refresh_token);
    const shapeA = (await postTwice('/v1/auth/login', { email, password })).json<{ session: { id: string; refresh_token: string } }>();
    keepSession('log in (shape A)', shapeA.session.id, shapeA.session.refresh_token);
    const shapeB = (await postTwice('/v1/auth/login?format=token', { email, password })).json<{ session: string; refresh_token: string }>();
    keepSession('log in (shape B)', shapeB.session, shapeB.refresh_token);
    const refreshed = (await postTwice('/v1/sessions/refresh', { refresh_token: shapeA.session.refresh_token })).json<{
      session: { id: string; refresh_token: string };
    }>();
    keepSession('refresh', refreshed.session.id, refreshed.session.refresh_token);

    // Email tokens: verification (sent at sign-up) and reset, then used with a key.
    await postTwice('/v1/auth/password/forgot', { email });
    const [firstToken, secondToken] = await outboxTokens();
    keep('the verification token', firstToken);
    keep('the reset token', secondToken);
    const newPassword = strongPassword('scan-new');
    keep('the new password', newPassword);
    keep("the new password's unsalted SHA-256", sha256Hex(canonicalJson(newPassword)));
    // Which email is which does not matter here: each token is used on its route, and one of them
    // answers 400 token_invalid, which is kept for replay like any refusal.
    for (const token of [firstToken, secondToken]) {
      const bearer = { ...ctx().auth };
      const verify = await service.app.inject({ method: 'POST', url: '/v1/auth/verify-email', headers: bearer, payload: { token } });
      if (verify.statusCode !== 200) {
        await postTwice('/v1/auth/password/reset', { token, password: newPassword });
      }
    }

    // An invitation token, accepted by the session of the invited user.
    const organization = (await postTwice('/v1/organizations', { name: 'Scan corp' })).json<{ id: string }>();
    await postTwice(`/v1/organizations/${organization.id}/invitations`, { email, role: 'member' });
    const tokens = await outboxTokens();
    const invitationToken = tokens.find((token) => token !== firstToken && token !== secondToken);
    keep('the invitation token', invitationToken);
    const loggedIn = (await postTwice('/v1/auth/login', { email, password: newPassword })).json<{
      session: { id: string; refresh_token: string };
    }>();
    keepSession('log in after reset', loggedIn.session.id, loggedIn.session.refresh_token);
    await postTwice('/v1/invitations/accept', { token: invitationToken }, { authorization: `Bearer ${loggedIn.session.id}` });

    // Webhook endpoints: creation and secret rotation.
    const endpoint = (await postTwice('/v1/webhooks', { url: 'https://hooks.example.com/scan', events: ['*'] })).json<{
      id: string;
      secret: string;
    }>();
    keep('a webhook secret', endpoint.secret);
    keep('a webhook secret, key part', endpoint.secret.slice('whsec_'.length));
    const rotated = (await postTwice(`/v1/webhooks/${endpoint.id}/rotate-secret`, {})).json<{ secret: string }>();
    keep('a rotated webhook secret', rotated.secret);
    keep('a rotated webhook secret, key part', rotated.secret.slice('whsec_'.length));

    // OAuth at a real OpenID provider: the configured client secret, the state, the session.
    keep('the OAuth client secret', OAUTH_CLIENT_SECRET);
    expect(
      (
        await service.app.inject({
          method: 'PUT',
          url: '/v1/auth/providers/corp',
          headers: ctx().auth,
          payload: { client_id: 'oauth-client', client_secret: OAUTH_CLIENT_SECRET, issuer: provider.oidc.issuer, redirect_uris: [APP] },
        })
      ).statusCode,
    ).toBe(200);
    const started = (await postTwice('/v1/auth/oauth/corp', { redirect_uri: APP })).json<{ url: string; state: string }>();
    keep('the OAuth state', started.state);
    const landing = await signInAtProvider(provider.certificate, started.url, 'olga');
    if (landing.kind !== 'redirect') throw new Error('expected a redirect back from the provider');
    const oauthSession = (
      await postTwice('/v1/auth/oauth/corp/callback', {
        code: landing.url.searchParams.get('code'),
        state: landing.url.searchParams.get('state'),
        ...(landing.url.searchParams.get('iss') === null ? {} : { iss: landing.url.searchParams.get('iss') }),
      })
    ).json<{ session: { id: string; refresh_token: string } }>();
    keepSession('OAuth', oauthSession.session.id, oauthSession.session.refresh_token);

    // SSO through an OIDC connection: the client secret, the service's one-time code, the session.
    keep('the SSO client secret', SSO_CLIENT_SECRET);
    const ssoOrganization = (await postTwice('/v1/organizations', { name: 'SSO corp' })).json<{ id: string }>();
    await postTwice(`/v1/organizations/${ssoOrganization.id}/domains`, { domain: 'sso.example', verification: 'manual' });
    await postTwice(`/v1/organizations/${ssoOrganization.id}/sso-connections`, {
      type: 'oidc',
      domains: ['sso.example'],
      redirect_uris: [APP],
      oidc: { issuer: provider.oidc.issuer, client_id: 'sso-client', client_secret: SSO_CLIENT_SECRET },
    });
    const ssoStart = (await postTwice('/v1/auth/sso', { email: 'sam@sso.example', redirect_uri: APP })).json<{ url: string }>();
    const back = await signInAtProvider(provider.certificate, ssoStart.url, 'sam');
    if (back.kind !== 'redirect') throw new Error('expected a redirect back from the identity provider');
    const redirected = await service.app.inject({ method: 'GET', url: `${back.url.pathname}${back.url.search}` });
    expect(redirected.statusCode, redirected.body).toBe(303);
    const ssoCode = new URL(String(redirected.headers.location)).searchParams.get('code') ?? '';
    keep('the SSO one-time code', ssoCode);
    const ssoSession = (await postTwice('/v1/auth/sso/callback', { code: ssoCode })).json<{
      session: { id: string; refresh_token: string };
    }>();
    keepSession('SSO', ssoSession.session.id, ssoSession.session.refresh_token);

    // Passkeys: the challenges of both ceremonies are stored only as hashes; the session is a credential.
    // (The credential id and public key are not secrets: an authenticator hands both to anyone.)
    const passkeys = passkeyClient(service, ctx().secretKey);
    await configureRelyingParty(passkeys);
    const authenticator = new SoftwareAuthenticator({ origin: ORIGIN });
    const passkeyUser = { authorization: `Bearer ${loggedIn.session.id}` };
    const creation = (await postTwice('/v1/users/me/passkeys/options', {}, passkeyUser)).json<CreationOptions>();
    keep('the registration challenge', creation.challenge);
    const credential = authenticator.register(creation);
    await postTwice('/v1/users/me/passkeys', { response: credential }, passkeyUser);
    const request = (await postTwice('/v1/auth/passkey/options', {})).json<RequestOptions & { challenge_id: string }>();
    keep('the sign-in challenge', request.challenge);
    const passkeySession = (
      await postTwice('/v1/auth/passkey', {
        challenge_id: request.challenge_id,
        response: authenticator.authenticate(request, credential.id),
      })
    ).json<{ session: { id: string; refresh_token: string } }>();
    keepSession('passkey sign-in', passkeySession.session.id, passkeySession.session.refresh_token);
    // Second factors: the TOTP secret (sealed), the recovery codes and the MFA token (hashed).
    const asUser = { authorization: `Bearer ${loggedIn.session.id}` };
    const enrolled = (await postTwice('/v1/users/me/mfa/totp', {}, asUser)).json<{ secret: string; otpauth_url: string }>();
    keep('the TOTP secret', enrolled.secret);
    const activated = (
      await postTwice('/v1/users/me/mfa/totp/verify', { code: totpCode(enrolled.secret, timeStep(new Date())) }, asUser)
    ).json<{
      recovery_codes: string[];
    }>();
    for (const [index, code] of activated.recovery_codes.entries()) {
      keep(`recovery code ${index + 1}`, code);
      keep(`recovery code ${index + 1} without its dash`, code.replace('-', ''));
    }
    const challenge = (await postTwice('/v1/auth/login', { email, password: newPassword })).json<{ mfa_token: string }>();
    keep('the MFA token', challenge.mfa_token);
    keep('the MFA token, random part', challenge.mfa_token.slice('svc_mfa_'.length));
    const afterFactor = (
      await postTwice('/v1/auth/mfa/verify', { mfa_token: challenge.mfa_token, recovery_code: activated.recovery_codes[0] })
    ).json<{
      session: { id: string; refresh_token: string };
    }>();
    keepSession('MFA verify', afterFactor.session.id, afterFactor.session.refresh_token);

    // An emailed sign-in code: six digits, so it is looked for as a number of its own (not inside a longer one).
    await postTwice('/v1/auth/email-code', { email });
    await runEmailJob(service);
    const outbox = join(dataDir, 'outbox');
    const codeEmail = readdirSync(outbox)
      .map((file) => readFileSync(join(outbox, file), 'utf8'))
      .find((text) => text.includes('Your sign-in code'));
    const emailCode = /^(\d{6})\r?$/m.exec(codeEmail ?? '')?.[1];
    expect(emailCode).toBeDefined();

    const places: { place: string; text: string }[] = [
      ...(await everyRow(service.db)),
      ...everyFile(dataDir),
      { place: 'the log', text: logLines.join('') },
    ];
    expect(logLines.length).toBeGreaterThan(0);
    const found: string[] = [];
    for (const [secret, label] of secrets) {
      for (const { place, text } of places) if (text.includes(secret)) found.push(`${label} in ${place}`);
    }
    const emailCodeAlone = new RegExp(`(?<!\\d)${emailCode ?? ''}(?!\\d)`);
    for (const { place, text } of places) if (emailCodeAlone.test(text)) found.push(`the emailed code in ${place}`);
    expect(found).toEqual([]);
  });
});

/** Every row of every table, each value as text. */
async function everyRow(db: Db): Promise<{ place: string; text: string }[]> {
  const tables =
    db.dialect === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db.kysely)).rows.map((row) => row.name)
      : (
          await sql<{ name: string }>`select table_name as name from information_schema.tables
            where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db.kysely)
        ).rows.map((row) => row.name);
  expect(tables).toContain('idempotency_keys');
  const places: { place: string; text: string }[] = [];
  for (const table of tables) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db.kysely);
    places.push({
      place: `table ${table}`,
      text: rows
        .map((row) => JSON.stringify(row, (_name, value: unknown) => (typeof value === 'bigint' ? String(value) : value)))
        .join('\n'),
    });
  }
  return places;
}

/** Every file under DATA_DIR but the development outbox (where emails, and their tokens, go by design). */
function everyFile(root: string): { place: string; text: string }[] {
  const files: { place: string; text: string }[] = [];
  const walk = (directory: string) => {
    for (const name of readdirSync(directory)) {
      const path = join(directory, name);
      if (path === join(root, 'outbox')) continue;
      if (statSync(path).isDirectory()) walk(path);
      else files.push({ place: `file ${relative(root, path)}`, text: readFileSync(path).toString('latin1') });
    }
  };
  walk(root);
  return files;
}
