import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { type Bend, SoftwareAuthenticator } from '../../test/software-authenticator.js';
import { auditReader } from '../audit/audit.testing.js';
import { eventsOf, type SignedUp, signup, testClock } from '../auth/auth.testing.js';
import { errorCode } from '../wallets/wallets.fixtures.js';
import { configureRelyingParty, ORIGIN, type PasskeyClient, passkeyClient, registerPasskey, signInOptions } from './passkeys.testing.js';

/** Signing in with a passkey, and every refusal of it (docs/api.md, "Passkeys"). */
describeEachDialect('passkeys: sign-in', (dialect) => {
  const clock = testClock();
  const current = useTestService(dialect, { serviceOptions: { clock } });
  let client: PasskeyClient;

  beforeAll(async () => {
    client = passkeyClient(current().service, current().secretKey);
    await configureRelyingParty(client);
  });

  const newUser = () => signup((options) => current().service.app.inject(options), current().secretKey);

  /** A user with one passkey on a fresh authenticator. */
  async function userWithPasskey(options: { counterStep?: number } = {}) {
    const user = await newUser();
    const authenticator = new SoftwareAuthenticator({ origin: ORIGIN, ...options });
    const passkey = await registerPasskey(client, user.token, authenticator);
    return { user, authenticator, passkey };
  }

  async function signIn(
    setup: { authenticator: SoftwareAuthenticator; passkey: { credentialId: string } },
    options: { email?: string; bend?: Bend & { signCount?: number }; query?: string; via?: PasskeyClient } = {},
  ) {
    const via = options.via ?? client;
    const requestOptions = await signInOptions(via, options.email);
    const response = setup.authenticator.authenticate(requestOptions, setup.passkey.credentialId, options.bend);
    return via.call('POST', `/v1/auth/passkey${options.query ?? ''}`, { challenge_id: requestOptions.challenge_id, response });
  }

  describe('success', () => {
    it('signs in with a discoverable passkey: shape A, a valid session, the event and the audit entry', async () => {
      const setup = await userWithPasskey();
      const options = await signInOptions(client);
      expect(options).toMatchObject({ rpId: 'example.com', userVerification: 'required', allowCredentials: [], timeout: 300_000 });
      expect(options.challenge_id).toMatch(/^pkc_/);
      const assertion = setup.authenticator.authenticate(options, setup.passkey.credentialId);
      const response = await client.call('POST', '/v1/auth/passkey', { challenge_id: options.challenge_id, response: assertion });
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json<{
        user: { id: string };
        session: { id: string; refresh_token: string; expires_at: string; refresh_expires_at: string };
      }>();
      expect(body.user.id).toBe(setup.user.userId);
      expect(Object.keys(body.session).sort()).toEqual(['expires_at', 'id', 'jwt', 'refresh_expires_at', 'refresh_token']);
      const validated = await client.call('POST', '/v1/sessions/validate', { session_id: body.session.id });
      expect(validated.json()).toMatchObject({ valid: true, user: { id: setup.user.userId } });
      const created = await eventsOf(current().service, current().projectId, 'session.created');
      expect(created.map((event) => event['session_id'])).toContain(body.session.id.split('.')[0]);
      const audit = await auditReader(current().service, current().secretKey).of(response);
      expect(audit).toEqual([
        expect.objectContaining({ action: 'user.passkey_login', outcome: 'success', resource: { type: 'user', id: setup.user.userId } }),
      ]);
      const listed = await client.call('GET', `/v1/users/${setup.user.userId}/passkeys`);
      expect(listed.json<{ data: { last_used_at: string | null }[] }>().data[0]?.last_used_at).not.toBeNull();
    });

    it('answers shape B with ?format=token, as log in does', async () => {
      const setup = await userWithPasskey();
      const response = await signIn(setup, { query: '?format=token' });
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json<Record<string, unknown>>();
      expect(Object.keys(body).sort()).toEqual(['expires_at', 'jwt', 'refresh_token', 'session', 'user']);
      expect(body['user']).toEqual({ id: setup.user.userId, email: setup.user.email });
      expect(String(body['session'])).toMatch(/^svc_ses_/);
    });

    it("with an email, lists none of that user's passkeys (they are discoverable) and signs them in", async () => {
      const setup = await userWithPasskey();
      const options = await signInOptions(client, setup.user.email.toUpperCase());
      expect(options.allowCredentials).toEqual([]);
      const response = await signIn(setup, { email: setup.user.email });
      expect(response.statusCode, response.body).toBe(200);
    });

    it('answers the same shape for a known and an unknown email, naming no credential (no enumeration)', async () => {
      const setup = await userWithPasskey();
      await registerPasskey(client, setup.user.token, new SoftwareAuthenticator({ origin: ORIGIN }));
      const shape = (options: object) =>
        Object.fromEntries(
          Object.entries(options).map(([key, value]) => [key, key === 'challenge' || key === 'challenge_id' ? typeof value : value]),
        );
      const known = await signInOptions(client, setup.user.email);
      const unknown = await signInOptions(client, 'nobody.at.all@example.com');
      expect(shape(known)).toEqual(shape(unknown));
      expect(known.allowCredentials).toEqual([]);
      expect(JSON.stringify(known)).not.toContain(setup.passkey.credentialId);
    });

    it('accepts authenticators that keep no counter (always 0), sign-in after sign-in', async () => {
      const setup = await userWithPasskey({ counterStep: 0 });
      for (let attempt = 0; attempt < 2; attempt += 1) expect((await signIn(setup)).statusCode).toBe(200);
    });
  });

  describe('refusals', () => {
    async function expectRefused(response: Awaited<ReturnType<typeof signIn>>, code: string, status: number) {
      expect({ code: errorCode(response), status: response.statusCode }, response.body).toEqual({ code, status });
      expect(response.json<{ session?: unknown }>().session).toBeUndefined();
    }

    it('refuses an assertion from an origin not in the relying party', async () => {
      const setup = await userWithPasskey();
      await expectRefused(await signIn(setup, { bend: { origin: 'https://evil.example.net' } }), 'passkey_invalid', 401);
    });

    it('refuses an assertion made for another rp_id', async () => {
      const setup = await userWithPasskey();
      await expectRefused(await signIn(setup, { bend: { rpId: 'evil.example.net' } }), 'passkey_invalid', 401);
    });

    it('refuses an assertion without user verification', async () => {
      const setup = await userWithPasskey();
      await expectRefused(await signIn(setup, { bend: { userVerified: false } }), 'passkey_invalid', 401);
    });

    it('refuses a replayed assertion: the challenge is single use', async () => {
      const setup = await userWithPasskey();
      const options = await signInOptions(client);
      const payload = {
        challenge_id: options.challenge_id,
        response: setup.authenticator.authenticate(options, setup.passkey.credentialId),
      };
      expect((await client.call('POST', '/v1/auth/passkey', payload)).statusCode).toBe(200);
      await expectRefused(await client.call('POST', '/v1/auth/passkey', payload), 'passkey_challenge_invalid', 400);
    });

    it('refuses an expired challenge (5 minutes)', async () => {
      const setup = await userWithPasskey();
      const options = await signInOptions(client);
      const response = setup.authenticator.authenticate(options, setup.passkey.credentialId);
      clock.advance(5 * 60 * 1000 + 1);
      await expectRefused(
        await client.call('POST', '/v1/auth/passkey', { challenge_id: options.challenge_id, response }),
        'passkey_challenge_expired',
        400,
      );
    });

    it('refuses an assertion that answers another challenge than challenge_id names', async () => {
      const setup = await userWithPasskey();
      const named = await signInOptions(client);
      const other = await signInOptions(client);
      const response = setup.authenticator.authenticate(other, setup.passkey.credentialId);
      await expectRefused(
        await client.call('POST', '/v1/auth/passkey', { challenge_id: named.challenge_id, response }),
        'passkey_challenge_invalid',
        400,
      );
    });

    it('refuses an unknown credential', async () => {
      const stranger = new SoftwareAuthenticator({ origin: ORIGIN });
      const credential = stranger.register({ challenge: 'AAAA', rp: { id: 'example.com', name: 'x' }, user: { id: 'dXNyX3g', name: 'x' } });
      await expectRefused(await signIn({ authenticator: stranger, passkey: { credentialId: credential.id } }), 'passkey_invalid', 401);
    });

    it('refuses a removed passkey', async () => {
      const setup = await userWithPasskey();
      expect((await client.call('DELETE', `/v1/users/me/passkeys/${setup.passkey.id}`, undefined, setup.user.token)).statusCode).toBe(200);
      await expectRefused(await signIn(setup), 'passkey_invalid', 401);
    });

    it("refuses another user's passkey when the options named an email, and any passkey for an email of no user", async () => {
      const setup = await userWithPasskey();
      const other: SignedUp = await newUser();
      await expectRefused(await signIn(setup, { email: other.email }), 'passkey_invalid', 401);
      const nobody = await signInOptions(client, 'nobody@example.com');
      expect(nobody.allowCredentials).toEqual([]);
      await expectRefused(await signIn(setup, { email: 'nobody@example.com' }), 'passkey_invalid', 401);
    });

    it("refuses a passkey of another project, even on the same rp_id (tenant isolation), and the other project's challenges", async () => {
      const setup = await userWithPasskey();
      const other = await current().service.projects.createProject({ name: 'Other' });
      const outsider = passkeyClient(current().service, other.secretKey);
      await configureRelyingParty(outsider);
      await expectRefused(await signIn(setup, { via: outsider }), 'passkey_invalid', 401);
      const theirs = await signInOptions(outsider);
      const response = setup.authenticator.authenticate(theirs, setup.passkey.credentialId);
      await expectRefused(
        await client.call('POST', '/v1/auth/passkey', { challenge_id: theirs.challenge_id, response }),
        'passkey_challenge_invalid',
        400,
      );
    });

    it('refuses a signature counter that went back (a cloned authenticator), and records the refusal', async () => {
      const setup = await userWithPasskey();
      expect((await signIn(setup, { bend: { signCount: 10 } })).statusCode).toBe(200);
      const cloned = await signIn(setup, { bend: { signCount: 5 } });
      await expectRefused(cloned, 'passkey_invalid', 401);
      expect(cloned.json<{ error: { message: string } }>().error.message).toContain('cloned');
      const audit = await auditReader(current().service, current().secretKey).of(cloned);
      expect(audit).toEqual([expect.objectContaining({ action: 'user.passkey_login', outcome: 'passkey_invalid' })]);
      expect((await signIn(setup, { bend: { signCount: 11 } })).statusCode).toBe(200);
    });

    it('refuses a banned user', async () => {
      const setup = await userWithPasskey();
      expect((await client.call('POST', `/v1/users/${setup.user.userId}/ban`, {})).statusCode).toBe(200);
      await expectRefused(await signIn(setup), 'user_banned', 403);
    });

    it('refuses malformed bodies with 400, never 500', async () => {
      const setup = await userWithPasskey();
      const options = await signInOptions(client);
      const assertion = setup.authenticator.authenticate(options, setup.passkey.credentialId);
      const cases: object[] = [
        { challenge_id: options.challenge_id },
        { challenge_id: options.challenge_id, response: { ...assertion, response: { ...assertion.response, clientDataJSON: 'e30' } } },
        {
          challenge_id: options.challenge_id,
          response: { ...assertion, response: { ...assertion.response, signature: 'not base64url!' } },
        },
        { challenge_id: 'pkc_nope', response: assertion },
        { challenge_id: options.challenge_id, response: assertion, extra: 1 },
      ];
      for (const payload of cases) {
        const response = await client.call('POST', '/v1/auth/passkey', payload);
        expect(response.statusCode, response.body).toBeGreaterThanOrEqual(400);
        expect(response.statusCode, response.body).toBeLessThan(500);
      }
      expect((await client.call('POST', '/v1/auth/passkey/options', { email: 'not an email' })).statusCode).toBe(400);
    });

    it('throttles failures like log in: the eleventh failure from one address in 15 minutes is 429', async () => {
      const setup = await userWithPasskey();
      for (let attempt = 0; attempt < 10; attempt += 1) {
        expect(errorCode(await signIn(setup, { bend: { origin: 'https://evil.example.net' } }))).toBe('passkey_invalid');
      }
      const limited = await signIn(setup);
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toBeDefined();
      clock.advance(15 * 60 * 1000 + 1000);
      expect((await signIn(setup)).statusCode).toBe(200);
    });
  });
});

/** Each sign-in options call stores a challenge: they are limited per end-user address while the per-IP limit is on. */
describeEachDialect('passkeys: sign-in options rate limit', (dialect) => {
  const current = useTestService(dialect, { env: { RATE_LIMIT_IP_PER_SECOND: '100000', RATE_LIMIT_KEY_PER_SECOND: '100000' } });

  it('answers 429 with Retry-After past 20 options at once from one address, and another address is not held back', async () => {
    const client = passkeyClient(current().service, current().secretKey);
    await configureRelyingParty(client);
    const options = (address: string) =>
      current().service.app.inject({
        method: 'POST',
        url: '/v1/auth/passkey/options',
        headers: { authorization: `Bearer ${current().secretKey}`, 'x-end-user-ip': address },
        payload: {},
      });
    for (let call = 0; call < 20; call += 1) expect((await options('203.0.113.7')).statusCode).toBe(200);
    const limited = await options('203.0.113.7');
    expect(limited.statusCode).toBe(429);
    expect(errorCode(limited)).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBeDefined();
    expect((await options('203.0.113.8')).statusCode).toBe(200);
  });
});
