import type { Dialect } from '../../db/database.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import { isoTime } from '../../lib/clock.js';
import type { DeliveryDependencies } from './webhooks.delivery.js';
import * as leases from './webhooks.leases.store.js';
import * as store from './webhooks.store.js';
import * as workers from './webhooks.workers.store.js';

/**
 * The leases of a worker run that died (docs/adr/0006-webhook-delivery.md, "Dead workers"): taken
 * back by the same identity at its restart (webhooks.worker-leasing.ts), or by any worker once its
 * heartbeat is stale (webhooks.worker-heartbeat.ts).
 */

/** What the delivery log says of an attempt whose worker died before recording its result. */
export const INTERRUPTED_ATTEMPT_ERROR =
  'interrupted: the worker stopped before recording a result; the request may or may not have reached the endpoint';

/**
 * At a worker's start: the deliveries it had leased under `workerId` in an earlier run that died
 * are made claimable at once (see `freeLeasesUnder`), and the heartbeat rows of those runs go.
 * Returns how many deliveries.
 */
export async function resumeWorkerLeases(deps: Pick<DeliveryDependencies, 'db' | 'clock'>, workerId: string): Promise<number> {
  const prefix = `${workerId}.`;
  return inTransaction(deps.db, async (trx) => {
    await workers.deleteWorkers(trx, { prefix });
    return freeLeasesUnder(trx, deps.db.dialect, prefix, isoTime(deps.clock.now()));
  });
}

/**
 * Takes over a dead worker run (its heartbeat older than `staleBefore`): deletes its heartbeat row
 * and frees its leases (see `freeLeasesUnder`) in one transaction. Undefined when the row has gone
 * or its heartbeat was renewed meanwhile: a live worker's leases are never taken.
 */
export async function takeOverDeadWorker(
  deps: Pick<DeliveryDependencies, 'db' | 'clock'>,
  workerRunId: string,
  staleBefore: string,
): Promise<number | undefined> {
  return inTransaction(deps.db, async (trx) => {
    if (!(await workers.deleteStaleWorker(trx, workerRunId, staleBefore))) return undefined;
    return freeLeasesUnder(trx, deps.db.dialect, `${workerRunId}.`, isoTime(deps.clock.now()));
  });
}

/**
 * Frees the pending deliveries leased under `prefix` by a worker that died, so they are claimable
 * at once, and gives each an attempt in its log for the send that may have happened (no status,
 * the error above): the log shows the possible repeat. Returns how many.
 */
async function freeLeasesUnder(trx: Transaction, dialect: Dialect, prefix: string, now: string): Promise<number> {
  const held = await leases.findLeasesUnder(trx, prefix, dialect);
  for (const row of held) await leases.releaseInterrupted(trx, row.id, now);
  await store.insertAttempts(
    trx,
    held.map((row) => ({
      delivery_id: row.id,
      attempt_number: row.attempt_count + 1,
      project_id: row.project_id,
      kind: 'scheduled' as const,
      created_at: now,
      status_code: null,
      latency_ms: 0,
      error: INTERRUPTED_ATTEMPT_ERROR,
      response_body: null,
    })),
    dialect,
  );
  return held.length;
}
