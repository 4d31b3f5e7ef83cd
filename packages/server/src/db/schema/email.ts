/** The email module's table (modules/email): emails waiting to be sent. */
export interface EmailDatabase {
  email_outbox: EmailOutboxTable;
}

export type EmailStatus = 'pending' | 'sent' | 'failed' | 'cancelled';

/**
 * Emails to send, written in the transaction of the change that asks for them and sent after the
 * commit by the email job. A row holds no secret: a template that needs a token (verification,
 * password reset) creates it when the email is composed, just before it is sent.
 */
export interface EmailOutboxTable {
  /** `eml_…`. */
  id: string;
  project_id: string;
  template: string;
  recipient: string;
  /** JSON object the template reads, e.g. `{user_id}`. */
  data: string;
  status: EmailStatus;
  attempts: number;
  next_attempt_at: string;
  /** A worker that claimed the row holds it until this time; after it, another may take it over. */
  locked_until: string | null;
  /** The last failure, short and without secrets. */
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}
