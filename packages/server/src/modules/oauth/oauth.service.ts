import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { isIP } from 'node:net';
import * as client from 'openid-client';
import type { Db } from '../../db/database.js';
import { inTransaction, isUniqueViolation } from '../../db/transaction.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { type MfaChallenge, type SignInGate, signInChanges, signInResult } from '../mfa/mfa.service.js';
import type { SessionClient, SessionsService } from '../sessions/sessions.service.js';
import type { IssuedSession } from '../sessions/sessions.schemas.js';
import { NAME_LENGTH_MAX, type User } from '../users/users.schemas.js';
import { IdentityLinking, normalizeEmail, toUser, type UsersService } from '../users/users.service.js';
import { parseApplePrivateKey } from './apple-client-secret.js';
import type { OAuthClient, ProviderClaims, ProviderSettings } from './oauth.client.js';
import { builtInKind, DEFAULT_SCOPES, isOpenIdConnect, PROVIDER_KEY_PATTERN, type ProviderKind } from './oauth.providers.js';
import { type ConfigureProviderBody, PROVIDERS_PER_PROJECT_MAX, type Provider } from './oauth.schemas.js';
import * as store from './oauth.store.js';

// The OpenID client, shared with SSO's OIDC connections.
export { OAuthClient, type ProviderSettings } from './oauth.client.js';

/** A sign-in must come back within this long; its state is single use. */
export const STATE_TTL_MS = 10 * 60 * 1000;

export interface OAuthServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly users: UsersService;
  readonly sessions: SessionsService;
  /** Makes the session, or the second-factor challenge of a user with an authenticator. */
  readonly gate: SignInGate;
  readonly audit: AuditService;
  readonly client: OAuthClient;
  readonly secrets: SecretBox;
  /** `OAUTH_ALLOW_INSECURE_HTTP`: generic issuers may be `http://`. */
  readonly allowInsecureHttp: boolean;
}

export type OAuthSignIn =
  { readonly user: User; readonly session: IssuedSession; readonly created: boolean } | (MfaChallenge & { readonly created: boolean });

interface SealedSecret {
  readonly client_secret?: string;
  readonly private_key?: string;
}

/**
 * Social and OpenID Connect sign-in: each project's provider configurations, the start of a
 * sign-in (state, PKCE, nonce) and its callback (code exchange, then the user by the one linking
 * rule of docs/adr/0014-identity-linking.md). The storage of state and secrets is in
 * docs/adr/0008-oauth.md.
 */
