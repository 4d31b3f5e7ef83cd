import { type Env, ConfigError, duration, integer, nonEmpty, optionalUrl } from './config-parsing.js';

export const SESSION_JWT_ALGS = ['ES256', 'RS256', 'EdDSA'] as const;
export type SessionJwtAlg = (typeof SESSION_JWT_ALGS)[number];
/** The longest a session JWT may live, whatever the configuration: how long a retired key stays published. */
export const SESSION_JWT_TTL_SECONDS_MAX = 3600;

export interface AuthConfig {
  /** Lifetime of a session token (`SESSION_TTL`, default 24 h). */
  readonly sessionTtlSeconds: number;
  /** Lifetime of a refresh token (`REFRESH_TTL`, default 30 days); each refresh starts a new one. */
  readonly refreshTtlSeconds: number;
  /**
   * `REFRESH_REUSE_GRACE_SECONDS` (default 0): how long a used refresh token presented again
   * answers the same new session again (a client's network retry) instead of counting as reuse.
   */
  readonly refreshReuseGraceSeconds: number;
  /**
   * `REAUTH_WINDOW_SECONDS` (default 600): how recently a session's user must have signed in or
   * reauthenticated to add a passkey or an authenticator, remove one, or change the password.
   */
  readonly reauthWindowSeconds: number;
  /** `SESSION_JWT_ALG` (default `ES256`; `RS256`, `EdDSA`): the algorithm of new session JWT signing keys. */
  readonly sessionJwtAlg: SessionJwtAlg;
  /** `SESSION_JWT_TTL_SECONDS` (default 300, 30 to 3,600): a session JWT's longest life, never past its session's. */
  readonly sessionJwtTtlSeconds: number;
  /** Where `GET /v1/auth/verify-email` sends the browser after verifying; unset → a small HTML page. */
  readonly emailVerifiedRedirectUrl: string | undefined;
  /** The application's reset page; the reset email links to it with `?token=`. Unset → the email carries the token alone. */
  readonly passwordResetUrl: string | undefined;
  /** The application's page that accepts an organization invitation; the email links to it with `?token=`. Unset → the token alone. */
  readonly invitationAcceptUrl: string | undefined;
}

/** Sessions, refresh tokens, session JWTs and the links of the emails that carry a token. */
export function authConfig(env: Env): AuthConfig {
  return {
    sessionTtlSeconds: duration(env, 'SESSION_TTL', 24 * 60 * 60),
    refreshTtlSeconds: duration(env, 'REFRESH_TTL', 30 * 24 * 60 * 60),
    // At most a minute: the window exists for a retry after a dropped response, and whoever holds
    // a copy of the token may use it as long as it lasts.
    refreshReuseGraceSeconds: integer(env, 'REFRESH_REUSE_GRACE_SECONDS', 0, { min: 0, max: 60 }),
    // At most a session's default lifetime: a longer window would make every session count as recent.
    reauthWindowSeconds: integer(env, 'REAUTH_WINDOW_SECONDS', 600, { min: 1, max: 24 * 60 * 60 }),
    sessionJwtAlg: sessionJwtAlg(env),
    // At least 30 s (clock skew between issuer and verifier eats a shorter life); at most an hour,
    // the bound a revoked session's JWTs outlive it by (docs/security.md).
    sessionJwtTtlSeconds: integer(env, 'SESSION_JWT_TTL_SECONDS', 300, { min: 30, max: SESSION_JWT_TTL_SECONDS_MAX }),
    emailVerifiedRedirectUrl: optionalUrl(env, 'EMAIL_VERIFIED_REDIRECT_URL'),
    passwordResetUrl: optionalUrl(env, 'PASSWORD_RESET_URL'),
    invitationAcceptUrl: optionalUrl(env, 'INVITATION_ACCEPT_URL'),
  };
}

/** `SESSION_JWT_ALG`, spelled as JOSE spells it (`oneOf` would lower-case it). */
function sessionJwtAlg(env: Env): SessionJwtAlg {
  const raw = nonEmpty(env['SESSION_JWT_ALG']);
  if (raw === undefined) return 'ES256';
  const alg = SESSION_JWT_ALGS.find((candidate) => candidate === raw);
  if (alg === undefined) throw new ConfigError('SESSION_JWT_ALG', `must be one of ${SESSION_JWT_ALGS.join(', ')}, got "${raw}"`);
  return alg;
}
