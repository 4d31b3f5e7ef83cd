import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

type Executor = Kysely<Database>;

// The delivery workers' heartbeat rows (docs/adr/0006-webhook-delivery.md, "Dead workers"). A
// handful of rows, one per running worker process; the leases they hold are in
// webhooks.leases.store.ts.

export interface WorkerRow {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly started_at: string;
  readonly last_seen: string;
}

export async function insertWorker(db: Executor, row: WorkerRow): Promise<void> {
  await db.insertInto('webhook_workers').values(row).execute();
}

/** Renews a worker's heartbeat. False when its row is gone: another worker took it for dead. */
export async function renewWorker(db: Executor, id: string, now: string): Promise<boolean> {
  const result = await db.updateTable('webhook_workers').set({ last_seen: now }).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Workers whose last heartbeat is older than `staleBefore`, other than `selfId`. */
export async function findStaleWorkers(db: Executor, staleBefore: string, selfId: string): Promise<Pick<WorkerRow, 'id' | 'last_seen'>[]> {
  return db
    .selectFrom('webhook_workers')
    .select(['id', 'last_seen'])
    .where('last_seen', '<', staleBefore)
    .where('id', '!=', selfId)
    .orderBy('id')
    .execute();
}

/**
 * Deletes a worker's row only if its heartbeat is still older than `staleBefore`: a heartbeat that
 * committed meanwhile keeps it (on PostgreSQL the DELETE waits for that UPDATE and checks the row
 * again). True when deleted, so the caller may take over its leases in the same transaction.
 */
export async function deleteStaleWorker(db: Executor, id: string, staleBefore: string): Promise<boolean> {
  const result = await db.deleteFrom('webhook_workers').where('id', '=', id).where('last_seen', '<', staleBefore).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Deletes the rows whose id starts with `prefix` (a restarted worker's earlier runs), or `id` exactly. */
export async function deleteWorkers(db: Executor, match: { readonly id: string } | { readonly prefix: string }): Promise<void> {
  if ('id' in match) {
    await db.deleteFrom('webhook_workers').where('id', '=', match.id).execute();
    return;
  }
  const workers = await db.selectFrom('webhook_workers').select('id').execute();
  const ids = workers.map((worker) => worker.id).filter((id) => id.startsWith(match.prefix));
  if (ids.length > 0) await db.deleteFrom('webhook_workers').where('id', 'in', ids).execute();
}
