/** The OAuth module's tables (modules/oauth): providers and sign-ins in flight. */
export interface OAuthDatabase {
  oauth_providers: OAuthProvidersTable;
  oauth_states: OAuthStatesTable;
}

/** A project's configuration of one OAuth or OpenID Connect provider (migration 0007). */
export interface OAuthProvidersTable {
  project_id: string;
  /** `google`, `apple`, `github`, or the key of a generic OpenID Connect provider. */
  provider: string;
  kind: 'google' | 'apple' | 'github' | 'oidc';
  client_id: string;
  /** Sealed JSON (lib/secret-box.ts): `{client_secret}`, or Apple's `{private_key}`. */
  secret_sealed: string;
  /** Generic OpenID Connect providers only; discovered from `/.well-known/openid-configuration`. */
  issuer: string | null;
  apple_team_id: string | null;
  apple_key_id: string | null;
  /** JSON array of scope names. */
  scopes: string;
  /** JSON array of the allowed redirect URIs, compared exactly. */
  redirect_uris: string;
  created_at: string;
  updated_at: string;
}

/** A sign-in in flight: single use, 10 minutes. */
export interface OAuthStatesTable {
  /** SHA-256 (hex) of the `state` sent to the provider; the state itself is not stored. */
  state_hash: string;
  project_id: string;
  provider: string;
  redirect_uri: string;
  /** The PKCE verifier, sealed. */
  code_verifier_sealed: string;
  /** OpenID Connect only: the ID token must carry it back. */
  nonce: string | null;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}
