import type { Db } from '../../db/database.js';
import { inTransaction, isUniqueViolation, type Transaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkRedirectUri, isLoopbackUrl } from '../../lib/redirect-uri.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import type { OAuthClient } from '../oauth/oauth.service.js';
import { DEFAULT_MEMBER_ROLE } from '../organizations/organizations.service.js';
import { normalizeCertificate, serviceProviderMetadata } from './sso.saml.js';
import type { Connection, CreateConnectionBody } from './sso.schemas.js';
import { type ConnectionSettings, secretContext } from './sso.settings.js';
import * as store from './sso.store.js';

/** What the SSO module needs of the organizations module. */
export interface SsoOrganizations {
  /** The organization; 404 `resource_missing` when the project has none of that id. */
  get(projectId: string, organizationId: string): Promise<unknown>;
  /** 400 `parameter_invalid` unless `role` is a role of the project. */
  requireRole(projectId: string, role: string, param?: string): Promise<void>;
  /** The organization's verified domains: the only ones its connection may answer for. */
  verifiedDomains(projectId: string, organizationId: string, executor?: Transaction): Promise<string[]>;
  /** Whether the user is a member of the organization. */
  isMember(projectId: string, organizationId: string, userId: string, executor?: Transaction): Promise<boolean>;
}

export interface SsoConnectionsOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly organizations: SsoOrganizations;
  readonly audit: AuditService;
  readonly oauthClient: OAuthClient;
  readonly secrets: SecretBox;
  readonly settings: ConnectionSettings;
  /** `OAUTH_ALLOW_INSECURE_HTTP`: OIDC issuers may be `http://`. */
  readonly allowInsecureHttp: boolean;
}

/**
 * An organization's SSO connection (docs/adr/0011-sso.md): one per organization, OpenID Connect or
 * SAML, with the email domains it answers for (verified domains of its organization), the
 * application's redirect URIs and the role new members get. The OIDC client secret is sealed.
 */
export class SsoConnections {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #organizations: SsoOrganizations;
  readonly #audit: AuditService;
  readonly #oauthClient: OAuthClient;
  readonly #secrets: SecretBox;
  readonly #settings: ConnectionSettings;
  readonly #allowInsecureHttp: boolean;

  constructor(options: SsoConnectionsOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#organizations = options.organizations;
    this.#audit = options.audit;
    this.#oauthClient = options.oauthClient;
    this.#secrets = options.secrets;
    this.#settings = options.settings;
    this.#allowInsecureHttp = options.allowInsecureHttp;
  }

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
        await this.#requireVerified(trx, projectId, organizationId, domains);
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
    return serviceProviderMetadata(this.#settings.saml(row));
  }

  /** 422 `domain_unverified` unless every domain is one the organization has verified (docs/adr/0011-sso.md). */
  async #requireVerified(trx: Transaction, projectId: string, organizationId: string, domains: readonly string[]): Promise<void> {
    const verified = new Set(await this.#organizations.verifiedDomains(projectId, organizationId, trx));
    const unverified = domains.filter((domain) => !verified.has(domain));
    if (unverified.length > 0) {
      throw new ApiError(
        'domain_unverified',
        `Organization ${organizationId} has not verified ${unverified.join(', ')}: add and verify it with POST /v1/organizations/${organizationId}/domains first.`,
        { param: 'domains' },
      );
    }
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
          ? { issuer: row.oidc_issuer ?? '', client_id: row.oidc_client_id ?? '', redirect_uri: this.#settings.oidcCallbackUrl() }
          : null,
      saml:
        row.type === 'saml'
          ? {
              idp_entity_id: row.saml_idp_entity_id ?? '',
              idp_sso_url: row.saml_idp_sso_url ?? '',
              idp_certificate: row.saml_idp_certificate ?? '',
              sp_entity_id: this.#settings.samlUrl(row.id, 'metadata'),
              acs_url: this.#settings.samlUrl(row.id, 'acs'),
              metadata_url: this.#settings.samlUrl(row.id, 'metadata'),
            }
          : null,
      created_at: row.created_at,
    };
  }
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

/** An absolute `https://` URL (or `http://` where allowed) without credentials or fragment. */
function checkUrl(raw: string, param: string, options: { allowHttp: boolean; loopbackHttp: boolean }): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError('parameter_invalid', `${param} must be an absolute URL.`, { param });
  }
  const httpAllowed = options.allowHttp || (options.loopbackHttp && isLoopbackUrl(url));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && httpAllowed)) {
    throw new ApiError('parameter_invalid', `${param} must be an https:// URL.`, { param });
  }
  if (url.hash !== '' || raw.includes('#') || url.username !== '' || url.password !== '') {
    throw new ApiError('parameter_invalid', `${param} must not carry a fragment or credentials.`, { param });
  }
  return raw;
}
