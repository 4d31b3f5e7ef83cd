import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { SoftwareAuthenticator } from '../../test/software-authenticator.js';
import { isoTime } from '../../lib/clock.js';
import { codeAt, enrolTotp, logIn } from '../mfa/mfa.testing.js';
import { configureRelyingParty, ORIGIN, passkeyClient, registerPasskey } from '../passkeys/passkeys.testing.js';
import { bearer, type SignedUp, signup, strongPassword, testClock } from './auth.testing.js';

/** A short window, so that the tests step past it without walking sessions into their expiry. */
const WINDOW_SECONDS = 300;

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code }, response.body).toEqual({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

/** Reauthentication: the changes that need a recent sign-in, and `POST /v1/users/me/reauthenticate` (docs/api.md). */
describeEachDialect('reauthentication', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { env: { REAUTH_WINDOW_SECONDS: String(WINDOW_SECONDS) }, serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const asUser = (token: string, method: 'POST' | 'DELETE', url: string, payload: object = {}, headers: Record<string, string> = {}) =>
    call({ method, url, headers: { ...bearer(token), ...headers }, payload });
  const reauthenticate = (token: string, payload: object) => asUser(token, 'POST', '/v1/users/me/reauthenticate', payload);
  const newUser = () => signup(call, ctx().secretKey);
  /** Moves the clock past the window: every session signed in so far is no longer recent. */
  const stale = () => clock.advance((WINDOW_SECONDS + 1) * 1000);

  beforeAll(async () => {
    await configureRelyingParty(passkeyClient(ctx().service, ctx().secretKey));
  });

  /** Every route that needs a recent sign-in, with a body it would accept. */
  const guarded: ReadonlyArray<readonly [method: 'POST' | 'DELETE', url: string, payload: object]> = [
    ['POST', '/v1/users/me/passkeys/options', {}],
    ['POST', '/v1/users/me/passkeys', { response: {} }],
    ['POST', '/v1/users/me/mfa/totp', {}],
    ['POST', '/v1/users/me/mfa/totp/verify', { code: '123456' }],
    ['DELETE', '/v1/users/me/mfa/totp', { code: '123456' }],
    ['POST', '/v1/auth/password/change', { current_password: 'x', new_password: strongPassword() }],
  ];

  describe('the window', () => {
    it.each(guarded)('%s %s: allowed right after sign-in, refused past REAUTH_WINDOW_SECONDS with 403', async (method, url, payload) => {
      const user = await newUser();
      clock.advance((WINDOW_SECONDS - 1) * 1000);
      expect((await asUser(user.token, method, url, payload)).statusCode).not.toBe(403);
      clock.advance(2000);
      const refused = await asUser(user.token, method, url, payload);
      expectError(refused, 403, 'reauthentication_required');
      expect(refused.json<{ error: { type: string } }>().error.type).toBe('permission_error');
    });

    it('each change works again after reauthenticating, until the window passes once more', async () => {
      const user = await newUser();
      stale();
      expect((await reauthenticate(user.token, { password: user.password })).statusCode).toBe(200);

      const passkeys = passkeyClient(ctx().service, ctx().secretKey);
      await registerPasskey(passkeys, user.token, new SoftwareAuthenticator({ origin: ORIGIN }));
      const totp = await enrolTotp(call, user.token, clock);
      expect((await asUser(user.token, 'DELETE', '/v1/users/me/mfa/totp', { code: codeAt(totp.secret, clock) })).statusCode).toBe(200);
      const newPassword = strongPassword('new');
      const changed = await asUser(user.token, 'POST', '/v1/auth/password/change', {
        current_password: user.password,
        new_password: newPassword,
      });
      expect(changed.statusCode, changed.body).toBe(200);

      stale();
      for (const [method, url, payload] of guarded)
        expectError(await asUser(user.token, method, url, payload), 403, 'reauthentication_required');
    });

    it('a refresh carries the sign-in time over: a refreshed session is no more recent than the sign-in', async () => {
      const user = await newUser();
      stale();
      const refreshed = await call({
        method: 'POST',
        url: '/v1/sessions/refresh',
        headers: ctx().auth,
        payload: { refresh_token: user.refreshToken },
      });
      expect(refreshed.statusCode).toBe(200);
      const token = refreshed.json<{ session: { id: string } }>().session.id;
      expectError(await asUser(token, 'POST', '/v1/users/me/mfa/totp'), 403, 'reauthentication_required');
      expect((await reauthenticate(token, { password: user.password })).statusCode).toBe(200);
      expect((await asUser(token, 'POST', '/v1/users/me/mfa/totp')).statusCode).toBe(201);
    });

    it('a reauthentication counts for its own session only', async () => {
      const user = await newUser();
      const other = await logIn(call, ctx().secretKey, user);
      const otherToken = other.json<{ session: { id: string } }>().session.id;
      stale();
      expect((await reauthenticate(user.token, { password: user.password })).statusCode).toBe(200);
      expect((await asUser(user.token, 'POST', '/v1/users/me/mfa/totp')).statusCode).toBe(201);
      expectError(await asUser(otherToken, 'POST', '/v1/users/me/mfa/totp'), 403, 'reauthentication_required');
    });

    it('a request refused for want of reauthentication keeps no Idempotency-Key: sent again with it afterwards, it runs', async () => {
      const user = await newUser();
      stale();
      const key = { 'idempotency-key': `reauth-${user.userId}` };
      expectError(await asUser(user.token, 'POST', '/v1/users/me/mfa/totp', {}, key), 403, 'reauthentication_required');
      expect((await reauthenticate(user.token, { password: user.password })).statusCode).toBe(200);
      const enrolled = await asUser(user.token, 'POST', '/v1/users/me/mfa/totp', {}, key);
      expect(enrolled.statusCode).toBe(201);
      const replayed = await asUser(user.token, 'POST', '/v1/users/me/mfa/totp', {}, key);
      expect(replayed.statusCode).toBe(201);
      expect(replayed.headers['idempotent-replayed']).toBe('true');
    });
  });

  describe('POST /v1/users/me/reauthenticate', () => {
    it('with the password: 200 {object, reauthenticated_at} at the clock, and an audit entry', async () => {
      const user = await newUser();
      stale();
      const response = await reauthenticate(user.token, { password: user.password });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ object: 'reauthentication', reauthenticated_at: isoTime(clock.now()) });
      const entries = (
        await call({ method: 'GET', url: '/v1/audit-logs?action=session.reauthenticate&limit=100', headers: ctx().auth })
      ).json<{ data: Array<{ outcome: string; changes: Record<string, unknown> }> }>().data;
      expect(entries).toContainEqual(
        expect.objectContaining({ outcome: 'success', changes: { user_id: user.userId, method: 'password' } }),
      );
      expect(JSON.stringify(entries)).not.toContain(user.password);
    });

    it('with a code of the authenticator or a recovery code (used up); wrong ones are 401 mfa_code_invalid', async () => {
      const user = await newUser();
      const totp = await enrolTotp(call, user.token, clock);
      stale();
      expectError(await reauthenticate(user.token, { code: codeAt(totp.secret, clock, 5) }), 401, 'mfa_code_invalid', 'code');
      expect((await reauthenticate(user.token, { code: codeAt(totp.secret, clock) })).statusCode).toBe(200);
      // The code's time step is spent: the same code again is refused.
      expectError(await reauthenticate(user.token, { code: codeAt(totp.secret, clock) }), 401, 'mfa_code_invalid');

      stale();
      const recoveryCode = totp.recoveryCodes[0]!;
      expect((await reauthenticate(user.token, { recovery_code: recoveryCode })).statusCode).toBe(200);
      expectError(await reauthenticate(user.token, { recovery_code: recoveryCode }), 401, 'mfa_code_invalid', 'recovery_code');
      expect((await asUser(user.token, 'DELETE', '/v1/users/me/mfa/totp', { code: totp.recoveryCodes[1]! })).statusCode).toBe(200);
    });

    it('refuses a wrong password (401 invalid_credentials), a code without an authenticator (409), none or several proofs (400)', async () => {
      const user = await newUser();
      stale();
      expectError(await reauthenticate(user.token, { password: `${user.password}x` }), 401, 'invalid_credentials', 'password');
      expectError(await reauthenticate(user.token, { code: '123456' }), 409, 'mfa_not_enabled');
      expectError(await reauthenticate(user.token, {}), 400, 'parameter_missing');
      expectError(await reauthenticate(user.token, { password: user.password, code: '123456' }), 400, 'parameter_invalid', 'code');
      expectError(await reauthenticate(user.token, { pin: '1234' }), 400, 'parameter_unknown');
      expectError(
        await call({ method: 'POST', url: '/v1/users/me/reauthenticate', headers: ctx().auth, payload: {} }),
        403,
        'session_token_required',
      );
      expectError(await asUser(user.token, 'POST', '/v1/users/me/mfa/totp'), 403, 'reauthentication_required');
    });

    it("wrong answers count on log in's counters for the email: 10 from one address, then 429 there for reauthentication and log in alike", async () => {
      const user: SignedUp = await newUser();
      for (let attempt = 0; attempt < 10; attempt += 1) {
        expectError(await reauthenticate(user.token, { password: `wrong-${attempt}` }), 401, 'invalid_credentials');
      }
      const limited = await reauthenticate(user.token, { password: user.password });
      expectError(limited, 429, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // Log in from the same address (the session's connection, 127.0.0.1) is on the same counter.
      expectError(await logIn(call, ctx().secretKey, user), 429, 'rate_limited');
      // The owner from another address is not locked out.
      const elsewhere = await call({
        method: 'POST',
        url: '/v1/auth/login',
        headers: { ...ctx().auth, 'x-end-user-ip': '198.51.100.23' },
        payload: { email: user.email, password: user.password },
      });
      expect(elsewhere.statusCode).toBe(200);
      clock.advance(15 * 60 * 1000);
      expect((await reauthenticate(user.token, { password: user.password })).statusCode).toBe(200);
    });

    it('wrong codes count on the same counters as wrong passwords', async () => {
      const user = await newUser();
      const totp = await enrolTotp(call, user.token, clock);
      for (let attempt = 0; attempt < 10; attempt += 1) {
        expectError(await reauthenticate(user.token, { code: codeAt(totp.secret, clock, 10 + attempt) }), 401, 'mfa_code_invalid');
      }
      expectError(await reauthenticate(user.token, { password: user.password }), 429, 'rate_limited');
      expectError(await reauthenticate(user.token, { code: codeAt(totp.secret, clock) }), 429, 'rate_limited');
    });
  });
});
