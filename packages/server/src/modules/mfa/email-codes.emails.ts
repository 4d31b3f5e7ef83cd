import type { EmailComposer, OutgoingEmail } from '../email/email.service.js';
import { escapeHtml } from '../../lib/html.js';
import type { ProjectsService } from '../projects/projects.service.js';
import { EMAIL_CODE_TEMPLATE, type EmailCodesService } from './email-codes.service.js';

/** The sign-in code email; its code is made when the email is composed, so the outbox never holds it. */
export function emailCodeComposers(codes: EmailCodesService, projects: ProjectsService): Record<string, EmailComposer> {
  return {
    async [EMAIL_CODE_TEMPLATE](email) {
      const issued = await codes.issueCode(email.projectId, email.data);
      if (issued === undefined) return undefined;
      const project = await projects.getProject(email.projectId);
      return codeEmail({ to: email.recipient, projectName: project.name, code: issued.code, ttlMinutes: issued.ttlMinutes });
    },
  };
}

function codeEmail(input: { to: string; projectName: string; code: string; ttlMinutes: number }): OutgoingEmail {
  // Never the code in the subject: transports log subjects.
  const subject = `Your sign-in code for ${input.projectName}`;
  const expiry = `It works once and expires in ${input.ttlMinutes} minutes. If you did not ask for it, ignore this email.`;
  const text = [`Your code to sign in to ${input.projectName} as ${input.to}:`, '', input.code, '', expiry].join('\n');
  const html =
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body>` +
    `<p>Your code to sign in to ${escapeHtml(input.projectName)} as ${escapeHtml(input.to)}:</p>` +
    `<p style="font-size:1.5em;letter-spacing:0.2em"><strong>${escapeHtml(input.code)}</strong></p>` +
    `<p>${escapeHtml(expiry)}</p></body></html>`;
  return { to: input.to, subject, text, html };
}
