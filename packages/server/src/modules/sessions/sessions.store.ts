import { type Kysely, sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { type KeysetCursor, keysetPage } from '../../db/pagination.js';
import { fixedQuery, runFixedFirst } from '../../db/fixed-query.js';
import type { Database, SessionRevokedReason, SessionsTable, UsersTable } from '../../db/schema.js';

type Executor = Kysely<Database>;

export type SessionRow = SessionsTable;

/** Every log in writes one: an SQL text, without Kysely's query builder (docs/performance.md, "Log in"). */
export async function insertSession(db: Executor, row: SessionRow): Promise<void> {
  await sql`insert into sessions (id, project_id, user_id, token_hash, refresh_token_hash, refresh_expires_at, chain_id,
      refreshed_at, replaced_by, successor_sealed, expires_at, ip, user_agent, created_at, last_used_at, revoked_at, revoked_reason,
      authenticated_at, amr)
    values (${row.id}, ${row.project_id}, ${row.user_id}, ${row.token_hash}, ${row.refresh_token_hash}, ${row.refresh_expires_at},
      ${row.chain_id}, ${row.refreshed_at}, ${row.replaced_by}, ${row.successor_sealed}, ${row.expires_at}, ${row.ip},
      ${row.user_agent}, ${row.created_at}, ${row.last_used_at}, ${row.revoked_at}, ${row.revoked_reason}, ${row.authenticated_at},
      ${row.amr})`.execute(db);
}

/** What checking a session token needs: one primary-key lookup, nothing else. */
export type SessionCheckRow = Pick<
  SessionRow,
  'id' | 'project_id' | 'user_id' | 'token_hash' | 'expires_at' | 'revoked_at' | 'last_used_at'
>;

/**
 * The one lookup not scoped by project: it is how a request with a session token finds its project
 * (as `findApiKeyByHash` is for secret keys). Callers compare the token hash before trusting the row.
 */
const FIND_SESSION_FOR_CHECK = fixedQuery<SessionCheckRow>(
  `select id, project_id, user_id, token_hash, expires_at, revoked_at, last_used_at from sessions where id = ?`,
);

export async function findSessionForCheck(db: Db, sessionId: string): Promise<SessionCheckRow | undefined> {
  return runFixedFirst(db, FIND_SESSION_FOR_CHECK, [sessionId]);
}

const SESSION_COLUMNS =
  'id, project_id, user_id, token_hash, refresh_token_hash, refresh_expires_at, chain_id, refreshed_at, replaced_by, ' +
  'successor_sealed, expires_at, ip, user_agent, created_at, last_used_at, revoked_at, revoked_reason, authenticated_at, amr';

/** A read outside any transaction (checking a token): a fixed, prepared text. */
const FIND_SESSION = fixedQuery<SessionRow>(`select ${SESSION_COLUMNS} from sessions where project_id = ? and id = ?`);

export async function findSessionForRead(db: Db, projectId: string, sessionId: string): Promise<SessionRow | undefined> {
  return runFixedFirst(db, FIND_SESSION, [projectId, sessionId]);
}

const USER_COLUMNS = [
  'id',
  'project_id',
  'email',
  'email_key',
  'name',
  'password_hash',
  'email_verified_at',
  'roles',
  'metadata',
  'banned_at',
  'created_at',
  'updated_at',
] as const;

type SessionWithUserRow = SessionRow & { [K in (typeof USER_COLUMNS)[number] as `u_${K}`]: UsersTable[K] | null };

/**
 * `POST /sessions/validate` in ONE read: the session and its user (joined on the user's primary
 * key; the one read of the users table outside the users module, for the service's hottest path).
 * The user's columns are null when the user is gone.
 */
const FIND_SESSION_WITH_USER = fixedQuery<SessionWithUserRow>(
  `select ${SESSION_COLUMNS.split(', ')
    .map((column) => `s.${column}`)
    .join(', ')}, ${USER_COLUMNS.map((column) => `u.${column} as u_${column}`).join(', ')}
   from sessions s left join users u on u.project_id = s.project_id and u.id = s.user_id
   where s.project_id = ? and s.id = ?`,
);

export async function findSessionWithUser(
  db: Db,
  projectId: string,
  sessionId: string,
): Promise<{ session: SessionRow; user: UsersTable | undefined } | undefined> {
  const row = await runFixedFirst(db, FIND_SESSION_WITH_USER, [projectId, sessionId]);
  if (row === undefined) return undefined;
  const session: SessionRow = {
    id: row.id,
    project_id: row.project_id,
    user_id: row.user_id,
    token_hash: row.token_hash,
    refresh_token_hash: row.refresh_token_hash,
    refresh_expires_at: row.refresh_expires_at,
    chain_id: row.chain_id,
    refreshed_at: row.refreshed_at,
    replaced_by: row.replaced_by,
    successor_sealed: row.successor_sealed,
    expires_at: row.expires_at,
    ip: row.ip,
    user_agent: row.user_agent,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
    revoked_reason: row.revoked_reason,
    authenticated_at: row.authenticated_at,
    amr: row.amr,
  };
  if (row.u_id === null) return { session, user: undefined };
  const user = {
    id: row.u_id,
    project_id: row.u_project_id,
    email: row.u_email,
    email_key: row.u_email_key,
    name: row.u_name,
    password_hash: row.u_password_hash,
    email_verified_at: row.u_email_verified_at,
    roles: row.u_roles,
    metadata: row.u_metadata,
    banned_at: row.u_banned_at,
    created_at: row.u_created_at,
    updated_at: row.u_updated_at,
  } as UsersTable;
  return { session, user };
}

export async function findSession(db: Executor, projectId: string, sessionId: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('project_id', '=', projectId).where('id', '=', sessionId).executeTakeFirst();
}

export async function findSessionByRefreshHash(db: Executor, projectId: string, refreshHash: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('refresh_token_hash', '=', refreshHash)
    .executeTakeFirst();
}

/** When the session's user last proved who they are (`authenticated_at`); the caller has checked the session is live. */
export async function findAuthenticatedAt(
  db: Executor,
  projectId: string,
  sessionId: string,
): Promise<{ authenticated_at: string | null } | undefined> {
  return db
    .selectFrom('sessions')
    .select('authenticated_at')
    .where('project_id', '=', projectId)
    .where('id', '=', sessionId)
    .executeTakeFirst();
}

/** Records a reauthentication on a live session; false when it was revoked or expired meanwhile. */
export async function setAuthenticatedAt(db: Executor, projectId: string, sessionId: string, nowIso: string): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ authenticated_at: nowIso })
    .where('project_id', '=', projectId)
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Moves `last_used_at` forward, only when it is older than `staleBefore` (at most one write a minute). */
export async function touchSession(db: Executor, sessionId: string, nowIso: string, staleBeforeIso: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ last_used_at: nowIso })
    .where('id', '=', sessionId)
    .where('last_used_at', '<', staleBeforeIso)
    .execute();
}

