import type { Db } from '../../db/database.js';
import type { SessionRevokedReason, UsersTable } from '../../db/schema.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import type { Principal, SessionAuthenticator } from '../../lib/principal.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { constantTimeEqual, sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { recordEvent } from '../events/events.service.js';
import { sealSuccessor, successorWithinGrace } from './refresh-grace.js';
import { isRefreshToken, newRefreshToken, newSessionToken, sessionNameOf, sessionNameOfToken } from './session-tokens.js';
import type { IssuedSession, SessionInfo } from './sessions.schemas.js';
import * as store from './sessions.store.js';

export { sealedSuccessorsCleanupJob } from './refresh-grace.js';

/** `last_used_at` is written at most this often per session, so checking a token is one read. */
const LAST_USED_RESOLUTION_MS = 60_000;
const USER_AGENT_LENGTH_MAX = 500;
const IP_LENGTH_MAX = 100;

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
}

type RefreshOutcome =
  | { readonly kind: 'issued'; readonly issued: IssuedSessionTokens }
  | { readonly kind: 'reused'; readonly error: ApiError }
  | { readonly kind: 'raced' }
  | { readonly kind: 'invalid'; readonly message: string };

/**
 * Sessions: issuing, checking, refreshing and revoking them. Every change writes its
 * `session.created` / `session.revoked` events in the same transaction.
 *
 * Checking a token reads the database every time (one primary-key lookup): a revoked session fails
 * at once, in every process, with no cache to outlive it.
 */
export class SessionsService implements SessionAuthenticator {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #sessionTtlMs: number;
  readonly #refreshTtlMs: number;
  readonly #graceMs: number;
  readonly #secrets: SecretBox;
  readonly #audit: AuditService;

  constructor(options: SessionsServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#sessionTtlMs = options.sessionTtlSeconds * 1000;
    this.#refreshTtlMs = options.refreshTtlSeconds * 1000;
    this.#graceMs = options.refreshReuseGraceSeconds * 1000;
    this.#secrets = options.secrets;
    this.#audit = options.audit;
  }

  /** Creates a session for a user, in the caller's transaction, with its `session.created` event. */
  async createInTransaction(
    trx: Transaction,
    input: { projectId: string; userId: string; client: SessionClient; now: Date; chainId?: string },
  ): Promise<IssuedSessionTokens> {
    const { token, name } = newSessionToken();
    const refreshToken = newRefreshToken();
    return this.#insert(trx, { ...input, token, name, refreshToken, chainId: input.chainId ?? name });
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
  ): Promise<{ readonly valid: true; readonly session: SessionInfo; readonly user: UsersTable } | Extract<SessionCheck, { valid: false }>> {
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
    return { valid: true, session: toSessionInfo(session), user };
  }

  /**
   * Exchanges a refresh token for a new session in the same chain; the old session is revoked
   * (reason `refreshed`). A token used before revokes the whole chain (reason
   * `refresh_token_reuse`) and answers 401 `refresh_token_reused`: someone holds a copy. Within
   * the grace window, if any, a used token answers the very session it was exchanged for, again,
   * and makes no new one (docs/adr/0009-sessions-and-refresh-chains.md).
   */
  async refresh(projectId: string, refreshToken: string, client: SessionClient, context: AuditContext): Promise<IssuedSessionTokens> {
    const refused: AuditRecord = { projectId, action: 'session.refresh', resource: { type: 'session', id: null } };
    return this.#audit.recordingRefusals(context, refused, () => this.#refresh(projectId, refreshToken, client, context));
  }

