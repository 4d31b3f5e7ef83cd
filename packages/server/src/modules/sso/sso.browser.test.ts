import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authnRequestIdOf, makeSamlIdp, type TestSamlIdp } from '../../test/saml-idp.js';
import { useTestService } from '../../test/service.js';

/**
 * A whole SAML sign-in in a real browser, through the HTTP-POST binding: an application on
 * loopback starts it through the service, the identity provider's login page (samlify) answers
 * with the auto-submitting form every IdP uses, the browser posts it to the service's ACS, the
 * service sends the browser to the application with its code, and the application's back end
 * exchanges the code for a session that POST /v1/sessions/validate accepts.
 */
const CHROMIUM = '/usr/bin/chromium';
const required = process.env['SVC_TEST_REQUIRE_SERVICES'] === '1';
const chromiumMissing = !existsSync(CHROMIUM);
if (chromiumMissing && !required) {
  process.stdout.write(`\nSKIPPING the browser SSO test: ${CHROMIUM} is missing (apt-get install chromium).\n\n`);
}

async function listen(server: Server, port = 0): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function close(server: Server | undefined): Promise<void> {
  if (server === undefined) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const escapeHtml = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

describe.skipIf(chromiumMissing && !required)('SAML SSO in headless Chromium (HTTP-POST binding)', () => {
  const env: Record<string, string> = {};
  let serviceOrigin = '';
  let idpServer: Server;
  let idpOrigin = '';
  let appServer: Server;
  let appOrigin = '';
  let idp: TestSamlIdp;
  /** What the application's back end got from the callback. */
  const signedIn: { token?: string | undefined; organizationId?: string | undefined } = {};

  beforeAll(async () => {
    // The service's public URL is in its SAML metadata, so its port is chosen before it starts.
    const probe = createServer();
    const servicePort = await listen(probe);
    await close(probe);
    serviceOrigin = `http://127.0.0.1:${servicePort}`;
    env['PUBLIC_URL'] = serviceOrigin;
    idpServer = createServer();
    idpOrigin = `http://127.0.0.1:${await listen(idpServer)}`;
    appServer = createServer();
    appOrigin = `http://127.0.0.1:${await listen(appServer)}`;
    idp = makeSamlIdp({ entityId: `${idpOrigin}/saml`, ssoUrl: `${idpOrigin}/sso` });
  });

  const ctx = useTestService('sqlite', { env });

  afterAll(async () => {
    await close(idpServer);
    await close(appServer);
  });

  it('starts at the app, signs in at the identity provider, posts to the ACS and comes back with a valid session', async () => {
    const port = Number(new URL(serviceOrigin).port);
    await ctx().service.app.listen({ host: '127.0.0.1', port });
    const api = (url: string, payload: object) => ctx().service.app.inject({ method: 'POST', url, headers: ctx().auth, payload });
    const organization = await api('/v1/organizations', { name: 'Browser corp' });
    const organizationId = organization.json<{ id: string }>().id;
    expect(
      (await api(`/v1/organizations/${organizationId}/domains`, { domain: 'browser.example', verification: 'manual' })).statusCode,
    ).toBe(201);
    const created = await api(`/v1/organizations/${organizationId}/sso-connections`, {
      type: 'saml',
      domains: ['browser.example'],
      redirect_uris: [`${appOrigin}/callback`],
      saml: { idp_entity_id: idp.entityId, idp_sso_url: idp.ssoUrl, idp_certificate: idp.certPem },
    });
    expect(created.statusCode, created.body).toBe(201);
    const sp = created.json<{ saml: { sp_entity_id: string; acs_url: string } }>().saml;
    expect(sp.acs_url.startsWith(serviceOrigin)).toBe(true);

    // The identity provider: a login page, then the auto-submitting form to the service's ACS.
    idpServer.on('request', (request, response) => {
      void (async () => {
        const url = new URL(request.url ?? '/', idpOrigin);
        if (url.pathname === '/sso' && request.method === 'GET') {
          const requestId = authnRequestIdOf(url.href);
          response
            .writeHead(200, { 'content-type': 'text/html' })
            .end(
              `<!doctype html><title>IdP</title><form method="post" action="/login"><input type="hidden" name="request_id" value="${escapeHtml(requestId)}"><input name="email"><button type="submit">Sign in</button></form>`,
            );
        } else if (url.pathname === '/login' && request.method === 'POST') {
          const form = await readForm(request);
          const samlResponse = await idp.loginResponse(
            { entityId: sp.sp_entity_id, acsUrl: sp.acs_url },
            { email: form.get('email') ?? '', inResponseTo: form.get('request_id') ?? '' },
          );
          response
            .writeHead(200, { 'content-type': 'text/html' })
            .end(
              `<!doctype html><title>Posting</title><form method="post" action="${escapeHtml(sp.acs_url)}"><input type="hidden" name="SAMLResponse" value="${escapeHtml(samlResponse)}"></form><script>document.forms[0].submit()</script>`,
            );
        } else {
          response.writeHead(404).end();
        }
      })();
    });

    // The application: a sign-in form, /login that starts the sign-in, /callback that finishes it.
    appServer.on('request', (request, response) => {
      void (async () => {
        const url = new URL(request.url ?? '/', appOrigin);
        if (url.pathname === '/') {
          response
            .writeHead(200, { 'content-type': 'text/html' })
            .end('<!doctype html><title>App</title><form action="/login"><input name="email"><button id="signin">SSO</button></form>');
        } else if (url.pathname === '/login') {
          const started = await api('/v1/auth/sso', {
            email: url.searchParams.get('email'),
            redirect_uri: `${appOrigin}/callback`,
            state: 'app-state',
          });
          response.writeHead(302, { location: started.json<{ url: string }>().url }).end();
        } else if (url.pathname === '/callback') {
          const finished = await api('/v1/auth/sso/callback', { code: url.searchParams.get('code') });
          const body = finished.json<{ user?: { email: string }; session?: { id: string }; organization_id?: string }>();
          signedIn.token = body.session?.id;
          signedIn.organizationId = body.organization_id;
          const ok = finished.statusCode === 200 && url.searchParams.get('state') === 'app-state';
          response
            .writeHead(ok ? 200 : 500, { 'content-type': 'text/html' })
            .end(`<!doctype html><title>Done</title><p id="result">${ok ? `Signed in as ${body.user?.email ?? ''}` : 'Failed'}</p>`);
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
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${appOrigin}/`);
      await page.fill('input[name="email"]', 'erin@browser.example');
      await page.click('#signin');
      await page.waitForURL((url) => url.origin === idpOrigin && url.pathname === '/sso');
      await page.fill('input[name="email"]', 'erin@browser.example');
      await page.click('button[type="submit"]');
      await page.waitForURL((url) => url.origin === appOrigin && url.pathname === '/callback');
      expect(await page.textContent('#result')).toBe('Signed in as erin@browser.example');
    } finally {
      await browser.close();
    }

    expect(signedIn.organizationId).toBe(organizationId);
    const validated = await api('/v1/sessions/validate', { session_id: signedIn.token ?? '' });
    expect(validated.json()).toMatchObject({ valid: true, user: { email: 'erin@browser.example', email_verified: true } });
  }, 60_000);
});
