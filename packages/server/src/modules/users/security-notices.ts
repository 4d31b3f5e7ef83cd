/**
 * Security notices: the email a user gets when a way into their account is added or their password
 * changes (docs/security.md, "Security notices"). If it was not them, this is how they learn of it
 * while there is still time to act. Queued in the change's transaction through the email outbox,
 * like every email, so a notice exists if and only if the change committed.
 */
import type { Transaction } from '../../db/transaction.js';
import { escapeHtml } from '../../lib/html.js';
import { type EmailComposer, type OutgoingEmail, queueEmail } from '../email/email.service.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { UsersService } from './users.service.js';

export const SECURITY_NOTICE_TEMPLATE = 'security_notice';

/** What changed; never anything secret (the outbox row is stored as it is). */
export type SecurityChange = 'passkey_added' | 'totp_enabled' | 'password_changed' | 'password_reset';

const WHAT_CHANGED: Readonly<Record<SecurityChange, string>> = {
  passkey_added: 'A passkey was added to',
  totp_enabled: 'An authenticator app was turned on as a second factor for',
  password_changed: 'The password was changed for',
  password_reset: 'The password was reset, with a link sent by email, for',
};

/** Queues the notice in the caller's transaction: it goes out after the change commits, never before. */
export async function queueSecurityNotice(
  trx: Transaction,
  input: { projectId: string; user: { readonly id: string; readonly email: string }; change: SecurityChange; changedAt: string },
): Promise<void> {
  await queueEmail(trx, {
    projectId: input.projectId,
    template: SECURITY_NOTICE_TEMPLATE,
    recipient: input.user.email,
    data: { user_id: input.user.id, change: input.change, changed_at: input.changedAt },
    now: input.changedAt,
  });
}

/** The composer of security notices; it drops the notice of a user deleted meanwhile. */
export function securityNoticeComposers(options: {
  users: UsersService;
  projects: Pick<ProjectsService, 'getProject'>;
}): Record<string, EmailComposer> {
  return {
    async [SECURITY_NOTICE_TEMPLATE](email) {
      const { user_id: userId, change, changed_at: changedAt } = email.data;
      if (typeof userId !== 'string' || typeof changedAt !== 'string' || !isSecurityChange(change)) return undefined;
      const user = await options.users.findRecord(email.projectId, userId);
      if (user === undefined) return undefined;
      const project = await options.projects.getProject(email.projectId);
      return securityNotice({ to: email.recipient, name: user.name, projectName: project.name, change, changedAt });
    },
  };
}

function isSecurityChange(value: unknown): value is SecurityChange {
  return typeof value === 'string' && Object.hasOwn(WHAT_CHANGED, value);
}

/** `2026-11-27T12:00:05.123Z` → `2026-11-27 at 12:00 UTC`: the recipient's clock may be anywhere. */
function whenText(changedAt: string): string {
  return `${changedAt.slice(0, 10)} at ${changedAt.slice(11, 16)} UTC`;
}

function securityNotice(input: {
  to: string;
  name: string;
  projectName: string;
  change: SecurityChange;
  changedAt: string;
}): OutgoingEmail {
  const subject = `Security notice for your ${input.projectName} account`;
  const greeting = input.name.trim() === '' ? 'Hello,' : `Hello ${input.name.trim()},`;
  const what = `${WHAT_CHANGED[input.change]} your ${input.projectName} account (${input.to}) on ${whenText(input.changedAt)}.`;
  const ifYou = 'If this was you, there is nothing to do.';
  const ifNot =
    `If it was not you, someone else may have access to your account: reset your password now, ` +
    `and contact ${input.projectName}'s support.`;
  const text = [greeting, '', what, '', ifYou, ifNot].join('\n');
  const html =
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body>` +
    [greeting, what, ifYou, ifNot].map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join('') +
    '</body></html>';
  return { to: input.to, subject, text, html };
}
