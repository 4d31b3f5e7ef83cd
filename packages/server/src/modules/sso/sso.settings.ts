import type { SecretBox } from '../../lib/secret-box.js';
import type { ProviderSettings } from '../oauth/oauth.service.js';
import type { SamlConnectionSettings } from './sso.saml.js';
import type * as store from './sso.store.js';

const OIDC_SCOPES = ['openid', 'email', 'profile'];

/**
 * What a stored connection becomes for the protocol libraries: the OIDC client's settings (its
 * secret opened), the SAML settings, and the service's own URLs that identity providers call.
 */
export class ConnectionSettings {
  readonly #publicUrl: string;
  readonly #secrets: SecretBox;

  constructor(options: { readonly publicUrl: string; readonly secrets: SecretBox }) {
    this.#publicUrl = options.publicUrl;
    this.#secrets = options.secrets;
  }

  oidc(row: store.ConnectionRow): ProviderSettings {
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

  saml(row: store.ConnectionRow): SamlConnectionSettings {
    return {
      idpEntityId: row.saml_idp_entity_id ?? '',
      idpSsoUrl: row.saml_idp_sso_url ?? '',
      idpCertificate: row.saml_idp_certificate ?? '',
      spEntityId: this.samlUrl(row.id, 'metadata'),
      acsUrl: this.samlUrl(row.id, 'acs'),
    };
  }

  samlUrl(connectionId: string, endpoint: 'metadata' | 'acs'): string {
    return `${this.#publicUrl}/v1/auth/sso/saml/${connectionId}/${endpoint}`;
  }

  oidcCallbackUrl(): string {
    return `${this.#publicUrl}/v1/auth/sso/oidc/callback`;
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
