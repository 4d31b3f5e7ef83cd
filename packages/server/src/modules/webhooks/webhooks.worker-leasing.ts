import { inTransaction } from '../../db/transaction.js';
import { addMilliseconds, isoTime } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { findUndispatchedEvents, markEventsDispatched } from '../events/event-log.service.js';
import type { Logger } from 'pino';
import { type DeliveryDependencies, deliveryTarget, loadDeliveryTargets } from './webhooks.delivery.js';
import { resumeWorkerLeases } from './webhooks.worker-takeover.js';
import type { Lease, Room } from './webhooks.worker-endpoints.js';
import * as leases from './webhooks.leases.store.js';
import * as store from './webhooks.store.js';

/**
 * How the delivery worker takes on work (docs/adr/0006-webhook-delivery.md, "Fan-out by the
 * worker" and "Leases, not locks"): one fan-out transaction, which creates deliveries and leases
 * those due now, and one claiming transaction, which leases due deliveries that exist. Each
 * returns the leases it committed; the worker sends them.
 *
 * 1. **Fan-out.** Events reach the outbox in the transaction of the change they report, with
 *    `dispatched_at` null. The worker takes a batch of them (PostgreSQL: `FOR UPDATE SKIP LOCKED`,
 *    so two workers take different batches; SQLite: the single writer), creates one delivery per
 *    (event, enabled endpoint subscribed to its type or "*"), and marks them dispatched, all in one
 *    transaction. A crash before the commit leaves the events undispatched for the next pass; a
 *    unique index on (event, endpoint) makes a repeated fan-out harmless. So an event that
 *    committed always gets its deliveries, and the write path of events pays nothing for it.
 *    Deliveries due at once are created already leased to this worker, as far as it has room,
 *    and sent as soon as the transaction commits: the first attempt needs no claim of its own.
 *
 * 2. **Claims.** The other due deliveries (retries, and first attempts the fan-out had no room
 *    for or that a dead worker left) are claimed by writing a lease (a random id and an expiry,
 *    `WEBHOOK_LEASE_SECONDS`) on them in a short transaction (again `SKIP LOCKED` on PostgreSQL).
 */

/** Deliveries created per fan-out transaction at the most (an event with many endpoints fills it sooner). */
const FAN_OUT_DELIVERIES_MAX = 5000;

export interface FanOutBatch {
  /** Events fanned out. */
  readonly dispatched: number;
  /** Deliveries created per event fanned out (0 when none was). */
  readonly deliveriesPerEvent: number;
  /** The deliveries created leased to this worker, committed. */
  readonly leases: Lease[];
  /** Events were left for the next batch. */
  readonly more: boolean;
  /** Deliveries created due now but not leased (no room for their endpoint): a claim's work. */
  readonly dueUnleased: number;
}

/**
 * Fans out up to `limit` undispatched events in one transaction: one delivery per (event, enabled
 * endpoint subscribed to its type or "*"), those due now leased under `leaseId` as far as `room`
 * allows, and the events marked dispatched. `room` is asked afresh each time the transaction runs.
 */
export async function fanOutBatch(
  deps: DeliveryDependencies,
  options: {
    readonly leaseId: string;
    readonly leaseMs: number;
    readonly limit: number;
    readonly room: () => Room;
    readonly isStopping: () => boolean;
  },
): Promise<FanOutBatch> {
  const { db } = deps;
  const { leaseId, limit } = options;
  return inTransaction(db, async (trx) => {
    const events = await findUndispatchedEvents(trx, { limit, skipLocked: db.dialect === 'postgres' });
    if (events.length === 0) return { dispatched: 0, deliveriesPerEvent: 0, leases: [], more: false, dueUnleased: 0 };
    const endpoints = await store.findEnabledEndpoints(trx, [...new Set(events.map((event) => event.project_id))]);
    const byProject = new Map<string, { endpoint: (typeof endpoints)[number]; types: Set<string> }[]>();
    for (const endpoint of endpoints) {
      const list = byProject.get(endpoint.project_id) ?? [];
      list.push({ endpoint, types: new Set(JSON.parse(endpoint.events) as string[]) });
      byProject.set(endpoint.project_id, list);
    }
    const now = deps.clock.now();
    const nowIso = isoTime(now);
    const leasedUntilMs = now.getTime() + options.leaseMs;
    const leasedUntil = isoTime(new Date(leasedUntilMs));
    const firstDelayMs = (deps.retryScheduleSeconds[0] ?? 0) * 1000;
    const room = options.room();
    const deliveries: store.DeliveryRow[] = [];
    const leases: Lease[] = [];
    const fannedOut: string[] = [];
    let dueUnleased = 0;
    for (const event of events) {
      const subscribed = (byProject.get(event.project_id) ?? []).filter(({ types }) => types.has(event.type) || types.has('*'));
      // The rest of the batch waits for the next transaction (at least one event per batch):
      // when it would exceed the deliveries of one transaction, or the worker has no room left
      // for all of the event's deliveries (those left unleased would each need a claim).
      const roomShort = room.total < Math.max(1, subscribed.length);
      if (fannedOut.length > 0 && (roomShort || deliveries.length + subscribed.length > FAN_OUT_DELIVERIES_MAX)) break;
      fannedOut.push(event.id);
      const nextAttemptAt = isoTime(addMilliseconds(new Date(event.created_at), firstDelayMs));
      for (const { endpoint } of subscribed) {
        const id = newId('del');
        const due = nextAttemptAt <= nowIso;
        const lease = !options.isStopping() && due && room.take(endpoint.id, endpoint.rate_limit_per_second);
        if (due && !lease) dueUnleased += 1;
        deliveries.push({
          id,
          project_id: event.project_id,
          endpoint_id: endpoint.id,
          event_id: event.id,
          event_type: event.type,
          status: 'pending',
          attempt_count: 0,
          scheduled_attempt_count: 0,
          next_attempt_at: nextAttemptAt,
          lease_id: lease ? leaseId : null,
          leased_until: lease ? leasedUntil : null,
          last_attempt_at: null,
          created_at: nowIso,
          updated_at: nowIso,
        });
        if (lease)
          leases.push({
            target: deliveryTarget({ deliveryId: id, endpoint, event, now, secrets: deps.secrets }),
            leaseId,
            leasedUntilMs,
          });
      }
    }
    const inserted = await store.insertDeliveries(trx, deliveries, db.dialect);
    await markEventsDispatched(trx, fannedOut, nowIso, db.dialect);
    return {
      dispatched: fannedOut.length,
      deliveriesPerEvent: deliveries.length / fannedOut.length,
      // A delivery that existed already for its (event, endpoint) was not inserted, so its lease
      // is not ours. (Only a repeated fan-out could meet one, and that finds the events dispatched.)
      leases: leases.filter((lease) => inserted.has(lease.target.deliveryId)),
      more: fannedOut.length < events.length || events.length >= limit,
      dueUnleased,
    };
  });
}

