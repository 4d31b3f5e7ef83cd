/** Who is making a request, once the credential guard has checked its credential. */
export type Principal =
  | { readonly kind: 'secret_key'; readonly projectId: string; readonly keyId: string }
  | { readonly kind: 'session'; readonly projectId: string; readonly sessionName: string; readonly userId: string };

/**
 * What a route accepts: `secret` (a secret key), `session` (an end user's session token), `any`
 * (either), or `public` (no credential).
 */
export type RouteCredential = 'secret' | 'session' | 'any' | 'public';

/**
 * The seam through which the sessions module checks session tokens. Until it exists, every session
 * token is unknown (401 `session_invalid`).
 */
export interface SessionAuthenticator {
  /** Returns the session's principal, or throws an ApiError (`session_invalid`, `_expired`, `_revoked`). */
  authenticate(token: string): Promise<Extract<Principal, { kind: 'session' }>>;
}
