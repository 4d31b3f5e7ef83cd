import { AssertionError } from '../shared/assert.js';

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

/** The request's secret-key principal; the credential guard guarantees one on `secret` routes. */
export function requireSecretKey(request: { principal: Principal | undefined }): Extract<Principal, { kind: 'secret_key' }> {
  const principal = request.principal;
  if (principal?.kind !== 'secret_key') throw new AssertionError('a secret-key route ran without a secret-key principal');
  return principal;
}

/** The request's project, whatever the credential kind. */
export function requireProjectId(request: { principal: Principal | undefined }): string {
  if (request.principal === undefined) throw new AssertionError('a credentialed route ran without a principal');
  return request.principal.projectId;
}
