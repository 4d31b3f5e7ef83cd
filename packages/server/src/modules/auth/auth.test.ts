import { hash } from '@node-rs/argon2';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.js';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { bearer, eventsOf, signup, strongPassword, testClock, uniqueEmail } from './auth.testing.js';
import { SIGNUP_RATE_RULE } from './auth.service.js';
import { BREACHED_PASSWORDS } from './passwords.js';

const USER_FIELDS = ['banned', 'created_at', 'email', 'email_verified', 'id', 'metadata', 'name', 'object', 'roles', 'updated_at'];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SESSION_TOKEN = /^svc_ses_[0-9A-Za-z]{24}\.[A-Za-z0-9_-]{43}$/;
const REFRESH_TOKEN = /^svc_rt_[A-Za-z0-9_-]{43}$/;

function errorCode(response: LightMyRequestResponse): string {
  return response.json<{ error: { code: string } }>().error.code;
}

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code }).toEqual({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

describeEachDialect('sign up and log in', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const post = (url: string, payload: unknown, headers: Record<string, string> = ctx().auth) =>
    call({ method: 'POST', url, headers, payload: payload as object });

  describe('POST /v1/auth/signup', () => {
    it('answers 201 {user, session} with email_verified false, a session token and a refresh token', async () => {
      const email = uniqueEmail('signup');
      const response = await call({
        method: 'POST',
        url: '/v1/auth/signup',
        headers: { 'x-api-key': ctx().secretKey },
        payload: { email, password: strongPassword(), name: 'Ada Lovelace' },
      });
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['session', 'user']);
      expect(Object.keys(body.user).sort()).toEqual(USER_FIELDS);
      expect(body.user).toMatchObject({
        object: 'user',
        email,
        name: 'Ada Lovelace',
        email_verified: false,
        roles: [],
        metadata: {},
        banned: false,
      });
      expect(body.user.id).toMatch(/^usr_[0-9A-Za-z]{22}$/);
      expect(body.user.created_at).toMatch(ISO);
      expect(Object.keys(body.session).sort()).toEqual(['expires_at', 'id', 'jwt', 'refresh_expires_at', 'refresh_token']);
      expect(body.session.id).toMatch(SESSION_TOKEN);
      expect(body.session.refresh_token).toMatch(REFRESH_TOKEN);
      // Default lifetimes: 24 hours for the session, 30 days for the refresh token.
      const now = clock.now().getTime();
      expect(Date.parse(body.session.expires_at) - now).toBe(24 * 3600 * 1000);
      expect(Date.parse(body.session.refresh_expires_at) - now).toBe(30 * 24 * 3600 * 1000);
    });

    it('emits user.created and session.created (named svc_ses_<ref>, never the token) and queues the verification email', async () => {
      const account = await signup(call, ctx().secretKey);
      const created = await eventsOf(ctx().service, ctx().projectId, 'user.created');
      expect(created).toContainEqual({ user_id: account.userId, email: account.email });
      const sessions = await eventsOf(ctx().service, ctx().projectId, 'session.created');
      expect(sessions).toContainEqual({ session_id: account.token.split('.')[0], user_id: account.userId });
      const queued = await ctx().service.db.kysely.selectFrom('email_outbox').selectAll().where('recipient', '=', account.email).execute();
      expect(queued).toHaveLength(1);
      expect(queued[0]).toMatchObject({ template: 'verify_email', status: 'pending', data: JSON.stringify({ user_id: account.userId }) });
    });

    it('normalises the email (trim, lower-case domain) and compares it case-insensitively: 409 email_taken', async () => {
      const local = `Mixed.Case.${Date.now()}`;
      const response = await post('/v1/auth/signup', { email: `  ${local}@EXAMPLE.Org `, password: strongPassword(), name: 'M' });
      expect(response.statusCode).toBe(201);
      expect(response.json().user.email).toBe(`${local}@example.org`);
      expectError(
        await post('/v1/auth/signup', { email: `${local.toLowerCase()}@example.ORG`, password: strongPassword(), name: 'M' }),
        409,
        'email_taken',
        'email',
      );
      // Log in finds the user whatever the case.
      const login = await post('/v1/auth/login', { email: `${local.toUpperCase()}@Example.org`, password: 'wrong-but-checked' });
      expectError(login, 401, 'invalid_credentials');
    });

    it('refuses passwords shorter than 8 or longer than 128 characters with 422 password_too_weak', async () => {
      expectError(
        await post('/v1/auth/signup', { email: uniqueEmail(), password: 'Sh0rt!x', name: '' }),
        422,
        'password_too_weak',
        'password',
      );
      expectError(
        await post('/v1/auth/signup', { email: uniqueEmail(), password: 'x'.repeat(129), name: '' }),
        422,
        'password_too_weak',
        'password',
      );
      // Exactly 8 and exactly 128 are fine; characters are code points, so 8 emoji are 8 characters.
      expect((await post('/v1/auth/signup', { email: uniqueEmail(), password: 'kx9$Qm2p', name: '' })).statusCode).toBe(201);
      expect((await post('/v1/auth/signup', { email: uniqueEmail(), password: 'q'.repeat(120) + 'Zx8$vB3n', name: '' })).statusCode).toBe(
        201,
      );
      expect((await post('/v1/auth/signup', { email: uniqueEmail(), password: '🔑🌵🎲🚲🧭🪁🦔🍋', name: '' })).statusCode).toBe(201);
    });

    it('refuses a password on the bundled breached list (case-insensitively) with 422 password_too_weak', async () => {
      expect(BREACHED_PASSWORDS.size).toBeGreaterThanOrEqual(10_000);
      for (const password of ['password', 'PassWord', 'iloveyou', 'qwertyuiop', 'trustno1', '12345678']) {
        expectError(await post('/v1/auth/signup', { email: uniqueEmail(), password, name: '' }), 422, 'password_too_weak', 'password');
      }
    });

    it('refuses malformed requests: bad email, missing and unknown fields, wrong types', async () => {
      expectError(
        await post('/v1/auth/signup', { email: 'not-an-email', password: strongPassword(), name: '' }),
        400,
        'parameter_invalid',
        'email',
      );
      expectError(await post('/v1/auth/signup', { email: 'a@b', password: strongPassword(), name: '' }), 400, 'parameter_invalid', 'email');
      expectError(await post('/v1/auth/signup', { password: strongPassword(), name: '' }), 400, 'parameter_missing', 'email');
      expectError(await post('/v1/auth/signup', { email: uniqueEmail(), name: '' }), 400, 'parameter_missing', 'password');
      expectError(
        await post('/v1/auth/signup', { email: uniqueEmail(), password: strongPassword(), role: 'admin' }),
        400,
        'parameter_unknown',
        'role',
      );
      expectError(await post('/v1/auth/signup', { email: uniqueEmail(), password: 12345678 }), 400, 'parameter_invalid', 'password');
      expectError(
        await post('/v1/auth/signup', { email: uniqueEmail(), password: strongPassword(), name: 'x'.repeat(201) }),
        400,
        'parameter_invalid',
        'name',
      );
    });

    it('needs a secret key: none → 401, a session token → 403 secret_key_required', async () => {
      const account = await signup(call, ctx().secretKey);
      expectError(await post('/v1/auth/signup', { email: uniqueEmail(), password: strongPassword() }, {}), 401, 'credential_missing');
      expectError(
        await post('/v1/auth/signup', { email: uniqueEmail(), password: strongPassword() }, bearer(account.token)),
        403,
        'secret_key_required',
      );
    });

    it('replays a sign-up sent again with the same Idempotency-Key, and stores it only sealed (docs/adr/0015-secrets-at-rest.md)', async () => {
      const payload = { email: uniqueEmail(), password: strongPassword(), name: 'Idem' };
      const headers = { ...ctx().auth, 'idempotency-key': `signup-${Date.now()}` };
      const first = await post('/v1/auth/signup', payload, headers);
      expect(first.statusCode).toBe(201);
      const again = await post('/v1/auth/signup', payload, headers);
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(first.body);
      const stored = await ctx()
        .service.db.kysely.selectFrom('idempotency_keys')
        .selectAll()
        .where('key', '=', headers['idempotency-key'])
        .execute();
      expect(stored).toHaveLength(1);
      const token = first.json<{ session: { id: string } }>().session.id;
      expect(JSON.stringify(stored)).not.toContain(token.split('.')[1]);
    });
  });

  describe('POST /v1/auth/login', () => {
    it('replays a log in sent again with the same Idempotency-Key: one session, written with its key in one transaction', async () => {
      const account = await signup(call, ctx().secretKey, { name: 'Keyed log in' });
      const headers = { ...ctx().auth, 'idempotency-key': `login-${Date.now()}` };
      const first = await post('/v1/auth/login', { email: account.email, password: account.password }, headers);
      expect(first.statusCode, first.body).toBe(200);
      const again = await post('/v1/auth/login', { email: account.email, password: account.password }, headers);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(first.body);
      const sessions = await ctx()
        .service.db.kysely.selectFrom('sessions')
        .select('id')
        .where('user_id', '=', first.json<{ user: { id: string } }>().user.id)
        .execute();
      // The sign-up's session and this log in's: the replay made none.
      expect(sessions).toHaveLength(2);
    });

    it('answers shape A by default: {user, session: {id, expires_at, refresh_token, refresh_expires_at}}', async () => {
      const account = await signup(call, ctx().secretKey, { name: 'Shape A' });
      const response = await post('/v1/auth/login', { email: account.email, password: account.password });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['session', 'user']);
      expect(Object.keys(body.user).sort()).toEqual(USER_FIELDS);
      expect(body.user).toMatchObject({ id: account.userId, object: 'user', email: account.email, name: 'Shape A', email_verified: false });
      expect(Object.keys(body.session).sort()).toEqual(['expires_at', 'id', 'jwt', 'refresh_expires_at', 'refresh_token']);
      expect(body.session.id).toMatch(SESSION_TOKEN);
      expect(body.session.id).not.toBe(account.token);
      expect(body.session.expires_at).toMatch(ISO);
      expect(body.session.refresh_token).toMatch(REFRESH_TOKEN);
      expect(body.session.refresh_expires_at).toMatch(ISO);
      const me = await call({ method: 'GET', url: '/v1/users/me', headers: bearer(body.session.id) });
      expect(me.json().id).toBe(account.userId);
    });

    it('answers shape B with ?format=token: {session: "svc_ses_…", user: {id, email}, expires_at, refresh_token}', async () => {
      const account = await signup(call, ctx().secretKey);
      const response = await post('/v1/auth/login?format=token', { email: account.email, password: account.password });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['expires_at', 'jwt', 'refresh_token', 'session', 'user']);
      expect(typeof body.session).toBe('string');
      expect(body.session).toMatch(SESSION_TOKEN);
      expect(body.user).toEqual({ id: account.userId, email: account.email });
      expect(body.expires_at).toMatch(ISO);
      expect(body.refresh_token).toMatch(REFRESH_TOKEN);
      expect((await call({ method: 'GET', url: '/v1/users/me', headers: bearer(body.session) })).statusCode).toBe(200);
      expectError(
        await post('/v1/auth/login?format=jwt', { email: account.email, password: account.password }),
        400,
        'parameter_invalid',
        'format',
      );
    });

    it('emits session.created with the session name and the user', async () => {
      const account = await signup(call, ctx().secretKey);
      const token = (await post('/v1/auth/login', { email: account.email, password: account.password })).json().session.id as string;
      expect(await eventsOf(ctx().service, ctx().projectId, 'session.created')).toContainEqual({
        session_id: token.slice(0, token.indexOf('.')),
        user_id: account.userId,
      });
    });

    it('answers a wrong password and an unknown email alike: 401 invalid_credentials with the same message', async () => {
      const account = await signup(call, ctx().secretKey);
      const wrongPassword = await post('/v1/auth/login', { email: account.email, password: 'not-the-password' });
      const unknownEmail = await post('/v1/auth/login', { email: uniqueEmail('nobody'), password: account.password });
      const malformedEmail = await post('/v1/auth/login', { email: 'nobody', password: account.password });
      for (const response of [wrongPassword, unknownEmail, malformedEmail]) expectError(response, 401, 'invalid_credentials');
      const message = (response: LightMyRequestResponse) => response.json<{ error: { message: string } }>().error.message;
      expect(message(unknownEmail)).toBe(message(wrongPassword));
      expect(message(malformedEmail)).toBe(message(wrongPassword));
    });

    it('refuses a banned user with 403 user_banned, only once the password is right', async () => {
      const account = await signup(call, ctx().secretKey);
      expect((await post(`/v1/users/${account.userId}/ban`, {})).statusCode).toBe(200);
      expectError(await post('/v1/auth/login', { email: account.email, password: account.password }), 403, 'user_banned');
      expectError(await post('/v1/auth/login', { email: account.email, password: 'wrong-password' }), 401, 'invalid_credentials');
      expect((await post(`/v1/users/${account.userId}/unban`, {})).statusCode).toBe(200);
      expect((await post('/v1/auth/login', { email: account.email, password: account.password })).statusCode).toBe(200);
    });

    it('re-hashes a password whose hash was made with other parameters, at the next log in', async () => {
      const account = await signup(call, ctx().secretKey);
      const weakHash = await hash(account.password, { memoryCost: 4096, timeCost: 1, parallelism: 1 });
      const db = ctx().service.db.kysely;
      await db.updateTable('users').set({ password_hash: weakHash }).where('id', '=', account.userId).execute();
      expect((await post('/v1/auth/login', { email: account.email, password: account.password })).statusCode).toBe(200);
      const stored = await db.selectFrom('users').select('password_hash').where('id', '=', account.userId).executeTakeFirstOrThrow();
      expect(stored.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      expect((await post('/v1/auth/login', { email: account.email, password: account.password })).statusCode).toBe(200);
    });

    it('stores passwords as argon2id m=19456 t=2 p=1', async () => {
      const account = await signup(call, ctx().secretKey);
      const stored = await ctx()
        .service.db.kysely.selectFrom('users')
        .select('password_hash')
        .where('id', '=', account.userId)
        .executeTakeFirstOrThrow();
      expect(stored.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    });

    it('throttles 10 failures per 15 minutes per (email, IP): the 11th attempt is 429 with Retry-After, even with the right password', async () => {
      const account = await signup(call, ctx().secretKey);
      const attempt = (password: string, remoteAddress = '203.0.113.7') =>
        call({ method: 'POST', url: '/v1/auth/login', headers: ctx().auth, payload: { email: account.email, password }, remoteAddress });
      for (let failure = 1; failure <= 10; failure += 1) expectError(await attempt('wrong-password'), 401, 'invalid_credentials');
      const refused = await attempt(account.password);
      expectError(refused, 429, 'rate_limited');
      expect(refused.json().error.type).toBe('rate_limit_error');
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(15 * 60);
      // Another IP, or another email from this IP, is not affected.
      expect((await attempt(account.password, '203.0.113.8')).statusCode).toBe(200);
      const other = await signup(call, ctx().secretKey);
      const otherAttempt = await call({
        method: 'POST',
        url: '/v1/auth/login',
        headers: ctx().auth,
        payload: { email: other.email, password: other.password },
        remoteAddress: '203.0.113.7',
      });
      expect(otherAttempt.statusCode).toBe(200);
      // After the window the pair may try again.
      clock.advance(15 * 60 * 1000 + 1000);
      expect((await attempt(account.password)).statusCode).toBe(200);
    });

    it('a success clears the failure count', async () => {
      const account = await signup(call, ctx().secretKey);
      const attempt = (password: string) =>
        call({
          method: 'POST',
          url: '/v1/auth/login',
          headers: ctx().auth,
          payload: { email: account.email, password },
          remoteAddress: '198.51.100.4',
        });
      for (let failure = 1; failure <= 9; failure += 1) expect((await attempt('wrong-password')).statusCode).toBe(401);
      expect((await attempt(account.password)).statusCode).toBe(200);
      for (let failure = 1; failure <= 9; failure += 1) expect((await attempt('wrong-password')).statusCode).toBe(401);
      expect((await attempt(account.password)).statusCode).toBe(200);
    });
  });

  describe('POST /v1/auth/logout', () => {
    it('with the session itself: 204, the session is revoked at once, event reason logout', async () => {
      const account = await signup(call, ctx().secretKey);
      const response = await call({ method: 'POST', url: '/v1/auth/logout', headers: bearer(account.token) });
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expectError(await call({ method: 'GET', url: '/v1/users/me', headers: bearer(account.token) }), 401, 'session_revoked');
      expect((await post('/v1/sessions/validate', { session_id: account.token })).json()).toEqual({ valid: false, reason: 'revoked' });
      expect(await eventsOf(ctx().service, ctx().projectId, 'session.revoked')).toContainEqual({
        session_id: account.token.split('.')[0],
        user_id: account.userId,
        reason: 'logout',
      });
      // The session is gone: logging out again is a 401 on the token itself.
      expectError(await call({ method: 'POST', url: '/v1/auth/logout', headers: bearer(account.token) }), 401, 'session_revoked');
    });

    it('with the secret key and session_id (the token or svc_ses_<ref>): 204; repeating it changes nothing', async () => {
      const first = await signup(call, ctx().secretKey);
      const second = await signup(call, ctx().secretKey);
      expect((await post('/v1/auth/logout', { session_id: first.token })).statusCode).toBe(204);
      const name = second.token.split('.')[0]!;
      expect((await post('/v1/auth/logout', { session_id: name })).statusCode).toBe(204);
      expect((await post('/v1/auth/logout', { session_id: name })).statusCode).toBe(204);
      expectError(await call({ method: 'GET', url: '/v1/users/me', headers: bearer(first.token) }), 401, 'session_revoked');
      expectError(await call({ method: 'GET', url: '/v1/users/me', headers: bearer(second.token) }), 401, 'session_revoked');
      const revokedEvents = (await eventsOf(ctx().service, ctx().projectId, 'session.revoked')).filter(
        (event) => event['session_id'] === name,
      );
      expect(revokedEvents).toHaveLength(1);
    });

    it('with the secret key: no session_id → 400 parameter_missing; an unknown one → 404', async () => {
      expectError(await post('/v1/auth/logout', {}), 400, 'parameter_missing', 'session_id');
      expectError(await call({ method: 'POST', url: '/v1/auth/logout', headers: ctx().auth }), 400, 'parameter_missing', 'session_id');
      expectError(await post('/v1/auth/logout', { session_id: 'svc_ses_000000000000000000000000' }), 404, 'resource_missing', 'session_id');
      expectError(await post('/v1/auth/logout', { session_id: 'garbage' }), 404, 'resource_missing', 'session_id');
    });
  });

  describe('POST /v1/auth/password/change', () => {
    it('changes the password, keeps this session and revokes the others (reason password_reset)', async () => {
      const account = await signup(call, ctx().secretKey);
      const other = (await post('/v1/auth/login', { email: account.email, password: account.password })).json().session.id as string;
      const newPassword = strongPassword('new');
      const response = await call({
        method: 'POST',
        url: '/v1/auth/password/change',
        headers: bearer(account.token),
        payload: { current_password: account.password, new_password: newPassword },
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ id: account.userId, object: 'user' });
      expect((await call({ method: 'GET', url: '/v1/users/me', headers: bearer(account.token) })).statusCode).toBe(200);
      expectError(await call({ method: 'GET', url: '/v1/users/me', headers: bearer(other) }), 401, 'session_revoked');
      expect(await eventsOf(ctx().service, ctx().projectId, 'session.revoked')).toContainEqual({
        session_id: other.split('.')[0],
        user_id: account.userId,
        reason: 'password_reset',
      });
      expectError(await post('/v1/auth/login', { email: account.email, password: account.password }), 401, 'invalid_credentials');
      expect((await post('/v1/auth/login', { email: account.email, password: newPassword })).statusCode).toBe(200);
    });

    it('refuses a wrong current password (401 invalid_credentials) and a weak new one (422)', async () => {
      const account = await signup(call, ctx().secretKey);
      const change = (payload: object) =>
        call({ method: 'POST', url: '/v1/auth/password/change', headers: bearer(account.token), payload });
      expectError(
        await change({ current_password: 'nope-nope', new_password: strongPassword() }),
        401,
        'invalid_credentials',
        'current_password',
      );
      expectError(await change({ current_password: account.password, new_password: 'football' }), 422, 'password_too_weak', 'new_password');
      expectError(await change({ current_password: account.password, new_password: 'short' }), 422, 'password_too_weak', 'new_password');
      expectError(await change({ current_password: account.password }), 400, 'parameter_missing', 'new_password');
      // A secret key is not a session.
      expectError(
        await post('/v1/auth/password/change', { current_password: account.password, new_password: strongPassword() }),
        403,
        'session_token_required',
      );
    });
  });
});

