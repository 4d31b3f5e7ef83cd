import { describe, expect, it } from 'vitest';
import { ServiceError, SvcDashboardClient } from '../src/index.js';
import { useSdkService } from './harness.js';

/**
 * What a browser does for the page: keeps the cookies the service sets and sends them back, and
 * names the page's origin. Each call records the headers it sent, to check what the SDK adds.
 */
function browserFetch(origin: string) {
  const jar = new Map<string, string>();
  const sent: Array<{ method: string; path: string; headers: Headers; credentials: RequestCredentials | undefined }> = [];
  const fetchLike: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('origin', origin);
    if (jar.size > 0) headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '));
    const url = new URL(input instanceof Request ? input.url : input);
    sent.push({ method: init?.method ?? 'GET', path: url.pathname, headers, credentials: init?.credentials });
    const response = await fetch(input, { ...init, headers });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const [name = '', value = ''] = pair.split('=');
      if (value === '') jar.delete(name);
      else jar.set(name, value);
    }
    return response;
  };
  return { fetch: fetchLike, jar, sent };
}

describe('SvcDashboardClient against the real server', () => {
  const sdk = useSdkService();

  it('signs in with the secret key, calls operations with the cookie and the CSRF token, and signs out', async () => {
    const browser = browserFetch(sdk().baseUrl);
    const svc = new SvcDashboardClient({ baseUrl: sdk().baseUrl, fetch: browser.fetch, retryDelayInitialMs: 5, retryDelayMaxMs: 50 });

    const session = await svc.signIn(sdk().secretKey);
    expect(session).toMatchObject({ project_id: sdk().projectId, key_id: expect.stringMatching(/^key_/) });
    expect(session.csrf_token.length).toBeGreaterThan(20);
    expect(browser.jar.size).toBe(2); // the HttpOnly session and the readable marker

    const organization = await svc.operations.createOrganization({ body: { name: 'Dashboard org' } });
    expect(organization.name).toBe('Dashboard org');
    const page = await svc.operations.listOrganizations({ query: { limit: 5 } });
    expect(page.data.map((item) => item.id)).toContain(organization.id);

    // No secret travels after sign-in: the cookie authorizes, the CSRF token guards the change.
    const change = browser.sent.find((request) => request.method === 'POST' && request.path === '/v1/organizations');
    expect(change?.headers.get('authorization')).toBeNull();
    expect(change?.headers.get('x-csrf-token')).toBe(session.csrf_token);
    expect(change?.headers.get('idempotency-key')).toMatch(/^sdk_/);
    expect(change?.credentials).toBe('same-origin');
    const read = browser.sent.find((request) => request.method === 'GET' && request.path === '/v1/organizations');
    expect(read?.headers.get('x-csrf-token')).toBeNull();

    // After a reload the page has the cookie but not the token: session() gives it back.
    const reloaded = new SvcDashboardClient({ baseUrl: sdk().baseUrl, fetch: browser.fetch });
    expect((await reloaded.session()).csrf_token).toBe(session.csrf_token);
    await reloaded.operations.updateOrganization({ path: { id: organization.id }, body: { name: 'Renamed' } });

    await svc.signOut();
    expect(browser.jar.size).toBe(0);
    const signedOut = await svc.operations.getOrganization({ path: { id: organization.id } }).catch((error: unknown) => error);
    expect(signedOut).toBeInstanceOf(ServiceError);
    expect((signedOut as ServiceError).status).toBe(401);
  });

  it('refuses a change without the session’s CSRF token, and a wrong secret key at sign-in', async () => {
    const browser = browserFetch(sdk().baseUrl);
    const svc = new SvcDashboardClient({ baseUrl: sdk().baseUrl, fetch: browser.fetch });
    const refused = await svc.signIn('svc_sk_not_a_key').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceError);
    expect((refused as ServiceError).status).toBe(401);

    await svc.signIn(sdk().secretKey);
    // A second client on the same cookies that never asked for the session has no token to send.
    const withoutToken = new SvcDashboardClient({ baseUrl: sdk().baseUrl, fetch: browser.fetch });
    const error = await withoutToken.operations.createOrganization({ body: { name: 'No token' } }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 403, code: 'csrf_token_invalid' });
  });
});
