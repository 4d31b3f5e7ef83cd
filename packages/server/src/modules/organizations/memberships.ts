import type { Transaction } from '../../db/transaction.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditContext, AuditService } from '../audit/audit.service.js';
import { recordEvent } from '../events/events.service.js';
import type { Membership } from './organizations.schemas.js';
import * as store from './organizations.store.js';

/**
 * The membership rules shared by members, invitations and user deletion. Each runs in the caller's
 * transaction, after the caller took the organization's row lock (`store.findOrganization` with
 * `for update`): changes of one organization's members then happen one at a time on PostgreSQL
 * too, so two concurrent demotions of its last two owners cannot both see "another owner remains".
 */

export const OWNER_ROLE = 'owner';

export interface MembershipChange {
  readonly projectId: string;
  readonly organizationId: string;
  readonly userId: string;
  readonly now: string;
  readonly context: AuditContext;
}

/** Refuses with 409 `organization_owner_required` when `member` is the organization's last owner. */
export async function requireAnotherOwner(trx: Transaction, member: store.MemberRow, verb: string): Promise<void> {
  if (member.role !== OWNER_ROLE) return;
  if ((await store.countOwners(trx, member.project_id, member.organization_id)) > 1) return;
  throw new ApiError(
    'organization_owner_required',
    `User ${member.user_id} is the last owner of organization ${member.organization_id}; make another member owner before you ${verb}.`,
  );
}

/** Inserts a membership with its `organization.member.added` event and audit entry. */
export async function addMemberInTransaction(
  trx: Transaction,
  audit: AuditService,
  change: MembershipChange & { readonly role: string },
): Promise<store.MemberRow> {
  const { projectId, organizationId, userId, role, now } = change;
  if ((await store.findMember(trx, projectId, organizationId, userId)) !== undefined) {
    throw new ApiError('organization_member_exists', `User ${userId} is already a member of organization ${organizationId}.`, {
      param: 'user_id',
    });
  }
  const row: store.MemberRow = {
    organization_id: organizationId,
    user_id: userId,
    project_id: projectId,
    role,
    created_at: now,
    updated_at: now,
  };
  try {
    await store.insertMember(trx, row);
  } catch (error) {
    // The user was deleted after the caller looked it up: the foreign key refuses the row.
    if (isForeignKeyViolation(error)) throw new ApiError('resource_missing', `No user ${userId}.`, { param: 'user_id' });
    throw error;
  }
  await recordEvent(trx, {
    projectId,
    type: 'organization.member.added',
    data: { organization_id: organizationId, user_id: userId, role },
    createdAt: now,
  });
  await audit.record(trx, change.context, {
    projectId,
    action: 'organization_member.add',
    resource: { type: 'organization', id: organizationId },
    changes: { user_id: userId, role },
    createdAt: now,
  });
  return row;
}

/** Deletes a membership with its `organization.member.removed` event and audit entry; no owner check. */
export async function removeMemberInTransaction(
  trx: Transaction,
  audit: AuditService,
  member: store.MemberRow,
  change: Pick<MembershipChange, 'now' | 'context'> & { readonly reason: 'removed' | 'user_deleted' | 'organization_deleted' },
): Promise<void> {
  const { project_id: projectId, organization_id: organizationId, user_id: userId } = member;
  await store.deleteMember(trx, projectId, organizationId, userId);
  await recordEvent(trx, {
    projectId,
    type: 'organization.member.removed',
    data: { organization_id: organizationId, user_id: userId, role: member.role, reason: change.reason },
    createdAt: change.now,
  });
  await audit.record(trx, change.context, {
    projectId,
    action: 'organization_member.remove',
    resource: { type: 'organization', id: organizationId },
    changes: { user_id: userId, role: member.role, reason: change.reason },
    createdAt: change.now,
  });
}

export function toMembership(row: store.MemberRow): Membership {
  return {
    object: 'organization_membership',
    organization_id: row.organization_id,
    user_id: row.user_id,
    role: row.role,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** True when `error` is a foreign-key violation on either dialect. */
export function isForeignKeyViolation(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const code = (error as { code?: unknown }).code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/**
 * Whether a role's permissions grant `permission`: an equal string, `*` (everything), or a
 * permission ending in `*` that grants every permission starting with what precedes it
 * (`invoices:*` grants `invoices:read`).
 */
export function permits(permissions: readonly string[], permission: string): boolean {
  return permissions.some((granted) => granted === permission || (granted.endsWith('*') && permission.startsWith(granted.slice(0, -1))));
}

/**
 * The step the users module runs in the transaction that deletes a user: each of the user's
 * memberships goes, with its `organization.member.removed` event (reason `user_deleted`). The last
 * owner of an organization cannot be deleted (409 `organization_owner_required`): make another
 * member owner, or delete the organization, first. Organizations are locked in id order, the
 * order every multi-organization change uses, so two such deletions cannot deadlock.
 */
export function removeMembershipsOfDeletedUser(options: { readonly audit: AuditService; readonly rowLock: store.RowLock }) {
  return async (trx: Transaction, input: { projectId: string; userId: string; now: Date; context: AuditContext }): Promise<void> => {
    const now = input.now.toISOString();
    for (const membership of await store.allUserMemberships(trx, input.projectId, input.userId)) {
      await store.findOrganization(trx, input.projectId, membership.organization_id, options.rowLock);
      // Read again under the lock: the role may have changed since the list was read.
      const member = await store.findMember(trx, input.projectId, membership.organization_id, input.userId);
      if (member === undefined) continue;
      await requireAnotherOwner(trx, member, 'delete the user');
      await removeMemberInTransaction(trx, options.audit, member, { now, context: input.context, reason: 'user_deleted' });
    }
  };
}
