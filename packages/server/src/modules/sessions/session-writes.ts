/**
 * The two writes every way of issuing or ending a session shares (sessions.service.ts and
 * session-refresh.ts): inserting a session with its `session.created` event, and the
 * `session.revoked` event of each session revoked.
 */
import type { SessionRevokedReason } from '../../db/schema.js';
import type { Transaction } from '../../db/transaction.js';
import { addMilliseconds, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { recordEvent } from '../events/events.service.js';
import type { IssuedSessionTokens, SessionClient } from './sessions.service.js';
import * as store from './sessions.store.js';

const USER_AGENT_LENGTH_MAX = 500;
const IP_LENGTH_MAX = 100;

/** How long a new session's token and refresh token live (`SESSION_TTL`, `REFRESH_TTL`). */
export interface SessionLifetimes {
  readonly sessionTtlMs: number;
  readonly refreshTtlMs: number;
}

export async function insertSession(
  trx: Transaction,
  lifetimes: SessionLifetimes,
  input: {
    projectId: string;
    userId: string;
    client: SessionClient;
    now: Date;
    token: string;
    name: string;
    refreshToken: string;
    chainId: string;
    /** A sign-in's own time; a refresh carries its predecessor's (a refresh proves nothing new). */
    authenticatedAt: string | null;
  },
): Promise<IssuedSessionTokens> {
  const nowIso = isoTime(input.now);
  const expiresAt = isoTime(addMilliseconds(input.now, lifetimes.sessionTtlMs));
  const refreshExpiresAt = isoTime(addMilliseconds(input.now, lifetimes.refreshTtlMs));
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
    authenticated_at: input.authenticatedAt,
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

export async function recordSessionsRevoked(
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
