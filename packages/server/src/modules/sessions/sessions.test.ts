import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { bearer, eventsOf, signup, testClock } from '../auth/auth.testing.js';

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code }).toEqual({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

const nameOf = (token: string) => token.slice(0, token.indexOf('.'));
/** The ids of a list response, in order. */
const idsOf = (response: LightMyRequestResponse) => response.json<{ data: Array<{ id: string }> }>().data.map((item) => item.id);
const HOUR_MS = 60 * 60 * 1000;

describeEachDialect('sessions', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const post = (url: string, payload?: object) =>
    call({ method: 'POST', url, headers: ctx().auth, ...(payload === undefined ? {} : { payload }) });
  const me = (token: string) => call({ method: 'GET', url: '/v1/users/me', headers: bearer(token) });
  const refresh = (refreshToken: string) => post('/v1/sessions/refresh', { refresh_token: refreshToken });

  describe('POST /v1/sessions/validate', () => {
    it('answers {valid: true, user, session} for a live token; the session is named, never echoed', async () => {
      const account = await signup(call, ctx().secretKey);
      const response = await post('/v1/sessions/validate', { session_id: account.token });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['jwt', 'session', 'user', 'valid']);
      expect(body.valid).toBe(true);
      expect(body.user).toMatchObject({ id: account.userId, object: 'user', email: account.email });
      expect(body.session).toMatchObject({
        id: nameOf(account.token),
        object: 'session',
        user_id: account.userId,
        ip: '127.0.0.1',
        revoked_at: null,
      });
      expect(JSON.stringify(body)).not.toContain(account.token);
      expect(JSON.stringify(body)).not.toContain(account.refreshToken);
    });

    it('answers {valid: false, reason: "expired"} once expires_at has passed, and the token is refused at once (401 session_expired)', async () => {
      const account = await signup(call, ctx().secretKey);
      clock.advance(24 * HOUR_MS - 1000);
      expect((await me(account.token)).statusCode).toBe(200);
      clock.advance(1000);
      expect((await post('/v1/sessions/validate', { session_id: account.token })).json()).toEqual({ valid: false, reason: 'expired' });
      expectError(await me(account.token), 401, 'session_expired');
    });

    it('answers {valid: false, reason: "revoked"} after a revoke, and never 404', async () => {
      const account = await signup(call, ctx().secretKey);
      expect((await post(`/v1/sessions/${nameOf(account.token)}/revoke`)).statusCode).toBe(200);
      expect((await post('/v1/sessions/validate', { session_id: account.token })).json()).toEqual({ valid: false, reason: 'revoked' });
      for (const sessionId of ['', 'garbage', nameOf(account.token), `svc_ses_${'A'.repeat(24)}.${'b'.repeat(43)}`, `${account.token}x`]) {
        const response = await post('/v1/sessions/validate', { session_id: sessionId });
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual({ valid: false, reason: 'not_found' });
      }
      expectError(await post('/v1/sessions/validate', {}), 400, 'parameter_missing', 'session_id');
    });

    it('takes no Idempotency-Key: the same key after a revocation answers revoked, not the earlier valid answer', async () => {
      const account = await signup(call, ctx().secretKey);
      const withKey = () =>
        call({
          method: 'POST',
          url: '/v1/sessions/validate',
          headers: { ...ctx().auth, 'idempotency-key': 'validate-once' },
          payload: { session_id: account.token },
        });
      const first = await withKey();
      expect(first.json()).toMatchObject({ valid: true });
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect((await post(`/v1/sessions/${nameOf(account.token)}/revoke`)).statusCode).toBe(200);
      const again = await withKey();
      expect(again.json()).toEqual({ valid: false, reason: 'revoked' });
      expect(again.headers['idempotent-replayed']).toBeUndefined();
    });

    it('answers not_found for a live session whose user row is gone', async () => {
      const account = await signup(call, ctx().secretKey);
      const db = ctx().service.db.kysely;
      // As if the user had been deleted without its sessions (the user delete revokes them).
      await db.deleteFrom('sessions').where('user_id', '=', account.userId).where('id', '!=', nameOf(account.token)).execute();
      await db.updateTable('sessions').set({ user_id: 'usr_gone' }).where('id', '=', nameOf(account.token)).execute();
      expect((await post('/v1/sessions/validate', { session_id: account.token })).json()).toEqual({ valid: false, reason: 'not_found' });
    });

    it('moves last_used_at at most once a minute', async () => {
      const account = await signup(call, ctx().secretKey);
      const lastUsed = async () =>
        (await post('/v1/sessions/validate', { session_id: account.token })).json().session.last_used_at as string;
      const first = await lastUsed();
      clock.advance(30_000);
      expect(await lastUsed()).toBe(first);
      clock.advance(31_000);
      await me(account.token);
      expect(await lastUsed()).toBe(clock.now().toISOString());
    });
  });

  describe('POST /v1/sessions/refresh', () => {
    it('returns {user, session} with a new token and refresh token; the old session is revoked (reason refreshed)', async () => {
      const account = await signup(call, ctx().secretKey);
      clock.advance(1000);
      const response = await refresh(account.refreshToken);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['session', 'user']);
      expect(Object.keys(body.session).sort()).toEqual(['expires_at', 'id', 'jwt', 'refresh_expires_at', 'refresh_token']);
      expect(body.user.id).toBe(account.userId);
      expect(body.session.id).not.toBe(account.token);
      expect(body.session.refresh_token).not.toBe(account.refreshToken);
      expect(Date.parse(body.session.expires_at)).toBe(clock.now().getTime() + 24 * HOUR_MS);
      expectError(await me(account.token), 401, 'session_revoked');
      expect((await me(body.session.id)).statusCode).toBe(200);
      const revoked = await eventsOf(ctx().service, ctx().projectId, 'session.revoked');
      expect(revoked).toContainEqual({ session_id: nameOf(account.token), user_id: account.userId, reason: 'refreshed' });
      const created = await eventsOf(ctx().service, ctx().projectId, 'session.created');
      expect(created).toContainEqual({ session_id: nameOf(body.session.id), user_id: account.userId });
    });

    it('works after the session expired, while the refresh token lives; not after the refresh token expired', async () => {
      const account = await signup(call, ctx().secretKey);
      clock.advance(25 * HOUR_MS);
      expectError(await me(account.token), 401, 'session_expired');
      const renewed = await refresh(account.refreshToken);
      expect(renewed.statusCode).toBe(200);
      clock.advance(30 * 24 * HOUR_MS + 1000);
      expectError(await refresh(renewed.json().session.refresh_token), 401, 'refresh_token_invalid', 'refresh_token');
    });

    it('detects reuse: a used refresh token presented again revokes the whole chain (reason refresh_token_reuse) → 401 refresh_token_reused', async () => {
      const account = await signup(call, ctx().secretKey);
      const second = (await refresh(account.refreshToken)).json().session;
      const third = (await refresh(second.refresh_token)).json().session;
      // An unrelated session of the same user is not part of the chain.
      const unrelated = await call({
        method: 'POST',
        url: '/v1/auth/login',
        headers: ctx().auth,
        payload: { email: account.email, password: account.password },
      });
      const unrelatedToken = unrelated.json().session.id as string;
      clock.advance(1000);

      expectError(await refresh(account.refreshToken), 401, 'refresh_token_reused', 'refresh_token');
      expectError(await me(third.id), 401, 'session_revoked');
      expect((await me(unrelatedToken)).statusCode).toBe(200);
      // The latest refresh token of the chain is dead too: whoever held the copy is logged out.
      expectError(await refresh(third.refresh_token), 401, 'refresh_token_invalid');
      const revoked = await eventsOf(ctx().service, ctx().projectId, 'session.revoked');
      expect(revoked).toContainEqual({ session_id: nameOf(third.id), user_id: account.userId, reason: 'refresh_token_reuse' });
      expect(revoked.filter((event) => event['reason'] === 'refresh_token_reuse')).toHaveLength(1);
    });

    // Regression: a hard-coded 5-s grace window let a used token mint a NEW session each time it came
    // back within 5 s. With REFRESH_REUSE_GRACE_SECONDS unset (0) a refresh token is single use.
    it('is single use by default: the used token presented again at once is reuse, and makes no session', async () => {
      const account = await signup(call, ctx().secretKey);
      const first = await refresh(account.refreshToken);
      expect(first.statusCode).toBe(200);
      expectError(await refresh(account.refreshToken), 401, 'refresh_token_reused', 'refresh_token');
      expectError(await me(first.json().session.id), 401, 'session_revoked');
      const sessions = await ctx().service.db.kysely.selectFrom('sessions').selectAll().where('user_id', '=', account.userId).execute();
      expect(sessions).toHaveLength(2);
      expect(sessions.every((session) => session.successor_sealed === null)).toBe(true);
    });

    // Two concurrent presentations are indistinguishable from a client racing a thief: one is
    // first, so the other presents a used token. Exactly one successor is made, and the chain,
    // that successor included, is revoked (docs/adr/0009-sessions-and-refresh-chains.md).
    it('answers two concurrent refreshes with one token 200 and 401 refresh_token_reused, with one successor, then revoked', async () => {
      const account = await signup(call, ctx().secretKey);
      const results = await Promise.all([refresh(account.refreshToken), refresh(account.refreshToken)]);
      const statuses = results.map((response) => response.statusCode).sort();
      expect(statuses).toEqual([200, 401]);
      const winner = results.find((response) => response.statusCode === 200)!;
      expectError(
        results.find((response) => response.statusCode === 401)!,
        401,
        'refresh_token_reused',
      );
      expectError(await me(winner.json().session.id), 401, 'session_revoked');
      const sessions = await ctx().service.db.kysely.selectFrom('sessions').select('id').where('user_id', '=', account.userId).execute();
      expect(sessions).toHaveLength(2);
    });

    it('refuses malformed, unknown and revoked refresh tokens with 401 refresh_token_invalid', async () => {
      const account = await signup(call, ctx().secretKey);
      expectError(await refresh('nope'), 401, 'refresh_token_invalid', 'refresh_token');
      expectError(await refresh(`svc_rt_${'x'.repeat(43)}`), 401, 'refresh_token_invalid');
      expectError(await refresh(account.token), 401, 'refresh_token_invalid');
      await call({ method: 'POST', url: '/v1/auth/logout', headers: bearer(account.token) });
      expectError(await refresh(account.refreshToken), 401, 'refresh_token_invalid');
      expectError(await post('/v1/sessions/refresh', {}), 400, 'parameter_missing', 'refresh_token');
    });
  });

  describe('POST /v1/sessions/{id}/revoke', () => {
    it('revokes by name or token with reason revoked; again is a no-op; unknown → 404', async () => {
      const account = await signup(call, ctx().secretKey);
      const response = await post(`/v1/sessions/${nameOf(account.token)}/revoke`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ id: nameOf(account.token), object: 'session', revoked_reason: 'revoked' });
      expect(response.json().revoked_at).toBe(clock.now().toISOString());
      expectError(await me(account.token), 401, 'session_revoked');
      expect((await post(`/v1/sessions/${encodeURIComponent(account.token)}/revoke`)).statusCode).toBe(200);
      const events = (await eventsOf(ctx().service, ctx().projectId, 'session.revoked')).filter(
        (event) => event['session_id'] === nameOf(account.token),
      );
      expect(events).toEqual([{ session_id: nameOf(account.token), user_id: account.userId, reason: 'revoked' }]);
      expectError(await post(`/v1/sessions/svc_ses_${'Z'.repeat(24)}/revoke`), 404, 'resource_missing', 'id');
    });
  });

  describe("a user's sessions", () => {
    it('GET /v1/users/{id}/sessions lists live sessions newest first with ip, user agent, created and last used; pages', async () => {
      const account = await signup(call, ctx().secretKey);
      const tokens = [account.token];
      for (let index = 0; index < 2; index += 1) {
        clock.advance(1000);
        const login = await call({
          method: 'POST',
          url: '/v1/auth/login',
          headers: { ...ctx().auth, 'user-agent': `agent-${index}` },
          payload: { email: account.email, password: account.password },
          remoteAddress: `192.0.2.${index + 1}`,
        });
        tokens.push(login.json().session.id as string);
      }
      await call({ method: 'POST', url: '/v1/auth/logout', headers: bearer(tokens[0]!) });
      const list = await call({ method: 'GET', url: `/v1/users/${account.userId}/sessions`, headers: ctx().auth });
      expect(list.statusCode).toBe(200);
      const body = list.json();
      expect(body).toMatchObject({ object: 'list', has_more: false });
      expect(idsOf(list)).toEqual([nameOf(tokens[2]!), nameOf(tokens[1]!)]);
      expect(body.data[0]).toMatchObject({ ip: '192.0.2.2', user_agent: 'agent-1', user_id: account.userId });
      expect(Object.keys(body.data[0]).sort()).toEqual(
        [
          'created_at',
          'expires_at',
          'id',
          'ip',
          'last_used_at',
          'object',
          'refresh_expires_at',
          'revoked_at',
          'revoked_reason',
          'user_agent',
          'user_id',
        ].sort(),
      );
      expect(JSON.stringify(body)).not.toMatch(/svc_ses_[0-9A-Za-z]{24}\./);

      const page = await call({ method: 'GET', url: `/v1/users/${account.userId}/sessions?limit=1`, headers: ctx().auth });
      expect(page.json()).toMatchObject({ has_more: true });
      const next = await call({
        method: 'GET',
        url: `/v1/users/${account.userId}/sessions?limit=1&starting_after=${page.json().data[0].id as string}`,
        headers: ctx().auth,
      });
      expect(idsOf(next)).toEqual([nameOf(tokens[1]!)]);
      expect(next.json().has_more).toBe(false);
      expectError(
        await call({ method: 'GET', url: '/v1/users/usr_0000000000000000000000/sessions', headers: ctx().auth }),
        404,
        'resource_missing',
      );
    });

    it('POST /v1/users/{id}/sessions/revoke revokes every live session (reason revoked) at once', async () => {
      const account = await signup(call, ctx().secretKey);
      const second = (
        await call({
          method: 'POST',
          url: '/v1/auth/login',
          headers: ctx().auth,
          payload: { email: account.email, password: account.password },
        })
      ).json().session as { id: string; refresh_token: string };
      const response = await post(`/v1/users/${account.userId}/sessions/revoke`);
      expect(response.statusCode).toBe(200);
      expect(idsOf(response).sort()).toEqual([nameOf(account.token), nameOf(second.id)].sort());
      expectError(await me(account.token), 401, 'session_revoked');
      expectError(await me(second.id), 401, 'session_revoked');
      expectError(await refresh(second.refresh_token), 401, 'refresh_token_invalid');
      expect((await call({ method: 'GET', url: `/v1/users/${account.userId}/sessions`, headers: ctx().auth })).json().data).toEqual([]);
      expect((await post(`/v1/users/${account.userId}/sessions/revoke`)).json().data).toEqual([]);
    });
  });

  it('stores neither the session token nor the refresh token: only svc_ses_<ref> and SHA-256 hashes', async () => {
    const account = await signup(call, ctx().secretKey);
    const row = await ctx()
      .service.db.kysely.selectFrom('sessions')
      .selectAll()
      .where('id', '=', nameOf(account.token))
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(account.token.split('.')[1]);
    expect(JSON.stringify(row)).not.toContain(account.refreshToken);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.refresh_token_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describeEachDialect('session lifetimes from SESSION_TTL and REFRESH_TTL', (dialect) => {
  const clock = testClock();
  const ctx = useTestService(dialect, { env: { SESSION_TTL: '15m', REFRESH_TTL: '2h' }, serviceOptions: { clock } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);

  it('issues sessions of 15 minutes and refresh tokens of 2 hours', async () => {
    const account = await signup(call, ctx().secretKey);
    const now = clock.now().getTime();
    expect(Date.parse(account.body.session.expires_at) - now).toBe(15 * 60 * 1000);
    expect(Date.parse(account.body.session.refresh_expires_at) - now).toBe(2 * HOUR_MS);
    clock.advance(15 * 60 * 1000);
    expectError(await call({ method: 'GET', url: '/v1/users/me', headers: bearer(account.token) }), 401, 'session_expired');
  });
});
