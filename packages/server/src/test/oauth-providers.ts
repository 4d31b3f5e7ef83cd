import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { verifyEs256Jwt } from './es256-jwt.js';
import { makeTestCertificate, type TestCertificate, trustingFetch } from './test-certificate.js';

export { signJwt, verifyEs256Jwt } from './es256-jwt.js';
export { makeTestCertificate, type TestCertificate, trustingFetch } from './test-certificate.js';

/**
 * Stand-ins for identity providers on loopback, all over HTTPS with a self-signed certificate:
 * a real OpenID provider (oidc-provider) with its development login and consent pages, a scripted
 * one whose token endpoint answers whatever a test wants (for the refusals), and GitHub's token,
 * user and email APIs. Their certificate is test-certificate.ts's, the JWTs they sign es256-jwt.ts's;
 * both are re-exported here.
 */

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

// ---- A real OpenID provider --------------------------------------------------------------------

export interface TestAccount {
  readonly email?: string;
  readonly email_verified?: boolean;
  readonly name?: string;
}

export interface TestClient {
  readonly client_id: string;
  readonly client_secret: string;
  readonly redirect_uris: string[];
}

/** An Apple stand-in's view of the JWT client secrets it received. */
export interface AppleSecretCheck {
  readonly clientId: string;
  readonly publicKey: KeyObject;
  /** What the provider's client is configured with; the checked JWT is swapped for it. */
  readonly staticSecret: string;
  readonly received: Array<{ header: Record<string, unknown>; claims: Record<string, unknown> } | 'invalid'>;
}

export interface OidcProviderHandle {
  readonly issuer: string;
  readonly accounts: Map<string, TestAccount>;
  close(): Promise<void>;
}

/**
 * oidc-provider on loopback HTTPS with its development login and consent pages. Any login name is
 * accepted; its claims come from `accounts` (set them before signing in). When `apple` is given,
 * the token endpoint checks the client secret of that client as Apple would (an ES256 JWT of the
 * team, signed with the registered key), records it, and hands oidc-provider the static secret.
 */