/**
 * Uses a session's refresh token: marks it used, names its successor (with its tokens sealed, when
 * a grace window is on) and revokes the session, in one conditional UPDATE. Of two concurrent
 * refreshes with one token exactly one gets true.
 */
export async function markRefreshed(
  db: Executor,
  projectId: string,
  sessionId: string,
  successor: { readonly name: string; readonly sealed: string | null },
  nowIso: string,
): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({
      refreshed_at: nowIso,
      replaced_by: successor.name,
      successor_sealed: successor.sealed,
      revoked_at: nowIso,
      revoked_reason: 'refreshed',
    })
    .where('project_id', '=', projectId)
    .where('id', '=', sessionId)
    .where('refreshed_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Forgets the sealed successors a chain's used rows keep for the grace window: once any later
 * token of the chain is used, or the chain is revoked, no retry of an older token may get them.
 */
export async function clearSealedSuccessors(
  db: Executor,
  projectId: string,
  chainId: string,
  options: { readonly exceptSessionId?: string } = {},
): Promise<void> {
  let update = db
    .updateTable('sessions')
    .set({ successor_sealed: null })
    .where('project_id', '=', projectId)
    .where('chain_id', '=', chainId)
    .where('successor_sealed', 'is not', null);
  if (options.exceptSessionId !== undefined) update = update.where('id', '<>', options.exceptSessionId);
  await update.execute();
}

/**
 * Forgets the sealed successors of tokens used at or before `refreshedBeforeIso` (their grace
 * window has passed), across projects: the job's sweep, served by the partial index on the rows
 * that still hold one. Returns how many it cleared.
 */
export async function clearSealedSuccessorsUsedBefore(db: Executor, refreshedBeforeIso: string): Promise<number> {
  const result = await db
    .updateTable('sessions')
    .set({ successor_sealed: null })
    .where('successor_sealed', 'is not', null)
    .where('refreshed_at', '<=', refreshedBeforeIso)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Revokes one session; returns false when it was already revoked (or does not exist). */
export async function revokeSession(
  db: Executor,
  projectId: string,
  sessionId: string,
  reason: SessionRevokedReason,
  nowIso: string,
): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ revoked_at: nowIso, revoked_reason: reason })
    .where('project_id', '=', projectId)
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export type SessionGroup = { readonly userId: string } | { readonly chainId: string };

/**
 * Revokes every session of a user or of a refresh chain that could still be used: not revoked, and
 * either unexpired or still refreshable. Returns the sessions it revoked, for their events.
 */
export async function revokeSessions(
  db: Executor,
  projectId: string,
  group: SessionGroup,
  reason: SessionRevokedReason,
  nowIso: string,
  options: { exceptSessionId?: string } = {},
): Promise<SessionRow[]> {
  let query = db
    .updateTable('sessions')
    .set({ revoked_at: nowIso, revoked_reason: reason })
    .where('project_id', '=', projectId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', '>', nowIso), eb('refresh_expires_at', '>', nowIso)]));
  query = 'userId' in group ? query.where('user_id', '=', group.userId) : query.where('chain_id', '=', group.chainId);
  if (options.exceptSessionId !== undefined) query = query.where('id', '<>', options.exceptSessionId);
  const rows = await query.returningAll().execute();
  return rows.sort((left, right) => left.id.localeCompare(right.id));
}

export interface ListSessionsFilter {
  readonly after?: KeysetCursor | undefined;
  readonly limit: number;
  readonly nowIso: string;
}

/** A user's sessions that could still be used (as `revokeSessions` counts them), newest first. */
export async function listLiveSessions(db: Executor, projectId: string, userId: string, filter: ListSessionsFilter): Promise<SessionRow[]> {
  const query = db
    .selectFrom('sessions')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', '>', filter.nowIso), eb('refresh_expires_at', '>', filter.nowIso)]));
  return keysetPage(query, filter).execute();
}

/**
 * What a session JWT says about its user (email, verification, roles): read in the transaction
 * that issues the session, so the JWT says what that transaction sees. Undefined when the user is gone.
 */
export async function findUserClaims(
  db: Executor,
  projectId: string,
  userId: string,
): Promise<Pick<UsersTable, 'id' | 'email' | 'email_verified_at' | 'roles'> | undefined> {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'email_verified_at', 'roles'])
    .where('project_id', '=', projectId)
    .where('id', '=', userId)
    .executeTakeFirst();
}
