import type { Db } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import { isoTime, parseTimeParam } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { findEventsSince } from '../events/event-log.service.js';
import { EVENT_TYPES } from '../events/events.service.js';
import * as recoveryStore from './webhooks.recovery.store.js';
import * as store from './webhooks.store.js';

/**
 * Recovery (`POST /v1/webhooks/{id}/recover`, docs/api.md section 4): every event since a time
 * that the endpoint subscribes to (its subscription now) and that was not delivered to it is made
 * due again, in event order.
 *
 * - An event with no delivery to the endpoint (it was switched off, or subscribed later) gets one.
 * - A delivery that failed, or is pending a later retry, is due again at once with a fresh
 *   schedule (its attempt numbers go on); one in flight (leased) or succeeded is left alone.
 * - Each re-opened or new delivery is due at its event's time, which is in the past: the worker's
 *   queue is ordered by that time, so they are sent before newer work and in event order.
 * - Events addressed to single endpoints (`webhook.test`, `webhook_endpoint.disabled`) are only
 *   re-sent where they were addressed, never given to another endpoint.
 *
 * Pages of `PAGE_SIZE` events, each in its own transaction: a recovery of a month does not hold
 * one long transaction. A repeat is harmless (a delivery per (event, endpoint) is unique).
 */

const PAGE_SIZE = 500;
/** Event types addressed to particular endpoints rather than to subscribers. */
const ADDRESSED_TYPES: ReadonlySet<string> = new Set(['webhook.test', 'webhook_endpoint.disabled']);

export interface Recovery {
  readonly object: 'recovery';
  /** Deliveries made due again or created. */
  readonly deliveries: number;
}

/**
 * `since` as an ISO time to recover from: not in the future, and within the event retention
 * (older events are deleted, so nothing could be recovered from before it). Refusals are 400
 * `parameter_invalid` on `since`.
 */
export function checkRecoverySince(since: string, now: Date, retentionDays: number): string {
  const time = parseTimeParam(since, 'since');
  if (time > now.getTime()) throw new ApiError('parameter_invalid', 'since is in the future.', { param: 'since' });
  if (time < now.getTime() - retentionDays * 24 * 60 * 60 * 1000) {
    throw new ApiError('parameter_invalid', `since reaches beyond the event retention of ${retentionDays} days.`, { param: 'since' });
  }
  return isoTime(new Date(time));
}

export async function recoverDeliveries(
  db: Db,
  input: { readonly endpoint: store.EndpointRow; readonly since: string; readonly now: Date },
): Promise<number> {
  const { endpoint } = input;
  const subscribed = JSON.parse(endpoint.events) as string[];
  const types = subscribed.includes('*') ? [...EVENT_TYPES] : subscribed;
  const nowIso = isoTime(input.now);
  let after: { created_at: string; id: string } | undefined;
  let count = 0;
  for (;;) {
    const events = await findEventsSince(db, endpoint.project_id, { types, since: input.since, after, limit: PAGE_SIZE });
    if (events.length === 0) break;
    count += await inTransaction(db, async (trx) => {
      const existing = new Map(
        (
          await recoveryStore.findEndpointDeliveriesOfEvents(
            trx,
            endpoint.id,
            events.map((event) => event.id),
          )
        ).map((delivery) => [delivery.event_id, delivery]),
      );
      const created: store.DeliveryRow[] = [];
      let reopened = 0;
      for (const event of events) {
        const delivery = existing.get(event.id);
        if (delivery === undefined) {
          if (ADDRESSED_TYPES.has(event.type)) continue;
          created.push(
            store.pendingDelivery({
              id: newId('del'),
              projectId: endpoint.project_id,
              endpointId: endpoint.id,
              eventId: event.id,
              eventType: event.type,
              nextAttemptAt: event.created_at,
              now: nowIso,
            }),
          );
        } else if (delivery.status !== 'succeeded' && (delivery.leased_until === null || delivery.leased_until <= nowIso)) {
          if (await recoveryStore.reopenDelivery(trx, delivery.id, { nextAttemptAt: event.created_at, now: nowIso })) reopened += 1;
        }
      }
      const inserted = await store.insertDeliveries(trx, created, db.dialect);
      return reopened + inserted.size;
    });
    const last = events[events.length - 1];
    if (last === undefined || events.length < PAGE_SIZE) break;
    after = { created_at: last.created_at, id: last.id };
  }
  return count;
}
