import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { DeliveryRow } from './webhooks.store.js';

type Executor = Kysely<Database>;

// The worker's leases on deliveries (docs/adr/0006-webhook-delivery.md): the claim of due
// deliveries, leasing and giving leases back, what sending needs of a leased delivery, and a
// dead worker's leases. The rows themselves are written by webhooks.store.ts.

/**
 * Pending deliveries due at `now` whose lease is free or has expired, of enabled endpoints, oldest
 * due first. Across projects: this is the worker's queue. With `skipLocked` (PostgreSQL, inside the
 * claiming transaction) rows another worker is claiming at this moment are passed over.
 *
 * One table in the outer query, ordered like the partial index on pending rows: even with stale
 * statistics (a burst into a new database) the planner walks that index and stops at `limit`. A
 * join to the endpoints there made it sort the whole backlog on every claim instead.
 */
export async function findDueDeliveries(
  db: Executor,
  options: { readonly now: string; readonly limit: number; readonly excludedEndpointIds: readonly string[]; readonly skipLocked: boolean },
): Promise<Pick<DeliveryRow, 'id' | 'endpoint_id'>[]> {
  let query = db
    .selectFrom('webhook_deliveries')
    .select(['id', 'endpoint_id'])
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', options.now)
    .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<=', options.now)]))
    .where('endpoint_id', 'not in', (eb) => eb.selectFrom('webhook_endpoints').select('id').where('enabled', '=', 0));
  if (options.excludedEndpointIds.length > 0) query = query.where('endpoint_id', 'not in', options.excludedEndpointIds);
  query = query.orderBy('next_attempt_at').limit(options.limit);
  return (options.skipLocked ? query.forUpdate().skipLocked() : query).execute();
}

export async function leaseDeliveries(db: Executor, deliveryIds: readonly string[], leaseId: string, leasedUntil: string): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db.updateTable('webhook_deliveries').set({ lease_id: leaseId, leased_until: leasedUntil }).where('id', 'in', deliveryIds).execute();
}

/**
 * Gives back leases a worker took but will not use (it is stopping, or too little of the lease is
 * left to send safely), so the deliveries can be claimed again at once instead of after expiry.
 * Only rows still held under that lease change.
 */
export async function releaseLeases(db: Executor, deliveryIds: readonly string[], leaseId: string): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db
    .updateTable('webhook_deliveries')
    .set({ lease_id: null, leased_until: null })
    .where('id', 'in', deliveryIds)
    .where('lease_id', '=', leaseId)
    .execute();
}

/** Pending deliveries across the database, for the metrics gauge (the partial index on pending rows serves it). */
export async function countPendingDeliveries(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** What sending needs: the delivery, its endpoint's URL and secrets. By id, across projects. */
export async function findDeliveryTargets(db: Executor, deliveryIds: readonly string[]) {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select([
      'd.id',
      'd.project_id',
      'd.endpoint_id',
      'd.event_id',
      'e.url',
      'e.secret',
      'e.previous_secret',
      'e.secret_sealed',
      'e.previous_secret_sealed',
      'e.previous_secret_expires_at',
      'e.rate_limit_per_second',
    ])
    .where('d.id', 'in', deliveryIds)
    .execute();
}

/**
 * The pending deliveries leased under a lease-id prefix (lease ids are `<worker run>.<random>`, and
 * a worker run's id starts with its identity), locked on PostgreSQL: what a dead worker held. It
 * walks the pending deliveries: it runs once per dead worker, never on the claim's path.
 */
export async function findLeasesUnder(
  db: Executor,
  prefix: string,
  dialect: Dialect,
): Promise<Pick<DeliveryRow, 'id' | 'project_id' | 'attempt_count'>[]> {
  const query = db
    .selectFrom('webhook_deliveries')
    .select(['id', 'project_id', 'attempt_count'])
    .where('status', '=', 'pending')
    .where('leased_until', 'is not', null)
    .where(sql<string>`substr(lease_id, 1, ${sql.lit(prefix.length)})`, '=', prefix)
    .orderBy('id');
  return dialect === 'postgres' ? query.forUpdate().execute() : query.execute();
}

/** Frees a delivery's lease and counts one more attempt (the interrupted one, logged beside it). */
export async function releaseInterrupted(db: Executor, deliveryId: string, now: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ lease_id: null, leased_until: null, attempt_count: eb('attempt_count', '+', 1), updated_at: now }))
    .where('id', '=', deliveryId)
    .execute();
}
