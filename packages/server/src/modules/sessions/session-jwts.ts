/**
 * Session JWTs (CONTRACT 9.3, docs/adr/0020-session-jwts.md): a short-lived, signed statement of a
 * live session that a project's back end verifies against the project's JWKS without asking us.
 * It never outlives its session; a revoked session's JWTs live until their `exp`, which is why
 * that life is short (`SESSION_JWT_TTL_SECONDS`).
 */
import type { Kysely } from 'kysely';
import { SignJWT } from 'jose';
import type { Database } from '../../db/schema.js';
import { isoTime } from '../../lib/clock.js';
import type { SigningKeys } from './signing-keys.js';

/** How a session signed in, RFC 8176 names where one exists. */
export type AuthenticationMethod = 'pwd' | 'otp' | 'mfa' | 'webauthn' | 'oauth' | 'sso' | 'email_code';

/** The `amr` column as stored (a JSON array); a session from before it was recorded has none. */
export function parseAmr(stored: string | null): AuthenticationMethod[] {
  if (stored === null) return [];
  const parsed: unknown = JSON.parse(stored);
  return Array.isArray(parsed) ? parsed.filter((method): method is AuthenticationMethod => typeof method === 'string') : [];
}

/** What the JWT says about its user. */
export interface SessionJwtUser {
  readonly id: string;
  readonly email: string;
  readonly emailVerified: boolean;
  readonly roles: readonly string[];
}

export interface SessionJwtInput {
  readonly projectId: string;
  /** `svc_ses_<ref>`. */
  readonly sessionName: string;
  readonly sessionExpiresAt: string;
  readonly amr: readonly AuthenticationMethod[];
  readonly user: SessionJwtUser;
}

export interface MintedSessionJwt {
  readonly jwt: string;
  readonly expires_at: string;
}

export interface SessionJwtsOptions {
  readonly keys: SigningKeys;
  /** `PUBLIC_URL`, without a trailing slash: the issuer is `<PUBLIC_URL>/v1/projects/<project id>`. */
  readonly publicUrl: string;
  readonly ttlSeconds: number;
}

export class SessionJwts {
  readonly #keys: SigningKeys;
  readonly #publicUrl: string;
  readonly #ttlSeconds: number;

  constructor(options: SessionJwtsOptions) {
    this.#keys = options.keys;
    this.#publicUrl = options.publicUrl;
    this.#ttlSeconds = options.ttlSeconds;
  }

  get keys(): SigningKeys {
    return this.#keys;
  }

  issuerOf(projectId: string): string {
    return `${this.#publicUrl}/v1/projects/${projectId}`;
  }

  /** Signs the session's JWT with the project's signing key, read (or made) with `db`. */
  async mint(db: Kysely<Database>, input: SessionJwtInput, now: Date): Promise<MintedSessionJwt> {
    const key = await this.#keys.signingKey(db, input.projectId, now);
    const issuedAt = Math.floor(now.getTime() / 1000);
    // Never past the session's own expiry: a JWT must not vouch for a session that has ended.
    const expiresAt = Math.min(issuedAt + this.#ttlSeconds, Math.floor(Date.parse(input.sessionExpiresAt) / 1000));
    const jwt = await new SignJWT({
      sid: input.sessionName,
      email: input.user.email,
      email_verified: input.user.emailVerified,
      roles: [...input.user.roles],
      amr: [...input.amr],
    })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
      .setIssuer(this.issuerOf(input.projectId))
      .setAudience(input.projectId)
      .setSubject(input.user.id)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(key.privateKey);
    return { jwt, expires_at: isoTime(new Date(expiresAt * 1000)) };
  }
}
