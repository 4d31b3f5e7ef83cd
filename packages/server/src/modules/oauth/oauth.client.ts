import * as client from 'openid-client';
import type { OAuthEndpoints } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import type { OutboundFetch } from '../../lib/outbound-http.fetch.js';
import { appleClientSecret } from './apple-client-secret.js';
import { isOpenIdConnect, type ProviderKind } from './oauth.providers.js';

/**
 * The provider side of a sign-in, through openid-client: discovery, the authorization URL, the
 * code exchange with PKCE, ID token validation (signature from the provider's JWKS, issuer,
 * audience, expiry, nonce), and the claims. Every request goes through the outbound HTTP module
 * (`customFetch`). Nothing here touches the database.
 */

/** How long a provider's discovery document is reused before it is read again. */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;
/** Issuers whose documents are kept at once; past it the cache starts over. */
const DISCOVERY_CACHE_ENTRIES_MAX = 1000;
/** Seconds openid-client waits for one provider request (the outbound module bounds it at 10 s as well). */
const PROVIDER_TIMEOUT_SECONDS = 10;
/** GitHub's user and email answers: a user has at most a few hundred addresses. */
const GITHUB_API_BYTES_MAX = 128 * 1024;

export interface ProviderSettings {
  readonly provider: string;
  readonly kind: ProviderKind;
  readonly clientId: string;
  /** Every kind but Apple. */
  readonly clientSecret: string | undefined;
  /** Generic OpenID Connect providers. */
  readonly issuer: string | undefined;
  readonly apple: { readonly teamId: string; readonly keyId: string; readonly privateKey: string } | undefined;
  readonly scopes: readonly string[];
}

/** What the service takes from a provider's answer. */
export interface ProviderClaims {
  readonly subject: string;
  readonly email: string | undefined;
  /**
   * The provider's word on the address (OIDC `email_verified`, GitHub's `verified`): true, false,
   * or undefined when it said nothing. docs/adr/0014-identity-linking.md says what each proves.
   */
  readonly emailVerified: boolean | undefined;
  readonly name: string | undefined;
}

export interface AuthorizationRequest {
  readonly redirectUri: string;
  readonly state: string;
  readonly codeChallenge: string;
  readonly nonce: string | undefined;
}

export interface CodeExchange {
  readonly code: string;
  readonly state: string;
  readonly iss: string | undefined;
  readonly redirectUri: string;
  readonly codeVerifier: string;
  readonly nonce: string | undefined;
}

export interface OAuthClientOptions {
  readonly fetch: OutboundFetch;
  readonly endpoints: OAuthEndpoints;
  readonly allowInsecureHttp: boolean;
  readonly clock: Clock;
}

interface CachedDiscovery {
  readonly metadata: client.ServerMetadata;
  readonly fetchedAtMs: number;
  jwks: ReturnType<typeof client.getJwksCache>;
}

export class OAuthClient {
  readonly #fetch: OutboundFetch;
  readonly #endpoints: OAuthEndpoints;
  readonly #allowInsecureHttp: boolean;
  readonly #clock: Clock;
  readonly #discoveries = new Map<string, CachedDiscovery>();

  constructor(options: OAuthClientOptions) {
    this.#fetch = options.fetch;
    this.#endpoints = options.endpoints;
    this.#allowInsecureHttp = options.allowInsecureHttp;
    this.#clock = options.clock;
  }

  /** The issuer of a provider kind, as configured (built-in) or as the project set it (generic). */
  issuerOf(settings: Pick<ProviderSettings, 'kind' | 'issuer'>): string {
    switch (settings.kind) {
      case 'google':
        return this.#endpoints.googleIssuer;
      case 'apple':
        return this.#endpoints.appleIssuer;
      case 'github':
        return this.#endpoints.githubUrl;
      case 'oidc':
        if (settings.issuer === undefined) throw new Error('a generic OpenID Connect provider without an issuer');
        return settings.issuer;
    }
  }

  /** Reads (or re-reads) an issuer's discovery document; `parameter_invalid` on `issuer` when that fails. */
  async checkIssuer(issuer: string): Promise<void> {
    try {
      await this.#discover(issuer, { fresh: true });
    } catch (error) {
      throw new ApiError('parameter_invalid', `OpenID Connect discovery of ${issuer} failed: ${describeFailure(error)}`, {
        param: 'issuer',
      });
    }
  }

