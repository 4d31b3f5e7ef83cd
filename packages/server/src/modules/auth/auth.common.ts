/**
 * What the auth service's flows share (auth.service.ts and auth.email-flows.ts): the audit record of
 * an action on a user, and the cap on an address as an audit entry shows it.
 */
import type { AuditRecord } from '../audit/audit.service.js';

/** An address tried at log in or forgot, as the audit entry keeps it: at most the longest valid address. */
export const EMAIL_SHOWN_LENGTH_MAX = 254;

export function userRecord(projectId: string, userId: string | null, action: AuditRecord['action']): AuditRecord {
  return { projectId, action, resource: { type: 'user', id: userId } };
}
