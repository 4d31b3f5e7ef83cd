import type { Db } from '../../db/database.js';
import { listOf, startPage } from '../../db/pagination.js';
import type { SessionRevokedReason, UsersTable } from '../../db/schema.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import type { Principal, SessionAuthenticator } from '../../lib/principal.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { constantTimeEqual, sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { SessionRefresh } from './session-refresh.js';
import { newRefreshToken, newSessionToken, sessionNameOf, sessionNameOfToken } from './session-tokens.js';
import type { AuthenticationMethod, SessionJwts } from './session-jwts.js';
import { insertSession, recordSessionsRevoked, type SessionIssuing, sessionJwtOf } from './session-writes.js';
import type { IssuedSession, SessionInfo, SessionJwt, SigningKeyInfo, SigningKeyList } from './sessions.schemas.js';
import type { PublicJwk, SigningKeys } from './signing-keys.js';
import * as store from './sessions.store.js';
import type { SigningKeyRow } from './signing-keys.store.js';

export { sealedSuccessorsCleanupJob } from './refresh-grace.js';
export { type AuthenticationMethod, parseAmr, SessionJwts } from './session-jwts.js';
export { SigningKeys, type PublicJwk } from './signing-keys.js';

/** `last_used_at` is written at most this often per session, so checking a token is one read. */
const LAST_USED_RESOLUTION_MS = 60_000;

export type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

/** Where a session was created from. */
export interface SessionClient {
  readonly ip?: string | undefined;
  readonly userAgent?: string | undefined;
}

/** A new session with its two secrets, which exist only here and in the response. */
export interface IssuedSessionTokens {
  readonly userId: string;
  /** `svc_ses_<ref>`. */
  readonly name: string;
  readonly session: IssuedSession;
}

export type SessionCheck =
  { readonly valid: true; readonly session: SessionInfo } | { readonly valid: false; readonly reason: 'expired' | 'revoked' | 'not_found' };

export interface SessionsServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly sessionTtlSeconds: number;
  readonly refreshTtlSeconds: number;
  /**
   * `REFRESH_REUSE_GRACE_SECONDS`: how long a used refresh token presented again answers the same
   * new session again instead of counting as reuse; 0, the default, makes refresh tokens single use.
   */
  readonly refreshReuseGraceSeconds: number;
  /** Seals the successor's tokens for the grace window (unused when it is 0). */
  readonly secrets: SecretBox;
  readonly audit: AuditService;
  /** `REAUTH_WINDOW_SECONDS`: how recent a sign-in or reauthentication must be for sensitive changes. */
  readonly reauthWindowSeconds: number;
  /** Signs every issued session's JWT (session-jwts.ts). */
  readonly jwts: SessionJwts;
}

/**
 * Sessions: issuing, checking, refreshing and revoking them. Every change writes its
 * `session.created` / `session.revoked` events in the same transaction (session-writes.ts).
 * Refreshing is `SessionRefresh`'s (session-refresh.ts), answered through this class.
 *
 * Checking a token reads the database every time (one primary-key lookup): a revoked session fails
 * at once, in every process, with no cache to outlive it.
 */
export class SessionsService implements SessionAuthenticator {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #issuing: SessionIssuing;
  readonly #refresh: SessionRefresh;
  readonly #audit: AuditService;
  readonly #reauthWindowMs: number;