describeEachDialect('credentials and projects', (dialect) => {
  const ctx = useTestService(dialect);
  const call = (options: InjectOptions) => ctx().service.app.inject(options);

  it('a session token on a secret-key route → 403 secret_key_required; a secret key on a session route → 403 session_token_required', async () => {
    const account = await signup(call, ctx().secretKey);
    expectError(await call({ method: 'GET', url: '/v1/users', headers: bearer(account.token) }), 403, 'secret_key_required');
    expectError(
      await call({ method: 'POST', url: '/v1/sessions/validate', headers: bearer(account.token), payload: { session_id: account.token } }),
      403,
      'secret_key_required',
    );
    expectError(await call({ method: 'GET', url: '/v1/users/me', headers: ctx().auth }), 403, 'session_token_required');
    expectError(await call({ method: 'GET', url: '/v1/users/me' }), 401, 'credential_missing');
  });

  it('a malformed, unknown or tampered session token → 401 session_invalid', async () => {
    const account = await signup(call, ctx().secretKey);
    const [name, secret] = account.token.split('.') as [string, string];
    const tampered = `${name}.${secret.startsWith('A') ? 'B' : 'A'}${secret.slice(1)}`;
    for (const token of ['svc_ses_nope', `${name}.short`, tampered, `svc_ses_${'0'.repeat(24)}.${secret}`, name]) {
      expectError(await call({ method: 'GET', url: '/v1/users/me', headers: bearer(token) }), 401, 'session_invalid');
    }
  });

  it("keeps projects apart: another project's key sees none of this project's users, sessions or tokens", async () => {
    const account = await signup(call, ctx().secretKey);
    const { secretKey: otherKey } = await ctx().service.projects.createProject({ name: 'Other project' });
    const other = { authorization: `Bearer ${otherKey}` };
    expectError(await call({ method: 'GET', url: `/v1/users/${account.userId}`, headers: other }), 404, 'resource_missing');
    expectError(
      await call({ method: 'PATCH', url: `/v1/users/${account.userId}`, headers: other, payload: { name: 'x' } }),
      404,
      'resource_missing',
    );
    expectError(await call({ method: 'DELETE', url: `/v1/users/${account.userId}`, headers: other }), 404, 'resource_missing');
    expectError(await call({ method: 'POST', url: `/v1/users/${account.userId}/ban`, headers: other }), 404, 'resource_missing');
    expectError(await call({ method: 'GET', url: `/v1/users/${account.userId}/sessions`, headers: other }), 404, 'resource_missing');
    expect(
      (await call({ method: 'GET', url: `/v1/users?email=${encodeURIComponent(account.email)}`, headers: other })).json().data,
    ).toEqual([]);
    expect(
      (await call({ method: 'POST', url: '/v1/sessions/validate', headers: other, payload: { session_id: account.token } })).json(),
    ).toEqual({
      valid: false,
      reason: 'not_found',
    });
    expectError(
      await call({ method: 'POST', url: '/v1/sessions/refresh', headers: other, payload: { refresh_token: account.refreshToken } }),
      401,
      'refresh_token_invalid',
    );
    expectError(
      await call({ method: 'POST', url: `/v1/sessions/${account.token.split('.')[0]!}/revoke`, headers: other }),
      404,
      'resource_missing',
    );
    expectError(
      await call({ method: 'POST', url: '/v1/auth/logout', headers: other, payload: { session_id: account.token } }),
      404,
      'resource_missing',
    );
    // The same email may sign up in the other project: emails are unique per project.
    const again = await call({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: other,
      payload: { email: account.email, password: strongPassword() },
    });
    expect(again.statusCode).toBe(201);
    // The other project's user cannot log in to this project, nor this one's there with its password.
    expectError(
      await call({ method: 'POST', url: '/v1/auth/login', headers: other, payload: { email: account.email, password: account.password } }),
      401,
      'invalid_credentials',
    );
    // Nothing of the other project's calls touched this session.
    expect((await call({ method: 'GET', url: '/v1/users/me', headers: bearer(account.token) })).statusCode).toBe(200);
  });

  it('documents every route of the module in /v1/openapi.json', async () => {
    const response = await call({ method: 'GET', url: '/v1/openapi.json' });
    expect(response.statusCode).toBe(200);
    const paths = Object.keys(response.json<{ paths: Record<string, unknown> }>().paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/v1/auth/signup',
        '/v1/auth/login',
        '/v1/auth/logout',
        '/v1/auth/verify-email',
        '/v1/auth/verify-email/send',
        '/v1/auth/password/forgot',
        '/v1/auth/password/reset',
        '/v1/auth/password/change',
        '/v1/sessions/validate',
        '/v1/sessions/refresh',
        '/v1/sessions/{id}/revoke',
        '/v1/users/me',
        '/v1/users',
        '/v1/users/{id}',
        '/v1/users/{id}/sessions',
        '/v1/users/{id}/sessions/revoke',
        '/v1/users/{id}/ban',
        '/v1/users/{id}/unban',
        '/v1/roles',
        '/v1/roles/{key}',
        '/v1/wallet/balance',
      ]),
    );
  });

  it('the wrong route for a credential never answers 404 for a route that exists', async () => {
    expect(errorCode(await call({ method: 'GET', url: '/v1/users/me', headers: ctx().auth }))).toBe('session_token_required');
  });
});

