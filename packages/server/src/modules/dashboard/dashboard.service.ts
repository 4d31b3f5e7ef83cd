import { createHmac, randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { DashboardAuthenticator, DashboardCredential, Principal } from '../../lib/principal.js';
import type { RateLimiter, RateLimitRule } from '../../lib/rate-limit.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { limitAddress } from '../../lib/client-address.js';
import { constantTimeEqual, sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import type { ProjectsService } from '../projects/projects.service.js';
import * as store from './dashboard.store.js';

export const DASHBOARD_COOKIE_NAME = 'svc_dashboard';
/**
 * A second cookie beside the session's, readable by the page's scripts, that holds no secret (its
 * value is `1`): it tells the page that a session may exist, so a page without it shows the sign-in
 * form without asking the server and getting a 401 (docs/adr/0012-dashboard.md). It has the
 * session's lifetime and is cleared on sign-out.
 */
export const DASHBOARD_SIGNED_IN_COOKIE_NAME = 'svc_dashboard_signed_in';
/** How long a dashboard sign-in lasts; the operator pastes the key again after it. */
export const DASHBOARD_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/**
 * Sign-in attempts per client IP: 20 at once, then one every 45 s (20 per 15 minutes). Every
 * attempt counts, so the limit is checked before the key is, and a refused attempt learns nothing.
 */
export const SIGN_IN_RULE: RateLimitRule = { perSecond: 20 / (15 * 60), burst: 20 };

/** 32 random bytes, base64url: the cookie's value. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface DashboardSessionInfo {
  readonly csrf_token: string;
  readonly expires_at: string;
  readonly project_id: string;
  readonly key_id: string;
}

export interface DashboardServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly projects: ProjectsService;
  readonly rateLimiter: RateLimiter;
}

type SecretKeyPrincipal = Extract<Principal, { kind: 'secret_key' }>;

/**
 * Dashboard sign-in: a secret key, pasted once, is exchanged for a cookie session stored here by
 * the cookie's hash, with the key's id (never the key). See docs/adr/0012-dashboard.md.
 */
export class DashboardService implements DashboardAuthenticator {
  readonly cookieName = DASHBOARD_COOKIE_NAME;
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #projects: ProjectsService;
  readonly #rateLimiter: RateLimiter;

  constructor(options: DashboardServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#projects = options.projects;
    this.#rateLimiter = options.rateLimiter;
  }

  /** Checks the key and opens a session; returns the cookie's value and what the page needs. */
  async signIn(input: {
    secretKey: string;
    ip: string;
    userAgent: string | undefined;
    origin: string | undefined;
    host: string;
  }): Promise<{ token: string; session: DashboardSessionInfo }> {
    checkOrigin(input.origin, input.host);
    const decision = await this.#rateLimiter.consume(`dashboard-sign-in:${limitAddress(input.ip)}`, SIGN_IN_RULE);
    if (!decision.allowed) {
      throw new ApiError('rate_limited', `Too many sign-in attempts from this address; retry in ${decision.retryAfterSeconds} s.`, {
        headers: { 'Retry-After': String(decision.retryAfterSeconds) },
      });
    }
    const principal = await this.#projects.authenticateSecretKey(input.secretKey.trim());
    if (principal === undefined) {
      throw new ApiError(
        'invalid_api_key',
        'That secret key is not valid: it must be a complete, unrevoked key that starts with svc_sk_.',
        { param: 'secret_key' },
      );
    }
    const token = randomBytes(32).toString('base64url');
    const now = this.#clock.now();
    const row: store.DashboardSessionRow = {
      token_hash: sha256Hex(token),
      project_id: principal.projectId,
      key_id: principal.keyId,
      ip: input.ip,
      user_agent: input.userAgent?.slice(0, 500) ?? null,
      created_at: isoTime(now),
      expires_at: isoTime(addMilliseconds(now, DASHBOARD_SESSION_TTL_MS)),
      ended_at: null,
    };
    await store.insertSession(this.#db.kysely, row);
    return { token, session: sessionInfo(token, row) };
  }

  /** The session behind a cookie, for the page; throws `dashboard_session_invalid`. */
  async describe(token: string): Promise<DashboardSessionInfo> {
    return sessionInfo(token, await this.#liveSession(token));
  }

  /** Ends the cookie's session: it answers `dashboard_session_invalid` from now on. */
  async signOut(credential: DashboardCredential): Promise<void> {
    await this.authenticate(credential);
    await store.endSession(this.#db.kysely, sha256Hex(credential.token), isoTime(this.#clock.now()));
  }

  /** The credential guard's seam: a live session (whose key is live) and, on changes, CSRF and origin. */
  async authenticate(credential: DashboardCredential): Promise<SecretKeyPrincipal> {
    if (credential.changes) {
      checkOrigin(credential.origin, credential.host);
      const expected = csrfToken(credential.token);
      if (credential.csrfToken === undefined || !constantTimeEqual(credential.csrfToken, expected))
        throw new ApiError('csrf_token_invalid', 'This change needs the X-CSRF-Token header of the dashboard session.');
    }
    const row = await this.#liveSession(credential.token);
    return { kind: 'secret_key', projectId: row.project_id, keyId: row.key_id, via: 'dashboard' };
  }

  /** Deletes sessions that ended (expired) more than a day ago; returns how many. */
  async deleteExpired(limit: number): Promise<number> {
    return store.deleteExpiredSessions(this.#db.kysely, isoTime(addMilliseconds(this.#clock.now(), -24 * 60 * 60 * 1000)), limit);
  }

  async #liveSession(token: string): Promise<store.DashboardSessionRow> {
    const invalid = (why: string) => new ApiError('dashboard_session_invalid', `The dashboard session ${why}; sign in again.`);
    if (!TOKEN_PATTERN.test(token)) throw invalid('is not valid');
    const row = await store.findSessionByHash(this.#db.kysely, sha256Hex(token));
    if (row === undefined) throw invalid('is not valid');
    if (row.ended_at !== null) throw invalid('was signed out');
    if (row.expires_at <= isoTime(this.#clock.now())) throw invalid('has expired');
    // Read on every request, never cached: revoking the key ends its sessions at once, in every process.
    if (!(await this.#projects.isKeyLive(row.project_id, row.key_id))) throw invalid('ended because its secret key was revoked');
    return row;
  }
}

/** The session's CSRF token: an HMAC of the cookie's value, so it needs no storage and nobody without the cookie can make it. */
export function csrfToken(token: string): string {
  return createHmac('sha256', token).update('svc-dashboard-csrf').digest('base64url');
}

/** A browser names the page that sent a request in `Origin`; one from another site is refused. */
function checkOrigin(origin: string | undefined, host: string): void {
  if (origin === undefined) return;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    originHost = '';
  }
  if (originHost !== host) throw new ApiError('csrf_token_invalid', `Requests from ${origin} may not use the dashboard session.`);
}

function sessionInfo(token: string, row: store.DashboardSessionRow): DashboardSessionInfo {
  return { csrf_token: csrfToken(token), expires_at: row.expires_at, project_id: row.project_id, key_id: row.key_id };
}