  constructor(options: SessionsServiceOptions) {
    this.#db = options.db;
    this.#reauthWindowMs = options.reauthWindowSeconds * 1000;
    this.#clock = options.clock;
    this.#issuing = {
      sessionTtlMs: options.sessionTtlSeconds * 1000,
      refreshTtlMs: options.refreshTtlSeconds * 1000,
      jwts: options.jwts,
    };
    this.#audit = options.audit;
    this.#refresh = new SessionRefresh({
      db: options.db,
      clock: options.clock,
      issuing: this.#issuing,
      graceMs: options.refreshReuseGraceSeconds * 1000,
      secrets: options.secrets,
      audit: options.audit,
    });
  }

  /**
   * Creates the session of a sign-in for a user, in the caller's transaction, with its
   * `session.created` event. The sign-in is its user's latest proof of identity (`authenticated_at`).
   */
  async createInTransaction(
    trx: Transaction,
    input: {
      projectId: string;
      userId: string;
      client: SessionClient;
      now: Date;
      chainId?: string;
      /** How the user signed in: the JWT's `amr`, carried over by every refresh. */
      amr: readonly AuthenticationMethod[];
    },
  ): Promise<IssuedSessionTokens> {
    const { token, name } = newSessionToken();
    const refreshToken = newRefreshToken();
    return insertSession(trx, this.#issuing, {
      ...input,
      token,
      name,
      refreshToken,
      chainId: input.chainId ?? name,
      authenticatedAt: isoTime(input.now),
    });
  }

  /**
   * Refuses (403 `reauthentication_required`) unless the session's user signed in or
   * reauthenticated within `REAUTH_WINDOW_SECONDS`: someone who finds a session open, or steals its
   * token, must not be able to add a way in or change the password with it alone.
   */
  async requireRecentAuthentication(principal: SessionPrincipal): Promise<void> {
    const now = this.#clock.now();
    // The credential guard has just found the session live (neither revoked nor expired).
    const row = await store.findAuthenticatedAt(this.#db.kysely, principal.projectId, principal.sessionName);
    const recentSince = isoTime(addMilliseconds(now, -this.#reauthWindowMs));
    if (row?.authenticated_at == null || row.authenticated_at < recentSince) {
      throw new ApiError(
        'reauthentication_required',
        `This change needs a sign-in within the last ${this.#reauthWindowMs / 1000} s; confirm with POST /v1/users/me/reauthenticate, then send it again.`,
      );
    }
  }

  /**
   * Records that the session's user proved who they are again (`POST /v1/users/me/reauthenticate`),
   * in the caller's transaction. Answers the time recorded.
   */
  async markReauthenticatedInTransaction(trx: Transaction, principal: SessionPrincipal, now: Date): Promise<string> {
    const nowIso = isoTime(now);
    if (!(await store.setAuthenticatedAt(trx, principal.projectId, principal.sessionName, nowIso))) {
      throw new ApiError('session_revoked', 'The session was revoked or expired meanwhile; log in again.');
    }
    return nowIso;
  }

  /** The SessionAuthenticator of the credential guard: a valid token's principal, or a 401. */
  async authenticate(token: string): Promise<SessionPrincipal> {
    const name = sessionNameOfToken(token);
    if (name === undefined) throw new ApiError('session_invalid', 'The session token is not valid.');
    const row = await store.findSessionForCheck(this.#db, name);
    if (row === undefined || !constantTimeEqual(row.token_hash, sha256Hex(token))) {
      throw new ApiError('session_invalid', 'The session token is not valid.');
    }
    const now = this.#clock.now();
    if (row.revoked_at !== null) throw new ApiError('session_revoked', 'The session was revoked; log in again.');
    if (row.expires_at <= isoTime(now)) throw new ApiError('session_expired', 'The session has expired; refresh it or log in again.');
    await this.#touch(row, now);
    return { kind: 'session', projectId: row.project_id, sessionName: row.id, userId: row.user_id };
  }

  /**
   * `POST /v1/sessions/jwt`: a fresh JWT of the presented session, which the credential guard has
   * just found live. A session revoked or ended since answers 401 as the guard would.
   */
  async jwtFor(principal: SessionPrincipal): Promise<SessionJwt> {
    const now = this.#clock.now();
    const row = await store.findSessionForRead(this.#db, principal.projectId, principal.sessionName);
    if (row === undefined) throw new ApiError('session_invalid', 'The session token is not valid.');
    if (row.revoked_at !== null) throw new ApiError('session_revoked', 'The session was revoked; log in again.');
    if (row.expires_at <= isoTime(now)) throw new ApiError('session_expired', 'The session has expired; refresh it or log in again.');
    const minted = await sessionJwtOf(this.#db.kysely, this.#issuing.jwts, row, now);
    if (minted === undefined) throw new ApiError('session_invalid', 'The session token is not valid.');
    return { object: 'session_jwt', ...minted };
  }

  /** `POST /sessions/validate`: never a 404; a token of another project is `not_found`. */
  async check(projectId: string, token: string): Promise<SessionCheck> {
    const name = sessionNameOfToken(token);
    if (name === undefined) return { valid: false, reason: 'not_found' };
    const row = await store.findSessionForRead(this.#db, projectId, name);
    if (row === undefined || !constantTimeEqual(row.token_hash, sha256Hex(token))) return { valid: false, reason: 'not_found' };
    const now = this.#clock.now();
    if (row.revoked_at !== null) return { valid: false, reason: 'revoked' };
    if (row.expires_at <= isoTime(now)) return { valid: false, reason: 'expired' };
    await this.#touch(row, now);
    return { valid: true, session: toSessionInfo(row) };
  }

  /**
   * `check` and the session's user in one read (`POST /sessions/validate`). Same answers as
   * `check`; a session whose user is gone is `not_found`.
   */
  async checkWithUser(
    projectId: string,
    token: string,
  ): Promise<
    | { readonly valid: true; readonly session: SessionInfo; readonly user: UsersTable; readonly jwt: string }
    | Extract<SessionCheck, { valid: false }>
  > {
    const name = sessionNameOfToken(token);
    if (name === undefined) return { valid: false, reason: 'not_found' };
    const found = await store.findSessionWithUser(this.#db, projectId, name);
    if (found === undefined || !constantTimeEqual(found.session.token_hash, sha256Hex(token))) return { valid: false, reason: 'not_found' };
    const { session, user } = found;
    const now = this.#clock.now();
    if (session.revoked_at !== null) return { valid: false, reason: 'revoked' };
    if (session.expires_at <= isoTime(now)) return { valid: false, reason: 'expired' };
    if (user === undefined) return { valid: false, reason: 'not_found' };
    await this.#touch(session, now);
    const minted = await sessionJwtOf(this.#db.kysely, this.#issuing.jwts, session, now);
    if (minted === undefined) return { valid: false, reason: 'not_found' };
    return { valid: true, session: toSessionInfo(session), user, jwt: minted.jwt };
  }

  /**
   * Exchanges a refresh token for a new session in the same chain (session-refresh.ts); the old
   * session is revoked (reason `refreshed`), a token used before revokes the whole chain
   * (docs/adr/0009-sessions-and-refresh-chains.md).
   */
  async refresh(projectId: string, refreshToken: string, client: SessionClient, context: AuditContext): Promise<IssuedSessionTokens> {
    return this.#refresh.refresh(projectId, refreshToken, client, context);
  }

  /**
   * Revokes one session, named by its token or `svc_ses_<ref>`. Revoking a revoked session changes
   * nothing and sends no second event. 404 when the project has no such session.
   */
  async revoke(
    projectId: string,
    tokenOrName: string,
    reason: SessionRevokedReason,
    options: { param?: string; audit: AuditContext },
  ): Promise<SessionInfo> {
    const name = sessionNameOf(tokenOrName);
    // The session by its name only: `tokenOrName` may be the whole token.
    const record: AuditRecord = {
      projectId,
      action: reason === 'logout' ? 'session.logout' : 'session.revoke',
      resource: { type: 'session', id: name ?? null },
    };
    const missing = new ApiError('resource_missing', 'No such session in this project.', { param: options.param });
    return this.#audit.recordingRefusals(options.audit, record, async () => {
      if (name === undefined) throw missing;
      return inTransaction(this.#db, async (trx) => {
        const row = await store.findSession(trx, projectId, name);
        if (row === undefined) throw missing;
        const nowIso = isoTime(this.#clock.now());
        const changed = await store.revokeSession(trx, projectId, name, reason, nowIso);
        await this.#audit.record(trx, options.audit, {
          ...record,
          changes: { user_id: row.user_id, revoked_before: !changed },
          createdAt: nowIso,
        });
        if (changed) {
          await recordSessionsRevoked(trx, projectId, [row], reason, nowIso);
          return toSessionInfo({ ...row, revoked_at: nowIso, revoked_reason: reason });
        }
        return toSessionInfo(row);
      });
    });
  }

  /** Revokes every live session of a user in the caller's transaction, with one event each. */
  async revokeAllForUserInTransaction(
    trx: Transaction,
    input: { projectId: string; userId: string; reason: SessionRevokedReason; now: Date; exceptSessionId?: string },
  ): Promise<SessionInfo[]> {
    const nowIso = isoTime(input.now);
    const revoked = await store.revokeSessions(
      trx,
      input.projectId,
      { userId: input.userId },
      input.reason,
      nowIso,
      input.exceptSessionId === undefined ? {} : { exceptSessionId: input.exceptSessionId },
    );
    await recordSessionsRevoked(trx, input.projectId, revoked, input.reason, nowIso);
    return revoked.map(toSessionInfo);
  }

  /** A user's sessions that can still be used or refreshed, newest first. */
  async listForUser(
    projectId: string,
    userId: string,
    query: { limit?: number | undefined; starting_after?: string | undefined },
  ): Promise<{ object: 'list'; data: SessionInfo[]; has_more: boolean }> {
    const page = await startPage(query, {
      find: async (id) => {
        const session = await store.findSession(this.#db.kysely, projectId, id);
        return session?.user_id === userId ? session : undefined;
      },
      missing: (id) => `No session ${id} of this user.`,
    });
    const rows = await store.listLiveSessions(this.#db.kysely, projectId, userId, {
      after: page.after,
      limit: page.rowsToRead,
      nowIso: isoTime(this.#clock.now()),
    });
    return listOf(rows, page.limit, toSessionInfo);
  }

  /**
   * `GET /v1/projects/{project_id}/jwks.json`: the public keys a verifier may meet (signing-keys.ts).
   * The caller has checked that the project exists.
   */
  async publishedKeys(projectId: string): Promise<{ keys: PublicJwk[] }> {
    return { keys: await this.#issuing.jwts.keys.publishedKeys(this.#db.kysely, projectId, this.#clock.now()) };
  }

  /**
   * `GET /v1/project/signing-keys`: the published keys with their status (public halves only): the
   * signing key, the next, then the retiring ones, newest first.
   */
  async listSigningKeys(projectId: string): Promise<SigningKeyList> {
    const rows = await this.#issuing.jwts.keys.publishedKeyRows(this.#db.kysely, projectId, this.#clock.now());
    const keys = rows.map(toSigningKeyInfo);
    return { object: 'list', data: STATUS_ORDER.flatMap((status) => keys.filter((key) => key.status === status)), has_more: false };
  }

  /**
   * `POST /v1/project/signing-keys/rotate` and `svc signing-keys rotate`: the next key signs from
   * now on; the previous one stays published until every JWT it signed has expired.
   */
  async rotateSigningKey(projectId: string, context: AuditContext): Promise<SigningKeyInfo> {
    return rotateSigningKey({ db: this.#db, clock: this.#clock, audit: this.#audit, keys: this.#issuing.jwts.keys }, projectId, context);
  }

  async #touch(row: Pick<store.SessionRow, 'id' | 'last_used_at'>, now: Date): Promise<void> {
    const staleBefore = isoTime(addMilliseconds(now, -LAST_USED_RESOLUTION_MS));
    if (row.last_used_at < staleBefore) await store.touchSession(this.#db.kysely, row.id, isoTime(now), staleBefore);
  }
}

/**
 * Rotates a project's session JWT signing key with its audit entry: the route's and
 * `svc signing-keys rotate`'s one path. The caller has checked that the project exists.
 */
export async function rotateSigningKey(
  deps: { db: Db; clock: Clock; audit: AuditService; keys: SigningKeys },
  projectId: string,
  context: AuditContext,
): Promise<SigningKeyInfo> {
  return inTransaction(deps.db, async (trx) => {
    const key = await deps.keys.rotateInTransaction(trx, projectId, deps.clock.now());
    await deps.audit.record(trx, context, {
      projectId,
      action: 'project.signing_key_rotate',
      resource: { type: 'project', id: projectId },
      changes: { kid: key.kid, alg: key.alg, previous_kid: key.previous_kid },
      createdAt: key.created_at,
    });
    return toSigningKeyInfo(key);
  });
}

const STATUS_ORDER = ['signing', 'next', 'retiring'] as const;

/** A key's row as the API shows it: its status follows from when it started and stopped signing. */
export function toSigningKeyInfo(row: Pick<SigningKeyRow, 'kid' | 'alg' | 'created_at' | 'activated_at' | 'retired_at'>): SigningKeyInfo {
  const status = row.retired_at !== null ? 'retiring' : row.activated_at === null ? 'next' : 'signing';
  return {
    object: 'signing_key',
    kid: row.kid,
    alg: row.alg,
    status,
    created_at: row.created_at,
    activated_at: row.activated_at,
    retired_at: row.retired_at,
  };
}

export function toSessionInfo(row: store.SessionRow): SessionInfo {
  return {
    id: row.id,
    object: 'session',
    user_id: row.user_id,
    ip: row.ip,
    user_agent: row.user_agent,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    expires_at: row.expires_at,
    refresh_expires_at: row.refresh_expires_at,
    revoked_at: row.revoked_at,
    revoked_reason: row.revoked_reason,
  };
}