describeEachDialect('CORS on session-token routes', (dialect) => {
  const ctx = useTestService(dialect, { env: { CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const preflight = (url: string, origin: string) =>
    call({
      method: 'OPTIONS',
      url,
      headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });

  it('answers the preflight of a session route for an allowed origin', async () => {
    const response = await preflight('/v1/users/me', 'https://app.example.com');
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(String(response.headers['access-control-allow-headers'])).toContain('Authorization');
    expect(response.headers['access-control-allow-methods']).toBe('GET');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('gives an origin not on the list no CORS headers', async () => {
    const response = await preflight('/v1/users/me', 'https://evil.example.net');
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('never answers the preflight of a secret-key route', async () => {
    for (const url of ['/v1/users', '/v1/auth/login', '/v1/sessions/validate']) {
      const response = await preflight(url, 'https://app.example.com');
      // The path exists, but not under OPTIONS: 405, and Allow does not offer it.
      expect(response.statusCode).toBe(405);
      expect(response.headers['allow']).not.toContain('OPTIONS');
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('lets an allowed origin read responses of session routes, errors included', async () => {
    const account = await signup(call, ctx().secretKey);
    const origin = 'https://admin.example.com';
    const ok = await call({ method: 'GET', url: '/v1/users/me', headers: { ...bearer(account.token), origin } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(origin);
    expect(String(ok.headers['access-control-expose-headers'])).toContain('Request-Id');
    const refused = await call({ method: 'GET', url: '/v1/users/me', headers: { authorization: 'Bearer svc_ses_x', origin } });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(origin);
    const secretRoute = await call({ method: 'GET', url: '/v1/users', headers: { ...ctx().auth, origin } });
    expect(secretRoute.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('configuration of authentication', () => {
  const base = { NODE_ENV: 'test', DATABASE_URL: 'sqlite::memory:' };

  it('reads SESSION_TTL and REFRESH_TTL as seconds or with a unit, and refuses anything else', () => {
    expect(loadConfig({ ...base }).auth).toMatchObject({ sessionTtlSeconds: 86_400, refreshTtlSeconds: 2_592_000 });
    expect(loadConfig({ ...base, SESSION_TTL: '3600', REFRESH_TTL: '7d' }).auth).toMatchObject({
      sessionTtlSeconds: 3600,
      refreshTtlSeconds: 604_800,
    });
    expect(loadConfig({ ...base, SESSION_TTL: '90m' }).auth.sessionTtlSeconds).toBe(5400);
    for (const value of ['0', '-5', '1.5h', '24 hours', 'h']) {
      expect(() => loadConfig({ ...base, SESSION_TTL: value })).toThrow(ConfigError);
    }
  });

  it('checks SMTP_URL, PUBLIC_URL and the redirect URLs', () => {
    expect(loadConfig({ ...base, PORT: '9000' }).email).toMatchObject({ smtpUrl: undefined, publicUrl: 'http://localhost:9000' });
    expect(
      loadConfig({ ...base, SMTP_URL: 'smtps://user:pass@mail.example.com:465', PUBLIC_URL: 'https://api.example.com/' }).email,
    ).toMatchObject({
      smtpUrl: 'smtps://user:pass@mail.example.com:465',
      publicUrl: 'https://api.example.com',
    });
    expect(() => loadConfig({ ...base, SMTP_URL: 'http://mail.example.com' })).toThrow('SMTP_URL');
    expect(() => loadConfig({ ...base, PUBLIC_URL: 'api.example.com' })).toThrow('PUBLIC_URL');
    expect(() => loadConfig({ ...base, PASSWORD_RESET_URL: 'ftp://x' })).toThrow('PASSWORD_RESET_URL');
    expect(() => loadConfig({ ...base, EMAIL_VERIFIED_REDIRECT_URL: 'nope' })).toThrow('EMAIL_VERIFIED_REDIRECT_URL');
  });
});

describeEachDialect('sign-up rate limit', (dialect) => {
  const ctx = useTestService(dialect, { env: { RATE_LIMIT_IP_PER_SECOND: '1000' } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);

  it('allows 20 sign-ups at once from one client IP, then answers 429 with Retry-After', async () => {
    const attempt = (remoteAddress: string) =>
      call({
        method: 'POST',
        url: '/v1/auth/signup',
        headers: ctx().auth,
        payload: { email: uniqueEmail('burst'), password: strongPassword() },
        remoteAddress,
      });
    // The bucket refills one a second while the test runs, so count the successes before the first 429.
    const startedMs = Date.now();
    let accepted = 0;
    let refused: LightMyRequestResponse | undefined;
    while (refused === undefined && accepted < 100) {
      const response = await attempt('192.0.2.50');
      if (response.statusCode === 201) accepted += 1;
      else refused = response;
    }
    const elapsedSeconds = (Date.now() - startedMs) / 1000;
    expect(accepted).toBeGreaterThanOrEqual(SIGNUP_RATE_RULE.burst);
    expect(accepted).toBeLessThanOrEqual(SIGNUP_RATE_RULE.burst + Math.ceil(elapsedSeconds * SIGNUP_RATE_RULE.perSecond) + 1);
    expectError(refused!, 429, 'rate_limited');
    expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await attempt('192.0.2.51')).statusCode).toBe(201);
  });
});
