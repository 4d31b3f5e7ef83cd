/** The sessions module's tables (modules/sessions): sessions and the keys that sign session JWTs. */
export interface SessionsDatabase {
  sessions: SessionsTable;
  session_signing_keys: SessionSigningKeysTable;
}

export type SessionRevokedReason =
  'logout' | 'revoked' | 'refreshed' | 'refresh_token_reuse' | 'password_reset' | 'user_banned' | 'user_deleted';

/**
 * One session. Neither the session token nor the refresh token is stored: `id` is the token's name
 * (`svc_ses_<ref>`, the part before the dot) and `token_hash` the SHA-256 of the whole token.
 */
export interface SessionsTable {
  /** `svc_ses_<ref>`. */
  id: string;
  project_id: string;
  user_id: string;
  /** SHA-256 (hex) of the whole session token. */
  token_hash: string;
  /** SHA-256 (hex) of the whole refresh token; unique. */
  refresh_token_hash: string;
  refresh_expires_at: string;
  /** The first session of the refresh chain this one descends from (its own id for a fresh log in). */
  chain_id: string;
  /** When its refresh token was used; a refresh token is single use. */
  refreshed_at: string | null;
  /** The session its refresh token was exchanged for. */
  replaced_by: string | null;
  /**
   * Within the refresh grace window only: the successor's session token and refresh token, sealed
   * with the service's SecretBox (bound to this row), so that a retry gets the same session again.
   * Null otherwise; never the tokens in clear. See docs/adr/0009-sessions-and-refresh-chains.md.
   */
  successor_sealed: string | null;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  last_used_at: string;
  revoked_at: string | null;
  revoked_reason: SessionRevokedReason | null;
  /**
   * When the user last proved who they are on this refresh chain: the sign-in, or the latest
   * `POST /v1/users/me/reauthenticate`; a refresh carries it over. Null for sessions from before
   * migration 0031, which count as not recent.
   */
  authenticated_at: string | null;
  /**
   * How the chain signed in, a JSON array of RFC 8176 method names (`["pwd"]`, `["pwd","otp","mfa"]`);
   * a refresh carries it over. Null for sessions from before migration 0034 (an empty list).
   */
  amr: string | null;
}

/** A project's key that signs (or signed) session JWTs (docs/adr/0020-session-jwts.md). */
export interface SessionSigningKeysTable {
  kid: string;
  project_id: string;
  alg: 'ES256' | 'RS256' | 'EdDSA';
  /** The public key as a JWK (JSON), with `kid`, `alg` and `use`. */
  public_jwk: string;
  /** The private key as PKCS #8 PEM, sealed with the service keyring: never in clear. */
  private_key_sealed: string;
  created_at: string;
  /** When it started signing. */
  activated_at: string | null;
  /** When the next key replaced it; it stays published until every JWT it signed has expired. */
  retired_at: string | null;
}
