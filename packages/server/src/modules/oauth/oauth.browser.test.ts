import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestCertificate, type OidcProviderHandle, startOidcProvider, type TestCertificate } from '../../test/oauth-providers.js';
import { useTestService } from '../../test/service.js';

/**
 * The whole sign-in in a real browser: a small application on loopback starts it through the
 * service, headless Chromium signs in at the provider's own login and consent pages, lands on the
 * application's redirect URI, and the application's back end exchanges the code for a session
 * that POST /v1/sessions/validate accepts.
 */
const CHROMIUM = '/usr/bin/chromium';
const required = process.env['SVC_TEST_REQUIRE_SERVICES'] === '1';
const chromiumMissing = !existsSync(CHROMIUM);
if (chromiumMissing && !required) {
  process.stdout.write(`\nSKIPPING the browser sign-in test: ${CHROMIUM} is missing (apt-get install chromium).\n\n`);
}

describe.skipIf(chromiumMissing && !required)('OAuth sign-in in headless Chromium', () => {
  const env: Record<string, string> = { OAUTH_ALLOW_PRIVATE: '1' };
  const oauthOptions: { trustedCa?: string } = {};
  let certificate: TestCertificate;
  let provider: OidcProviderHandle;
  let appServer: Server;
  let appOrigin = '';
  /** What the application's back end got from the callback: the session token it would keep. */
  const signedIn: { token?: string | undefined; email?: string | undefined } = {};

  beforeAll(async () => {
    certificate = makeTestCertificate();
    appServer = createServer();
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`;
    provider = await startOidcProvider({
      certificate,
      clients: [{ client_id: 'browser-app', client_secret: 'browser-secret', redirect_uris: [`${appOrigin}/callback`] }],
    });
    provider.accounts.set('alice', { email: 'alice@example.com', email_verified: true, name: 'Alice' });
    oauthOptions.trustedCa = certificate.certPem;
  });

  const ctx = useTestService('sqlite', { env, serviceOptions: { oauth: oauthOptions } });

  afterAll(async () => {
    await provider?.close();
    await new Promise<void>((resolve) => (appServer === undefined ? resolve() : appServer.close(() => resolve())));
    certificate?.remove();
  });

  it('starts at the app, signs in at the provider, and comes back with a valid session', async () => {
    const api = (method: 'POST' | 'PUT', url: string, payload: object) =>
      ctx().service.app.inject({ method, url, headers: ctx().auth, payload });
    const configured = await api('PUT', '/v1/auth/providers/corp', {
      client_id: 'browser-app',
      client_secret: 'browser-secret',
      issuer: provider.issuer,
      redirect_uris: [`${appOrigin}/callback`],
    });
    expect(configured.statusCode).toBe(200);

    // The application: a page with a sign-in link, /login that starts the sign-in, /callback that finishes it.
    appServer.on('request', (request, response) => {
      void (async () => {
        const url = new URL(request.url ?? '/', appOrigin);
        if (url.pathname === '/') {
          response
            .writeHead(200, { 'content-type': 'text/html' })
            .end('<!doctype html><title>App</title><a id="signin" href="/login">Sign in</a>');
        } else if (url.pathname === '/login') {
          const started = await api('POST', '/v1/auth/oauth/corp', { redirect_uri: `${appOrigin}/callback` });
          response.writeHead(302, { location: started.json<{ url: string }>().url }).end();
        } else if (url.pathname === '/callback') {
          const iss = url.searchParams.get('iss');
          const finished = await api('POST', '/v1/auth/oauth/corp/callback', {
            code: url.searchParams.get('code'),
            state: url.searchParams.get('state'),
            ...(iss === null ? {} : { iss }),
          });
          const body = finished.json<{ user?: { email: string }; session?: { id: string } }>();
          signedIn.token = body.session?.id;
          signedIn.email = body.user?.email;
          response
            .writeHead(finished.statusCode === 200 ? 200 : 500, { 'content-type': 'text/html' })
            .end(
              `<!doctype html><title>Done</title><p id="result">${finished.statusCode === 200 ? `Signed in as ${body.user?.email ?? ''}` : 'Failed'}</p>`,
            );
        } else {
          response.writeHead(404).end();
        }
      })();
    });

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    try {
      // The provider's certificate is the test's own; the browser is told to accept it.
      const page = await (await browser.newContext({ ignoreHTTPSErrors: true })).newPage();
      await page.goto(`${appOrigin}/`);
      await page.click('#signin');
      await page.waitForURL((url) => url.origin === provider.issuer);
      await page.fill('input[name="login"]', 'alice');
      await page.fill('input[name="password"]', 'any password');
      await page.click('button[type="submit"]');
      // The consent page.
      await page.waitForSelector('button[type="submit"]');
      await page.click('button[type="submit"]');
      await page.waitForURL((url) => url.origin === appOrigin && url.pathname === '/callback');
      expect(await page.textContent('#result')).toBe('Signed in as alice@example.com');
    } finally {
      await browser.close();
    }

    expect(signedIn.email).toBe('alice@example.com');
    const validated = await api('POST', '/v1/sessions/validate', { session_id: signedIn.token ?? '' });
    expect(validated.json()).toMatchObject({ valid: true, user: { email: 'alice@example.com', email_verified: true } });
  }, 60_000);
});
