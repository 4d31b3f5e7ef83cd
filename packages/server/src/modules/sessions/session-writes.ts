/**
 * The two writes every way of issuing or ending a session shares (sessions.service.ts and
 * session-refresh.ts): inserting a session with its `session.created` event, and the
 * `session.revoked` event of each session revoked.
 */
import type { Kysely } from 'kysely';
import type { Database, SessionRevokedReason } from '../../db/schema.js';
import { assert } from '../../lib/assert.js';
import type { Transaction } from '../../db/transaction.js';
import { addMilliseconds, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { recordEvent } from '../events/events.service.js';
import { type AuthenticationMethod, type MintedSessionJwt, parseAmr, type SessionJwts } from './session-jwts.js';
import type { IssuedSessionTokens, SessionClient } from './sessions.service.js';
import * as store from './sessions.store.js';

const USER_AGENT_LENGTH_MAX = 500;
const IP_LENGTH_MAX = 100;

/**
 * How new sessions are issued: how long their token and refresh token live (`SESSION_TTL`,
 * `REFRESH_TTL`), and what signs their JWTs.
 */
export interface SessionIssuing {
  readonly sessionTtlMs: number;
  readonly refreshTtlMs: number;
  readonly jwts: SessionJwts;
}

/**
 * The JWT of a live session, signed now (session-jwts.ts), with its user's claims as `db` reads
 * them. Undefined when the user is gone (the session is then good for nothing).
 */
export async function sessionJwtOf(
  db: Kysely<Database>,
  jwts: SessionJwts,
  session: Pick<store.SessionRow, 'id' | 'project_id' | 'user_id' | 'expires_at' | 'amr'>,
  now: Date,
): Promise<MintedSessionJwt | undefined> {
  const user = await store.findUserClaims(db, session.project_id, session.user_id);
  if (user === undefined) return undefined;
  return jwts.mint(
    db,
    {
      projectId: session.project_id,
      sessionName: session.id,
      sessionExpiresAt: session.expires_at,
      amr: parseAmr(session.amr),
      user: { id: user.id, email: user.email, emailVerified: user.email_verified_at !== null, roles: parseRoles(user.roles) },
    },
    now,
  );
}

function parseRoles(stored: string): string[] {
  const parsed: unknown = JSON.parse(stored);
  return Array.isArray(parsed) ? parsed.filter((role): role is string => typeof role === 'string') : [];
}

export async function insertSession(
  trx: Transaction,
  issuing: SessionIssuing,
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
    /** How the chain signed in; a refresh carries its predecessor's. */
    amr: readonly AuthenticationMethod[];
  },
): Promise<IssuedSessionTokens> {
  const nowIso = isoTime(input.now);
  const expiresAt = isoTime(addMilliseconds(input.now, issuing.sessionTtlMs));
  const refreshExpiresAt = isoTime(addMilliseconds(input.now, issuing.refreshTtlMs));
  const row: store.SessionRow = {
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
    amr: JSON.stringify(input.amr),
  };
  await store.insertSession(trx, row);
  const minted = await sessionJwtOf(trx, issuing.jwts, row, input.now);
  assert(minted !== undefined, `the user ${input.userId} of a session being issued exists`);
  await recordEvent(trx, {
    projectId: input.projectId,
    type: 'session.created',
    data: { session_id: input.name, user_id: input.userId },
    createdAt: nowIso,
  });
  return {
    userId: input.userId,
    name: input.name,
    session: {
      id: input.token,
      expires_at: expiresAt,
      refresh_token: input.refreshToken,
      refresh_expires_at: refreshExpiresAt,
      jwt: minted.jwt,
    },
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
