import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import type { PeriodicJob } from '../../jobs/scheduler.js';
import { addMilliseconds, type Clock, isoTime } from '../../lib/clock.js';
import { removeExpiredPrefix, sealAll } from './audit.chain.js';
import type { AuditLedgerSource } from './audit.ledger.js';
import * as store from './audit.store.js';

/** How often unsealed entries are chained: the lag before an entry has its hash. */
export const AUDIT_SEAL_INTERVAL_MS = 1000;
const RETENTION_INTERVAL_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Chains every project's new entries (docs/adr/0007-audit-log.md). */
export function auditSealJob(db: Db, clock: Clock, ledger: AuditLedgerSource): PeriodicJob {
  return {
    name: 'audit-seal',
    intervalMs: AUDIT_SEAL_INTERVAL_MS,
    async run() {
      await sealAll(db, ledger, () => isoTime(clock.now()));
    },
  };
}

/**
 * Removes entries older than `AUDIT_RETENTION_DAYS`, a whole sealed prefix at a time per project,
 * keeping a checkpoint hash so the rest still verifies.
 */
export function auditRetentionJob(deps: {
  db: Db;
  clock: Clock;
  logger: Logger;
  retentionDays: number;
  ledger: AuditLedgerSource;
}): PeriodicJob {
  const { db, clock, logger } = deps;
  return {
    name: 'audit-retention',
    intervalMs: RETENTION_INTERVAL_MS,
    async run() {
      const now = clock.now();
      const cutoff = isoTime(addMilliseconds(now, -deps.retentionDays * DAY_MS));
      for (const projectId of await store.projectIds(db.kysely)) {
        const result = await removeExpiredPrefix(db, deps.ledger, projectId, cutoff, isoTime(now));
        if (result.removed > 0) logger.info({ project_id: projectId, removed: result.removed }, 'audit retention removed old entries');
        if (result.stoppedAt !== undefined) {
          logger.error(
            { project_id: projectId, seq: result.stoppedAt.seq },
            'audit retention stopped at a link that does not verify; run `svc audit verify`',
          );
        }
      }
    },
  };
}
