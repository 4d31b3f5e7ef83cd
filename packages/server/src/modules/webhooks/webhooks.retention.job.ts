import type { Db } from '../../db/database.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { deleteDispatchedEventsBefore } from '../events/event-log.service.js';

/** Events per DELETE; each takes its deliveries and their attempts with it (ON DELETE CASCADE). */
const BATCH_SIZE = 500;
/** Batches per run at the most, so one run never holds the database for long. */
const BATCHES_PER_RUN_MAX = 20;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes events older than `EVENT_RETENTION_DAYS` (default 30) with their webhook deliveries and
 * attempts. Events not yet fanned out are kept whatever their age, so retention never loses a
 * delivery that was not even created.
 */
export function eventRetentionJob(db: Db, clock: Clock, retentionDays: number): PeriodicJob {
  return {
    name: 'event-retention',
    intervalMs: 60 * 60 * 1000,
    async run() {
      const cutoff = isoTime(new Date(clock.now().getTime() - retentionDays * DAY_MS));
      for (let batch = 0; batch < BATCHES_PER_RUN_MAX; batch += 1) {
        if ((await deleteDispatchedEventsBefore(db, cutoff, BATCH_SIZE)) < BATCH_SIZE) return;
      }
    },
  };
}
