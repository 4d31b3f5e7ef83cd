import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import * as client from 'openid-client';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import { inTransaction, isUniqueViolation, type Transaction } from '../../db/transaction.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ApiError, isApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import type { OAuthClient, ProviderSettings } from '../oauth/oauth.service.js';
import { type SignInGate, signInChanges, signInResult } from '../mfa/mfa.service.js';
import type { SessionClient, SessionsService } from '../sessions/sessions.service.js';
import { DEFAULT_MEMBER_ROLE, lockOrganization } from '../organizations/organizations.service.js';
import { NAME_LENGTH_MAX } from '../users/users.schemas.js';
import { IdentityLinking, normalizeEmail, toUser, type UsersService } from '../users/users.service.js';
import { ensureMemberInTransaction } from './sso.memberships.js';
import {
  authnRequestUrl,
  normalizeCertificate,
  type SamlConnectionSettings,
  serviceProviderMetadata,
  verifySamlResponse,
} from './sso.saml.js';
import type { AcsBody, Connection, CreateConnectionBody, OidcCallbackQuery, SsoSignIn, StartBody } from './sso.schemas.js';
import * as store from './sso.store.js';

/** A sign-in must come back from the identity provider within this long. */
export const SSO_REQUEST_TTL_MS = 10 * 60 * 1000;
/** The service's own code is exchanged by the application's back end right away. */
export const SSO_CODE_TTL_MS = 2 * 60 * 1000;
const OIDC_SCOPES = ['openid', 'email', 'profile'];

/** What the SSO module needs of the organizations module. */
export interface SsoOrganizations {
  /** The organization; 404 `resource_missing` when the project has none of that id. */
  get(projectId: string, organizationId: string): Promise<unknown>;
  /** 400 `parameter_invalid` unless `role` is a role of the project. */
  requireRole(projectId: string, role: string, param?: string): Promise<void>;
}

export interface SsoServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly users: UsersService;
  readonly sessions: SessionsService;
  /** Makes the session, or the second-factor challenge of a user with an authenticator. */
  readonly gate: SignInGate;
  readonly organizations: SsoOrganizations;
  readonly audit: AuditService;
  readonly oauthClient: OAuthClient;
  readonly secrets: SecretBox;
  /** PUBLIC_URL: the base of the URLs identity providers call. */
  readonly publicUrl: string;
  /** `OAUTH_ALLOW_INSECURE_HTTP`: OIDC issuers may be `http://`. */
  readonly allowInsecureHttp: boolean;
}

/**
 * Enterprise SSO (docs/adr/0011-sso.md): an organization's OpenID Connect or SAML connection, the
 * start of a sign-in (routed by email domain or organization), the identity provider's return
 * (OIDC callback, SAML ACS) that ends in the service's own one-time code on the application's
 * redirect URI, and the exchange of that code for a user, a membership and a session.
 */
