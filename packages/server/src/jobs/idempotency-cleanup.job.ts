import type { Db } from '../db/database.js';
import { deleteExpiredIdempotencyKeys } from '../lib/idempotency.store.js';
import type { Clock } from '../lib/clock.js';
import type { PeriodicJob } from './scheduler.js';

const BATCH_SIZE = 1000;
/** Batches per run at the most, so one run never holds the database for long. */
const BATCHES_PER_RUN_MAX = 20;

/** Deletes idempotency keys past their 24-hour retention. Ledger keys (no expiry) are never touched. */
export function idempotencyCleanupJob(db: Db, clock: Clock): PeriodicJob {
  return {
    name: 'idempotency-cleanup',
    intervalMs: 60_000,
    async run() {
      for (let batch = 0; batch < BATCHES_PER_RUN_MAX; batch += 1) {
        if ((await deleteExpiredIdempotencyKeys(db.kysely, clock.now(), BATCH_SIZE)) < BATCH_SIZE) return;
      }
    },
  };
}
