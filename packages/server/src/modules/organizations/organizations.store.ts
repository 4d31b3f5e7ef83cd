import type { Kysely } from 'kysely';
import { type KeysetCursor, keysetPage } from '../../db/pagination.js';
import type { Database, OrganizationInvitationsTable, OrganizationMembersTable, OrganizationsTable } from '../../db/schema.js';
import type { RowLock } from '../../db/transaction.js';

export type { RowLock };

type Executor = Kysely<Database>;

export type OrganizationRow = OrganizationsTable;
export type MemberRow = OrganizationMembersTable;
export type InvitationRow = OrganizationInvitationsTable;

// ---- Organizations ---------------------------------------------------------------------------

export async function insertOrganization(db: Executor, row: OrganizationRow): Promise<void> {
  await db.insertInto('organizations').values(row).execute();
}

/**
 * The organization, or undefined. With `for update` it also takes the organization's row lock:
 * every change of its members and invitations takes it first, so they happen one at a time.
 */
export async function findOrganization(
  db: Executor,
  projectId: string,
  organizationId: string,
  lock: RowLock = 'none',
): Promise<OrganizationRow | undefined> {
  const query = db.selectFrom('organizations').selectAll().where('project_id', '=', projectId).where('id', '=', organizationId);
  return (lock === 'for update' ? query.forUpdate() : query).executeTakeFirst();
}

export async function findOrganizationsByIds(db: Executor, projectId: string, ids: readonly string[]): Promise<OrganizationRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('organizations')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', 'in', [...ids])
    .execute();
}

/** A project's organizations, newest first. */
export async function listOrganizations(
  db: Executor,
  projectId: string,
  filter: { after: KeysetCursor | undefined; limit: number },
): Promise<OrganizationRow[]> {
  return keysetPage(db.selectFrom('organizations').selectAll().where('project_id', '=', projectId), filter).execute();
}

export async function updateOrganization(
  db: Executor,
  projectId: string,
  organizationId: string,
  changes: Partial<Pick<OrganizationRow, 'name' | 'slug' | 'metadata' | 'updated_at'>>,
): Promise<OrganizationRow | undefined> {
  return db
    .updateTable('organizations')
    .set(changes)
    .where('project_id', '=', projectId)
    .where('id', '=', organizationId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the organization with its members and invitations. */
export async function deleteOrganization(db: Executor, projectId: string, organizationId: string): Promise<void> {
  await db
    .deleteFrom('organization_invitations')
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .execute();
  await db.deleteFrom('organization_members').where('project_id', '=', projectId).where('organization_id', '=', organizationId).execute();
  await db.deleteFrom('organizations').where('project_id', '=', projectId).where('id', '=', organizationId).execute();
}

// ---- Members ---------------------------------------------------------------------------------

export async function insertMember(db: Executor, row: MemberRow): Promise<void> {
  await db.insertInto('organization_members').values(row).execute();
}

export async function findMember(db: Executor, projectId: string, organizationId: string, userId: string): Promise<MemberRow | undefined> {
  return db
    .selectFrom('organization_members')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** An organization's members, newest first, with a (created_at, user_id) cursor. */
export async function listMembers(
  db: Executor,
  projectId: string,
  organizationId: string,
  filter: { after: MemberRow | undefined; limit: number },
): Promise<MemberRow[]> {
  const { after } = filter;
  const query = db
    .selectFrom('organization_members')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId);
  return keysetPage(query, {
    after: after && { created_at: after.created_at, id: after.user_id },
    limit: filter.limit,
    columns: ['created_at', 'user_id'],
  }).execute();
}

/** Every member of an organization; for its deletion, which emits one event per member. */
export async function allMembers(db: Executor, projectId: string, organizationId: string): Promise<MemberRow[]> {
  return db
    .selectFrom('organization_members')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .orderBy('user_id')
    .execute();
}

/** A user's memberships, newest first, with a (created_at, organization_id) cursor. */
export async function listUserMemberships(
  db: Executor,
  projectId: string,
  userId: string,
  filter: { after: MemberRow | undefined; limit: number },
): Promise<MemberRow[]> {
  const { after } = filter;
  const query = db.selectFrom('organization_members').selectAll().where('project_id', '=', projectId).where('user_id', '=', userId);
  return keysetPage(query, {
    after: after && { created_at: after.created_at, id: after.organization_id },
    limit: filter.limit,
    columns: ['created_at', 'organization_id'],
  }).execute();
}

/** Every membership of a user, in organization id order (the order their locks are taken in). */
export async function allUserMemberships(db: Executor, projectId: string, userId: string): Promise<MemberRow[]> {
  return db
    .selectFrom('organization_members')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .orderBy('organization_id')
    .execute();
}

export async function countOwners(db: Executor, projectId: string, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('organization_members')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function updateMember(
  db: Executor,
  projectId: string,
  organizationId: string,
  userId: string,
  changes: Pick<MemberRow, 'role' | 'updated_at'>,
): Promise<MemberRow | undefined> {
  return db
    .updateTable('organization_members')
    .set(changes)
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteMember(db: Executor, projectId: string, organizationId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('organization_members')
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

// ---- Invitations -----------------------------------------------------------------------------

export async function insertInvitation(db: Executor, row: InvitationRow): Promise<void> {
  await db.insertInto('organization_invitations').values(row).execute();
}

export async function findInvitation(
  db: Executor,
  projectId: string,
  organizationId: string,
  invitationId: string,
): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('organization_invitations')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .where('id', '=', invitationId)
    .executeTakeFirst();
}

/** For the email composer, which knows the invitation by id alone (and its project). */
export async function findInvitationById(db: Executor, projectId: string, invitationId: string): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('organization_invitations')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', invitationId)
    .executeTakeFirst();
}

export async function findInvitationByTokenHash(db: Executor, projectId: string, tokenHash: string): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('organization_invitations')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function findPendingInvitation(
  db: Executor,
  projectId: string,
  organizationId: string,
  emailKey: string,
): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('organization_invitations')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId)
    .where('email_key', '=', emailKey)
    .where('status', '=', 'pending')
    .executeTakeFirst();
}

/** An organization's invitations, newest first. */
export async function listInvitations(
  db: Executor,
  projectId: string,
  organizationId: string,
  filter: { after: KeysetCursor | undefined; limit: number },
): Promise<InvitationRow[]> {
  const query = db
    .selectFrom('organization_invitations')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('organization_id', '=', organizationId);
  return keysetPage(query, filter).execute();
}

/**
 * Moves a pending invitation on (accepted, revoked, replaced); only a pending one, so of two
 * requests racing to accept the same invitation exactly one succeeds. Returns the new row, or
 * undefined when it was no longer pending.
 */
export async function settlePendingInvitation(
  db: Executor,
  projectId: string,
  invitationId: string,
  changes: Partial<Pick<InvitationRow, 'status' | 'accepted_at' | 'accepted_user_id' | 'revoked_at' | 'updated_at'>>,
): Promise<InvitationRow | undefined> {
  return db
    .updateTable('organization_invitations')
    .set(changes)
    .where('project_id', '=', projectId)
    .where('id', '=', invitationId)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/** Stores the hash of a newly sent token; the previous token of the invitation stops working. */
export async function setInvitationTokenHash(
  db: Executor,
  projectId: string,
  invitationId: string,
  tokenHash: string,
  updatedAt: string,
): Promise<boolean> {
  const result = await db
    .updateTable('organization_invitations')
    .set({ token_hash: tokenHash, updated_at: updatedAt })
    .where('project_id', '=', projectId)
    .where('id', '=', invitationId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
