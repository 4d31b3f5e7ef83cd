import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { SoftwareAuthenticator } from '../../test/software-authenticator.js';
import { bearer, signup, testClock } from '../auth/auth.testing.js';
import { codeAt, enrolTotp, logIn } from '../mfa/mfa.testing.js';
import { configureRelyingParty, ORIGIN, passkeyClient, registerPasskey, signInOptions } from '../passkeys/passkeys.testing.js';

const PUBLIC_URL = 'https://auth.example.com';
const HOUR_MS = 60 * 60 * 1000;
const nameOf = (token: string) => token.slice(0, token.indexOf('.'));

/**
 * Session JWTs (CONTRACT 9.3), verified with `jose` against the JWKS the route publishes: an
 * independent implementation, so a claim or key we get wrong fails here, not at a customer.
 */
describeEachDialect('session JWTs', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { env: { PUBLIC_URL, SESSION_JWT_TTL_SECONDS: '300' }, serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const post = (url: string, payload?: object) =>
    call({ method: 'POST', url, headers: ctx().auth, ...(payload === undefined ? {} : { payload }) });
  const jwks = async () => {
    const response = await call({ method: 'GET', url: `/v1/projects/${ctx().projectId}/jwks.json` });
    expect(response.statusCode, response.body).toBe(200);
    return response;
  };
  /** Verifies as a project's back end would: issuer, audience and signature, at the test clock's time. */
  const verify = async (jwt: string, options: { audience?: string } = {}): Promise<JWTPayload> => {
    const keySet = createLocalJWKSet((await jwks()).json<JSONWebKeySet>());
    const { payload } = await jwtVerify(jwt, keySet, {
      issuer: `${PUBLIC_URL}/v1/projects/${ctx().projectId}`,
      audience: options.audience ?? ctx().projectId,
      currentDate: clock.now(),
    });
    return payload;
  };
  const sessionJwt = (token: string) => call({ method: 'POST', url: '/v1/sessions/jwt', headers: bearer(token) });

  describe('claims and lifetimes', () => {
    it('sign-up carries session.jwt: ES256, typ JWT, every claim, 300 s of life; amr pwd', async () => {
      const account = await signup(call, ctx().secretKey);
      const jwt = (account.body.session as { jwt?: string }).jwt;
      expect(typeof jwt).toBe('string');
      const header = decodeProtectedHeader(jwt!);
      expect(header).toMatchObject({ alg: 'ES256', typ: 'JWT' });
      expect(header.kid).toMatch(/^sjk_/);
      const claims = await verify(jwt!);
      expect(claims).toMatchObject({
        iss: `${PUBLIC_URL}/v1/projects/${ctx().projectId}`,
        aud: ctx().projectId,
        sub: account.userId,
        sid: nameOf(account.token),
        email: account.email,
        email_verified: false,
        roles: [],
        amr: ['pwd'],
      });
      expect(claims.exp! - claims.iat!).toBe(300);
      expect(claims.iat).toBe(Math.floor(clock.now().getTime() / 1000));
    });

    it('log in answers the JWT in both shapes; validate adds one; POST /sessions/jwt answers a fresh one', async () => {
      const account = await signup(call, ctx().secretKey);
      const shapeA = await logIn(call, ctx().secretKey, account);
      expect((await verify(shapeA.json<{ session: { jwt: string } }>().session.jwt)).amr).toEqual(['pwd']);
      const shapeB = await logIn(call, ctx().secretKey, account, '?format=token');
      const bodyB = shapeB.json<{ session: string; jwt: string }>();
      expect((await verify(bodyB.jwt)).sid).toBe(nameOf(bodyB.session));
      const validated = (await post('/v1/sessions/validate', { session_id: account.token })).json<{ jwt: string }>();
      expect((await verify(validated.jwt)).sid).toBe(nameOf(account.token));
      const fresh = await sessionJwt(account.token);
      expect(fresh.statusCode, fresh.body).toBe(200);
      const body = fresh.json<{ object: string; jwt: string; expires_at: string }>();
      expect(body.object).toBe('session_jwt');
      const claims = await verify(body.jwt);
      expect(new Date(claims.exp! * 1000).toISOString()).toBe(body.expires_at);
    });

    it('never outlives its session: exp is the session expiry when that comes first', async () => {
      const account = await signup(call, ctx().secretKey);
      clock.advance(24 * HOUR_MS - 60_000);
      const body = (await sessionJwt(account.token)).json<{ jwt: string; expires_at: string }>();
      const claims = await verify(body.jwt);
      expect(claims.exp! - claims.iat!).toBe(60);
      // JWT times are whole seconds: the session's expiry rounded down, never up.
      expect(Date.parse(body.expires_at)).toBe(Math.floor(Date.parse(account.body.session.expires_at) / 1000) * 1000);
      clock.advance(60_000);
      await expect(verify(body.jwt)).rejects.toMatchObject({ code: 'ERR_JWT_EXPIRED' });
    });

    it('refresh carries amr over into the new session JWT', async () => {
      const account = await signup(call, ctx().secretKey);
      const refreshed = await post('/v1/sessions/refresh', { refresh_token: account.refreshToken });
      const claims = await verify(refreshed.json<{ session: { jwt: string; id: string } }>().session.jwt);
      expect(claims).toMatchObject({ amr: ['pwd'], sid: nameOf(refreshed.json<{ session: { id: string } }>().session.id) });
    });
  });

  describe('amr', () => {
    it('a password then an authenticator code: pwd, otp, mfa', async () => {
      const account = await signup(call, ctx().secretKey);
      const { secret } = await enrolTotp(call, account.token, clock);
      const challenge = (await logIn(call, ctx().secretKey, account)).json<{ mfa_token: string }>();
      const verified = await post('/v1/auth/mfa/verify', { mfa_token: challenge.mfa_token, code: codeAt(secret, clock) });
      expect(verified.statusCode, verified.body).toBe(200);
      expect((await verify(verified.json<{ session: { jwt: string } }>().session.jwt)).amr).toEqual(['pwd', 'otp', 'mfa']);
    });

    it('a password then a recovery code: pwd, mfa (a recovery code has no RFC 8176 name)', async () => {
      const account = await signup(call, ctx().secretKey);
      const { recoveryCodes } = await enrolTotp(call, account.token, clock);
      const challenge = (await logIn(call, ctx().secretKey, account)).json<{ mfa_token: string }>();
      const verified = await post('/v1/auth/mfa/verify', { mfa_token: challenge.mfa_token, recovery_code: recoveryCodes[0] });
      expect(verified.statusCode, verified.body).toBe(200);
      expect((await verify(verified.json<{ session: { jwt: string } }>().session.jwt)).amr).toEqual(['pwd', 'mfa']);
    });

    it('a passkey: webauthn, mfa', async () => {
      const client = passkeyClient(ctx().service, ctx().secretKey);
      await configureRelyingParty(client);
      const account = await signup(call, ctx().secretKey);
      const authenticator = new SoftwareAuthenticator({ origin: ORIGIN });
      const passkey = await registerPasskey(client, account.token, authenticator);
      const options = await signInOptions(client);
      const assertion = authenticator.authenticate(options, passkey.credentialId);
      const response = await client.call('POST', '/v1/auth/passkey', { challenge_id: options.challenge_id, response: assertion });
      expect(response.statusCode, response.body).toBe(200);
      expect((await verify(response.json<{ session: { jwt: string } }>().session.jwt)).amr).toEqual(['webauthn', 'mfa']);
    });
  });

  describe('refusals', () => {
    it('a tampered token and a wrong audience are refused by the verifier', async () => {
      const account = await signup(call, ctx().secretKey);
      const jwt = (await sessionJwt(account.token)).json<{ jwt: string }>().jwt;
      const [header, payload, signature] = jwt.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
      const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'usr_someone_else' })).toString('base64url');
      await expect(verify(`${header}.${forged}.${signature}`)).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
      await expect(verify(jwt, { audience: 'prj_another' })).rejects.toMatchObject({
        code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
        claim: 'aud',
      });
    });

    it('a revoked session is refused at once by refresh and POST /sessions/jwt; its JWT lives until exp', async () => {
      const account = await signup(call, ctx().secretKey);
      const jwt = (await sessionJwt(account.token)).json<{ jwt: string }>().jwt;
      expect((await post(`/v1/sessions/${nameOf(account.token)}/revoke`)).statusCode).toBe(200);
      const refused = await sessionJwt(account.token);
      expect([refused.statusCode, refused.json<{ error: { code: string } }>().error.code]).toEqual([401, 'session_revoked']);
      const refresh = await post('/v1/sessions/refresh', { refresh_token: account.refreshToken });
      expect([refresh.statusCode, refresh.json<{ error: { code: string } }>().error.code]).toEqual([401, 'refresh_token_invalid']);
      expect((await post('/v1/sessions/validate', { session_id: account.token })).json()).toEqual({ valid: false, reason: 'revoked' });
      // The bound of verifying without a round trip (docs/security.md): the JWT itself still verifies.
      expect((await verify(jwt)).sid).toBe(nameOf(account.token));
    });
  });

  describe('JWKS and rotation', () => {
    it('publishes public keys only, cacheable for 5 minutes, without a credential; an unknown project is 404', async () => {
      await signup(call, ctx().secretKey);
      const response = await jwks();
      expect(response.headers['cache-control']).toBe('public, max-age=300');
      const { keys } = response.json<{ keys: Array<Record<string, unknown>> }>();
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
        expect(key).not.toHaveProperty('d');
      }
      const missing = await call({ method: 'GET', url: '/v1/projects/prj_nope/jwks.json' });
      expect([missing.statusCode, missing.json<{ error: { code: string } }>().error.code]).toEqual([404, 'resource_missing']);
    });

    it('rotation: the next key signs at once; a JWT signed before still verifies until the old key leaves the JWKS', async () => {
      const account = await signup(call, ctx().secretKey);
      const before = (await sessionJwt(account.token)).json<{ jwt: string }>().jwt;
      const oldKid = decodeProtectedHeader(before).kid;
      const rotated = await post('/v1/project/signing-keys/rotate');
      expect(rotated.statusCode, rotated.body).toBe(200);
      const key = rotated.json<{ object: string; kid: string; alg: string; created_at: string }>();
      expect(key).toMatchObject({ object: 'signing_key', alg: 'ES256' });
      expect(key.kid).not.toBe(oldKid);
      const after = (await sessionJwt(account.token)).json<{ jwt: string }>().jwt;
      expect(decodeProtectedHeader(after).kid).toBe(key.kid);
      expect((await verify(before)).sid).toBe(nameOf(account.token));
      expect((await verify(after)).sid).toBe(nameOf(account.token));
      const kids = () => jwks().then((response) => response.json<{ keys: Array<{ kid: string }> }>().keys.map((jwk) => jwk.kid));
      expect(await kids()).toEqual(expect.arrayContaining([key.kid, oldKid]));
      // Once every JWT the old key could have signed has expired (at most an hour), it is no longer published.
      clock.advance(HOUR_MS + 1000);
      expect(await kids()).not.toContain(oldKid);
      expect(await kids()).toContain(key.kid);
    });

    it('lists the published keys with their status, public halves only, with a secret key', async () => {
      await signup(call, ctx().secretKey);
      const list = async () => {
        const response = await call({ method: 'GET', url: '/v1/project/signing-keys', headers: ctx().auth });
        expect(response.statusCode, response.body).toBe(200);
        expect(response.body).not.toMatch(/private|"d"|BEGIN/);
        return response.json<{ object: string; has_more: boolean; data: Array<{ kid: string; status: string; alg: string }> }>();
      };
      const first = await list();
      expect(first).toMatchObject({ object: 'list', has_more: false });
      expect(first.data.map((key) => key.status).sort()).toEqual(['next', 'signing']);
      const next = first.data.find((key) => key.status === 'next')!;
      const signing = first.data.find((key) => key.status === 'signing')!;
      const rotated = (await post('/v1/project/signing-keys/rotate')).json<{ kid: string; status: string; activated_at: string }>();
      expect(rotated).toMatchObject({ kid: next.kid, status: 'signing', activated_at: clock.now().toISOString() });
      const after = await list();
      const statusOf = (kid: string) => after.data.find((key) => key.kid === kid)?.status;
      expect([statusOf(next.kid), statusOf(signing.kid)]).toEqual(['signing', 'retiring']);
      expect(after.data.filter((key) => key.status === 'next')).toHaveLength(1);
      // The list shows what the JWKS publishes, no more.
      const published = (await jwks()).json<{ keys: Array<{ kid: string }> }>().keys.map((jwk) => jwk.kid);
      expect(after.data.map((key) => key.status)).toEqual(['signing', 'next', 'retiring']);
      expect(after.data.map((key) => key.kid).sort()).toEqual(published.sort());
      const anonymous = await call({ method: 'GET', url: '/v1/project/signing-keys' });
      expect(anonymous.statusCode).toBe(401);
    });
  });
});

