import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { DeliveryRow } from './webhooks.store.js';

type Executor = Kysely<Database>;

/** The queries of a recovery (webhooks.recovery.ts). */

/** This endpoint's deliveries of these events (a recovery's page). */
export async function findEndpointDeliveriesOfEvents(
  db: Executor,
  endpointId: string,
  eventIds: readonly string[],
): Promise<Pick<DeliveryRow, 'id' | 'event_id' | 'status' | 'leased_until'>[]> {
  if (eventIds.length === 0) return [];
  return db
    .selectFrom('webhook_deliveries')
    .select(['id', 'event_id', 'status', 'leased_until'])
    .where('endpoint_id', '=', endpointId)
    .where('event_id', 'in', eventIds)
    .execute();
}

/**
 * Makes a delivery that was not delivered due again at `nextAttemptAt` with a fresh schedule,
 * unless it succeeded or is in flight (leased) meanwhile. Returns whether it changed.
 */
export async function reopenDelivery(
  db: Executor,
  deliveryId: string,
  change: { readonly nextAttemptAt: string; readonly now: string },
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', scheduled_attempt_count: 0, next_attempt_at: change.nextAttemptAt, updated_at: change.now })
    .where('id', '=', deliveryId)
    .where('status', '!=', 'succeeded')
    .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<=', change.now)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
