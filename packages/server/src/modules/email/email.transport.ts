import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTransport, type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Logger } from 'pino';
import type { EmailConfig } from '../../config.js';
import type { OutgoingEmail } from './email.service.js';

/** Where composed emails go. `send` resolves once the message is accepted, or throws. */
export interface EmailTransport {
  readonly kind: 'smtp' | 'file';
  send(email: OutgoingEmail, emailId: string): Promise<void>;
  close(): void;
}

/** Bounds on one SMTP conversation, so a stalled server holds the email job only this long. */
const SMTP_CONNECTION_TIMEOUT_MS = 10_000;
const SMTP_GREETING_TIMEOUT_MS = 10_000;
const SMTP_SOCKET_TIMEOUT_MS = 30_000;

/** SMTP through nodemailer, to `SMTP_URL` (`smtp://user:pass@host:587`, `smtps://…:465`). */
export class SmtpTransport implements EmailTransport {
  readonly kind = 'smtp';
  readonly #transporter: Transporter<SMTPTransport.SentMessageInfo>;
  readonly #from: string;

  constructor(options: { url: string; from: string }) {
    this.#transporter = createTransport({
      url: options.url,
      connectionTimeout: SMTP_CONNECTION_TIMEOUT_MS,
      greetingTimeout: SMTP_GREETING_TIMEOUT_MS,
      socketTimeout: SMTP_SOCKET_TIMEOUT_MS,
    });
    this.#from = options.from;
  }

  async send(email: OutgoingEmail, emailId: string): Promise<void> {
    await this.#transporter.sendMail({
      from: this.#from,
      to: email.to,
      subject: email.subject,
      text: email.text,
      html: email.html,
      headers: { 'X-Svc-Email-Id': emailId },
    });
  }

  close(): void {
    this.#transporter.close();
  }
}

/**
 * Without `SMTP_URL` (development): each email becomes a readable text file in `DATA_DIR/outbox/`
 * and one log line naming it. The log line carries no body: a body holds a single-use token, and
 * tokens never go to logs; the file, on the developer's own disk, is where the link is.
 */
export class FileTransport implements EmailTransport {
  readonly kind = 'file';
  readonly #directory: string;
  readonly #from: string;
  readonly #logger: Logger;

  constructor(options: { directory: string; from: string; logger: Logger }) {
    this.#directory = options.directory;
    this.#from = options.from;
    this.#logger = options.logger;
  }

  async send(email: OutgoingEmail, emailId: string): Promise<void> {
    await mkdir(this.#directory, { recursive: true });
    const file = join(this.#directory, `${emailId}.txt`);
    const content = [
      `From: ${this.#from}`,
      `To: ${email.to}`,
      `Subject: ${email.subject}`,
      `X-Svc-Email-Id: ${emailId}`,
      '',
      email.text,
    ].join('\n');
    await writeFile(file, content, { encoding: 'utf8', mode: 0o600 });
    this.#logger.info(
      { email_id: emailId, to: email.to, subject: email.subject, file },
      'email written to the outbox directory (SMTP_URL is not set)',
    );
  }

  close(): void {
    // Nothing to release.
  }
}

export function createEmailTransport(config: { email: EmailConfig; dataDir: string }, logger: Logger): EmailTransport {
  if (config.email.smtpUrl !== undefined) return new SmtpTransport({ url: config.email.smtpUrl, from: config.email.from });
  return new FileTransport({ directory: join(config.dataDir, 'outbox'), from: config.email.from, logger });
}
