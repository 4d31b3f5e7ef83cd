import type { Transaction } from '../../db/transaction.js';
import { isApiError } from '../../lib/errors.js';
import type { AuditContext, AuditService } from '../audit/audit.service.js';
import { addMemberInTransaction } from '../organizations/organizations.service.js';

/**
 * Just-in-time membership for an SSO sign-in, in the sign-in's transaction: the organizations
 * module's own membership rule (`addMemberInTransaction`: the row, its
 * `organization.member.added` event and its audit entry), where an existing membership is kept as
 * it is (its role may have been changed since; SSO never changes it back). Returns true when the
 * membership was created.
 */
export async function ensureMemberInTransaction(
  trx: Transaction,
  audit: AuditService,
  input: { projectId: string; organizationId: string; userId: string; role: string; now: string; context: AuditContext },
): Promise<boolean> {
  try {
    await addMemberInTransaction(trx, audit, input);
    return true;
  } catch (error) {
    // Raised after a read, before any write: the transaction is still usable.
    if (isApiError(error) && error.code === 'organization_member_exists') return false;
    throw error;
  }
}
