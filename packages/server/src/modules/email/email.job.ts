import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import type { EmailComposer, OutgoingEmail, QueuedEmail } from './email.service.js';
import * as store from './email.store.js';
import type { EmailTransport } from './email.transport.js';

/**
 * Seconds to wait after each failed attempt before the next one; its length plus one is the number
 * of attempts. About 15 hours in all, so an SMTP outage of an afternoon loses no email.
 */
export const EMAIL_RETRY_DELAYS_SECONDS: readonly number[] = [30, 120, 600, 1800, 3600, 7200, 14_400, 28_800];
export const EMAIL_ATTEMPTS_MAX = EMAIL_RETRY_DELAYS_SECONDS.length + 1;
/** How long a worker holds an email it is sending; longer than the worst SMTP conversation (50 s). */
const EMAIL_LEASE_MS = 2 * 60 * 1000;
const BATCH_SIZE = 20;
/** Batches per run at the most, so one run never holds the worker for long. */
const BATCHES_PER_RUN_MAX = 10;
const ERROR_LENGTH_MAX = 500;

export const EMAIL_JOB_NAME = 'email-outbox';

export interface EmailJobOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly transport: EmailTransport;
  /** Template name → composer. An email whose template has no composer fails at once. */
  readonly composers: Readonly<Record<string, EmailComposer>>;
  readonly intervalMs?: number;
}

/**
 * Sends the emails of the outbox: each due email is claimed (one worker per email, across
 * processes), composed (its token, if any, committed), then handed to the transport. A failure is
 * retried later (EMAIL_RETRY_DELAYS_SECONDS); a request never waits for an SMTP server, and a
 * failing one never loses an email.
 */
export function emailOutboxJob(options: EmailJobOptions): PeriodicJob {
  const { db, clock, logger, transport } = options;

  async function compose(email: store.EmailRow): Promise<OutgoingEmail | undefined> {
    const composer = options.composers[email.template];
    if (composer === undefined) throw new Error(`no composer for email template "${email.template}"`);
    const queued: QueuedEmail = {
      id: email.id,
      projectId: email.project_id,
      template: email.template,
      recipient: email.recipient,
      data: JSON.parse(email.data) as Record<string, unknown>,
    };
    return composer(queued);
  }

  async function attempt(email: store.EmailRow, attemptNumber: number): Promise<void> {
    try {
      const message = await compose(email);
      if (message === undefined) {
        await store.settleEmail(db.kysely, email.id, { status: 'cancelled', reason: 'no longer needed' });
        return;
      }
      await transport.send(message, email.id);
      await store.settleEmail(db.kysely, email.id, { status: 'sent', at: isoTime(clock.now()) });
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).slice(0, ERROR_LENGTH_MAX);
      const delaySeconds = EMAIL_RETRY_DELAYS_SECONDS[attemptNumber - 1];
      if (delaySeconds === undefined) {
        logger.error({ email_id: email.id, attempt: attemptNumber, error: reason }, 'email failed for good after its last attempt');
        await store.settleEmail(db.kysely, email.id, { status: 'failed', error: reason });
        return;
      }
      const nextAttemptAt = isoTime(addMilliseconds(clock.now(), delaySeconds * 1000));
      logger.warn(
        { email_id: email.id, attempt: attemptNumber, error: reason, next_attempt_at: nextAttemptAt },
        'email not sent; will retry',
      );
      await store.settleEmail(db.kysely, email.id, { status: 'pending', error: reason, nextAttemptAt });
    }
  }

  return {
    name: EMAIL_JOB_NAME,
    intervalMs: options.intervalMs ?? 1000,
    async run() {
      for (let batch = 0; batch < BATCHES_PER_RUN_MAX; batch += 1) {
        const now = clock.now();
        const due = await store.findDueEmails(db.kysely, isoTime(now), BATCH_SIZE);
        for (const email of due) {
          const attemptNumber = await store.claimEmail(db.kysely, email, isoTime(now), isoTime(addMilliseconds(now, EMAIL_LEASE_MS)));
          if (attemptNumber !== undefined) await attempt(email, attemptNumber);
        }
        if (due.length < BATCH_SIZE) return;
      }
    },
  };
}
