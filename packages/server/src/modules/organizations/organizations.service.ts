import type { Db } from '../../db/database.js';
import { listOf, pageOf, startPage } from '../../db/pagination.js';
import { inTransaction, rowLockFor, type Transaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { ApiError, isApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { AuditAction, AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { recordEvent } from '../events/events.service.js';
import type { RolesService } from '../users/roles.service.js';
import type { UsersService } from '../users/users.service.js';
import { addMemberInTransaction, permits, removeMemberInTransaction, requireAnotherOwner, toMembership } from './memberships.js';
import {
  type AddMemberBody,
  type Authorization,
  type AuthorizeBody,
  type CreateOrganizationBody,
  type Membership,
  type MembershipList,
  type Organization,
  type OrganizationList,
  type PageQuery,
  type UpdateMemberBody,
  type UpdateOrganizationBody,
  type UserMembershipList,
} from './organizations.schemas.js';
import { verifiedDomains } from './domains.store.js';
import * as store from './organizations.store.js';
import { slugFromName, writingSlug } from './organizations.slugs.js';

// The membership rule, for sign-ins that add members (SSO).
export { addMemberInTransaction } from './memberships.js';
export { slugFromName } from './organizations.slugs.js';

/**
 * Takes the organization's row lock inside `trx` (PostgreSQL; SQLite writers hold the database
 * lock), which every change of its members takes first. False when it does not exist.
 */
export async function lockOrganization(trx: Transaction, db: Db, projectId: string, organizationId: string): Promise<boolean> {
  return (await store.findOrganization(trx, projectId, organizationId, rowLockFor(db.dialect))) !== undefined;
}

export const DEFAULT_MEMBER_ROLE = 'member';

export interface OrganizationsServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly audit: AuditService;
  readonly users: UsersService;
  readonly roles: RolesService;
}

/**
 * Organizations and their members (docs/api.md section 4). An organization starts without
 * members; once it has an owner, at least one owner always remains: a change that would remove or
 * demote the last one is refused (409 `organization_owner_required`), also when two such changes
 * race (see memberships.ts).
 */
export class OrganizationsService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #audit: AuditService;
  readonly #users: UsersService;
  readonly #roles: RolesService;

  constructor(options: OrganizationsServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#audit = options.audit;
    this.#users = options.users;
    this.#roles = options.roles;
  }

  /** The row lock of `store.findOrganization`: PostgreSQL only (SQLite writers hold the database lock). */
  get rowLock(): store.RowLock {
    return rowLockFor(this.#db.dialect);
  }

  async create(projectId: string, input: CreateOrganizationBody, context: AuditContext): Promise<Organization> {
    return this.#audited(context, projectId, null, 'organization.create', async () => {
      const name = input.name.trim();
      const slug = input.slug ?? slugFromName(name);
      const now = isoTime(this.#clock.now());
      const row: store.OrganizationRow = {
        id: newId('org'),
        project_id: projectId,
        name,
        slug,
        metadata: JSON.stringify(input.metadata ?? {}),
        created_at: now,
        updated_at: now,
      };
      await writingSlug(slug, input.slug === undefined, () =>
        inTransaction(this.#db, async (trx) => {
          await store.insertOrganization(trx, row);
          await recordEvent(trx, {
            projectId,
            type: 'organization.created',
            data: { organization_id: row.id, name, slug },
            createdAt: now,
          });
          await this.#audit.record(trx, context, {
            ...organizationRecord(projectId, row.id, 'organization.create'),
            changes: { slug },
            createdAt: now,
          });
        }),
      );
      return toOrganization(row);
    });
  }

  async get(projectId: string, organizationId: string): Promise<Organization> {
    return toOrganization(await this.#require(this.#db.kysely, projectId, organizationId));
  }

  async list(projectId: string, query: PageQuery): Promise<OrganizationList> {
    const page = await startPage(query, {
      find: (id) => store.findOrganization(this.#db.kysely, projectId, id),
      missing: (id) => `No organization ${id} to start after.`,
    });
    const rows = await store.listOrganizations(this.#db.kysely, projectId, { after: page.after, limit: page.rowsToRead });
    return listOf(rows, page.limit, toOrganization);
  }

  /** Changes the name, slug or metadata (replaced whole). No event: the catalog has no `organization.updated`. */
  async update(projectId: string, organizationId: string, input: UpdateOrganizationBody, context: AuditContext): Promise<Organization> {
    return this.#audited(context, projectId, organizationId, 'organization.update', async () => {
      const row = await writingSlug(input.slug, false, () =>
        inTransaction(this.#db, async (trx) => {
          const now = isoTime(this.#clock.now());
          const updated = await store.updateOrganization(trx, projectId, organizationId, {
            ...(input.name === undefined ? {} : { name: input.name.trim() }),
            ...(input.slug === undefined ? {} : { slug: input.slug }),
            ...(input.metadata === undefined ? {} : { metadata: JSON.stringify(input.metadata) }),
            updated_at: now,
          });
          if (updated === undefined) throw organizationMissing(organizationId);
          await this.#audit.record(trx, context, {
            ...organizationRecord(projectId, organizationId, 'organization.update'),
            changes: { fields: Object.keys(input).sort().join(','), ...(input.slug === undefined ? {} : { slug: input.slug }) },
            createdAt: now,
          });
          return updated;
        }),
      );
      return toOrganization(row);
    });
  }

  /**
   * Deletes the organization, its memberships (one `organization.member.removed` each, reason
   * `organization_deleted`) and its invitations, in one transaction.
   */
  async delete(
    projectId: string,
    organizationId: string,
    context: AuditContext,
  ): Promise<{ id: string; object: 'organization'; deleted: true }> {
    await this.#audited(context, projectId, organizationId, 'organization.delete', () =>
      inTransaction(this.#db, async (trx) => {
        await this.#require(trx, projectId, organizationId, this.rowLock);
        const now = isoTime(this.#clock.now());
        const members = await store.allMembers(trx, projectId, organizationId);
        for (const member of members)
          await removeMemberInTransaction(trx, this.#audit, member, { now, context, reason: 'organization_deleted' });
        await store.deleteOrganization(trx, projectId, organizationId);
        await this.#audit.record(trx, context, {
          ...organizationRecord(projectId, organizationId, 'organization.delete'),
          changes: { members_removed: members.length },
          createdAt: now,
        });
      }),
    );
    return { id: organizationId, object: 'organization', deleted: true };
  }

  // ---- Members -------------------------------------------------------------------------------

  async listMembers(projectId: string, organizationId: string, query: PageQuery): Promise<MembershipList> {
    await this.#require(this.#db.kysely, projectId, organizationId);
    const page = await startPage(query, {
      find: (userId) => store.findMember(this.#db.kysely, projectId, organizationId, userId),
      missing: (userId) => `No member ${userId} to start after.`,
    });
    const rows = await store.listMembers(this.#db.kysely, projectId, organizationId, { after: page.after, limit: page.rowsToRead });
    return listOf(rows, page.limit, toMembership);
  }

  /** Adds a user of the project with a role (default `member`); event `organization.member.added`. */
  async addMember(projectId: string, organizationId: string, input: AddMemberBody, context: AuditContext): Promise<Membership> {
    return this.#audited(context, projectId, organizationId, 'organization_member.add', async () => {
      const role = input.role ?? DEFAULT_MEMBER_ROLE;
      await this.requireRole(projectId, role);
      const row = await inTransaction(this.#db, async (trx) => {
        await this.#require(trx, projectId, organizationId, this.rowLock);
        if ((await this.#users.findRecord(projectId, input.user_id, trx)) === undefined) {
          throw new ApiError('resource_missing', `No user ${input.user_id}.`, { param: 'user_id' });
        }
        const now = isoTime(this.#clock.now());
        return addMemberInTransaction(trx, this.#audit, { projectId, organizationId, userId: input.user_id, role, now, context });
      });
      return toMembership(row);
    });
  }

  /** Changes a member's role; demoting the last owner is refused (409 `organization_owner_required`). */
  async updateMember(
    projectId: string,
    organizationId: string,
    userId: string,
    input: UpdateMemberBody,
    context: AuditContext,
  ): Promise<Membership> {
    return this.#audited(context, projectId, organizationId, 'organization_member.update', async () => {
      await this.requireRole(projectId, input.role);
      const row = await inTransaction(this.#db, async (trx) => {
        await this.#require(trx, projectId, organizationId, this.rowLock);
        const member = await this.#requireMember(trx, projectId, organizationId, userId);
        if (input.role !== member.role) await requireAnotherOwner(trx, member, 'change their role');
        const now = isoTime(this.#clock.now());
        const updated = await store.updateMember(trx, projectId, organizationId, userId, { role: input.role, updated_at: now });
        if (updated === undefined) throw memberMissing(organizationId, userId);
        await this.#audit.record(trx, context, {
          ...organizationRecord(projectId, organizationId, 'organization_member.update'),
          changes: { user_id: userId, role_before: member.role, role: input.role },
          createdAt: now,
        });
        return updated;
      });
      return toMembership(row);
    });
  }

  /** Removes a member; removing the last owner is refused. Event `organization.member.removed`. */
  async removeMember(
    projectId: string,
    organizationId: string,
    userId: string,
    context: AuditContext,
  ): Promise<{ object: 'organization_membership'; organization_id: string; user_id: string; deleted: true }> {
    await this.#audited(context, projectId, organizationId, 'organization_member.remove', () =>
      inTransaction(this.#db, async (trx) => {
        await this.#require(trx, projectId, organizationId, this.rowLock);
        const member = await this.#requireMember(trx, projectId, organizationId, userId);
        await requireAnotherOwner(trx, member, 'remove them');
        await removeMemberInTransaction(trx, this.#audit, member, { now: isoTime(this.#clock.now()), context, reason: 'removed' });
      }),
    );
    return { object: 'organization_membership', organization_id: organizationId, user_id: userId, deleted: true };
  }

  /**
   * Whether the user's role in the organization grants the permission. Read from the database on
   * every call (the membership and the role's current permissions), so a change of role or of a
   * role's permissions counts from the next call. A non-member is refused with `role: null`; a
   * member whose custom role was deleted since is refused with its role key.
   */
  async authorize(projectId: string, organizationId: string, input: AuthorizeBody): Promise<Authorization> {
    await this.#require(this.#db.kysely, projectId, organizationId);
    const member = await store.findMember(this.#db.kysely, projectId, organizationId, input.user_id);
    if (member === undefined) return { allowed: false, role: null };
    let permissions: readonly string[];
    try {
      permissions = (await this.#roles.get(projectId, member.role)).permissions;
    } catch (error) {
      if (isApiError(error) && error.code === 'resource_missing') permissions = [];
      else throw error;
    }
    return { allowed: permits(permissions, input.permission), role: member.role };
  }

  /** `GET /users/me/organizations`: the user's memberships, newest first, each with its organization. */
  async listUserMemberships(projectId: string, userId: string, query: PageQuery): Promise<UserMembershipList> {
    const start = await startPage(query, {
      find: (organizationId) => store.findMember(this.#db.kysely, projectId, organizationId, userId),
      missing: (organizationId) => `No membership of organization ${organizationId} to start after.`,
    });
    const rows = await store.listUserMemberships(this.#db.kysely, projectId, userId, { after: start.after, limit: start.rowsToRead });
    const page = pageOf(rows, start.limit);
    const organizations = new Map(
      (
        await store.findOrganizationsByIds(
          this.#db.kysely,
          projectId,
          page.rows.map((row) => row.organization_id),
        )
      ).map((row) => [row.id, row]),
    );
    const data = page.rows.flatMap((row) => {
      const organization = organizations.get(row.organization_id);
      // Deleted in between the two reads: its memberships went with it.
      return organization === undefined ? [] : [{ ...toMembership(row), organization: toOrganization(organization) }];
    });
    return { object: 'list', data, has_more: page.has_more };
  }

  /** The organization's verified domains, sorted (domains.service.ts); in the caller's transaction when given. */
  async verifiedDomains(projectId: string, organizationId: string, executor: Transaction = this.#db.kysely): Promise<string[]> {
    return verifiedDomains(executor, projectId, organizationId);
  }

  /** True when the user is a member of the organization; in the caller's transaction when given. */
  async isMember(projectId: string, organizationId: string, userId: string, executor: Transaction = this.#db.kysely): Promise<boolean> {
    return (await store.findMember(executor, projectId, organizationId, userId)) !== undefined;
  }

  /** 400 `parameter_invalid` unless `role` is a built-in or custom role of the project. */
  async requireRole(projectId: string, role: string, param = 'role'): Promise<void> {
    if ((await this.#roles.unknownKeys(projectId, [role])).length > 0) {
      throw new ApiError('parameter_invalid', `No role "${role}" in this project; create it with POST /v1/roles first.`, { param });
    }
  }

  async #require(
    executor: Transaction,
    projectId: string,
    organizationId: string,
    lock: store.RowLock = 'none',
  ): Promise<store.OrganizationRow> {
    const row = await store.findOrganization(executor, projectId, organizationId, lock);
    if (row === undefined) throw organizationMissing(organizationId);
    return row;
  }

  async #requireMember(trx: Transaction, projectId: string, organizationId: string, userId: string): Promise<store.MemberRow> {
    const member = await store.findMember(trx, projectId, organizationId, userId);
    if (member === undefined) throw memberMissing(organizationId, userId);
    return member;
  }

  /** Runs a change that records its own entry; a refusal is recorded on its own after the rollback. */
  #audited<T>(
    context: AuditContext,
    projectId: string,
    organizationId: string | null,
    action: AuditAction,
    change: () => Promise<T>,
  ): Promise<T> {
    return this.#audit.recordingRefusals(context, organizationRecord(projectId, organizationId, action), change);
  }
}

function organizationRecord(projectId: string, organizationId: string | null, action: AuditAction): AuditRecord {
  return { projectId, action, resource: { type: 'organization', id: organizationId } };
}

function organizationMissing(organizationId: string): ApiError {
  return new ApiError('resource_missing', `No organization ${organizationId}.`, { param: 'id' });
}

function memberMissing(organizationId: string, userId: string): ApiError {
  return new ApiError('resource_missing', `User ${userId} is not a member of organization ${organizationId}.`, { param: 'user_id' });
}

export function toOrganization(row: store.OrganizationRow): Organization {
  return {
    id: row.id,
    object: 'organization',
    name: row.name,
    slug: row.slug,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