/** The public key each algorithm publishes: its JWK type and curve (RFC 7518, RFC 8037). */
const PUBLIC_KEY_SHAPE = {
  EdDSA: { kty: 'OKP', crv: 'Ed25519' },
  RS256: { kty: 'RSA', e: 'AQAB' },
} as const;

for (const alg of ['EdDSA', 'RS256'] as const) {
  describeEachDialect(`session JWTs: SESSION_JWT_ALG=${alg}`, (dialect) => {
    const clock = testClock();
    const ctx = useTestService(dialect, {
      env: { PUBLIC_URL, SESSION_JWT_ALG: alg, SESSION_JWT_TTL_SECONDS: '60' },
      serviceOptions: { clock },
    });
    const call = (options: InjectOptions) => ctx().service.app.inject(options);
    const verify = async (jwt: string): Promise<JWTPayload> => {
      const response: LightMyRequestResponse = await call({ method: 'GET', url: `/v1/projects/${ctx().projectId}/jwks.json` });
      const keys = response.json<JSONWebKeySet>();
      for (const key of keys.keys) {
        expect(key).toMatchObject({ ...PUBLIC_KEY_SHAPE[alg], alg, use: 'sig' });
        for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(secret);
      }
      const { payload, protectedHeader } = await jwtVerify(jwt, createLocalJWKSet(keys), {
        issuer: `${PUBLIC_URL}/v1/projects/${ctx().projectId}`,
        audience: ctx().projectId,
        algorithms: [alg],
        currentDate: clock.now(),
      });
      expect(protectedHeader).toMatchObject({ alg, typ: 'JWT' });
      return payload;
    };

    it(`signs with ${alg} and the configured lifetime, verified by jose against the published JWKS`, async () => {
      const account = await signup(call, ctx().secretKey);
      const jwt = (account.body.session as { jwt?: string }).jwt!;
      expect(decodeProtectedHeader(jwt).alg).toBe(alg);
      const payload = await verify(jwt);
      expect(payload).toMatchObject({ sub: account.userId, amr: ['pwd'] });
      expect(payload.exp! - payload.iat!).toBe(60);
    });

    it(`keeps ${alg} across a rotation: the next key signs and both verify`, async () => {
      const account = await signup(call, ctx().secretKey);
      const before = (account.body.session as { jwt?: string }).jwt!;
      const rotated = await call({ method: 'POST', url: '/v1/project/signing-keys/rotate', headers: ctx().auth });
      expect(rotated.json<{ alg: string }>().alg).toBe(alg);
      const after = await call({ method: 'POST', url: '/v1/sessions/jwt', headers: bearer(account.token) });
      const jwt = after.json<{ jwt: string }>().jwt;
      expect(decodeProtectedHeader(jwt).kid).toBe(rotated.json<{ kid: string }>().kid);
      expect((await verify(jwt)).sub).toBe(account.userId);
      expect((await verify(before)).sub).toBe(account.userId);
    });
  });
}