export class OAuthService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #gate: SignInGate;
  readonly #audit: AuditService;
  readonly #client: OAuthClient;
  readonly #secrets: SecretBox;
  readonly #allowInsecureHttp: boolean;
  readonly #linking: IdentityLinking;

  constructor(options: OAuthServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#gate = options.gate;
    this.#audit = options.audit;
    this.#client = options.client;
    this.#secrets = options.secrets;
    this.#allowInsecureHttp = options.allowInsecureHttp;
    this.#linking = new IdentityLinking(options);
  }

  // ---- Configuration ---------------------------------------------------------------------------

  async configure(projectId: string, provider: string, body: ConfigureProviderBody, context: AuditContext): Promise<Provider> {
    const record: AuditRecord = { projectId, action: 'oauth_provider.configure', resource: { type: 'oauth_provider', id: provider } };
    return this.#audit.recordingRefusals(context, record, () => this.#configure(projectId, provider, body, record, context));
  }

  async #configure(
    projectId: string,
    provider: string,
    body: ConfigureProviderBody,
    record: AuditRecord,
    context: AuditContext,
  ): Promise<Provider> {
    const kind = builtInKind(provider) ?? 'oidc';
    if (kind === 'oidc' && !PROVIDER_KEY_PATTERN.test(provider)) {
      throw new ApiError(
        'parameter_invalid',
        'A generic provider key is 2 to 64 lower-case letters, digits, `_` or `-`, starting with a letter.',
        { param: 'provider' },
      );
    }
    const existing = await store.findProvider(this.#db.kysely, projectId, provider);
    const issuer = this.#checkIssuer(kind, body.issuer);
    const redirectUris = body.redirect_uris.map((uri, index) => checkRedirectUri(uri, `redirect_uris[${index}]`));
    const scopes = withOpenId(kind, body.scopes ?? DEFAULT_SCOPES[kind]);
    const secret = this.#newSecret(kind, body, existing);
    // A cheap early refusal; the check that counts is the one in the transaction below.
    if (existing === undefined && (await store.countProviders(this.#db.kysely, projectId)) >= PROVIDERS_PER_PROJECT_MAX) {
      throw tooManyProviders();
    }
    // Discovery is checked now, so that a wrong issuer is refused here rather than at sign-in.
    // It is network I/O: it happens before the transaction, never inside it.
    if (issuer !== null) await this.#client.checkIssuer(issuer);
    const now = isoTime(this.#clock.now());
    const fields: Omit<store.ProviderRow, 'created_at'> = {
      project_id: projectId,
      provider,
      kind,
      client_id: body.client_id,
      secret_sealed: this.#secrets.seal(JSON.stringify(secret), secretContext(projectId, provider)),
      issuer,
      apple_team_id: body.apple?.team_id ?? null,
      apple_key_id: body.apple?.key_id ?? null,
      scopes: JSON.stringify(scopes),
      redirect_uris: JSON.stringify(redirectUris),
      updated_at: now,
    };
    const row = await inTransaction(this.#db, async (trx) => {
      // Concurrent requests for new keys each passed the check above; the project's lock makes
      // them count one after the other (SQLite's BEGIN IMMEDIATE already does).
      if (this.#db.dialect === 'postgres') await store.lockProjectProviders(trx, projectId);
      // Read again: a concurrent request may have created this key since, making this an update.
      const current = await store.findProvider(trx, projectId, provider);
      if (current === undefined && (await store.countProviders(trx, projectId)) >= PROVIDERS_PER_PROJECT_MAX) {
        throw tooManyProviders();
      }
      const upserted: store.ProviderRow = { ...fields, created_at: current?.created_at ?? now };
      await store.upsertProvider(trx, upserted);
      await this.#audit.record(trx, context, {
        ...record,
        // Never the client secret or key: which provider, and which redirect URIs it allows.
        changes: { kind, created: current === undefined, client_id: body.client_id, redirect_uris: redirectUris.join(' ') },
        createdAt: now,
      });
      return upserted;
    });
    return toProvider(row);
  }

  async list(projectId: string): Promise<{ object: 'list'; data: Provider[]; has_more: false }> {
    const rows = await store.listProviders(this.#db.kysely, projectId);
    return { object: 'list', data: rows.map(toProvider), has_more: false };
  }

  async remove(
    projectId: string,
    provider: string,
    context: AuditContext,
  ): Promise<{ object: 'oauth_provider'; provider: string; deleted: true }> {
    const record: AuditRecord = { projectId, action: 'oauth_provider.delete', resource: { type: 'oauth_provider', id: provider } };
    await this.#audit.recordingRefusals(context, record, () =>
      inTransaction(this.#db, async (trx) => {
        if (!(await store.deleteProvider(trx, projectId, provider))) throw notConfigured(provider);
        await this.#audit.record(trx, context, { ...record, createdAt: isoTime(this.#clock.now()) });
      }),
    );
    return { object: 'oauth_provider', provider, deleted: true };
  }

  // ---- Sign-in ---------------------------------------------------------------------------------

  /** Starts a sign-in: a single-use state (10 min), a PKCE verifier and, for OpenID Connect, a nonce. */
  async start(projectId: string, provider: string, input: { redirect_uri: string; state?: string | undefined }) {
    const { row, settings } = await this.#settings(projectId, provider);
    if (!(JSON.parse(row.redirect_uris) as string[]).includes(input.redirect_uri)) {
      throw new ApiError('redirect_uri_not_allowed', `${input.redirect_uri} is not on the redirect URI list of ${provider}.`, {
        param: 'redirect_uri',
      });
    }
    const state = input.state ?? client.randomState();
    const codeVerifier = client.randomPKCECodeVerifier();
    const nonce = isOpenIdConnect(settings.kind) ? client.randomNonce() : undefined;
    const url = await this.#client.authorizationUrl(settings, {
      redirectUri: input.redirect_uri,
      state,
      codeChallenge: await client.calculatePKCECodeChallenge(codeVerifier),
      nonce,
    });
    const now = this.#clock.now();
    const stateHash = sha256Hex(state);
    try {
      await store.insertState(this.#db.kysely, {
        state_hash: stateHash,
        project_id: projectId,
        provider,
        redirect_uri: input.redirect_uri,
        code_verifier_sealed: this.#secrets.seal(codeVerifier, stateContext(projectId, stateHash)),
        nonce: nonce ?? null,
        expires_at: isoTime(addMilliseconds(now, STATE_TTL_MS)),
        used_at: null,
        created_at: isoTime(now),
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ApiError('parameter_invalid', 'This state was used before; send a new random one, or none.', { param: 'state' });
      }
      throw error;
    }
    return { url, state };
  }

  /**
   * Finishes a sign-in. The state is used up first (single use even when the exchange fails:
   * the provider's code is single use too), then the code is exchanged and the ID token checked,
   * then the user is found, linked or created, and a session made, in one transaction with the
   * events `user.created` (new users) and `session.created`.
   */
  async callback(
    projectId: string,
    provider: string,
    input: { code: string; state: string; iss?: string | undefined },
    sessionClient: SessionClient,
    context: AuditContext,
  ): Promise<OAuthSignIn> {
    const refused: AuditRecord = { projectId, action: 'user.oauth_login', resource: { type: 'user', id: null }, changes: { provider } };
    return this.#audit.recordingRefusals(context, refused, () => this.#callback(projectId, provider, input, sessionClient, context));
  }

  async #callback(
    projectId: string,
    provider: string,
    input: { code: string; state: string; iss?: string | undefined },
    sessionClient: SessionClient,
    context: AuditContext,
  ): Promise<OAuthSignIn> {
    const { settings } = await this.#settings(projectId, provider);
    const state = await this.#useState(projectId, provider, input.state);
    const claims = await this.#client.exchange(settings, {
      code: input.code,
      state: input.state,
      iss: input.iss,
      redirectUri: state.redirect_uri,
      codeVerifier: this.#secrets.open(state.code_verifier_sealed, stateContext(projectId, state.state_hash)),
      nonce: state.nonce ?? undefined,
    });
    return this.#signIn(projectId, provider, claims, sessionClient, context);
  }

  async #signIn(
    projectId: string,
    provider: string,
    claims: ProviderClaims,
    sessionClient: SessionClient,
    context: AuditContext,
  ): Promise<OAuthSignIn> {
    const email = claims.email === undefined ? undefined : safeEmail(claims.email);
    return inTransaction(this.#db, async (trx) => {
      const now = this.#clock.now();
      // docs/adr/0014-identity-linking.md: only the provider's explicit word proves the address.
      const { user, created, claimed } = await this.#linking.signInInTransaction(trx, {
        projectId,
        method: 'oauth',
        account: { provider, subject: claims.subject },
        email,
        emailProven: claims.emailVerified === true,
        name: (claims.name ?? '').trim().slice(0, NAME_LENGTH_MAX),
        passwordHash: null,
        withoutEmail: new ApiError('oauth_exchange_failed', `${provider} did not share an email address, which a new account needs.`),
        now,
        context,
      });
      // A user with an authenticator needs its code too (docs/adr/0016-mfa.md).
      const outcome = await this.#gate.afterFirstFactorInTransaction(trx, { projectId, userId: user.id, client: sessionClient, now });
      await this.#audit.record(trx, context, {
        projectId,
        action: 'user.oauth_login',
        resource: { type: 'user', id: user.id },
        changes: { provider, user_created: created, email_claimed: claimed, ...signInChanges(outcome) },
        createdAt: isoTime(now),
      });
      return { ...signInResult(toUser(user), outcome), created };
    });
  }

  /** The state's row, now used; `oauth_state_invalid` when unknown, of another provider, used or expired. */
  async #useState(projectId: string, provider: string, state: string): Promise<store.StateRow> {
    const stateHash = sha256Hex(state);
    return inTransaction(this.#db, async (trx) => {
      const row = await store.findState(trx, projectId, stateHash);
      const nowIso = isoTime(this.#clock.now());
      if (row === undefined || row.provider !== provider) {
        throw new ApiError('oauth_state_invalid', `This state is unknown, or belongs to another provider than ${provider}.`, {
          param: 'state',
        });
      }
      if (row.used_at !== null) throw new ApiError('oauth_state_invalid', 'This state was used already.', { param: 'state' });
      if (row.expires_at <= nowIso) {
        throw new ApiError('oauth_state_invalid', 'This state has expired (a sign-in must finish within 10 minutes).', {
          param: 'state',
        });
      }
      if (!(await store.useState(trx, projectId, stateHash, nowIso))) {
        throw new ApiError('oauth_state_invalid', 'This state was used already.', { param: 'state' });
      }
      return row;
    });
  }

  async #settings(projectId: string, provider: string): Promise<{ row: store.ProviderRow; settings: ProviderSettings }> {
    const row = await store.findProvider(this.#db.kysely, projectId, provider);
    if (row === undefined) {
      if (builtInKind(provider) !== undefined) throw notConfigured(provider);
      throw new ApiError('oauth_provider_unknown', `No provider ${provider}: use google, github, apple or a configured provider key.`, {
        param: 'provider',
      });
    }
    const secret = JSON.parse(this.#secrets.open(row.secret_sealed, secretContext(projectId, provider))) as SealedSecret;
    const apple =
      row.kind === 'apple' && row.apple_team_id !== null && row.apple_key_id !== null && secret.private_key !== undefined
        ? { teamId: row.apple_team_id, keyId: row.apple_key_id, privateKey: secret.private_key }
        : undefined;
    return {
      row,
      settings: {
        provider,
        kind: row.kind,
        clientId: row.client_id,
        clientSecret: secret.client_secret,
        issuer: row.issuer ?? undefined,
        apple,
        scopes: JSON.parse(row.scopes) as string[],
      },
    };
  }

  #checkIssuer(kind: ProviderKind, issuer: string | undefined): string | null {
    if (kind !== 'oidc') {
      if (issuer !== undefined) {
        throw new ApiError('parameter_invalid', 'issuer is for generic OpenID Connect providers; the built-in ones know theirs.', {
          param: 'issuer',
        });
      }
      return null;
    }
    if (issuer === undefined)
      throw new ApiError('parameter_missing', 'A generic OpenID Connect provider needs its issuer URL.', { param: 'issuer' });
    let url: URL;
    try {
      url = new URL(issuer);
    } catch {
      throw new ApiError('parameter_invalid', 'issuer must be a URL.', { param: 'issuer' });
    }
    const allowed = this.#allowInsecureHttp ? ['https:', 'http:'] : ['https:'];
    if (!allowed.includes(url.protocol) || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
      throw new ApiError('parameter_invalid', 'issuer must be an https:// URL without query, fragment or credentials.', {
        param: 'issuer',
      });
    }
    return issuer;
  }

  /** The secret part to store: new values from the body, or the stored ones when the body omits them. */
  #newSecret(kind: ProviderKind, body: ConfigureProviderBody, existing: store.ProviderRow | undefined): SealedSecret {
    const stored =
      existing === undefined
        ? {}
        : (JSON.parse(this.#secrets.open(existing.secret_sealed, secretContext(existing.project_id, existing.provider))) as SealedSecret);
    if (kind === 'apple') {
      if (body.client_secret !== undefined) {
        throw new ApiError(
          'parameter_invalid',
          "Apple's client secret is made from `apple.team_id`, `apple.key_id` and `apple.private_key`.",
          {
            param: 'client_secret',
          },
        );
      }
      if (body.apple === undefined)
        throw new ApiError('parameter_missing', 'Apple needs `apple.team_id`, `apple.key_id` and `apple.private_key`.', { param: 'apple' });
      const privateKey = body.apple.private_key ?? stored.private_key;
      if (privateKey === undefined)
        throw new ApiError('parameter_missing', 'Apple needs its private key the first time.', { param: 'apple.private_key' });
      if (parseApplePrivateKey(privateKey) === undefined) {
        throw new ApiError('parameter_invalid', 'apple.private_key must be the PEM of a P-256 (ES256) private key, as in the .p8 file.', {
          param: 'apple.private_key',
        });
      }
      return { private_key: privateKey };
    }
    if (body.apple !== undefined) throw new ApiError('parameter_invalid', '`apple` is for the apple provider only.', { param: 'apple' });
    const clientSecret = body.client_secret ?? stored.client_secret;
    if (clientSecret === undefined)
      throw new ApiError('parameter_missing', 'client_secret is required the first time.', { param: 'client_secret' });
    return { client_secret: clientSecret };
  }
}