/**
 * Leases up to `wanted` due deliveries, oldest due first, as far as `room` allows per endpoint, in
 * one short transaction; returns how many it found due and leased and, for those still there, what
 * sending needs. Endpoints that `room` excludes are left
 * out in the query. With `lookFirst`, an idle worker reads before it takes a write lock (SQLite).
 */
export async function claimDue(
  deps: DeliveryDependencies,
  options: {
    readonly wanted: number;
    readonly leaseId: string;
    readonly leaseMs: number;
    readonly room: () => Room;
    readonly lookFirst: boolean;
  },
): Promise<{ readonly found: number; readonly claimed: number; readonly leases: Lease[] }> {
  const { db } = deps;
  const { leaseId, wanted } = options;
  const now = deps.clock.now();
  const nowIso = isoTime(now);
  // Slow endpoints at their limit are left out in the query, so their backlog never hides the
  // deliveries of others; a fast one at its limit frees room within moments and is only passed
  // over below.
  const excludedEndpointIds = options.room().excluded();
  if (options.lookFirst) {
    const due = await leases.findDueDeliveries(db.kysely, { now: nowIso, limit: 1, excludedEndpointIds, skipLocked: false });
    if (due.length === 0) return { found: 0, claimed: 0, leases: [] };
  }
  const leasedUntilMs = now.getTime() + options.leaseMs;
  const claimed = await inTransaction(db, async (trx) => {
    const candidates = await leases.findDueDeliveries(trx, {
      now: nowIso,
      limit: wanted,
      excludedEndpointIds,
      skipLocked: db.dialect === 'postgres',
    });
    // The transaction may run again: the room taken is counted afresh each time.
    const room = options.room();
    const picked = candidates.filter((candidate) => room.take(candidate.endpoint_id)).map((candidate) => candidate.id);
    await leases.leaseDeliveries(trx, picked, leaseId, isoTime(new Date(leasedUntilMs)));
    return { found: candidates.length, picked };
  });
  const found = claimed.found;
  if (claimed.picked.length === 0) return { found, claimed: 0, leases: [] };
  const targets = await loadDeliveryTargets(db, deps.secrets, claimed.picked, now);
  // A claimed delivery whose endpoint or event was deleted meanwhile has nothing to send.
  const loaded = new Set(targets.map((target) => target.deliveryId));
  const vanished = claimed.picked.filter((id) => !loaded.has(id));
  if (vanished.length > 0) await leases.releaseLeases(db.kysely, vanished, leaseId);
  return { found, claimed: claimed.picked.length, leases: targets.map((target) => ({ target, leaseId, leasedUntilMs })) };
}

/**
 * At a worker's start, under its identity: gives back the leases a process with this identity
 * held when it died (none of them is in flight), so they go out now. Returns how many.
 */
export async function takeBackLeases(deps: DeliveryDependencies, logger: Logger, workerId: string): Promise<number> {
  try {
    const released = await resumeWorkerLeases(deps, workerId);
    deps.metrics.leasesFreed('restart', released);
    if (released > 0)
      logger.info({ worker_id: workerId, deliveries: released }, 'webhook worker: resumed the deliveries it held before a restart');
    return released;
  } catch (error) {
    // Not given back, they wait out their leases: a delay, never a loss.
    logger.warn({ err: error }, 'webhook worker: could not take back its earlier leases; they will expire');
    return 0;
  }
}
