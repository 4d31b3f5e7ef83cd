import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { EmailTokenPurpose } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { escapeHtml } from '../../lib/html.js';
import type { EmailComposer, OutgoingEmail, QueuedEmail } from '../email/email.service.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { UserRecord, UsersService } from '../users/users.service.js';
import { insertEmailToken } from './email-tokens.store.js';

export const VERIFY_EMAIL_TEMPLATE = 'verify_email';
export const PASSWORD_RESET_TEMPLATE = 'password_reset';

/** Verification links live 24 hours, reset links 1 hour (docs/api.md section 4). */
export const EMAIL_TOKEN_TTL_MS: Readonly<Record<EmailTokenPurpose, number>> = {
  verify_email: 24 * 60 * 60 * 1000,
  password_reset: 60 * 60 * 1000,
};
const EMAIL_TOKEN_BYTES = 32;
export const EMAIL_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface AuthEmailsOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly users: UsersService;
  readonly projects: ProjectsService;
  /** The service's public base address, for the verification link. */
  readonly publicUrl: string;
  /** The application's reset page, or undefined: then the email carries the token alone. */
  readonly passwordResetUrl: string | undefined;
}

/**
 * The composers of the verification and reset emails. Each creates its single-use token when the
 * email is about to be sent, so the outbox row never holds a secret, and gives up (undefined) when
 * the email is no longer wanted.
 */
export function authEmailComposers(options: AuthEmailsOptions): Record<string, EmailComposer> {
  async function issueToken(email: QueuedEmail, purpose: EmailTokenPurpose, wanted: (user: UserRecord) => boolean) {
    const userId = email.data['user_id'];
    if (typeof userId !== 'string') return undefined;
    return inTransaction(options.db, async (trx) => {
      const user = await options.users.findRecord(email.projectId, userId, trx);
      if (user === undefined || user.email !== email.recipient || !wanted(user)) return undefined;
      const now = options.clock.now();
      const token = randomBytes(EMAIL_TOKEN_BYTES).toString('base64url');
      await insertEmailToken(trx, {
        token_hash: sha256Hex(token),
        project_id: user.project_id,
        user_id: user.id,
        purpose,
        email: user.email,
        expires_at: isoTime(addMilliseconds(now, EMAIL_TOKEN_TTL_MS[purpose])),
        used_at: null,
        created_at: isoTime(now),
      });
      return { user, token };
    });
  }

  return {
    async [VERIFY_EMAIL_TEMPLATE](email) {
      const issued = await issueToken(email, 'verify_email', (user) => user.email_verified_at === null && user.banned_at === null);
      if (issued === undefined) return undefined;
      const project = await options.projects.getProject(email.projectId);
      const link = `${options.publicUrl}/v1/auth/verify-email?token=${issued.token}`;
      return verificationEmail({ to: issued.user.email, name: issued.user.name, projectName: project.name, link });
    },
    async [PASSWORD_RESET_TEMPLATE](email) {
      const issued = await issueToken(email, 'password_reset', (user) => user.banned_at === null);
      if (issued === undefined) return undefined;
      const project = await options.projects.getProject(email.projectId);
      const link = options.passwordResetUrl === undefined ? undefined : withToken(options.passwordResetUrl, issued.token);
      return resetEmail({ to: issued.user.email, name: issued.user.name, projectName: project.name, token: issued.token, link });
    },
  };
}

function withToken(base: string, token: string): string {
  const url = new URL(base);
  url.searchParams.set('token', token);
  return url.toString();
}

function greeting(name: string): string {
  return name.trim() === '' ? 'Hello,' : `Hello ${name.trim()},`;
}

function verificationEmail(input: { to: string; name: string; projectName: string; link: string }): OutgoingEmail {
  const subject = `Verify your email for ${input.projectName}`;
  const text = [
    greeting(input.name),
    '',
    `Confirm that ${input.to} is your address for ${input.projectName} by opening this link:`,
    '',
    input.link,
    '',
    'The link works once and expires in 24 hours. If you did not sign up, ignore this email.',
  ].join('\n');
  const html = page(subject, [
    `<p>${escapeHtml(greeting(input.name))}</p>`,
    `<p>Confirm that ${escapeHtml(input.to)} is your address for ${escapeHtml(input.projectName)}:</p>`,
    `<p><a href="${escapeHtml(input.link)}">Verify my email</a></p>`,
    `<p>Or paste this link into your browser: ${escapeHtml(input.link)}</p>`,
    '<p>The link works once and expires in 24 hours. If you did not sign up, ignore this email.</p>',
  ]);
  return { to: input.to, subject, text, html };
}

function resetEmail(input: { to: string; name: string; projectName: string; token: string; link: string | undefined }): OutgoingEmail {
  const subject = `Reset your password for ${input.projectName}`;
  const action =
    input.link === undefined
      ? ['Enter this code where you asked to reset your password:', '', input.token]
      : ['Choose a new password here:', '', input.link];
  const text = [
    greeting(input.name),
    '',
    `Someone asked to reset the password of ${input.to} for ${input.projectName}.`,
    ...action,
    '',
    'It works once and expires in 1 hour. If you did not ask for this, ignore this email: your password stays as it is.',
  ].join('\n');
  const htmlAction =
    input.link === undefined
      ? `<p>Enter this code where you asked to reset your password:</p><p><code>${escapeHtml(input.token)}</code></p>`
      : `<p><a href="${escapeHtml(input.link)}">Choose a new password</a></p>`;
  const html = page(subject, [
    `<p>${escapeHtml(greeting(input.name))}</p>`,
    `<p>Someone asked to reset the password of ${escapeHtml(input.to)} for ${escapeHtml(input.projectName)}.</p>`,
    htmlAction,
    '<p>It works once and expires in 1 hour. If you did not ask for this, ignore this email: your password stays as it is.</p>',
  ]);
  return { to: input.to, subject, text, html };
}

function page(title: string, body: readonly string[]): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body.join('')}</body></html>`;
}
