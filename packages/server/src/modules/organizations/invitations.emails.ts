import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { escapeHtml } from '../../lib/html.js';
import type { EmailComposer, OutgoingEmail } from '../email/email.service.js';
import type { ProjectsService } from '../projects/projects.service.js';
import * as store from './organizations.store.js';

export const INVITATION_TEMPLATE = 'organization_invitation';
const INVITATION_TOKEN_BYTES = 32;
/** 32 random bytes, base64url: what an invitation token looks like. */
export const INVITATION_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface InvitationEmailsOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly projects: ProjectsService;
  /** The application's page that accepts invitations, or undefined: then the email carries the token alone. */
  readonly acceptUrl: string | undefined;
}

/**
 * The composer of the invitation email. It creates the invitation's single-use token when the email
 * is about to be sent, stores only its SHA-256 on the invitation (a later token of the same
 * invitation, from a retried send, replaces it), and gives up when the invitation is no longer
 * pending: revoked, replaced by a re-invite, accepted, expired, or its organization deleted.
 */
export function invitationEmailComposers(options: InvitationEmailsOptions): Record<string, EmailComposer> {
  return {
    async [INVITATION_TEMPLATE](email) {
      const invitationId = email.data['invitation_id'];
      if (typeof invitationId !== 'string') return undefined;
      const issued = await inTransaction(options.db, async (trx) => {
        const invitation = await store.findInvitationById(trx, email.projectId, invitationId);
        const now = isoTime(options.clock.now());
        if (invitation === undefined || invitation.status !== 'pending' || invitation.expires_at <= now) return undefined;
        if (invitation.email !== email.recipient) return undefined;
        const organization = await store.findOrganization(trx, email.projectId, invitation.organization_id);
        if (organization === undefined) return undefined;
        const token = randomBytes(INVITATION_TOKEN_BYTES).toString('base64url');
        if (!(await store.setInvitationTokenHash(trx, email.projectId, invitation.id, sha256Hex(token), now))) return undefined;
        return { invitation, organization, token };
      });
      if (issued === undefined) return undefined;
      const project = await options.projects.getProject(email.projectId);
      return invitationEmail({
        to: issued.invitation.email,
        organizationName: issued.organization.name,
        projectName: project.name,
        role: issued.invitation.role,
        token: issued.token,
        link: options.acceptUrl === undefined ? undefined : withToken(options.acceptUrl, issued.token),
      });
    },
  };
}

function withToken(base: string, token: string): string {
  const url = new URL(base);
  url.searchParams.set('token', token);
  return url.toString();
}

function invitationEmail(input: {
  to: string;
  organizationName: string;
  projectName: string;
  role: string;
  token: string;
  link: string | undefined;
}): OutgoingEmail {
  const subject = `You are invited to join ${input.organizationName} on ${input.projectName}`;
  const action =
    input.link === undefined
      ? ['Sign in with this address and enter this invitation code:', '', input.token]
      : ['Sign in with this address and accept here:', '', input.link];
  const text = [
    'Hello,',
    '',
    `You are invited to join ${input.organizationName} on ${input.projectName} as ${input.role}.`,
    ...action,
    '',
    `The invitation is for ${input.to} only, works once and expires in 7 days. If you did not expect it, ignore this email.`,
  ].join('\n');
  const htmlAction =
    input.link === undefined
      ? `<p>Sign in with this address and enter this invitation code:</p><p><code>${escapeHtml(input.token)}</code></p>`
      : `<p><a href="${escapeHtml(input.link)}">Accept the invitation</a></p><p>Or paste this link into your browser: ${escapeHtml(input.link)}</p>`;
  const html = [
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body>`,
    '<p>Hello,</p>',
    `<p>You are invited to join ${escapeHtml(input.organizationName)} on ${escapeHtml(input.projectName)} as ${escapeHtml(input.role)}.</p>`,
    htmlAction,
    `<p>The invitation is for ${escapeHtml(input.to)} only, works once and expires in 7 days. If you did not expect it, ignore this email.</p>`,
    '</body></html>',
  ].join('');
  return { to: input.to, subject, text, html };
}