  async authorizationUrl(settings: ProviderSettings, request: AuthorizationRequest): Promise<string> {
    const config = await this.#configuration(settings, 'start');
    const parameters: Record<string, string> = {
      redirect_uri: request.redirectUri,
      scope: settings.scopes.join(' '),
      state: request.state,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    };
    if (request.nonce !== undefined) parameters['nonce'] = request.nonce;
    // Apple posts the answer to the redirect URI (it requires form_post when name or email is asked for).
    if (settings.kind === 'apple') parameters['response_mode'] = 'form_post';
    return client.buildAuthorizationUrl(config, parameters).href;
  }

  /** Exchanges the code and returns the validated claims; every failure is 400 `oauth_exchange_failed`. */
  async exchange(settings: ProviderSettings, exchange: CodeExchange): Promise<ProviderClaims> {
    const config = await this.#configuration(settings, 'exchange');
    const metadata = config.serverMetadata();
    const callbackUrl = new URL(exchange.redirectUri);
    callbackUrl.searchParams.set('code', exchange.code);
    callbackUrl.searchParams.set('state', exchange.state);
    // RFC 9207: an `iss` the client passes on must be the provider's. When it passes none, the
    // expected one stands in: the state is bound to this provider on the server, which is what
    // keeps a response from another provider out (mix-up).
    const iss = exchange.iss ?? (metadata.authorization_response_iss_parameter_supported === true ? metadata.issuer : undefined);
    if (iss !== undefined) callbackUrl.searchParams.set('iss', iss);
    try {
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: exchange.codeVerifier,
        expectedState: exchange.state,
        ...(exchange.nonce === undefined ? {} : { expectedNonce: exchange.nonce }),
        idTokenExpected: settings.kind !== 'github',
      });
      if (settings.kind === 'github') return await this.#githubClaims(tokens.access_token);
      const idToken = tokens.claims();
      if (idToken === undefined) throw new Error('the token response carries no ID token');
      let claims: Record<string, unknown> = idToken;
      // Some providers keep email and name for the userinfo endpoint rather than the ID token.
      if (typeof idToken['email'] !== 'string' && metadata.userinfo_endpoint !== undefined) {
        claims = { ...(await client.fetchUserInfo(config, tokens.access_token, idToken.sub)), ...idToken };
      }
      return {
        subject: idToken.sub,
        email: typeof claims['email'] === 'string' ? claims['email'] : undefined,
        emailVerified: emailVerifiedClaim(claims['email_verified']),
        name: typeof claims['name'] === 'string' ? claims['name'] : undefined,
      };
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw new ApiError('oauth_exchange_failed', `The sign-in with ${settings.provider} failed: ${describeFailure(error)}`);
    } finally {
      this.#keepJwks(settings, config);
    }
  }

  async #configuration(settings: ProviderSettings, purpose: 'start' | 'exchange'): Promise<client.Configuration> {
    const issuer = this.issuerOf(settings);
    let cached: CachedDiscovery;
    if (settings.kind === 'github') {
      cached = { metadata: githubMetadata(this.#endpoints), fetchedAtMs: 0, jwks: undefined };
    } else {
      try {
        cached = await this.#discover(issuer, { fresh: false });
      } catch (error) {
        throw new ApiError(
          'oauth_exchange_failed',
          `The configuration of ${settings.provider} could not be read: ${describeFailure(error)}`,
        );
      }
    }
    const clientSecret =
      settings.kind === 'apple' && settings.apple !== undefined
        ? purpose === 'exchange'
          ? appleClientSecret({ ...settings.apple, clientId: settings.clientId, audience: issuer, now: this.#clock.now() })
          : undefined
        : settings.clientSecret;
    const config = new client.Configuration(
      cached.metadata,
      settings.clientId,
      { [client.clockSkew]: Math.round((this.#clock.now().getTime() - Date.now()) / 1000) },
      client.ClientSecretPost(clientSecret),
    );
    config[client.customFetch] = this.#fetch;
    config.timeout = PROVIDER_TIMEOUT_SECONDS;
    // OAUTH_ALLOW_INSECURE_HTTP, a development setting refused in production.
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    if (this.#allowInsecureHttp) client.allowInsecureRequests(config);
    if (cached.jwks !== undefined) client.setJwksCache(config, cached.jwks);
    // openid-client trusts an ID token that came straight from the token endpoint over TLS without
    // checking its signature (OIDC Core 3.1.3.7 allows it). This service checks it against the
    // provider's JWKS all the same.
    if (isOpenIdConnect(settings.kind)) client.enableNonRepudiationChecks(config);
    return config;
  }

  #keepJwks(settings: ProviderSettings, config: client.Configuration): void {
    if (settings.kind === 'github') return;
    const cached = this.#discoveries.get(this.issuerOf(settings));
    const jwks = client.getJwksCache(config);
    if (cached !== undefined && jwks !== undefined) cached.jwks = jwks;
  }

  async #discover(issuer: string, options: { fresh: boolean }): Promise<CachedDiscovery> {
    const cached = this.#discoveries.get(issuer);
    if (!options.fresh && cached !== undefined && Date.now() - cached.fetchedAtMs < DISCOVERY_TTL_MS) return cached;
    const config = await client.discovery(new URL(issuer), 'discovery', undefined, undefined, {
      [client.customFetch]: this.#fetch,
      timeout: PROVIDER_TIMEOUT_SECONDS,
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      ...(this.#allowInsecureHttp ? { execute: [client.allowInsecureRequests] } : {}),
    });
    const metadata = config.serverMetadata();
    if (metadata.jwks_uri === undefined) throw new Error('the discovery document has no jwks_uri');
    if (this.#discoveries.size >= DISCOVERY_CACHE_ENTRIES_MAX) this.#discoveries.clear();
    const entry: CachedDiscovery = { metadata: { ...metadata }, fetchedAtMs: Date.now(), jwks: undefined };
    this.#discoveries.set(issuer, entry);
    return entry;
  }

  /** GitHub is OAuth 2.0 only: the account from `GET /user`, the address from `GET /user/emails`. */
  async #githubClaims(accessToken: string): Promise<ProviderClaims> {
    const user = await this.#githubApi('/user', accessToken);
    const id = (user as { id?: unknown }).id;
    if (typeof id !== 'number' && typeof id !== 'string') throw new Error('GitHub /user answered without an id');
    const emails = await this.#githubApi('/user/emails', accessToken);
    if (!Array.isArray(emails)) throw new Error('GitHub /user/emails answered with something other than a list');
    const entries = emails.filter(
      (entry): entry is { email: string; primary?: unknown; verified?: unknown } =>
        typeof (entry as { email?: unknown }).email === 'string',
    );
    // The primary address if it is verified, else any verified one; an unverified one only when no address is.
    const chosen =
      entries.find((entry) => entry.primary === true && entry.verified === true) ??
      entries.find((entry) => entry.verified === true) ??
      entries.find((entry) => entry.primary === true);
    const name = (user as { name?: unknown; login?: unknown }).name ?? (user as { login?: unknown }).login;
    return {
      subject: String(id),
      email: chosen?.email,
      emailVerified: chosen?.verified === true,
      name: typeof name === 'string' ? name : undefined,
    };
  }

  async #githubApi(path: string, accessToken: string): Promise<unknown> {
    const response = await this.#fetch(`${this.#endpoints.githubApiUrl}${path}`, {
      method: 'GET',
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${accessToken}`,
        'x-github-api-version': '2022-11-28',
      },
    });
    const text = await response.text();
    if (text.length > GITHUB_API_BYTES_MAX) throw new Error(`GitHub ${path} answered with more than ${GITHUB_API_BYTES_MAX} bytes`);
    if (response.status !== 200) throw new Error(`GitHub ${path} answered ${response.status}`);
    return JSON.parse(text) as unknown;
  }
}

/** OIDC `email_verified`: a boolean, or (Apple) the string "true" or "false"; anything else says nothing. */
function emailVerifiedClaim(value: unknown): boolean | undefined {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return undefined;
}

function githubMetadata(endpoints: OAuthEndpoints): client.ServerMetadata {
  return {
    issuer: endpoints.githubUrl,
    authorization_endpoint: `${endpoints.githubUrl}/login/oauth/authorize`,
    token_endpoint: `${endpoints.githubUrl}/login/oauth/access_token`,
  };
}

/**
 * What went wrong, for the client: the provider's OAuth error code when it sent one (never its
 * description, which may echo what was sent), or what a check found. Never a secret: the request
 * is not described.
 */
export function describeFailure(error: unknown): string {
  const chain: unknown[] = [];
  for (let current: unknown = error; current !== undefined && current !== null && chain.length < 6;) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  for (const item of chain) {
    // A ResponseBodyError carries `error`; an answer with no token (GitHub's 200 with an error) has it in `body`.
    const code = (item as { error?: unknown }).error ?? (item as { body?: { error?: unknown } }).body?.error;
    if (typeof code === 'string' && /^[\w.-]{1,64}$/.test(code)) return `the provider answered with error "${code}"`;
  }
  const network = chain.find((item) => item instanceof Error && item.name === 'OutboundFetchError');
  if (network instanceof Error) return `the provider could not be reached (${network.message})`;
  // openid-client's messages are general ("invalid response encountered"); the causes say what.
  const messages = [...new Set(chain.filter((item): item is Error => item instanceof Error).map((item) => item.message))];
  const message = messages.length === 0 ? String(chain[0]) : messages.join(': ');
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}
