import type { Db } from '../../db/database.js';
import { listOf, startPage } from '../../db/pagination.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { AuditAction, AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { queueEmail } from '../email/email.service.js';
import { recordEvent } from '../events/events.service.js';
import { normalizeEmail, type UsersService } from '../users/users.service.js';
import { INVITATION_TEMPLATE, INVITATION_TOKEN_PATTERN } from './invitations.emails.js';
import { addMemberInTransaction, toMembership } from './memberships.js';
import type { CreateInvitationBody, Invitation, InvitationList, PageQuery, UserMembership } from './organizations.schemas.js';
import { DEFAULT_MEMBER_ROLE, type OrganizationsService, toOrganization } from './organizations.service.js';
import * as store from './organizations.store.js';

/** An invitation can be accepted for 7 days. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface InvitationsServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly audit: AuditService;
  readonly users: UsersService;
  readonly organizations: OrganizationsService;
}

/**
 * Invitations by email (docs/api.md section 4). The email is queued in the invitation's
 * transaction and its single-use token created when it is sent (invitations.emails.ts). One pending
 * invitation per (organization, address): inviting the address again replaces the previous
 * invitation, whose token then stops working. Accepting needs a session whose user's verified
 * email is the invited address.
 */
export class InvitationsService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #audit: AuditService;
  readonly #users: UsersService;
  readonly #organizations: OrganizationsService;

  constructor(options: InvitationsServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#audit = options.audit;
    this.#users = options.users;
    this.#organizations = options.organizations;
  }

  async create(projectId: string, organizationId: string, input: CreateInvitationBody, context: AuditContext): Promise<Invitation> {
    return this.#audited(context, projectId, null, 'invitation.create', async () => {
      const email = normalizeEmail(input.email);
      const role = input.role ?? DEFAULT_MEMBER_ROLE;
      await this.#organizations.requireRole(projectId, role);
      const row = await inTransaction(this.#db, async (trx) => {
        await this.#requireOrganization(trx, projectId, organizationId);
        const user = await this.#users.findRecordByEmail(projectId, email, trx);
        if (user !== undefined && (await store.findMember(trx, projectId, organizationId, user.id)) !== undefined) {
          throw new ApiError('organization_member_exists', `${email.email} is already a member of organization ${organizationId}.`, {
            param: 'email',
          });
        }
        const now = this.#clock.now();
        const nowIso = isoTime(now);
        const previous = await store.findPendingInvitation(trx, projectId, organizationId, email.emailKey);
        if (previous !== undefined)
          await store.settlePendingInvitation(trx, projectId, previous.id, { status: 'replaced', updated_at: nowIso });
        const invitation: store.InvitationRow = {
          id: newId('inv'),
          project_id: projectId,
          organization_id: organizationId,
          email: email.email,
          email_key: email.emailKey,
          role,
          status: 'pending',
          token_hash: null,
          expires_at: isoTime(addMilliseconds(now, INVITATION_TTL_MS)),
          accepted_at: null,
          accepted_user_id: null,
          revoked_at: null,
          created_at: nowIso,
          updated_at: nowIso,
        };
        await store.insertInvitation(trx, invitation);
        await queueEmail(trx, {
          projectId,
          template: INVITATION_TEMPLATE,
          recipient: invitation.email,
          data: { invitation_id: invitation.id },
          now: nowIso,
        });
        await this.#audit.record(trx, context, {
          ...invitationRecord(projectId, invitation.id, 'invitation.create'),
          changes: { organization_id: organizationId, role, replaced: previous?.id ?? null },
          createdAt: nowIso,
        });
        return invitation;
      });
      return this.#toInvitation(row);
    });
  }

  async list(projectId: string, organizationId: string, query: PageQuery): Promise<InvitationList> {
    await this.#requireOrganization(this.#db.kysely, projectId, organizationId, 'none');
    const page = await startPage(query, {
      find: (id) => store.findInvitation(this.#db.kysely, projectId, organizationId, id),
      missing: (id) => `No invitation ${id} to start after.`,
    });
    const rows = await store.listInvitations(this.#db.kysely, projectId, organizationId, { after: page.after, limit: page.rowsToRead });
    return listOf(rows, page.limit, (row) => this.#toInvitation(row));
  }

  /** Revokes a pending invitation: its token stops working. Anything else → 409 `invitation_not_pending`. */
  async revoke(projectId: string, organizationId: string, invitationId: string, context: AuditContext): Promise<Invitation> {
    return this.#audited(context, projectId, invitationId, 'invitation.revoke', async () => {
      const row = await inTransaction(this.#db, async (trx) => {
        await this.#requireOrganization(trx, projectId, organizationId);
        const invitation = await store.findInvitation(trx, projectId, organizationId, invitationId);
        if (invitation === undefined) throw new ApiError('resource_missing', `No invitation ${invitationId}.`, { param: 'invitation_id' });
        const now = isoTime(this.#clock.now());
        const status = statusOf(invitation, now);
        if (status !== 'pending') {
          throw new ApiError(
            'invitation_not_pending',
            `Invitation ${invitationId} is ${status}; only a pending invitation can be revoked.`,
            {
              param: 'invitation_id',
            },
          );
        }
        const revoked = await store.settlePendingInvitation(trx, projectId, invitationId, {
          status: 'revoked',
          revoked_at: now,
          updated_at: now,
        });
        if (revoked === undefined) throw new Error(`invitation ${invitationId} stopped being pending under the organization's lock`);
        await this.#audit.record(trx, context, {
          ...invitationRecord(projectId, invitationId, 'invitation.revoke'),
          changes: { organization_id: organizationId },
          createdAt: now,
        });
        return revoked;
      });
      return this.#toInvitation(row);
    });
  }

  /**
   * Accepts an invitation for the session's user: the token must be the invitation's current one,
   * pending and unexpired (400 `token_invalid`, `token_expired`), and the user's verified email
   * the invited address (403 `invitation_email_mismatch`). Events `organization.member.added` and
   * `organization.invitation.accepted`.
   */
  async accept(projectId: string, userId: string, token: string, context: AuditContext): Promise<UserMembership> {
    return this.#audited(context, projectId, null, 'invitation.accept', () =>
      inTransaction(this.#db, async (trx) => {
        const invitation = INVITATION_TOKEN_PATTERN.test(token)
          ? await store.findInvitationByTokenHash(trx, projectId, sha256Hex(token))
          : undefined;
        if (invitation === undefined || invitation.status !== 'pending') throw tokenInvalid();
        const now = isoTime(this.#clock.now());
        if (invitation.expires_at <= now)
          throw new ApiError('token_expired', 'This invitation has expired; ask for a new one.', { param: 'token' });
        const user = await this.#users.getRecord(projectId, userId, trx);
        if (user.email_verified_at === null || user.email_key !== invitation.email_key) {
          throw new ApiError(
            'invitation_email_mismatch',
            user.email_verified_at === null
              ? 'Verify your email address before accepting an invitation.'
              : 'This invitation was sent to another email address than yours.',
          );
        }
        const organization = await this.#requireOrganization(trx, projectId, invitation.organization_id);
        // Settled first, under the organization's lock: of two accepts of one token, the second finds it no longer pending.
        const accepted = await store.settlePendingInvitation(trx, projectId, invitation.id, {
          status: 'accepted',
          accepted_at: now,
          accepted_user_id: userId,
          updated_at: now,
        });
        if (accepted === undefined) throw tokenInvalid();
        const member = await addMemberInTransaction(trx, this.#audit, {
          projectId,
          organizationId: organization.id,
          userId,
          role: invitation.role,
          now,
          context,
        });
        await recordEvent(trx, {
          projectId,
          type: 'organization.invitation.accepted',
          data: {
            organization_id: organization.id,
            invitation_id: invitation.id,
            user_id: userId,
            email: invitation.email,
            role: invitation.role,
          },
          createdAt: now,
        });
        await this.#audit.record(trx, context, {
          ...invitationRecord(projectId, invitation.id, 'invitation.accept'),
          changes: { organization_id: organization.id, user_id: userId, role: invitation.role },
          createdAt: now,
        });
        return { ...toMembership(member), organization: toOrganization(organization) };
      }),
    );
  }

  /** The organization, by default locked for the rest of the transaction (see memberships.ts); 404 otherwise. */
  async #requireOrganization(
    executor: Transaction,
    projectId: string,
    organizationId: string,
    lock: store.RowLock = this.#organizations.rowLock,
  ): Promise<store.OrganizationRow> {
    const row = await store.findOrganization(executor, projectId, organizationId, lock);
    if (row === undefined) throw new ApiError('resource_missing', `No organization ${organizationId}.`, { param: 'id' });
    return row;
  }

  #toInvitation(row: store.InvitationRow): Invitation {
    return {
      id: row.id,
      object: 'invitation',
      organization_id: row.organization_id,
      email: row.email,
      role: row.role,
      status: statusOf(row, isoTime(this.#clock.now())),
      expires_at: row.expires_at,
      accepted_at: row.accepted_at,
      accepted_user_id: row.accepted_user_id,
      revoked_at: row.revoked_at,
      created_at: row.created_at,
    };
  }

  #audited<T>(
    context: AuditContext,
    projectId: string,
    invitationId: string | null,
    action: AuditAction,
    change: () => Promise<T>,
  ): Promise<T> {
    return this.#audit.recordingRefusals(context, invitationRecord(projectId, invitationId, action), change);
  }
}

/** A pending invitation past its time shows as `expired`; nothing else changes its row. */
function statusOf(row: store.InvitationRow, nowIso: string): Invitation['status'] {
  return row.status === 'pending' && row.expires_at <= nowIso ? 'expired' : row.status;
}

function tokenInvalid(): ApiError {
  return new ApiError('token_invalid', 'This invitation token is unknown, was already used, or was replaced or revoked.', {
    param: 'token',
  });
}

function invitationRecord(projectId: string, invitationId: string | null, action: AuditAction): AuditRecord {
  return { projectId, action, resource: { type: 'invitation', id: invitationId } };
}
