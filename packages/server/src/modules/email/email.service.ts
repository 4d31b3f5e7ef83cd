import type { Transaction } from '../../db/transaction.js';
import { newId } from '../../lib/ids.js';
import * as store from './email.store.js';

// The outbox job and the transports, for the module that wires email (modules/auth/auth.module.ts).
export { emailOutboxJob } from './email.job.js';
export { createEmailTransport, type EmailTransport } from './email.transport.js';

/** A message ready to hand to a transport. */
export interface OutgoingEmail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** An email waiting in the outbox, as a composer sees it. */
export interface QueuedEmail {
  readonly id: string;
  readonly projectId: string;
  readonly template: string;
  readonly recipient: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * Turns a queued email into a message, just before it is sent. A composer may write to the
 * database, in a transaction of its own that it commits before returning (a verification email
 * creates its single-use token then, and stores only its hash). It returns undefined when the email
 * should no longer go out: the user was deleted, or the address was verified meanwhile.
 */
export type EmailComposer = (email: QueuedEmail) => Promise<OutgoingEmail | undefined>;

export interface QueueEmailInput {
  readonly projectId: string;
  /** The composer that will write it, by name. */
  readonly template: string;
  readonly recipient: string;
  /** What the composer needs; never a secret, since it is stored as it is. */
  readonly data: Readonly<Record<string, string>>;
  readonly now: string;
}

/**
 * Puts an email in the outbox, in the caller's transaction: it is sent if and only if the change
 * that asked for it commits, and after that commit (side effects leave through the outbox, docs/architecture.md). Returns the email's id.
 */
export async function queueEmail(trx: Transaction, input: QueueEmailInput): Promise<string> {
  const id = newId('eml');
  await store.insertEmail(trx, {
    id,
    project_id: input.projectId,
    template: input.template,
    recipient: input.recipient,
    data: JSON.stringify(input.data),
    status: 'pending',
    attempts: 0,
    next_attempt_at: input.now,
    locked_until: null,
    last_error: null,
    created_at: input.now,
    sent_at: null,
  });
  return id;
}
