/** The SSO module's tables (modules/sso): connections, their domains, and sign-ins in flight. */
export interface SsoDatabase {
  sso_connections: SsoConnectionsTable;
  sso_domains: SsoDomainsTable;
  sso_requests: SsoRequestsTable;
  sso_assertions: SsoAssertionsTable;
  sso_codes: SsoCodesTable;
}

/** An organization's enterprise SSO connection (migration 0009, docs/adr/0011-sso.md). */
export interface SsoConnectionsTable {
  id: string;
  project_id: string;
  organization_id: string;
  type: 'oidc' | 'saml';
  /** The role given to members created at their first sign-in. */
  default_role: string;
  /** 1 when the SAML identity provider may start sign-ins (IdP-initiated); 0 otherwise. */
  allow_idp_initiated: number;
  /** JSON array: where a sign-in may send the browser back. */
  redirect_uris: string;
  oidc_issuer: string | null;
  oidc_client_id: string | null;
  /** The OIDC client secret, sealed (lib/secret-box.ts). */
  oidc_client_secret_sealed: string | null;
  saml_idp_entity_id: string | null;
  saml_idp_sso_url: string | null;
  /** PEM of the one certificate whose key may sign this identity provider's responses. */
  saml_idp_certificate: string | null;
  created_at: string;
}

/** An email domain of a connection; a domain belongs to at most one connection of a project. */
export interface SsoDomainsTable {
  project_id: string;
  /** Lower case. */
  domain: string;
  connection_id: string;
}

/** An SSO sign-in in flight: an OIDC state (as SHA-256) or a SAML AuthnRequest id; single use. */
export interface SsoRequestsTable {
  request_key: string;
  project_id: string;
  connection_id: string;
  redirect_uri: string;
  /** The caller's own `state`, handed back on the redirect. */
  client_state: string | null;
  /** OIDC: the PKCE verifier, sealed. */
  code_verifier_sealed: string | null;
  /** OIDC: the nonce the ID token must carry. */
  nonce: string | null;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** A SAML assertion id already accepted, kept until the assertion's own expiry (replay defence). */
export interface SsoAssertionsTable {
  connection_id: string;
  assertion_id: string;
  expires_at: string;
}

/** The service's one-time code after an SSO sign-in, as SHA-256, with the asserted identity. */
export interface SsoCodesTable {
  code_hash: string;
  project_id: string;
  connection_id: string;
  /** The identity provider's stable id of the account (OIDC `sub`, SAML NameID). */
  subject: string;
  email: string;
  name: string;
  /** 1 when the identity provider vouched for `email` (docs/adr/0014-identity-linking.md), else 0. */
  email_verified: number;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}