export async function startOidcProvider(options: {
  certificate: TestCertificate;
  clients: TestClient[];
  apple?: AppleSecretCheck;
}): Promise<OidcProviderHandle> {
  const accounts = new Map<string, TestAccount>();
  const handler: { current?: (request: IncomingMessage, response: ServerResponse) => void } = {};
  const server = createServer({ cert: options.certificate.certPem, key: options.certificate.keyPem }, (request, response) => {
    void intercept(request).then(() => handler.current?.(request, response));
  });
  const issuer = await listen(server);
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const configuration: Configuration = {
    clients: options.clients.map((item) => ({
      ...item,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    })),
    jwks: { keys: [{ ...signingKey, kid: 'test-rsa', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: ['svc-test-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], name: ['name'] },
    scopes: ['openid', 'email', 'profile', 'name'],
    features: { devInteractions: { enabled: true } },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    findAccount: (_context, id) => ({
      accountId: id,
      claims: () => ({ sub: id, ...(accounts.get(id) ?? {}) }),
    }),
  };
  const provider = new Provider(issuer, configuration);
  handler.current = provider.callback();

  async function intercept(request: IncomingMessage): Promise<void> {
    const apple = options.apple;
    if (apple === undefined || request.method !== 'POST' || !request.url?.startsWith('/token')) return;
    const params = new URLSearchParams(await readBody(request));
    if (params.get('client_id') === apple.clientId) {
      const secret = params.get('client_secret') ?? '';
      const checked = verifyEs256Jwt(secret, apple.publicKey);
      apple.received.push(checked ?? 'invalid');
      if (checked !== undefined) params.set('client_secret', apple.staticSecret);
    }
    // oidc-provider reads a body that upstream middleware already read from `req.body`.
    Object.assign(request, { body: params.toString() });
  }

  return { issuer, accounts, close: () => close(server) };
}

export type ProviderLanding =
  | { readonly kind: 'redirect'; readonly url: URL }
  | { readonly kind: 'form_post'; readonly action: string; readonly fields: Record<string, string> };

/**
 * Plays the browser at oidc-provider's development pages with plain HTTP requests: follows the
 * redirects with a cookie jar, signs in as `login`, consents, and returns where the provider sent
 * the browser back (a redirect, or Apple-style an auto-submitting form).
 */
export async function signInAtProvider(certificate: TestCertificate, authorizationUrl: string, login: string): Promise<ProviderLanding> {
  const request = trustingFetch(certificate);
  const origin = new URL(authorizationUrl).origin;
  const cookies = new Map<string, string>();
  const send = async (url: string, init: RequestInit = {}) => {
    const response = await request(url, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  };
  let response = await send(authorizationUrl);
  for (let step = 0; step < 12; step += 1) {
    const location = response.headers.get('location');
    if (location !== null) {
      const next = new URL(location, origin);
      if (next.origin !== origin) return { kind: 'redirect', url: next };
      response = await send(next.href);
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`the provider answered ${response.status}: ${html.slice(0, 500)}`);
    const action = /<form[^>]*action="([^"]+)"/i.exec(html)?.[1]?.replace(/&amp;/g, '&');
    if (action === undefined) throw new Error(`no form on the provider's page: ${html.slice(0, 500)}`);
    const fields: Record<string, string> = {};
    for (const match of html.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/gi)) {
      fields[match[1] ?? ''] = (match[2] ?? '')
        .replace(/&amp;/g, '&')
        .replace(/&#x2F;/g, '/')
        .replace(/&#x3D;/g, '=');
    }
    const target = new URL(action, origin);
    if (target.origin !== origin) return { kind: 'form_post', action: target.href, fields };
    if (/name="login"/.test(html)) Object.assign(fields, { login, password: 'any password will do' });
    response = await send(target.href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }
  throw new Error('the provider did not send the browser back within 12 steps');
}

// ---- A scripted OpenID provider ------------------------------------------------------------------

export interface TokenRequest {
  readonly params: URLSearchParams;
}

export interface ScriptedProvider {
  readonly issuer: string;
  /** The key the JWKS publishes; ID tokens signed with another fail the signature check. */
  readonly key: KeyObject;
  readonly kid: string;
  /** What the token endpoint answers next; set by each test. */
  answer: (request: TokenRequest) => { status: number; body: unknown };
  close(): Promise<void>;
}

export async function startScriptedProvider(certificate: TestCertificate): Promise<ScriptedProvider> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const kid = 'scripted-1';
  let issuer = '';
  const handle: ScriptedProvider = {
    get issuer() {
      return issuer;
    },
    key: privateKey,
    kid,
    answer: () => ({ status: 500, body: { error: 'server_error' } }),
    close: () => close(server),
  };
  const server = createServer({ cert: certificate.certPem, key: certificate.keyPem }, (request, response) => {
    void (async () => {
      const path = new URL(request.url ?? '/', issuer).pathname;
      if (path === '/.well-known/openid-configuration') {
        sendJson(response, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['ES256'],
        });
      } else if (path === '/jwks') {
        sendJson(response, 200, { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' }] });
      } else if (path === '/token' && request.method === 'POST') {
        const answer = handle.answer({ params: new URLSearchParams(await readBody(request)) });
        sendJson(response, answer.status, answer.body);
      } else {
        sendJson(response, 404, { error: 'not_found' });
      }
    })();
  });
  issuer = await listen(server);
  return handle;
}

// ---- GitHub --------------------------------------------------------------------------------------

export interface GitHubStandIn {
  /** Stands for https://github.com. */
  readonly webUrl: string;
  /** Stands for https://api.github.com. */
  readonly apiUrl: string;
  readonly tokenRequests: URLSearchParams[];
  /** What `/user` and `/user/emails` answer for the next token. */
  user: { id: number; login: string; name: string | null };
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
  /** When set, the token endpoint answers GitHub-style: 200 with this error. */
  tokenError: string | undefined;
  close(): Promise<void>;
}

export async function startGitHub(certificate: TestCertificate): Promise<GitHubStandIn> {
  const issued = new Set<string>();
  let base = '';
  const handle: GitHubStandIn = {
    get webUrl() {
      return base;
    },
    get apiUrl() {
      return `${base}/api`;
    },
    tokenRequests: [],
    user: { id: 1, login: 'octocat', name: 'The Octocat' },
    emails: [],
    tokenError: undefined,
    close: () => close(server),
  };
  const server = createServer({ cert: certificate.certPem, key: certificate.keyPem }, (request, response) => {
    void (async () => {
      const path = new URL(request.url ?? '/', base).pathname;
      if (path === '/login/oauth/access_token' && request.method === 'POST') {
        const params = new URLSearchParams(await readBody(request));
        handle.tokenRequests.push(params);
        if (handle.tokenError !== undefined) return sendJson(response, 200, { error: handle.tokenError, error_description: 'no' });
        const token = `gho_${Math.random().toString(36).slice(2)}`;
        issued.add(token);
        return sendJson(response, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      }
      const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!issued.has(token)) return sendJson(response, 401, { message: 'Bad credentials' });
      if (path === '/api/user') return sendJson(response, 200, handle.user);
      if (path === '/api/user/emails') return sendJson(response, 200, handle.emails);
      return sendJson(response, 404, { message: 'Not Found' });
    })();
  });
  base = await listen(server);
  return handle;
}

/** A real OpenID provider of the enclosing file, with its certificate; filled in before its tests. */
export interface FileOidcProvider {
  readonly certificate: TestCertificate;
  readonly oidc: OidcProviderHandle;
  /** What the service's OAuth options take so that it trusts the provider's certificate. */
  readonly oauthOptions: { trustedCa?: string };
}

/**
 * Starts an OpenID provider with a fresh certificate before the enclosing file's tests and stops
 * it after them: the set-up the OAuth, SSO, identity-linking and secrets tests share.
 */
export function useOidcProvider(options: { clients: TestClient[] }): FileOidcProvider {
  let certificate: TestCertificate | undefined;
  let oidc: OidcProviderHandle | undefined;
  const oauthOptions: { trustedCa?: string } = {};
  beforeAll(async () => {
    certificate = makeTestCertificate();
    oidc = await startOidcProvider({ certificate, clients: options.clients });
    oauthOptions.trustedCa = certificate.certPem;
  });
  afterAll(async () => {
    await oidc?.close();
    certificate?.remove();
  });
  return {
    get certificate() {
      if (certificate === undefined) throw new Error('the provider exists only inside tests');
      return certificate;
    },
    get oidc() {
      if (oidc === undefined) throw new Error('the provider exists only inside tests');
      return oidc;
    },
    oauthOptions,
  };
}

/**
 * Configures the OIDC provider `corp` of the test project, pointing at `provider`, before the
 * enclosing file's tests (after the service has started).
 */
export function useCorpProvider(
  ctx: () => {
    readonly service: { readonly app: { inject(options: InjectOptions): Promise<LightMyRequestResponse> } };
    readonly auth: Record<string, string>;
  },
  provider: FileOidcProvider,
  client: { readonly client_id: string; readonly client_secret: string; readonly redirect_uri: string },
): void {
  beforeAll(async () => {
    const configured = await ctx().service.app.inject({
      method: 'PUT',
      url: '/v1/auth/providers/corp',
      headers: ctx().auth,
      payload: {
        client_id: client.client_id,
        client_secret: client.client_secret,
        issuer: provider.oidc.issuer,
        redirect_uris: [client.redirect_uri],
      },
    });
    expect(configured.statusCode, configured.body).toBe(200);
  });
}
