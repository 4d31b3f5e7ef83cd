import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import { inTransaction, isUniqueViolation, type Transaction } from '../../db/transaction.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ApiError, isApiError } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import type { OAuthClient } from '../oauth/oauth.service.js';
import { type SignInGate, signInChanges, signInResult } from '../mfa/mfa.service.js';
import type { SessionClient, SessionsService } from '../sessions/sessions.service.js';
import { lockOrganization } from '../organizations/organizations.service.js';
import { NAME_LENGTH_MAX } from '../users/users.schemas.js';
import { IdentityLinking, type NormalizedEmail, normalizeEmail, toUser, type UsersService } from '../users/users.service.js';
import { ensureMemberInTransaction } from './sso.memberships.js';
import { authnRequestUrl, verifySamlResponse } from './sso.saml.js';
import type { AcsBody, OidcCallbackQuery, SsoSignIn, StartBody } from './sso.schemas.js';
import type { SsoOrganizations } from './sso.connections.js';
import { type ConnectionSettings, identityProvider, requestContext } from './sso.settings.js';
import * as store from './sso.store.js';

export { SsoConnections, type SsoOrganizations } from './sso.connections.js';
export { identityProvider, requestContext, secretContext } from './sso.settings.js';

/** A sign-in must come back from the identity provider within this long. */
export const SSO_REQUEST_TTL_MS = 10 * 60 * 1000;
/** The service's own code is exchanged by the application's back end right away. */
export const SSO_CODE_TTL_MS = 2 * 60 * 1000;
export interface SsoServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly users: UsersService;
  readonly sessions: SessionsService;
  /** Makes the session, or the second-factor challenge of a user with an authenticator. */
  readonly gate: SignInGate;
  readonly audit: AuditService;
  readonly oauthClient: OAuthClient;
  readonly secrets: SecretBox;
  readonly settings: ConnectionSettings;
  /** Whose verified domains and members a sign-in through the organization's connection must be in. */
  readonly organizations: SsoOrganizations;
}

/**
 * Enterprise SSO sign-in (docs/adr/0011-sso.md): the start of a sign-in (routed by email domain or
 * organization), the identity provider's return (OIDC callback, SAML ACS) that ends in the
 * service's own one-time code on the application's redirect URI, and the exchange of that code
 * for a user, a membership and a session. The connections themselves: `SsoConnections`.
 */
