import { type Kysely, sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { type KeysetCursor, keysetPage } from '../../db/pagination.js';
import { fixedQuery, runFixedFirst } from '../../db/fixed-query.js';
import type { Database, RolesTable, UsersTable } from '../../db/schema.js';
import type { RowLock } from '../../db/transaction.js';

type Executor = Kysely<Database>;

export type UserRow = UsersTable;
export type RoleRow = RolesTable;

export async function insertUser(db: Executor, row: UserRow): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export async function findUser(db: Executor, projectId: string, userId: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('project_id', '=', projectId).where('id', '=', userId).executeTakeFirst();
}

const USER_COLUMNS =
  'id, project_id, email, email_key, name, password_hash, email_verified_at, roles, metadata, banned_at, created_at, updated_at';

/** A read outside any transaction (every session-authenticated request): a fixed, prepared text. */
const FIND_USER = fixedQuery<UserRow>(`select ${USER_COLUMNS} from users where project_id = ? and id = ?`);

export async function findUserForRead(db: Db, projectId: string, userId: string): Promise<UserRow | undefined> {
  return runFixedFirst(db, FIND_USER, [projectId, userId]);
}

/**
 * The user, its row locked until the transaction ends (PostgreSQL; SQLite's one writer needs no
 * lock). This read and the next are in every log in: as SQL texts they skip Kysely's query builder
 * (docs/performance.md, "Log in").
 */
export async function findUserLocked(db: Executor, projectId: string, userId: string, lock: RowLock): Promise<UserRow | undefined> {
  const query =
    lock === 'for update'
      ? sql<UserRow>`select ${sql.raw(USER_COLUMNS)} from users where project_id = ${projectId} and id = ${userId} for update`
      : sql<UserRow>`select ${sql.raw(USER_COLUMNS)} from users where project_id = ${projectId} and id = ${userId}`;
  return (await query.execute(db)).rows[0];
}

export async function findUserByEmailKey(db: Executor, projectId: string, emailKey: string): Promise<UserRow | undefined> {
  const query = sql<UserRow>`select ${sql.raw(USER_COLUMNS)} from users where project_id = ${projectId} and email_key = ${emailKey}`;
  return (await query.execute(db)).rows[0];
}

export interface ListUsersFilter {
  readonly emailKey?: string | undefined;
  /** Only users older than this one, in list order (newest first). */
  readonly after?: KeysetCursor | undefined;
  readonly limit: number;
}

/** A project's users, newest first, with a (created_at, id) cursor. */
export async function listUsers(db: Executor, projectId: string, filter: ListUsersFilter): Promise<UserRow[]> {
  let query = db.selectFrom('users').selectAll().where('project_id', '=', projectId);
  if (filter.emailKey !== undefined) query = query.where('email_key', '=', filter.emailKey);
  return keysetPage(query, filter).execute();
}

export type UserChanges = Partial<
  Pick<UserRow, 'name' | 'metadata' | 'roles' | 'password_hash' | 'email_verified_at' | 'banned_at' | 'updated_at'>
>;

export async function updateUser(db: Executor, projectId: string, userId: string, changes: UserChanges): Promise<UserRow | undefined> {
  return db
    .updateTable('users')
    .set(changes)
    .where('project_id', '=', projectId)
    .where('id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

/** Returns false when the project has no such user. */
export async function deleteUser(db: Executor, projectId: string, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('users').where('project_id', '=', projectId).where('id', '=', userId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Where a page of users in (created_at, id) order ends: the next page starts after it. */
export interface UserCursor {
  readonly createdAt: string;
  readonly id: string;
}

/**
 * The next `limit` users of a project after `after`, in (created_at, id) order, the order of the
 * `users_project_created_idx` index the page walks: their ids and role lists only. A page of the
 * clean-up that takes a deleted role off its users; a read of `limit` index entries whatever the
 * users hold (a filter on the roles would let the database read the whole project to fill a page).
 */
export async function findUserRolesPage(
  db: Executor,
  projectId: string,
  page: { readonly after: UserCursor | undefined; readonly limit: number },
): Promise<Array<Pick<UserRow, 'id' | 'created_at' | 'roles'>>> {
  const { after } = page;
  let query = db.selectFrom('users').select(['id', 'created_at', 'roles']).where('project_id', '=', projectId);
  if (after !== undefined) {
    // The `>=` alone bounds the index range; the rest skips the rows of that instant already read.
    query = query
      .where('created_at', '>=', after.createdAt)
      .where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb('id', '>', after.id)]));
  }
  return query.orderBy('created_at').orderBy('id').limit(page.limit).execute();
}

// ---- Roles -----------------------------------------------------------------------------------

export async function insertRole(db: Executor, row: RoleRow): Promise<void> {
  await db.insertInto('roles').values(row).execute();
}

export async function findRole(db: Executor, projectId: string, key: string): Promise<RoleRow | undefined> {
  return db.selectFrom('roles').selectAll().where('project_id', '=', projectId).where('key', '=', key).executeTakeFirst();
}

export async function findRoles(db: Executor, projectId: string, keys: readonly string[]): Promise<RoleRow[]> {
  if (keys.length === 0) return [];
  return db
    .selectFrom('roles')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('key', 'in', [...keys])
    .execute();
}

/** A project's custom roles, newest first. */
export async function listRoles(db: Executor, projectId: string): Promise<RoleRow[]> {
  return db.selectFrom('roles').selectAll().where('project_id', '=', projectId).orderBy('created_at', 'desc').orderBy('key').execute();
}

export async function countRoles(db: Executor, projectId: string): Promise<number> {
  const row = await db
    .selectFrom('roles')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function updateRole(
  db: Executor,
  projectId: string,
  key: string,
  changes: Partial<Pick<RoleRow, 'name' | 'permissions' | 'updated_at'>>,
): Promise<RoleRow | undefined> {
  return db.updateTable('roles').set(changes).where('project_id', '=', projectId).where('key', '=', key).returningAll().executeTakeFirst();
}

export async function deleteRole(db: Executor, projectId: string, key: string): Promise<boolean> {
  const result = await db.deleteFrom('roles').where('project_id', '=', projectId).where('key', '=', key).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