export class SsoService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #gate: SignInGate;
  readonly #organizations: SsoOrganizations;
  readonly #audit: AuditService;
  readonly #oauthClient: OAuthClient;
  readonly #secrets: SecretBox;
  readonly #publicUrl: string;
  readonly #allowInsecureHttp: boolean;
  readonly #linking: IdentityLinking;

  constructor(options: SsoServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#gate = options.gate;
    this.#organizations = options.organizations;
    this.#audit = options.audit;
    this.#oauthClient = options.oauthClient;
    this.#secrets = options.secrets;
    this.#publicUrl = options.publicUrl;
    this.#allowInsecureHttp = options.allowInsecureHttp;
    this.#linking = new IdentityLinking(options);
  }

  // ---- Connections -----------------------------------------------------------------------------

  async create(projectId: string, organizationId: string, body: CreateConnectionBody, context: AuditContext): Promise<Connection> {
    const refused: AuditRecord = { projectId, action: 'sso_connection.create', resource: { type: 'organization', id: organizationId } };
    return this.#audit.recordingRefusals(context, refused, async () => {
      await this.#organizations.get(projectId, organizationId);
      const defaultRole = body.default_role ?? DEFAULT_MEMBER_ROLE;
      await this.#organizations.requireRole(projectId, defaultRole, 'default_role');
      const domains = checkDomains(body.domains);
      const redirectUris = body.redirect_uris.map((uri, index) => checkRedirectUri(uri, `redirect_uris[${index}]`));
      const id = newId('ssoc');
      const now = isoTime(this.#clock.now());
      const row: store.ConnectionRow = {
        id,
        project_id: projectId,
        organization_id: organizationId,
        type: body.type,
        default_role: defaultRole,
        allow_idp_initiated: body.allow_idp_initiated === true ? 1 : 0,
        redirect_uris: JSON.stringify(redirectUris),
        oidc_issuer: null,
        oidc_client_id: null,
        oidc_client_secret_sealed: null,
        saml_idp_entity_id: null,
        saml_idp_sso_url: null,
        saml_idp_certificate: null,
        created_at: now,
      };
      if (body.type === 'oidc') {
        if (body.saml !== undefined) throw new ApiError('parameter_invalid', '`saml` is for SAML connections.', { param: 'saml' });
        if (body.oidc === undefined) throw new ApiError('parameter_missing', 'An OIDC connection needs `oidc`.', { param: 'oidc' });
        if (body.allow_idp_initiated === true) {
          throw new ApiError('parameter_invalid', 'IdP-initiated sign-in is a SAML feature.', { param: 'allow_idp_initiated' });
        }
        const issuer = checkUrl(body.oidc.issuer, 'oidc.issuer', { allowHttp: this.#allowInsecureHttp, loopbackHttp: false });
        // Discovery is checked now, so that a wrong issuer is refused here rather than at sign-in.
        await this.#oauthClient.checkIssuer(issuer);
        row.oidc_issuer = issuer;
        row.oidc_client_id = body.oidc.client_id;
        row.oidc_client_secret_sealed = this.#secrets.seal(body.oidc.client_secret, secretContext(projectId, id));
      } else {
        if (body.oidc !== undefined) throw new ApiError('parameter_invalid', '`oidc` is for OIDC connections.', { param: 'oidc' });
        if (body.saml === undefined) throw new ApiError('parameter_missing', 'A SAML connection needs `saml`.', { param: 'saml' });
        const certificate = normalizeCertificate(body.saml.idp_certificate);
        if (certificate === undefined) {
          throw new ApiError('parameter_invalid', 'saml.idp_certificate must be an X.509 certificate, PEM or base64.', {
            param: 'saml.idp_certificate',
          });
        }
        row.saml_idp_entity_id = body.saml.idp_entity_id;
        row.saml_idp_sso_url = checkUrl(body.saml.idp_sso_url, 'saml.idp_sso_url', { allowHttp: false, loopbackHttp: true });
        row.saml_idp_certificate = certificate;
      }
      await inTransaction(this.#db, async (trx) => {
        if ((await store.findConnectionOfOrganization(trx, projectId, organizationId)) !== undefined) {
          throw new ApiError('sso_connection_exists', `Organization ${organizationId} has an SSO connection already; delete it first.`);
        }
        const taken = await store.takenDomains(trx, projectId, domains);
        if (taken.length > 0) throw domainTaken(taken);
        try {
          await store.insertConnection(trx, row, domains);
        } catch (error) {
          // Two creations at once: the unique indexes decide.
          if (isUniqueViolation(error)) throw domainTaken(domains);
          throw error;
        }
        await this.#audit.record(trx, context, {
          projectId,
          action: 'sso_connection.create',
          resource: { type: 'sso_connection', id },
          changes: { organization_id: organizationId, type: body.type, domains: domains.join(',') },
          createdAt: now,
        });
      });
      return this.#toConnection(row, domains);
    });
  }

  async list(projectId: string, organizationId: string): Promise<{ object: 'list'; data: Connection[]; has_more: false }> {
    await this.#organizations.get(projectId, organizationId);
    const rows = await store.listConnections(this.#db.kysely, projectId, organizationId);
    const domains = await store.domainsOf(
      this.#db.kysely,
      projectId,
      rows.map((row) => row.id),
    );
    return { object: 'list', data: rows.map((row) => this.#toConnection(row, domains.get(row.id) ?? [])), has_more: false };
  }

  async remove(
    projectId: string,
    organizationId: string,
    connectionId: string,
    context: AuditContext,
  ): Promise<{ id: string; object: 'sso_connection'; deleted: true }> {
    const record: AuditRecord = { projectId, action: 'sso_connection.delete', resource: { type: 'sso_connection', id: connectionId } };
    await this.#audit.recordingRefusals(context, record, () =>
      inTransaction(this.#db, async (trx) => {
        const row = await store.findConnection(trx, projectId, connectionId);
        if (row?.organization_id !== organizationId || !(await store.deleteConnection(trx, projectId, connectionId))) {
          throw new ApiError('resource_missing', `No SSO connection ${connectionId} in organization ${organizationId}.`, {
            param: 'connection_id',
          });
        }
        await this.#audit.record(trx, context, { ...record, changes: { organization_id: organizationId } });
      }),
    );
    return { id: connectionId, object: 'sso_connection', deleted: true };
  }

  /** The SP metadata of a SAML connection, public; 404 for anything else. */
  async metadata(connectionId: string): Promise<string> {
    const row = await store.findConnectionById(this.#db.kysely, connectionId);
    if (row?.type !== 'saml') throw new ApiError('resource_missing', `No SAML connection ${connectionId}.`, { param: 'connection_id' });
    return serviceProviderMetadata(this.#samlSettings(row));
  }

  // ---- Sign-in ---------------------------------------------------------------------------------

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
      url = await this.#oauthClient.authorizationUrl(this.#oidcSettings(row), {
        redirectUri: this.#oidcCallbackUrl(),
        state,
        codeChallenge: await client.calculatePKCECodeChallenge(codeVerifier),
        nonce,
      });
      request.request_key = sha256Hex(state);
      request.code_verifier_sealed = this.#secrets.seal(codeVerifier, requestContext(projectId, request.request_key));
      request.nonce = nonce;
    } else {
      request.request_key = `_${randomBytes(20).toString('hex')}`;
      url = await authnRequestUrl(this.#samlSettings(row), request.request_key);
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
      const claims = await this.#oauthClient.exchange(this.#oidcSettings(row), {
        code: query.code,
        state: query.state ?? '',
        iss: query.iss,
        redirectUri: this.#oidcCallbackUrl(),
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
      const assertion = await verifySamlResponse(this.#samlSettings(row), body.SAMLResponse);
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
        // The connection's domains are the organization's: its identity provider proves every
        // address in them unless it said otherwise (docs/adr/0014-identity-linking.md).
        const { user, created, claimed } = await this.#linking.signInInTransaction(trx, {
          projectId,
          method: 'sso',
          account: { provider: identityProvider(row.id), subject: used.subject },
          email: normalizeEmail(used.email),
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
        const outcome = await this.#gate.afterFirstFactorInTransaction(trx, { projectId, userId: user.id, client: sessionClient, now });
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
    const domain = email.emailKey.slice(email.emailKey.lastIndexOf('@') + 1);
    const domains = (await store.domainsOf(trx, row.project_id, [row.id])).get(row.id) ?? [];
    if (!domains.includes(domain)) {
      throw new ApiError('sso_domain_not_allowed', `${domain} is not a domain of connection ${row.id} (${domains.join(', ')}).`);
    }
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

  #oidcSettings(row: store.ConnectionRow): ProviderSettings {
    return {
      provider: `SSO connection ${row.id}`,
      kind: 'oidc',
      clientId: row.oidc_client_id ?? '',
      clientSecret: this.#secrets.open(row.oidc_client_secret_sealed ?? '', secretContext(row.project_id, row.id)),
      issuer: row.oidc_issuer ?? undefined,
      apple: undefined,
      scopes: OIDC_SCOPES,
    };
  }

  #samlSettings(row: store.ConnectionRow): SamlConnectionSettings {
    return {
      idpEntityId: row.saml_idp_entity_id ?? '',
      idpSsoUrl: row.saml_idp_sso_url ?? '',
      idpCertificate: row.saml_idp_certificate ?? '',
      spEntityId: this.#samlUrl(row.id, 'metadata'),
      acsUrl: this.#samlUrl(row.id, 'acs'),
    };
  }

  #samlUrl(connectionId: string, endpoint: 'metadata' | 'acs'): string {
    return `${this.#publicUrl}/v1/auth/sso/saml/${connectionId}/${endpoint}`;
  }

  #oidcCallbackUrl(): string {
    return `${this.#publicUrl}/v1/auth/sso/oidc/callback`;
  }

  #toConnection(row: store.ConnectionRow, domains: readonly string[]): Connection {
    return {
      id: row.id,
      object: 'sso_connection',
      organization_id: row.organization_id,
      type: row.type,
      domains: [...domains].sort(),
      redirect_uris: JSON.parse(row.redirect_uris) as string[],
      default_role: row.default_role,
      allow_idp_initiated: row.allow_idp_initiated === 1,
      oidc:
        row.type === 'oidc'
          ? { issuer: row.oidc_issuer ?? '', client_id: row.oidc_client_id ?? '', redirect_uri: this.#oidcCallbackUrl() }
          : null,
      saml:
        row.type === 'saml'
          ? {
              idp_entity_id: row.saml_idp_entity_id ?? '',
              idp_sso_url: row.saml_idp_sso_url ?? '',
              idp_certificate: row.saml_idp_certificate ?? '',
              sp_entity_id: this.#samlUrl(row.id, 'metadata'),
              acs_url: this.#samlUrl(row.id, 'acs'),
              metadata_url: this.#samlUrl(row.id, 'metadata'),
            }
          : null,
      created_at: row.created_at,
    };
  }
}

