import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { bearer, eventsOf, signup, testClock } from '../auth/auth.testing.js';
import { codeAt, enrolTotp, logIn } from './mfa.testing.js';
import { MFA_TOKEN_TTL_MS } from './sign-in-gate.js';

const MFA_TOKEN = /^svc_mfa_[A-Za-z0-9_-]{43}$/;
const SESSION_TOKEN = /^svc_ses_[0-9A-Za-z]{24}\.[A-Za-z0-9_-]{43}$/;

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code }).toEqual({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

describeEachDialect('TOTP second factor', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const asKey = () => ({ 'x-api-key': ctx().secretKey });
  const verify = (payload: object, query = '', headers: Record<string, string> = asKey()) =>
    call({ method: 'POST', url: `/v1/auth/mfa/verify${query}`, headers, payload });
  const status = (token: string) => call({ method: 'GET', url: '/v1/users/me/mfa', headers: bearer(token) });
  /** `POST /v1/users/me/mfa/totp/verify` (confirm the enrolment) and `DELETE /v1/users/me/mfa/totp` (turn it off), with a code. */
  const confirm = (token: string, code: string) =>
    call({ method: 'POST', url: '/v1/users/me/mfa/totp/verify', headers: bearer(token), payload: { code } });
  const disable = (token: string, code: string) =>
    call({ method: 'DELETE', url: '/v1/users/me/mfa/totp', headers: bearer(token), payload: { code } });
  const auditActions = async (userId: string) => {
    const response = await call({ method: 'GET', url: `/v1/audit-logs?resource_id=${userId}&limit=100`, headers: ctx().auth });
    return response.json<{ data: Array<{ action: string; outcome: string; changes: Record<string, unknown> }> }>().data;
  };
  /** A user with an active authenticator, and a challenge from logging in. */
  const challenged = async () => {
    const user = await signup(call, ctx().secretKey);
    const totp = await enrolTotp(call, user.token, clock);
    const login = await logIn(call, ctx().secretKey, user);
    return { user, totp, mfaToken: login.json<{ mfa_token: string }>().mfa_token };
  };

  describe('enrolment', () => {
    it('POST /v1/users/me/mfa/totp answers 201 {secret, otpauth_url, status: pending}; a code makes it active with ten recovery codes', async () => {
      const user = await signup(call, ctx().secretKey);
      const enrolled = await call({ method: 'POST', url: '/v1/users/me/mfa/totp', headers: bearer(user.token) });
      expect(enrolled.statusCode).toBe(201);
      const body = enrolled.json<{ secret: string; otpauth_url: string; status: string }>();
      expect(Object.keys(body).sort()).toEqual(['otpauth_url', 'secret', 'status']);
      expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(body.status).toBe('pending');
      expect(body.otpauth_url).toMatch(/^otpauth:\/\/totp\/.+\?/);
      expect(new URL(body.otpauth_url).searchParams.get('secret')).toBe(body.secret);
      expect((await status(user.token)).json()).toMatchObject({ totp: { status: 'pending' }, methods: [], recovery_codes_left: 0 });

      const wrong = await confirm(user.token, '000000');
      expectError(wrong, 401, 'mfa_code_invalid', 'code');
      const confirmed = await confirm(user.token, codeAt(body.secret, clock));
      expect(confirmed.statusCode).toBe(200);
      const activation = confirmed.json<{ status: string; recovery_codes: string[] }>();
      expect(activation.status).toBe('active');
      expect(activation.recovery_codes).toHaveLength(10);
      expect(new Set(activation.recovery_codes).size).toBe(10);
      for (const code of activation.recovery_codes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
      expect((await status(user.token)).json()).toMatchObject({
        totp: { status: 'active' },
        methods: ['totp', 'recovery_code'],
        recovery_codes_left: 10,
      });
      expect(await eventsOf(ctx().service, ctx().projectId, 'user.mfa.enabled')).toContainEqual({
        user_id: user.userId,
        method: 'totp',
        by: 'user',
      });
      const actions = (await auditActions(user.userId)).map((entry) => `${entry.action}:${entry.outcome}`);
      expect(actions).toEqual(
        expect.arrayContaining(['user.mfa_enroll:success', 'user.mfa_enable:mfa_code_invalid', 'user.mfa_enable:success']),
      );
    });

    it('a second enrolment replaces a pending one; an active authenticator refuses both with 409 mfa_already_enabled', async () => {
      const user = await signup(call, ctx().secretKey);
      const first = (await call({ method: 'POST', url: '/v1/users/me/mfa/totp', headers: bearer(user.token) })).json<{ secret: string }>();
      const second = (await call({ method: 'POST', url: '/v1/users/me/mfa/totp', headers: bearer(user.token) })).json<{ secret: string }>();
      expect(second.secret).not.toBe(first.secret);
      const stale = await confirm(user.token, codeAt(first.secret, clock));
      expectError(stale, 401, 'mfa_code_invalid');
      const ok = await confirm(user.token, codeAt(second.secret, clock));
      expect(ok.statusCode).toBe(200);
      expectError(await call({ method: 'POST', url: '/v1/users/me/mfa/totp', headers: bearer(user.token) }), 409, 'mfa_already_enabled');
      const again = await confirm(user.token, codeAt(second.secret, clock, 1));
      expectError(again, 409, 'mfa_already_enabled');
    });

    it('confirming without an enrolment is 409 mfa_not_enabled; a secret key is 403 session_token_required; a bad body is 400', async () => {
      const user = await signup(call, ctx().secretKey);
      const none = await confirm(user.token, '123456');
      expectError(none, 409, 'mfa_not_enabled');
      expectError(await call({ method: 'POST', url: '/v1/users/me/mfa/totp', headers: asKey() }), 403, 'session_token_required');
      const unknown = await call({
        method: 'POST',
        url: '/v1/users/me/mfa/totp/verify',
        headers: bearer(user.token),
        payload: { code: '123456', extra: 1 },
      });
      expectError(unknown, 400, 'parameter_unknown');
      expectError(
        await call({ method: 'POST', url: '/v1/users/me/mfa/totp/verify', headers: bearer(user.token), payload: {} }),
        400,
        'parameter_missing',
      );
    });
  });

  describe('log in with an active authenticator', () => {
    it('answers 200 {mfa_required, mfa_token, methods} and no session, in both shapes; the code then gives shape A, once', async () => {
      const user = await signup(call, ctx().secretKey);
      const totp = await enrolTotp(call, user.token, clock);
      const sessionsBefore = (await eventsOf(ctx().service, ctx().projectId, 'session.created')).length;
      for (const query of ['', '?format=token']) {
        const login = await logIn(call, ctx().secretKey, user, query);
        expect(login.statusCode).toBe(200);
        const body = login.json<{ mfa_required: boolean; mfa_token: string; methods: string[] }>();
        expect(Object.keys(body).sort()).toEqual(['methods', 'mfa_required', 'mfa_token']);
        expect(body).toMatchObject({ mfa_required: true, methods: ['totp', 'recovery_code'] });
        expect(body.mfa_token).toMatch(MFA_TOKEN);
      }
      expect((await eventsOf(ctx().service, ctx().projectId, 'session.created')).length).toBe(sessionsBefore);

      const mfaToken = (await logIn(call, ctx().secretKey, user)).json<{ mfa_token: string }>().mfa_token;
      const verified = await verify({ mfa_token: mfaToken, code: codeAt(totp.secret, clock) });
      expect(verified.statusCode).toBe(200);
      const signedIn = verified.json<{ user: { id: string }; session: { id: string; refresh_token: string } }>();
      expect(Object.keys(signedIn).sort()).toEqual(['session', 'user']);
      expect(signedIn.user.id).toBe(user.userId);
      expect(signedIn.session.id).toMatch(SESSION_TOKEN);
      expect((await call({ method: 'GET', url: '/v1/users/me', headers: bearer(signedIn.session.id) })).statusCode).toBe(200);

      clock.advance(30_000);
      expectError(await verify({ mfa_token: mfaToken, code: codeAt(totp.secret, clock) }), 401, 'mfa_token_invalid', 'mfa_token');

      const shapeB = await verify(
        { mfa_token: (await logIn(call, ctx().secretKey, user)).json<{ mfa_token: string }>().mfa_token, code: codeAt(totp.secret, clock) },
        '?format=token',
      );
      expect(shapeB.statusCode).toBe(200);
      expect(Object.keys(shapeB.json()).sort()).toEqual(['expires_at', 'jwt', 'refresh_token', 'session', 'user']);
      expect(shapeB.json<{ session: string }>().session).toMatch(SESSION_TOKEN);
      const actions = (await auditActions(user.userId)).map((entry) => entry.action);
      expect(actions.filter((action) => action === 'user.mfa_verify')).toHaveLength(2);
    });

    it('accepts each code once: a replay within its window is 401 mfa_code_invalid, and so is an older step after a newer one', async () => {
      const { user, totp, mfaToken } = await challenged();
      const code = codeAt(totp.secret, clock);
      expect((await verify({ mfa_token: mfaToken, code })).statusCode).toBe(200);
      const replayToken = (await logIn(call, ctx().secretKey, user)).json<{ mfa_token: string }>().mfa_token;
      expectError(await verify({ mfa_token: replayToken, code }), 401, 'mfa_code_invalid', 'code');
      expectError(await verify({ mfa_token: replayToken, code: codeAt(totp.secret, clock, -1) }), 401, 'mfa_code_invalid');
      expect((await verify({ mfa_token: replayToken, code: codeAt(totp.secret, clock, 1) })).statusCode).toBe(200);
    });

    it('accepts the codes of the steps either side of now, and no further', async () => {
      const { user, totp, mfaToken } = await challenged();
      // The step before now is the enrolment's, spent: move on so that it is a fresh one.
      clock.advance(30_000);
      expectError(await verify({ mfa_token: mfaToken, code: codeAt(totp.secret, clock, 2) }), 401, 'mfa_code_invalid');
      expectError(await verify({ mfa_token: mfaToken, code: codeAt(totp.secret, clock, -2) }), 401, 'mfa_code_invalid');
      expect((await verify({ mfa_token: mfaToken, code: codeAt(totp.secret, clock, -1) })).statusCode).toBe(200);
      const next = (await logIn(call, ctx().secretKey, user)).json<{ mfa_token: string }>().mfa_token;
      expect((await verify({ mfa_token: next, code: codeAt(totp.secret, clock, 1) })).statusCode).toBe(200);
    });

    it('a recovery code works once, with or without its dash and in any case; the count of those left goes down', async () => {
      const { user, totp, mfaToken } = await challenged();
      const [first, second] = totp.recoveryCodes;
      if (first === undefined || second === undefined) throw new Error('no recovery codes');
      const used = await verify({ mfa_token: mfaToken, recovery_code: first });
      expect(used.statusCode).toBe(200);
      const again = (await logIn(call, ctx().secretKey, user)).json<{ mfa_token: string }>().mfa_token;
      expectError(await verify({ mfa_token: again, recovery_code: first }), 401, 'mfa_code_invalid', 'recovery_code');
      expect((await verify({ mfa_token: again, recovery_code: second.replace('-', '').toUpperCase() })).statusCode).toBe(200);
      const session = used.json<{ session: { id: string } }>().session.id;
      expect((await status(session)).json()).toMatchObject({ recovery_codes_left: 8 });
      const entries = (await auditActions(user.userId)).filter(
        (entry) => entry.action === 'user.mfa_verify' && entry.outcome === 'success',
      );
      expect(entries.map((entry) => entry.changes['recovery_codes_left']).sort()).toEqual([8, 9]);
    });

    it('five wrong codes end the token: then even the right code is 401 mfa_token_invalid', async () => {
      const { totp, mfaToken } = await challenged();
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expectError(await verify({ mfa_token: mfaToken, code: '000000' }), 401, 'mfa_code_invalid');
      }
      expectError(await verify({ mfa_token: mfaToken, code: codeAt(totp.secret, clock) }), 401, 'mfa_token_invalid');
    });

    it('a token lives 5 minutes', async () => {
      const { totp, mfaToken } = await challenged();
      clock.advance(MFA_TOKEN_TTL_MS);
      expectError(await verify({ mfa_token: mfaToken, code: codeAt(totp.secret, clock) }), 401, 'mfa_token_invalid');
    });

    it('wrong codes are limited per user and address across tokens: past 10, 429 rate_limited with Retry-After', async () => {
      const { user, totp, mfaToken } = await challenged();
      const secondToken = (await logIn(call, ctx().secretKey, user)).json<{ mfa_token: string }>().mfa_token;
      for (const token of [mfaToken, secondToken]) {
        for (let attempt = 0; attempt < 5; attempt += 1)
          expectError(await verify({ mfa_token: token, code: '000000' }), 401, 'mfa_code_invalid');
      }
      const third = (await logIn(call, ctx().secretKey, user)).json<{ mfa_token: string }>().mfa_token;
      const limited = await verify({ mfa_token: third, code: codeAt(totp.secret, clock) });
      expectError(limited, 429, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // From another end-user address the owner is below the per-user limit and gets in.
      const elsewhere = await verify({ mfa_token: third, code: codeAt(totp.secret, clock) }, '', {
        ...asKey(),
        'x-end-user-ip': '203.0.113.9',
      });
      expect(elsewhere.statusCode).toBe(200);
    });

    it('refuses a malformed, unknown or foreign token with 401 mfa_token_invalid, and a body with both or neither code with 400', async () => {
      const { totp, mfaToken } = await challenged();
      expectError(await verify({ mfa_token: 'svc_mfa_short', code: '123456' }), 401, 'mfa_token_invalid');
      expectError(await verify({ mfa_token: `svc_mfa_${'A'.repeat(43)}`, code: '123456' }), 401, 'mfa_token_invalid');
      expectError(await verify({ mfa_token: mfaToken, code: '123456', recovery_code: 'aaaaa-bbbbb' }), 400, 'parameter_invalid');
      expectError(await verify({ mfa_token: mfaToken }), 400, 'parameter_missing', 'code');
      const other = await ctx().service.projects.createProject({ name: 'Other' });
      const foreign = await verify({ mfa_token: mfaToken, code: codeAt(totp.secret, clock) }, '', { 'x-api-key': other.secretKey });
      expectError(foreign, 401, 'mfa_token_invalid');
      expect((await verify({ mfa_token: mfaToken, code: codeAt(totp.secret, clock) })).statusCode).toBe(200);
    });

    it('a user banned after the password step is refused at the code: 403 user_banned', async () => {
      const { user, totp, mfaToken } = await challenged();
      expect((await call({ method: 'POST', url: `/v1/users/${user.userId}/ban`, headers: ctx().auth })).statusCode).toBe(200);
      expectError(await verify({ mfa_token: mfaToken, code: codeAt(totp.secret, clock) }), 403, 'user_banned');
    });
  });

  describe('disabling and the administrator reset', () => {
    it('DELETE /v1/users/me/mfa/totp with a current code turns it off: log in gives a session again; user.mfa.disabled by user', async () => {
      const user = await signup(call, ctx().secretKey);
      const totp = await enrolTotp(call, user.token, clock);
      const wrong = await disable(user.token, '000000');
      expectError(wrong, 401, 'mfa_code_invalid', 'code');
      const off = await disable(user.token, codeAt(totp.secret, clock));
      expect(off.statusCode).toBe(200);
      expect(off.json()).toMatchObject({
        object: 'mfa',
        totp: { status: 'none', activated_at: null },
        recovery_codes_left: 0,
        methods: [],
      });
      expect((await logIn(call, ctx().secretKey, user)).json()).toHaveProperty('session');
      expect(await eventsOf(ctx().service, ctx().projectId, 'user.mfa.disabled')).toContainEqual({
        user_id: user.userId,
        method: 'totp',
        by: 'user',
      });
      const again = await disable(user.token, '123456');
      expectError(again, 409, 'mfa_not_enabled');
    });

    it('a recovery code also turns it off (a lost phone); a used one does not', async () => {
      const { user, totp, mfaToken } = await challenged();
      const [first, second] = totp.recoveryCodes as [string, string];
      expect((await verify({ mfa_token: mfaToken, recovery_code: first })).statusCode).toBe(200);
      const spent = await disable(user.token, first);
      expectError(spent, 401, 'mfa_code_invalid');
      const off = await disable(user.token, second);
      expect(off.statusCode).toBe(200);
      const entry = (await auditActions(user.userId)).find(
        (candidate) => candidate.action === 'user.mfa_disable' && candidate.outcome === 'success',
      );
      expect(entry?.changes).toMatchObject({ method: 'totp', proved_with: 'recovery_code' });
    });

    it('DELETE /v1/users/{id}/mfa (secret key) resets every factor and ends pending sign-ins; 404 for an unknown user; 403 with a session', async () => {
      const { user, totp, mfaToken } = await challenged();
      expect((await call({ method: 'GET', url: `/v1/users/${user.userId}/mfa`, headers: ctx().auth })).json()).toMatchObject({
        user_id: user.userId,
        totp: { status: 'active' },
        recovery_codes_left: 10,
      });
      expectError(
        await call({ method: 'DELETE', url: `/v1/users/${user.userId}/mfa`, headers: bearer(user.token) }),
        403,
        'secret_key_required',
      );
      const reset = await call({ method: 'DELETE', url: `/v1/users/${user.userId}/mfa`, headers: ctx().auth });
      expect(reset.statusCode).toBe(200);
      expect(reset.json()).toMatchObject({ totp: { status: 'none' }, recovery_codes_left: 0 });
      expectError(await verify({ mfa_token: mfaToken, code: codeAt(totp.secret, clock) }), 401, 'mfa_token_invalid');
      expect(await eventsOf(ctx().service, ctx().projectId, 'user.mfa.disabled')).toContainEqual({
        user_id: user.userId,
        method: 'totp',
        by: 'administrator',
      });
      expect((await logIn(call, ctx().secretKey, user)).json()).toHaveProperty('session');
      // Resetting a user without factors changes nothing and says so.
      expect((await call({ method: 'DELETE', url: `/v1/users/${user.userId}/mfa`, headers: ctx().auth })).statusCode).toBe(200);
      expect(
        (await eventsOf(ctx().service, ctx().projectId, 'user.mfa.disabled')).filter((data) => data['user_id'] === user.userId),
      ).toHaveLength(1);
      expectError(await call({ method: 'DELETE', url: '/v1/users/usr_unknown/mfa', headers: ctx().auth }), 404, 'resource_missing');
      const actions = (await auditActions(user.userId)).map((entry) => entry.action);
      expect(actions.filter((action) => action === 'user.mfa_reset')).toHaveLength(2);
    });

    it('deleting the user deletes its factors', async () => {
      const { user } = await challenged();
      expect((await call({ method: 'DELETE', url: `/v1/users/${user.userId}`, headers: ctx().auth })).statusCode).toBe(200);
      const left = await ctx().service.db.kysely.selectFrom('mfa_totp').select('user_id').where('user_id', '=', user.userId).execute();
      expect(left).toEqual([]);
    });
  });
});