  async #refresh(projectId: string, refreshToken: string, client: SessionClient, context: AuditContext): Promise<IssuedSessionTokens> {
    if (!isRefreshToken(refreshToken))
      throw new ApiError('refresh_token_invalid', 'The refresh token is not valid.', { param: 'refresh_token' });
    const refreshHash = sha256Hex(refreshToken);
    // A refresh that loses a race to another with the same token runs once more and then finds
    // the token used: within the grace window it answers the winner's session, else it is reuse.
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      const outcome = await inTransaction(this.#db, (trx) => this.#refreshInTransaction(trx, projectId, refreshHash, client, context));
      switch (outcome.kind) {
        case 'issued':
          return outcome.issued;
        case 'reused':
          // Its entry committed with the chain's revocation.
          throw this.#audit.markRecorded(outcome.error);
        case 'invalid':
          throw new ApiError('refresh_token_invalid', outcome.message, { param: 'refresh_token' });
        case 'raced':
          break;
      }
    }
    throw new ApiError('refresh_token_invalid', 'The refresh token is not valid.', { param: 'refresh_token' });
  }

  async #refreshInTransaction(
    trx: Transaction,
    projectId: string,
    refreshHash: string,
    client: SessionClient,
    context: AuditContext,
  ): Promise<RefreshOutcome> {
    const row = await store.findSessionByRefreshHash(trx, projectId, refreshHash);
    if (row === undefined) return { kind: 'invalid', message: 'The refresh token is not valid.' };
    const now = this.#clock.now();
    const nowIso = isoTime(now);
    if (row.refreshed_at !== null) {
      const again = await successorWithinGrace(trx, { secrets: this.#secrets, graceMs: this.#graceMs }, row, now);
      if (again !== undefined) {
        await this.#recordRefreshed(trx, context, row, again, nowIso, { replayed: true });
        return { kind: 'issued', issued: again };
      }
      const revoked = await store.revokeSessions(trx, projectId, { chainId: row.chain_id }, 'refresh_token_reuse', nowIso);
      await store.clearSealedSuccessors(trx, projectId, row.chain_id);
      await this.#recordRevoked(trx, projectId, revoked, 'refresh_token_reuse', nowIso);
      const error = new ApiError(
        'refresh_token_reused',
        'This refresh token was already used; every session of its chain has been revoked. Log in again.',
        { param: 'refresh_token' },
      );
      await this.#audit.record(trx, context, {
        projectId,
        action: 'session.refresh_token_reused',
        resource: { type: 'session', id: row.id },
        outcome: error.code,
        changes: { user_id: row.user_id, sessions_revoked: revoked.length },
        createdAt: nowIso,
      });
      return { kind: 'reused', error };
    }
    if (row.revoked_at !== null) return { kind: 'invalid', message: 'The session of this refresh token was revoked; log in again.' };
    if (row.refresh_expires_at <= nowIso) return { kind: 'invalid', message: 'The refresh token has expired; log in again.' };

    const { token, name } = newSessionToken();
    const refreshToken = newRefreshToken();
    let sealed: string | null = null;
    if (this.#graceMs > 0) sealed = sealSuccessor(this.#secrets, row, { token, refreshToken });
    if (!(await store.markRefreshed(trx, projectId, row.id, { name, sealed }, nowIso))) return { kind: 'raced' };
    // A later token of the chain is in use: no retry of an earlier one may get its session now.
    // Only after this refresh has won its row: on PostgreSQL a loser of the race (which commits,
    // answering 'raced') would otherwise clear the winner's just-committed sealed successor, and
    // the loser's retry would then find no successor and revoke the chain as reuse.
    if (this.#graceMs > 0) await store.clearSealedSuccessors(trx, projectId, row.chain_id, { exceptSessionId: row.id });
    await this.#recordRevoked(trx, projectId, [row], 'refreshed', nowIso);
    const issued = await this.#insert(trx, {
      projectId,
      userId: row.user_id,
      client,
      now,
      token,
      name,
      refreshToken,
      chainId: row.chain_id,
    });
    await this.#recordRefreshed(trx, context, row, issued, nowIso);
    return { kind: 'issued', issued };
  }

  async #recordRefreshed(
    trx: Transaction,
    context: AuditContext,
    previous: store.SessionRow,
    issued: IssuedSessionTokens,
    nowIso: string,
    options: { replayed?: true } = {},
  ): Promise<void> {
    await this.#audit.record(trx, context, {
      projectId: previous.project_id,
      action: 'session.refresh',
      resource: { type: 'session', id: issued.name },
      changes: { previous_session_id: previous.id, user_id: previous.user_id, ...options },
      createdAt: nowIso,
    });
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
          await this.#recordRevoked(trx, projectId, [row], reason, nowIso);
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
    await this.#recordRevoked(trx, input.projectId, revoked, input.reason, nowIso);
    return revoked.map(toSessionInfo);
  }

  /** A user's sessions that can still be used or refreshed, newest first. */
  async listForUser(
    projectId: string,
    userId: string,
    query: { limit?: number | undefined; starting_after?: string | undefined },
  ): Promise<{ object: 'list'; data: SessionInfo[]; has_more: boolean }> {
    const limit = query.limit ?? 20;
    let before: { createdAt: string; id: string } | undefined;
    if (query.starting_after !== undefined) {
      const cursor = await store.findSession(this.#db.kysely, projectId, query.starting_after);
      if (cursor === undefined || cursor.user_id !== userId) {
        throw new ApiError('resource_missing', `No session ${query.starting_after} of this user.`, { param: 'starting_after' });
      }
      before = { createdAt: cursor.created_at, id: cursor.id };
    }
    const rows = await store.listLiveSessions(this.#db.kysely, projectId, userId, {
      before,
      limit: limit + 1,
      nowIso: isoTime(this.#clock.now()),
    });
    return { object: 'list', data: rows.slice(0, limit).map(toSessionInfo), has_more: rows.length > limit };
  }

  async #insert(
    trx: Transaction,
    input: {
      projectId: string;
      userId: string;
      client: SessionClient;
      now: Date;
      token: string;
      name: string;
      refreshToken: string;
      chainId: string;
    },
  ): Promise<IssuedSessionTokens> {
    const nowIso = isoTime(input.now);
    const expiresAt = isoTime(addMilliseconds(input.now, this.#sessionTtlMs));
    const refreshExpiresAt = isoTime(addMilliseconds(input.now, this.#refreshTtlMs));
    await store.insertSession(trx, {
      id: input.name,
      project_id: input.projectId,
      user_id: input.userId,
      token_hash: sha256Hex(input.token),
      refresh_token_hash: sha256Hex(input.refreshToken),
      refresh_expires_at: refreshExpiresAt,
      chain_id: input.chainId,
      refreshed_at: null,
      replaced_by: null,
      successor_sealed: null,
      expires_at: expiresAt,
      ip: input.client.ip?.slice(0, IP_LENGTH_MAX) ?? null,
      user_agent: input.client.userAgent?.slice(0, USER_AGENT_LENGTH_MAX) ?? null,
      created_at: nowIso,
      last_used_at: nowIso,
      revoked_at: null,
      revoked_reason: null,
    });
    await recordEvent(trx, {
      projectId: input.projectId,
      type: 'session.created',
      data: { session_id: input.name, user_id: input.userId },
      createdAt: nowIso,
    });
    return {
      userId: input.userId,
      name: input.name,
      session: { id: input.token, expires_at: expiresAt, refresh_token: input.refreshToken, refresh_expires_at: refreshExpiresAt },
    };
  }

  async #recordRevoked(
    trx: Transaction,
    projectId: string,
    sessions: ReadonlyArray<Pick<store.SessionRow, 'id' | 'user_id'>>,
    reason: SessionRevokedReason,
    nowIso: string,
  ): Promise<void> {
    for (const session of sessions) {
      await recordEvent(trx, {
        projectId,
        type: 'session.revoked',
        data: { session_id: session.id, user_id: session.user_id, reason },
        createdAt: nowIso,
      });
    }
  }

  async #touch(row: Pick<store.SessionRow, 'id' | 'last_used_at'>, now: Date): Promise<void> {
    const staleBefore = isoTime(addMilliseconds(now, -LAST_USED_RESOLUTION_MS));
    if (row.last_used_at < staleBefore) await store.touchSession(this.#db.kysely, row.id, isoTime(now), staleBefore);
  }
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