/** The identity a connection links to a user: one provider per connection in `user_identities`. */
export function identityProvider(connectionId: string): string {
  return `sso:${connectionId}`;
}

export function secretContext(projectId: string, connectionId: string): string {
  return `sso_connection:${projectId}:${connectionId}`;
}

export function requestContext(projectId: string, requestKey: string): string {
  return `sso_request:${projectId}:${requestKey}`;
}

function domainTaken(domains: readonly string[]): ApiError {
  return new ApiError('sso_domain_taken', `${domains.join(', ')} belongs to another SSO connection of this project.`, { param: 'domains' });
}

function checkDomains(raw: readonly string[]): string[] {
  const domains = raw.map((domain) => domain.toLowerCase());
  if (new Set(domains).size !== domains.length) {
    throw new ApiError('parameter_invalid', 'domains lists a domain twice.', { param: 'domains' });
  }
  return domains;
}

function redirectWith(redirectUri: string, parameters: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) if (value !== null) url.searchParams.set(name, value);
  return url.href;
}

function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/** An absolute `https://` URL (or `http://` where allowed) without credentials or fragment. */
function checkUrl(raw: string, param: string, options: { allowHttp: boolean; loopbackHttp: boolean }): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError('parameter_invalid', `${param} must be an absolute URL.`, { param });
  }
  const httpAllowed = options.allowHttp || (options.loopbackHttp && isLoopback(url));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && httpAllowed)) {
    throw new ApiError('parameter_invalid', `${param} must be an https:// URL.`, { param });
  }
  if (url.hash !== '' || raw.includes('#') || url.username !== '' || url.password !== '') {
    throw new ApiError('parameter_invalid', `${param} must not carry a fragment or credentials.`, { param });
  }
  return raw;
}

/**
 * Redirect URIs, as for OAuth (docs/adr/0008-oauth.md): `https://`, or `http://` on a loopback
 * host; no query or fragment, so that the code and state the service adds are the only parameters.
 */
function checkRedirectUri(raw: string, param: string): string {
  checkUrl(raw, param, { allowHttp: false, loopbackHttp: true });
  if (new URL(raw).search !== '' || raw.includes('?')) {
    throw new ApiError('parameter_invalid', `${param} must not carry a query.`, { param });
  }
  return raw;
}
