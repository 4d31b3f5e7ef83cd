import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { loadConfig } from '../../config.js';
import { dashboardCookieSecure } from './dashboard.module.js';
import { csrfToken, DASHBOARD_COOKIE_NAME, DASHBOARD_SIGNED_IN_COOKIE_NAME } from './dashboard.service.js';

const HOST = 'svc.test';
const ORIGIN = `http://${HOST}`;

function cookieOf(response: LightMyRequestResponse): string {
  const header = response.headers['set-cookie'];
  const value = Array.isArray(header) ? header[0] : header;
  const match = new RegExp(`^${DASHBOARD_COOKIE_NAME}=([^;]*)`).exec(value ?? '');
  if (match?.[1] === undefined) throw new Error(`no dashboard cookie in ${String(value)}`);
  return match[1];
}

describe('dashboard CSRF token', () => {
  it('is derived from the cookie, so it differs per session and cannot be made without it', () => {
    const a = csrfToken('a'.repeat(43));
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(csrfToken('a'.repeat(43))).toBe(a);
    expect(csrfToken('b'.repeat(43))).not.toBe(a);
  });
});

describeEachDialect('dashboard sessions', (dialect) => {
  const test = useTestService(dialect);

  async function signIn(secretKey = test().secretKey): Promise<{ cookie: string; csrf: string; response: LightMyRequestResponse }> {
    const response = await test().service.app.inject({
      method: 'POST',
      url: '/dashboard/api/session',
      headers: { host: HOST, origin: ORIGIN },
      payload: { secret_key: secretKey },
    });
    expect(response.statusCode, response.body).toBe(201);
    return { cookie: cookieOf(response), csrf: response.json<{ csrf_token: string }>().csrf_token, response };
  }

  function asDashboard(session: { cookie: string; csrf?: string }, options: InjectOptions): Promise<LightMyRequestResponse> {
    return test().service.app.inject({
      ...options,
      headers: {
        host: HOST,
        origin: ORIGIN,
        cookie: `other=1; ${DASHBOARD_COOKIE_NAME}=${session.cookie}`,
        ...(session.csrf === undefined ? {} : { 'x-csrf-token': session.csrf }),
        ...(options.headers ?? {}),
      },
    } as InjectOptions);
  }

  it('exchanges the secret key for an HttpOnly, SameSite=Strict cookie with an expiry; the key is stored nowhere', async () => {
    const { response, cookie } = await signIn();
    const [setCookie, marker] = response.headers['set-cookie'] as string[];
    expect(setCookie).toMatch(/; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    expect(setCookie).not.toContain('Secure'); // test environment, no TLS
    // Beside it, a marker the page can read (no secret in it), so a page without it skips the session probe.
    expect(marker).toBe(`${DASHBOARD_SIGNED_IN_COOKIE_NAME}=1; Path=/; Max-Age=43200; SameSite=Strict`);
    expect(setCookie).not.toContain(test().secretKey);
    const body = response.json<{ key_id: string; project_id: string; expires_at: string }>();
    expect(body.project_id).toBe(test().projectId);
    expect(body.key_id).toMatch(/^key_/);
    expect(Date.parse(body.expires_at) - Date.now()).toBeGreaterThan(11.9 * 3600 * 1000);
    const rows = await test().service.db.kysely.selectFrom('dashboard_sessions').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(test().secretKey);
    expect(JSON.stringify(rows)).not.toContain(cookie);

    const session = await asDashboard({ cookie }, { method: 'GET', url: '/dashboard/api/session' });
    expect(session.statusCode).toBe(200);
    expect(session.headers['cache-control']).toBe('no-store');
    expect(session.json()).toEqual(body);
  });

  it('refuses a wrong key with a clear message', async () => {
    const response = await test().service.app.inject({
      method: 'POST',
      url: '/dashboard/api/session',
      headers: { host: HOST, origin: ORIGIN },
      payload: { secret_key: 'svc_sk_wrongwrongwrongwrongwrongwrongwrong' },
    });
    expect(response.statusCode).toBe(401);
    expect(response.json().error).toMatchObject({ code: 'invalid_api_key', param: 'secret_key' });
    expect(response.json().error.message).toContain('not valid');
    expect(response.headers['set-cookie']).toBeUndefined();
  });

  it('refuses a sign-in posted from another origin (login CSRF)', async () => {
    const response = await test().service.app.inject({
      method: 'POST',
      url: '/dashboard/api/session',
      headers: { host: HOST, origin: 'https://evil.example' },
      payload: { secret_key: test().secretKey },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('csrf_token_invalid');
  });

  it('acts as the secret key on /v1 (marked via: dashboard): reads without CSRF, changes only with it', async () => {
    const session = await signIn();
    const read = await asDashboard({ cookie: session.cookie }, { method: 'GET', url: '/v1/project' });
    expect(read.statusCode).toBe(200);
    expect(read.json().id).toBe(test().projectId);
    // A blank credential header is no credential, for the cookie as for the headers themselves.
    const blankKey = await asDashboard({ cookie: session.cookie }, { method: 'GET', url: '/v1/project', headers: { 'x-api-key': '  ' } });
    expect(blankKey.statusCode).toBe(200);

    const withoutCsrf = await asDashboard({ cookie: session.cookie }, { method: 'POST', url: '/v1/api-keys', payload: { name: 'x' } });
    expect(withoutCsrf.statusCode).toBe(403);
    expect(withoutCsrf.json().error.code).toBe('csrf_token_invalid');

    const wrongCsrf = await asDashboard(
      { cookie: session.cookie, csrf: csrfToken('z'.repeat(43)) },
      { method: 'POST', url: '/v1/api-keys', payload: {} },
    );
    expect(wrongCsrf.statusCode).toBe(403);

    const otherOrigin = await asDashboard(session, {
      method: 'POST',
      url: '/v1/api-keys',
      payload: {},
      headers: { origin: 'https://evil.example' },
    });
    expect(otherOrigin.statusCode).toBe(403);

    const created = await asDashboard(session, { method: 'POST', url: '/v1/api-keys', payload: { name: 'from the dashboard' } });
    expect(created.statusCode, created.body).toBe(201);
    const principal = await test().service.dashboard.service.authenticate({
      token: session.cookie,
      csrfToken: session.csrf,
      origin: ORIGIN,
      host: HOST,
      changes: true,
    });
    expect(principal).toEqual({ kind: 'secret_key', projectId: test().projectId, keyId: session.response.json().key_id, via: 'dashboard' });
  });

  it('is recorded in the audit log as the dashboard acting for its key', async () => {
    const session = await signIn();
    const created = await asDashboard(session, { method: 'POST', url: '/v1/api-keys', payload: { name: 'audited' } });
    expect(created.statusCode, created.body).toBe(201);
    const entries = await test().service.app.inject({
      method: 'GET',
      url: `/v1/audit-logs?resource_id=${created.json<{ id: string }>().id}`,
      headers: { authorization: `Bearer ${test().secretKey}` },
    });
    expect(entries.statusCode, entries.body).toBe(200);
    const [entry] = entries.json<{ data: { actor: unknown; request_id: string }[] }>().data;
    expect(entry?.actor).toEqual({ type: 'dashboard', key_id: session.response.json().key_id });
    expect(entry?.request_id).toBe(created.headers['request-id']);
  });

  it('a secret key in Authorization wins over the cookie', async () => {
    const session = await signIn();
    const response = await asDashboard(
      { cookie: session.cookie },
      { method: 'POST', url: '/v1/api-keys', payload: { name: 'header wins' }, headers: { authorization: `Bearer ${test().secretKey}` } },
    );
    expect(response.statusCode).toBe(201);
  });

  it('refuses to revoke the key of the current session or request with 409 api_key_in_use', async () => {
    const session = await signIn();
    const keyId = session.response.json<{ key_id: string }>().key_id;
    const viaDashboard = await asDashboard(session, { method: 'POST', url: `/v1/api-keys/${keyId}/revoke` });
    expect(viaDashboard.statusCode).toBe(409);
    expect(viaDashboard.json().error).toMatchObject({ code: 'api_key_in_use', param: 'id' });
    expect(viaDashboard.json().error.message).toContain('dashboard session');
    const viaHeader = await test().service.app.inject({ method: 'POST', url: `/v1/api-keys/${keyId}/revoke`, headers: test().auth });
    expect(viaHeader.statusCode).toBe(409);
  });

  it('ends every session of a key the moment the key is revoked', async () => {
    const created = await test().service.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: test().auth,
      payload: { name: 'temp' },
    });
    const { id, secret_key } = created.json<{ id: string; secret_key: string }>();
    const session = await signIn(secret_key);
    expect((await asDashboard(session, { method: 'GET', url: '/v1/project' })).statusCode).toBe(200);
    const revoked = await test().service.app.inject({ method: 'POST', url: `/v1/api-keys/${id}/revoke`, headers: test().auth });
    expect(revoked.statusCode).toBe(200);
    const after = await asDashboard(session, { method: 'GET', url: '/v1/project' });
    expect(after.statusCode).toBe(401);
    expect(after.json().error.code).toBe('dashboard_session_invalid');
    expect(after.json().error.message).toContain('revoked');
    expect((await asDashboard(session, { method: 'GET', url: '/dashboard/api/session' })).statusCode).toBe(401);
  });

  it('sign out needs the CSRF token, ends the session and clears the cookie', async () => {
    const session = await signIn();
    const withoutCsrf = await asDashboard({ cookie: session.cookie }, { method: 'DELETE', url: '/dashboard/api/session' });
    expect(withoutCsrf.statusCode).toBe(403);
    const out = await asDashboard(session, { method: 'DELETE', url: '/dashboard/api/session' });
    expect(out.statusCode).toBe(204);
    const [cleared, marker] = out.headers['set-cookie'] as string[];
    expect(cleared).toMatch(new RegExp(`^${DASHBOARD_COOKIE_NAME}=; Path=/; Max-Age=0`));
    expect(marker).toMatch(new RegExp(`^${DASHBOARD_SIGNED_IN_COOKIE_NAME}=; Path=/; Max-Age=0`));
    const after = await asDashboard(session, { method: 'GET', url: '/v1/project' });
    expect(after.statusCode).toBe(401);
    expect(after.json().error.message).toContain('signed out');
  });

  it('a forged or missing cookie is no credential', async () => {
    const forged = await asDashboard({ cookie: 'A'.repeat(43) }, { method: 'GET', url: '/v1/project' });
    expect(forged.statusCode).toBe(401);
    expect(forged.json().error.code).toBe('dashboard_session_invalid');
    const none = await test().service.app.inject({ method: 'GET', url: '/dashboard/api/session' });
    expect(none.statusCode).toBe(401);
  });

  it('a cookie is not a session token: session routes ignore it', async () => {
    const session = await signIn();
    const response = await asDashboard(session, { method: 'GET', url: '/v1/users/me' });
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe('credential_missing');
  });
});

describeEachDialect('dashboard sign-in rate limit', (dialect) => {
  const test = useTestService(dialect);

  it('refuses the 21st attempt from one IP within 15 minutes, with Retry-After, even with the right key', async () => {
    const attempt = (secretKey: string) =>
      test().service.app.inject({
        method: 'POST',
        url: '/dashboard/api/session',
        payload: { secret_key: secretKey },
        remoteAddress: '198.51.100.7',
      });
    for (let index = 0; index < 20; index += 1) expect((await attempt('svc_sk_wrong')).statusCode).toBe(401);
    const refused = await attempt(test().secretKey);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const otherIp = await test().service.app.inject({
      method: 'POST',
      url: '/dashboard/api/session',
      payload: { secret_key: test().secretKey },
      remoteAddress: '198.51.100.8',
    });
    expect(otherIp.statusCode).toBe(201);
  });
});

describeEachDialect('dashboard session expiry', (dialect) => {
  let nowMs = Date.now();
  const test = useTestService(dialect, { serviceOptions: { clock: { now: () => new Date(nowMs) } } });

  it('ends after 12 hours', async () => {
    const response = await test().service.app.inject({
      method: 'POST',
      url: '/dashboard/api/session',
      payload: { secret_key: test().secretKey },
    });
    const cookie = cookieOf(response);
    const get = () =>
      test().service.app.inject({ method: 'GET', url: '/v1/project', headers: { cookie: `${DASHBOARD_COOKIE_NAME}=${cookie}` } });
    nowMs += 12 * 3600 * 1000 - 1000;
    expect((await get()).statusCode).toBe(200);
    nowMs += 2000;
    const expired = await get();
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error.message).toContain('expired');
    nowMs += 25 * 3600 * 1000;
    expect(await test().service.dashboard.service.deleteExpired(1000)).toBeGreaterThanOrEqual(1);
  });
});