/** Associated data of a provider's sealed secret: it opens only in its own row. */
export function secretContext(projectId: string, provider: string): string {
  return `oauth_provider:${projectId}:${provider}`;
}

export function stateContext(projectId: string, stateHash: string): string {
  return `oauth_state:${projectId}:${stateHash}`;
}

function tooManyProviders(): ApiError {
  return new ApiError('parameter_invalid', `A project configures at most ${PROVIDERS_PER_PROJECT_MAX} providers.`, { param: 'provider' });
}

function notConfigured(provider: string): ApiError {
  return builtInKind(provider) === undefined
    ? new ApiError('oauth_provider_unknown', `No provider ${provider} in this project.`, { param: 'provider' })
    : new ApiError(
        'oauth_provider_not_configured',
        `${provider} is not configured in this project: PUT /v1/auth/providers/${provider} first.`,
        {
          param: 'provider',
        },
      );
}

/** An address the provider gave that this service cannot store is treated as no address. */
function safeEmail(raw: string) {
  try {
    return normalizeEmail(raw);
  } catch {
    return undefined;
  }
}

function withOpenId(kind: ProviderKind, scopes: readonly string[]): string[] {
  return isOpenIdConnect(kind) && !scopes.includes('openid') ? ['openid', ...scopes] : [...scopes];
}

/**
 * Redirect URIs: `https://`, or `http://` on a loopback host (RFC 8252, native and local apps). No
 * query or fragment: the redirect URI sent at the code exchange is rebuilt without them.
 */
function checkRedirectUri(raw: string, param: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError('parameter_invalid', `${param} must be an absolute URL.`, { param });
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new ApiError('parameter_invalid', `${param} must be https://, or http:// on localhost or a loopback address.`, { param });
  }
  if (url.search !== '' || url.hash !== '' || raw.includes('#') || url.username !== '' || url.password !== '') {
    throw new ApiError('parameter_invalid', `${param} must not carry a query, fragment or credentials.`, { param });
  }
  return raw;
}

function toProvider(row: store.ProviderRow): Provider {
  return {
    object: 'oauth_provider',
    provider: row.provider,
    kind: row.kind,
    client_id: row.client_id,
    issuer: row.issuer,
    scopes: JSON.parse(row.scopes) as string[],
    redirect_uris: JSON.parse(row.redirect_uris) as string[],
    apple: row.apple_team_id !== null && row.apple_key_id !== null ? { team_id: row.apple_team_id, key_id: row.apple_key_id } : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