export class SsoService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #gate: SignInGate;
  readonly #audit: AuditService;
  readonly #oauthClient: OAuthClient;
  readonly #secrets: SecretBox;
  readonly #settings: ConnectionSettings;
  readonly #linking: IdentityLinking;
  readonly #users: UsersService;
  readonly #organizations: SsoOrganizations;

  constructor(options: SsoServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#gate = options.gate;
    this.#audit = options.audit;
    this.#oauthClient = options.oauthClient;
    this.#secrets = options.secrets;
    this.#settings = options.settings;
    this.#linking = new IdentityLinking(options);
    this.#users = options.users;
    this.#organizations = options.organizations;
  }

  /** `POST /v1/auth/sso`: the identity provider's URL for the connection of the email's domain or of the organization. */
  async start(projectId: string, body: StartBody): Promise<{ url: string }> {
    const row = await this.#routedConnection(projectId, body);
    if (!(JSON.parse(row.redirect_uris) as string[]).includes(body.redirect_uri)) {
      throw new ApiError('redirect_uri_not_allowed', `${body.redirect_uri} is not on the redirect URI list of connection ${row.id}.`, {
        param: 'redirect_uri',
      });
    }
    const now = this.#clock.now();
    const request: store.RequestRow = {
      request_key: '',
      project_id: projectId,
      connection_id: row.id,
      redirect_uri: body.redirect_uri,
      client_state: body.state ?? null,
      code_verifier_sealed: null,
      nonce: null,
      expires_at: isoTime(addMilliseconds(now, SSO_REQUEST_TTL_MS)),
      used_at: null,
      created_at: isoTime(now),
    };
    let url: string;
    if (row.type === 'oidc') {
      const state = client.randomState();
      const codeVerifier = client.randomPKCECodeVerifier();
      const nonce = client.randomNonce();
      url = await this.#oauthClient.authorizationUrl(this.#settings.oidc(row), {
        redirectUri: this.#settings.oidcCallbackUrl(),
        state,
        codeChallenge: await client.calculatePKCECodeChallenge(codeVerifier),
        nonce,
      });
      request.request_key = sha256Hex(state);
      request.code_verifier_sealed = this.#secrets.seal(codeVerifier, requestContext(projectId, request.request_key));
      request.nonce = nonce;
    } else {
      request.request_key = `_${randomBytes(20).toString('hex')}`;
      url = await authnRequestUrl(this.#settings.saml(row), request.request_key);
    }
    await store.insertRequest(this.#db.kysely, request);
    return { url };
  }

  /**
   * `GET /v1/auth/sso/oidc/callback`: uses the state up, exchanges the code (PKCE, nonce, ID token
   * signature, issuer, audience, expiry) and returns where to send the browser: the application's
   * redirect URI with the service's code, or with the identity provider's `error`.
   */
  async oidcCallback(query: OidcCallbackQuery, context: AuditContext): Promise<string> {
    if (query.state === undefined || query.state === '') {
      throw new ApiError('sso_request_invalid', 'The callback carries no state.', { param: 'state' });
    }
    const stateHash = sha256Hex(query.state);
    const request = await store.useRequest(this.#db.kysely, { requestKey: stateHash, now: isoTime(this.#clock.now()) });
    if (request === undefined) {
      throw new ApiError('sso_request_invalid', 'This state is unknown, expired or was used already.', { param: 'state' });
    }
    const row = await store.findConnection(this.#db.kysely, request.project_id, request.connection_id);
    if (row?.type !== 'oidc') throw new ApiError('sso_request_invalid', 'The connection of this sign-in was deleted.', { param: 'state' });
    if (query.error !== undefined) {
      const error = /^[\w.-]{1,64}$/.test(query.error) ? query.error : 'server_error';
      return redirectWith(request.redirect_uri, { error, state: request.client_state });
    }
    return this.#refusalsLogged(row, context, async () => {
      if (query.code === undefined || query.code === '') {
        throw new ApiError('parameter_missing', 'The callback carries no code.', { param: 'code' });
      }
      const claims = await this.#oauthClient.exchange(this.#settings.oidc(row), {
        code: query.code,
        state: query.state ?? '',
        iss: query.iss,
        redirectUri: this.#settings.oidcCallbackUrl(),
        codeVerifier: this.#secrets.open(request.code_verifier_sealed ?? '', requestContext(request.project_id, stateHash)),
        nonce: request.nonce ?? undefined,
      });
      // The connection's IdP speaks for its domains (docs/adr/0014-identity-linking.md), unless it
      // says itself that it has not verified the address.
      const identity = { subject: claims.subject, email: claims.email, name: claims.name, emailVerified: claims.emailVerified !== false };
      return inTransaction(this.#db, (trx) => this.#issueCode(trx, row, identity, request));
    });
  }

  /**
   * `POST /v1/auth/sso/saml/{connection_id}/acs`: verifies the response (signature first, with the
   * configured certificate only), then in one transaction uses its assertion id and the request
   * it answers (or accepts it as IdP-initiated where the connection allows that), and returns where
   * to send the browser.
   */
  async samlAcs(connectionId: string, body: AcsBody, context: AuditContext): Promise<string> {
    const row = await store.findConnectionById(this.#db.kysely, connectionId);
    if (row?.type !== 'saml') throw new ApiError('resource_missing', `No SAML connection ${connectionId}.`, { param: 'connection_id' });
    return this.#refusalsLogged(row, context, async () => {
      const assertion = await verifySamlResponse(this.#settings.saml(row), body.SAMLResponse);
      return inTransaction(this.#db, async (trx) => {
        const nowIso = isoTime(this.#clock.now());
        try {
          await store.insertAssertion(trx, {
            connection_id: row.id,
            assertion_id: assertion.assertionId,
            expires_at: isoTime(assertion.expiresAt),
          });
        } catch (error) {
          if (isUniqueViolation(error))
            throw new ApiError('sso_assertion_replayed', `Assertion ${assertion.assertionId} was used already.`);
          throw error;
        }
        let request: Pick<store.RequestRow, 'redirect_uri' | 'client_state'>;
        if (assertion.inResponseTo !== undefined) {
          const used = await store.useRequest(trx, { requestKey: assertion.inResponseTo, connectionId: row.id, now: nowIso });
          if (used === undefined) {
            throw new ApiError(
              'sso_request_invalid',
              `The request ${assertion.inResponseTo} is unknown to this connection, expired or answered already.`,
            );
          }
          request = used;
        } else {
          if (row.allow_idp_initiated !== 1) {
            throw new ApiError('sso_idp_initiated_not_allowed', `Connection ${row.id} accepts only sign-ins that the service started.`);
          }
          const allowed = JSON.parse(row.redirect_uris) as string[];
          const relayed = body.RelayState !== undefined && allowed.includes(body.RelayState) ? body.RelayState : undefined;
          request = { redirect_uri: relayed ?? allowed[0] ?? '', client_state: null };
        }
        // SAML has no verification claim: the connection's IdP is authoritative for its domains,
        // which #issueCode checks (docs/adr/0014-identity-linking.md).
        const identity = { subject: assertion.subject, email: assertion.email, name: assertion.name, emailVerified: true };
        return this.#issueCode(trx, row, identity, request);
      });
    });
  }

  /** `POST /v1/auth/sso/callback`: the code for a user (created at the first sign-in), a membership and a session. */
  async callback(projectId: string, code: string, sessionClient: SessionClient, context: AuditContext): Promise<SsoSignIn> {
    const refused: AuditRecord = { projectId, action: 'user.sso_login', resource: { type: 'user', id: null } };
    return this.#audit.recordingRefusals(context, refused, () =>
      inTransaction(this.#db, async (trx) => {
        const now = this.#clock.now();
        const nowIso = isoTime(now);
        const used = await store.useCode(trx, projectId, sha256Hex(code), nowIso);
        if (used === undefined)
          throw new ApiError('sso_code_invalid', 'This code is unknown, expired or was used already.', { param: 'code' });
        const row = await store.findConnection(trx, projectId, used.connection_id);
        if (row === undefined) throw new ApiError('sso_code_invalid', 'The connection of this code was deleted.', { param: 'code' });
        // The organization's row lock, which every change of its members takes first: sign-ins
        // through one connection happen one at a time on PostgreSQL, so two first sign-ins of one
        // person make one user, one identity and one membership, the second finding the first's.
        if (!(await lockOrganization(trx, this.#db, projectId, row.organization_id)))
          throw new ApiError('sso_code_invalid', 'The organization of this code was deleted.', { param: 'code' });
        const email = normalizeEmail(used.email);
        // Checked again at the exchange, before anything is written: a domain or a membership may
        // have gone since the identity provider's answer.
        await this.#requireWithinOrganization(trx, row, { email, subject: used.subject });
        // The connection's domains are the organization's: its identity provider proves every
        // address in them unless it said otherwise (docs/adr/0014-identity-linking.md).
        const { user, created, claimed } = await this.#linking.signInInTransaction(trx, {
          projectId,
          method: 'sso',
          account: { provider: identityProvider(row.id), subject: used.subject },
          email,
          emailProven: used.email_verified === 1,
          name: used.name,
          passwordHash: null,
          now,
          context,
        });
        const memberAdded = await ensureMemberInTransaction(trx, this.#audit, {
          projectId,
          organizationId: row.organization_id,
          userId: user.id,
          role: row.default_role,
          now: nowIso,
          context,
        });
        // A user with an authenticator needs its code too (docs/adr/0016-mfa.md).
        const outcome = await this.#gate.afterFirstFactorInTransaction(trx, {
          projectId,
          userId: user.id,
          client: sessionClient,
          now,
          amr: ['sso'],
        });
        await this.#audit.record(trx, context, {
          projectId,
          action: 'user.sso_login',
          resource: { type: 'user', id: user.id },
          changes: {
            connection_id: row.id,
            organization_id: row.organization_id,
            user_created: created,
            email_claimed: claimed,
            member_added: memberAdded,
            ...signInChanges(outcome),
          },
          createdAt: nowIso,
        });
        return { ...signInResult(toUser(user), outcome), organization_id: row.organization_id };
      }),
    );
  }

  // ---- Helpers ---------------------------------------------------------------------------------

  /** The code, stored hashed, and the redirect URI that carries it; the email's domain must be the connection's. */
  async #issueCode(
    trx: Transaction,
    row: store.ConnectionRow,
    identity: { subject: string; email: string | undefined; name: string | undefined; emailVerified: boolean },
    request: Pick<store.RequestRow, 'redirect_uri' | 'client_state'>,
  ): Promise<string> {
    if (identity.email === undefined) {
      throw new ApiError('sso_response_invalid', 'The identity provider did not share an email address, which a sign-in needs.');
    }
    let email;
    try {
      email = normalizeEmail(identity.email);
    } catch {
      throw new ApiError('sso_response_invalid', 'The identity provider shared something other than an email address.');
    }
    await this.#requireWithinOrganization(trx, row, { email, subject: identity.subject });
    const code = randomBytes(32).toString('base64url');
    const now = this.#clock.now();
    await store.insertCode(trx, {
      code_hash: sha256Hex(code),
      project_id: row.project_id,
      connection_id: row.id,
      subject: identity.subject,
      email: email.email,
      name: (identity.name ?? '').trim().slice(0, NAME_LENGTH_MAX),
      email_verified: identity.emailVerified ? 1 : 0,
      expires_at: isoTime(addMilliseconds(now, SSO_CODE_TTL_MS)),
      used_at: null,
      created_at: isoTime(now),
    });
    return redirectWith(request.redirect_uri, { code, state: request.client_state });
  }

  /**
   * An organization's identity provider speaks only for the organization (docs/adr/0011-sso.md):
   * for an address in one of its verified domains, or for a user who is a member already (the
   * user the sign-in would reach: the one its IdP account is linked to, else the address's).
   * 403 `sso_domain_mismatch` otherwise, before any user, link or session is written.
   */
  async #requireWithinOrganization(
    trx: Transaction,
    row: store.ConnectionRow,
    identity: { email: NormalizedEmail; subject: string },
  ): Promise<void> {
    const { project_id: projectId, organization_id: organizationId } = row;
    const domain = identity.email.emailKey.slice(identity.email.emailKey.lastIndexOf('@') + 1);
    if ((await this.#organizations.verifiedDomains(projectId, organizationId, trx)).includes(domain)) return;
    const user =
      (await this.#users.findByIdentityInTransaction(trx, { projectId, provider: identityProvider(row.id), subject: identity.subject })) ??
      (await this.#users.findRecordByEmail(projectId, identity.email, trx));
    if (user !== undefined && (await this.#organizations.isMember(projectId, organizationId, user.id, trx))) return;
    throw new ApiError(
      'sso_domain_mismatch',
      `${domain} is not a verified domain of organization ${organizationId}, and this user is not a member of it.`,
    );
  }

  /** Runs an identity provider's return; a refusal is logged and written to the audit log, then thrown on. */
  async #refusalsLogged<T>(row: store.ConnectionRow, context: AuditContext, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isApiError(error) && error.status < 500) {
        this.#logger.warn(
          { connection_id: row.id, project_id: row.project_id, code: error.code, reason: error.message, request_id: context.requestId },
          'sso: identity provider response refused',
        );
        await this.#audit.recordAlone(context, {
          projectId: row.project_id,
          action: 'user.sso_login',
          resource: { type: 'sso_connection', id: row.id },
          outcome: error.code,
        });
      }
      throw error;
    }
  }

  async #routedConnection(projectId: string, body: StartBody): Promise<store.ConnectionRow> {
    if ((body.email === undefined) === (body.organization_id === undefined)) {
      throw new ApiError(
        body.email === undefined ? 'parameter_missing' : 'parameter_invalid',
        'Send either `email` or `organization_id`, not both.',
        { param: 'email' },
      );
    }
    if (body.email !== undefined) {
      const { emailKey } = normalizeEmail(body.email);
      const domain = emailKey.slice(emailKey.lastIndexOf('@') + 1);
      const row = await store.findConnectionOfDomain(this.#db.kysely, projectId, domain);
      if (row === undefined) throw new ApiError('sso_connection_not_found', `No SSO connection answers for ${domain}.`, { param: 'email' });
      return row;
    }
    const organizationId = body.organization_id ?? '';
    const row = await store.findConnectionOfOrganization(this.#db.kysely, projectId, organizationId);
    if (row === undefined) {
      throw new ApiError('sso_connection_not_found', `Organization ${organizationId} has no SSO connection.`, { param: 'organization_id' });
    }
    return row;
  }
}

function redirectWith(redirectUri: string, parameters: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) if (value !== null) url.searchParams.set(name, value);
  return url.href;
}