// The cookie is Secure behind a TLS-terminating proxy too (no TLS_* set, outside production), not
// only in production or with the service's own TLS.
describe('dashboard cookie Secure flag', () => {
  const secure = (env: Record<string, string>) => dashboardCookieSecure(loadConfig({ NODE_ENV: 'development', ...env }));

  it('is Secure unless the service is plainly on http://localhost, 127.0.0.1 or [::1] without TLS', () => {
    expect(secure({})).toBe(false); // PUBLIC_URL defaults to http://localhost:<PORT>
    expect(secure({ PUBLIC_URL: 'http://localhost:3000' })).toBe(false);
    expect(secure({ PUBLIC_URL: 'http://127.0.0.1:8080/' })).toBe(false);
    expect(secure({ PUBLIC_URL: 'http://[::1]:8080' })).toBe(false);
    expect(secure({ PUBLIC_URL: 'https://svc.example.com' })).toBe(true);
    expect(secure({ PUBLIC_URL: 'https://localhost:8443' })).toBe(true);
    expect(secure({ PUBLIC_URL: 'http://svc.internal:8080' })).toBe(true);
    expect(secure({ PUBLIC_URL: 'http://localhost.example.com' })).toBe(true);
    expect(secure({ TLS_CERT_FILE: '/cert.pem', TLS_KEY_FILE: '/key.pem' })).toBe(true);
    expect(dashboardCookieSecure({ ...loadConfig({}), nodeEnv: 'production' })).toBe(true);
  });
});

describeEachDialect('dashboard cookie behind a TLS-terminating proxy', (dialect) => {
  const test = useTestService(dialect, { env: { PUBLIC_URL: 'https://svc.example.com' } });

  it('is set Secure when PUBLIC_URL is https, though the service itself has no TLS', async () => {
    const response = await test().service.app.inject({
      method: 'POST',
      url: '/dashboard/api/session',
      payload: { secret_key: test().secretKey },
    });
    expect(response.statusCode, response.body).toBe(201);
    const [session, marker] = response.headers['set-cookie'] as string[];
    expect(session).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    expect(marker).toMatch(/; SameSite=Strict; Secure$/);
  });
});
