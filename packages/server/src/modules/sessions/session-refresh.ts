/**
 * Refreshing a session: a refresh token exchanged for a new session of its chain, a used one
 * answered again within the grace window or taken as reuse, which revokes the chain
 * (docs/adr/0009-sessions-and-refresh-chains.md). `SessionsService` (sessions.service.ts) answers
 * it through this class.
 */
import type { Db } from '../../db/database.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { sealSuccessor, successorWithinGrace } from './refresh-grace.js';
import { isRefreshToken, newRefreshToken, newSessionToken } from './session-tokens.js';
import { parseAmr } from './session-jwts.js';
import { insertSession, recordSessionsRevoked, type SessionIssuing } from './session-writes.js';
import type { IssuedSessionTokens, SessionClient } from './sessions.service.js';
import * as store from './sessions.store.js';

export interface SessionRefreshOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly issuing: SessionIssuing;
  /** `REFRESH_REUSE_GRACE_SECONDS` in milliseconds; 0 makes refresh tokens single use. */
  readonly graceMs: number;
  /** Seals the successor's tokens for the grace window (unused when it is 0). */
  readonly secrets: SecretBox;
  readonly audit: AuditService;
}

type RefreshOutcome =
  | { readonly kind: 'issued'; readonly issued: IssuedSessionTokens }
  | { readonly kind: 'reused'; readonly error: ApiError }
  | { readonly kind: 'raced' }
  | { readonly kind: 'invalid'; readonly message: string };

export class SessionRefresh {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #issuing: SessionIssuing;
  readonly #graceMs: number;
  readonly #secrets: SecretBox;
  readonly #audit: AuditService;

  constructor(options: SessionRefreshOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#issuing = options.issuing;
    this.#graceMs = options.graceMs;
    this.#secrets = options.secrets;
    this.#audit = options.audit;
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
      const again = await successorWithinGrace(trx, { secrets: this.#secrets, graceMs: this.#graceMs, jwts: this.#issuing.jwts }, row, now);
      if (again !== undefined) {
        await this.#recordRefreshed(trx, context, row, again, nowIso, { replayed: true });
        return { kind: 'issued', issued: again };
      }
      const revoked = await store.revokeSessions(trx, projectId, { chainId: row.chain_id }, 'refresh_token_reuse', nowIso);
      await store.clearSealedSuccessors(trx, projectId, row.chain_id);
      await recordSessionsRevoked(trx, projectId, revoked, 'refresh_token_reuse', nowIso);
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
    await recordSessionsRevoked(trx, projectId, [row], 'refreshed', nowIso);
    const issued = await insertSession(trx, this.#issuing, {
      projectId,
      userId: row.user_id,
      client,
      now,
      token,
      name,
      refreshToken,
      chainId: row.chain_id,
      authenticatedAt: row.authenticated_at,
      amr: parseAmr(row.amr),
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
}
