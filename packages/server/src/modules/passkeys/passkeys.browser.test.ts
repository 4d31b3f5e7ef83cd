import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type CDPSession, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { signup } from '../auth/auth.testing.js';
import { configureRelyingParty, type PasskeyClient, passkeyClient } from './passkeys.testing.js';

/**
 * The passkey ceremonies for real: headless Chromium with its virtual authenticator (a CTAP2
 * platform authenticator with resident keys and user verification, through the DevTools
 * protocol's WebAuthn domain) on a page served from http://localhost. The page calls
 * `navigator.credentials.create()` / `.get()` with the options the service gave and posts the
 * results back to the test's small application, which calls the service as an integrator's back
 * end would: the user's session token for registration, the secret key for sign-in.
 */
const CHROMIUM = '/usr/bin/chromium';
const required = process.env['SVC_TEST_REQUIRE_SERVICES'] === '1';
const chromiumMissing = !existsSync(CHROMIUM);
if (chromiumMissing && !required) {
  process.stdout.write(`\nSKIPPING the passkey browser test: ${CHROMIUM} is missing (apt-get install chromium).\n\n`);
}

/** The page: base64url in and out of the browser's ArrayBuffers, and the two ceremonies. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>Passkeys</title><script>
const toBytes = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
const toText = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const post = async (path, body) => {
  const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
};
const descriptors = (list) => (list || []).map((item) => ({ ...item, id: toBytes(item.id) }));
window.registerPasskey = async (name) => {
  const options = (await post('/app/register/options', {})).body;
  const credential = await navigator.credentials.create({ publicKey: {
    ...options, challenge: toBytes(options.challenge), user: { ...options.user, id: toBytes(options.user.id) },
    excludeCredentials: descriptors(options.excludeCredentials) } });
  const response = { id: credential.id, rawId: toText(credential.rawId), type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment, clientExtensionResults: credential.getClientExtensionResults(),
    response: { clientDataJSON: toText(credential.response.clientDataJSON), attestationObject: toText(credential.response.attestationObject),
      transports: credential.response.getTransports() } };
  return post('/app/register', { response, name });
};
window.signIn = async (email) => {
  const options = (await post('/app/sign-in/options', email === undefined ? {} : { email })).body;
  const credential = await navigator.credentials.get({ publicKey: {
    ...options, challenge: toBytes(options.challenge), allowCredentials: descriptors(options.allowCredentials) } });
  const response = { id: credential.id, rawId: toText(credential.rawId), type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment, clientExtensionResults: credential.getClientExtensionResults(),
    response: { clientDataJSON: toText(credential.response.clientDataJSON), authenticatorData: toText(credential.response.authenticatorData),
      signature: toText(credential.response.signature),
      ...(credential.response.userHandle ? { userHandle: toText(credential.response.userHandle) } : {}) } };
  const payload = { challenge_id: options.challenge_id, response };
  return { ...(await post('/app/sign-in', payload)), payload };
};
</script><p>Passkeys</p>`;

interface Answer {
  status: number;
  body: { id?: string; user?: { id: string }; session?: { id: string }; error?: { code: string; message: string } };
}

async function readJson(request: IncomingMessage): Promise<object> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as object;
}

describeEachDialect('passkeys in headless Chromium', (dialect) => {
  describe.skipIf(chromiumMissing && !required)('the virtual authenticator', () => {
    const ctx = useTestService(dialect);
    let appServer: Server;
    let origin = '';
    let browser: Browser;
    let page: Page;
    let cdp: CDPSession;
    let authenticatorId = '';
    let client: PasskeyClient;
    /** The application's own record of its signed-in user, and which project's key it uses. */
    const app: { sessionToken: string; client?: PasskeyClient } = { sessionToken: '' };

    beforeAll(async () => {
      client = passkeyClient(ctx().service, ctx().secretKey);
      appServer = createServer((request, response) => {
        void (async () => {
          const via = app.client ?? client;
          const send = (answer: { statusCode: number; body: string }) =>
            response.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(answer.body);
          if (request.method === 'GET') {
            response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
          } else if (request.url === '/app/register/options') {
            send(await via.call('POST', '/v1/users/me/passkeys/options', {}, app.sessionToken));
          } else if (request.url === '/app/register') {
            send(await via.call('POST', '/v1/users/me/passkeys', await readJson(request), app.sessionToken));
          } else if (request.url === '/app/sign-in/options') {
            send(await via.call('POST', '/v1/auth/passkey/options', await readJson(request)));
          } else if (request.url === '/app/sign-in') {
            send(await via.call('POST', '/v1/auth/passkey', await readJson(request)));
          } else {
            response.writeHead(404).end('{}');
          }
        })();
      });
      await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
      origin = `http://localhost:${(appServer.address() as AddressInfo).port}`;
      await configureRelyingParty(client, { rp_id: 'localhost', rp_name: 'Passkey test', origins: [origin] });

      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
          '--disable-quic',
        ],
      });
      page = await (await browser.newContext()).newPage();
      cdp = await page.context().newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      const added = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      authenticatorId = added.authenticatorId;
      await page.goto(`${origin}/`);
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await new Promise<void>((resolve) => (appServer === undefined ? resolve() : appServer.close(() => resolve())));
    });

    const register = (name: string) =>
      page.evaluate(async (label) => (window as unknown as { registerPasskey(n: string): Promise<Answer> }).registerPasskey(label), name);
    const signIn = (email?: string) =>
      page.evaluate(
        async (address) => (window as unknown as { signIn(e?: string): Promise<Answer & { payload: object }> }).signIn(address),
        email,
      );

    it('registers a passkey, signs in with it by email and as a discoverable credential, and refuses a replay', async () => {
      const user = await signup((options) => ctx().service.app.inject(options), ctx().secretKey);
      app.sessionToken = user.token;
      const registered = await register('Chromium');
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      expect(registered.body.id).toMatch(/^pk_/);
      const stored = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(stored.credentials).toHaveLength(1);
      expect(stored.credentials[0]?.isResidentCredential).toBe(true);

      const byEmail = await signIn(user.email);
      expect(byEmail.status, JSON.stringify(byEmail.body)).toBe(200);
      expect(byEmail.body.user?.id).toBe(user.userId);
      const validated = await client.call('POST', '/v1/sessions/validate', { session_id: byEmail.body.session?.id ?? '' });
      expect(validated.json()).toMatchObject({ valid: true, user: { id: user.userId } });

      const discoverable = await signIn();
      expect(discoverable.status, JSON.stringify(discoverable.body)).toBe(200);
      expect(discoverable.body.user?.id).toBe(user.userId);

      const replay = await client.call('POST', '/v1/auth/passkey', discoverable.payload);
      expect(replay.json<Answer['body']>().error?.code).toBe('passkey_challenge_invalid');
    }, 60_000);

    it('refuses a sign-in from an origin the project no longer lists', async () => {
      await configureRelyingParty(client, { rp_id: 'localhost', rp_name: 'Passkey test', origins: ['http://localhost:1'] });
      try {
        const refused = await signIn();
        expect(refused.status).toBe(401);
        expect(refused.body.error?.code).toBe('passkey_invalid');
        expect(refused.body.error?.message).toContain(origin);
      } finally {
        await configureRelyingParty(client, { rp_id: 'localhost', rp_name: 'Passkey test', origins: [origin] });
      }
    }, 60_000);

    it('refuses the passkey at another project on the same rp_id (tenant isolation)', async () => {
      const other = await ctx().service.projects.createProject({ name: 'Other' });
      app.client = passkeyClient(ctx().service, other.secretKey);
      try {
        await configureRelyingParty(app.client, { rp_id: 'localhost', rp_name: 'Other', origins: [origin] });
        const refused = await signIn();
        expect(refused.status).toBe(401);
        expect(refused.body.error?.code).toBe('passkey_invalid');
      } finally {
        delete app.client;
      }
    }, 60_000);

    it('refuses a passkey once it is removed, though the authenticator still holds it', async () => {
      const listed = await client.call('GET', '/v1/users/me/passkeys', undefined, app.sessionToken);
      const [passkey] = listed.json<{ data: { id: string }[] }>().data;
      expect(passkey).toBeDefined();
      const removed = await client.call('DELETE', `/v1/users/me/passkeys/${passkey?.id ?? ''}`, undefined, app.sessionToken);
      expect(removed.statusCode).toBe(200);
      const refused = await signIn();
      expect(refused.status).toBe(401);
      expect(refused.body.error?.code).toBe('passkey_invalid');
    }, 60_000);
  });
});
