import { AssertionError } from './assert.js';

/** Who is making a request, once the credential guard has checked its credential. */
export type Principal =
  | {
      readonly kind: 'secret_key';
      readonly projectId: string;
      readonly keyId: string;
      /** Set when the key's holder is an operator signed in to the dashboard (a cookie, not the key). */
      readonly via?: 'dashboard';
    }
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

/** A request that presents a dashboard session cookie instead of a secret key. */
export interface DashboardCredential {
  /** The cookie's value. */
  readonly token: string;
  /** The `X-CSRF-Token` header, if any. */
  readonly csrfToken: string | undefined;
  /** The `Origin` header, if any, and the host the request was sent to. */
  readonly origin: string | undefined;
  readonly host: string;
  /** True for requests that may change something (not GET, HEAD or OPTIONS): they need the CSRF token. */
  readonly changes: boolean;
}

/**
 * The seam through which the dashboard module turns its session cookie into the secret-key
 * principal of the key the operator signed in with (`via: 'dashboard'`). See docs/adr/0012-dashboard.md.
 */
export interface DashboardAuthenticator {
  readonly cookieName: string;
  /** Returns the principal, or throws an ApiError (`dashboard_session_invalid`, `csrf_token_invalid`). */
  authenticate(credential: DashboardCredential): Promise<Extract<Principal, { kind: 'secret_key' }>>;
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
