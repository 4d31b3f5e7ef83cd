import type { Db } from '../../db/database.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { deleteExpired } from './mfa.store.js';

const CLEANUP_INTERVAL_MS = 10 * 60 * 1000;
/** Rows kept a day past their expiry: the audit log, not these rows, is the record of sign-ins. */
const KEPT_AFTER_EXPIRY_MS = 24 * 60 * 60 * 1000;
/** Rows of each table deleted per run at most, so that one run never holds the database for long. */
const DELETED_PER_RUN_MAX = 5_000;

/** Deletes MFA tokens and email codes a day after they expired. */
export function mfaCleanupJob(options: { db: Db; clock: Clock }): PeriodicJob {
  return {
    name: 'mfa-cleanup',
    intervalMs: CLEANUP_INTERVAL_MS,
    async run() {
      await deleteExpired(options.db.kysely, isoTime(addMilliseconds(options.clock.now(), -KEPT_AFTER_EXPIRY_MS)), DELETED_PER_RUN_MAX);
    },
  };
}
