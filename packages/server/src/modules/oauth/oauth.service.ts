import * as client from 'openid-client';
import type { Db } from '../../db/database.js';
import { inTransaction, isUniqueViolation } from '../../db/transaction.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { type MfaChallenge, type SignInGate, signInChanges, signInResult } from '../mfa/mfa.service.js';
import type { SessionClient, SessionsService } from '../sessions/sessions.service.js';
import type { IssuedSession } from '../sessions/sessions.schemas.js';
import { NAME_LENGTH_MAX, type User } from '../users/users.schemas.js';
import { IdentityLinking, normalizeEmail, toUser, type UsersService } from '../users/users.service.js';
import type { OAuthClient, ProviderClaims } from './oauth.client.js';
import type { OAuthProviders } from './oauth.configuration.js';
import { isOpenIdConnect } from './oauth.providers.js';
import * as store from './oauth.store.js';

// The OpenID client, shared with SSO's OIDC connections.
export { OAuthClient, type ProviderSettings } from './oauth.client.js';
export { OAuthProviders, secretContext } from './oauth.configuration.js';

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
  readonly providers: OAuthProviders;
}

export type OAuthSignIn =
  { readonly user: User; readonly session: IssuedSession; readonly created: boolean } | (MfaChallenge & { readonly created: boolean });

/**
 * Social and OpenID Connect sign-in: the start of a sign-in (state, PKCE, nonce) and its callback
 * (code exchange, then the user by the one linking rule of docs/adr/0014-identity-linking.md). The
 * storage of state and secrets is in docs/adr/0008-oauth.md; the providers' configurations are
 * `OAuthProviders`.
 */
export class OAuthService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #gate: SignInGate;
  readonly #audit: AuditService;
  readonly #client: OAuthClient;
  readonly #secrets: SecretBox;
  readonly #providers: OAuthProviders;
  readonly #linking: IdentityLinking;

  constructor(options: OAuthServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#gate = options.gate;
    this.#audit = options.audit;
    this.#client = options.client;
    this.#secrets = options.secrets;
    this.#providers = options.providers;
    this.#linking = new IdentityLinking(options);
  }

  /** Starts a sign-in: a single-use state (10 min), a PKCE verifier and, for OpenID Connect, a nonce. */
  async start(projectId: string, provider: string, input: { redirect_uri: string; state?: string | undefined }) {
    const { row, settings } = await this.#providers.settings(projectId, provider);
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
    const { settings } = await this.#providers.settings(projectId, provider);
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
      const outcome = await this.#gate.afterFirstFactorInTransaction(trx, {
        projectId,
        userId: user.id,
        client: sessionClient,
        now,
        amr: ['oauth'],
      });
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
}

export function stateContext(projectId: string, stateHash: string): string {
  return `oauth_state:${projectId}:${stateHash}`;
}

/** An address the provider gave that this service cannot store is treated as no address. */
function safeEmail(raw: string) {
  try {
    return normalizeEmail(raw);
  } catch {
    return undefined;
  }
}
