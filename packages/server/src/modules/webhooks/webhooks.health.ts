import { CompiledQuery, type Kysely } from 'kysely';
import { type Dialect, PREPARED_STATEMENT } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Transaction } from '../../db/transaction.js';
import { isoTime } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { type AuditService, SYSTEM_AUDIT_CONTEXT } from '../audit/audit.service.js';
import { markEventsDispatched } from '../events/event-log.service.js';
import { recordEvent } from '../events/events.service.js';
import * as store from './webhooks.store.js';

/**
 * Endpoint health and the automatic switch-off (docs/api.md section 4, "Failing endpoints").
 *
 * Each endpoint remembers `failing_since`, its first failed attempt since its last success, and
 * `failed_deliveries`, the deliveries that ended `failed` since then. Any successful attempt
 * (scheduled or manual) clears both. When every attempt has failed for `disableAfterSeconds`
 * and at least `FAILED_DELIVERIES_MIN` deliveries have ended `failed`, the endpoint is switched
 * off (`enabled: 0`, `disabled_reason: 'failing'`) and `webhook_endpoint.disabled` goes to the
 * project's other enabled endpoints that subscribe to it, in the transaction that recorded the
 * failure. Its pending deliveries wait (claims pass over disabled endpoints) until it is switched
 * back on.
 */

/** Deliveries that must have ended `failed` before an endpoint is switched off. */
export const FAILED_DELIVERIES_MIN = 5;

export interface HealthDependencies {
  readonly dialect: Dialect;
  /** `WEBHOOK_DISABLE_AFTER_SECONDS`. */
  readonly disableAfterSeconds: number;
  readonly audit: AuditService;
}

/** What one recording batch says about one endpoint. */
export interface EndpointOutcome {
  /** At least one attempt succeeded. */
  succeeded: boolean;
  /** The earliest failed attempt's time, when one failed. */
  firstFailureAt: string | null;
  /** Deliveries that moved to `failed`. */
  failedDeliveries: number;
}

/** Collects the per-endpoint outcomes of a batch of attempts. */
export function endpointOutcomes(): {
  readonly byEndpoint: Map<string, EndpointOutcome>;
  attempt(endpointId: string, succeeded: boolean, sentAt: string): void;
  deliveryFailed(endpointId: string): void;
} {
  const byEndpoint = new Map<string, EndpointOutcome>();
  const of = (endpointId: string): EndpointOutcome => {
    let outcome = byEndpoint.get(endpointId);
    if (outcome === undefined) {
      outcome = { succeeded: false, firstFailureAt: null, failedDeliveries: 0 };
      byEndpoint.set(endpointId, outcome);
    }
    return outcome;
  };
  return {
    byEndpoint,
    attempt(endpointId, succeeded, sentAt) {
      const outcome = of(endpointId);
      if (succeeded) outcome.succeeded = true;
      else if (outcome.firstFailureAt === null || sentAt < outcome.firstFailureAt) outcome.firstFailureAt = sentAt;
    },
    deliveryFailed(endpointId) {
      of(endpointId).failedDeliveries += 1;
    },
  };
}

/**
 * Moves the endpoints' health on in the recording transaction and switches off those that have
 * failed long enough. A batch in which an endpoint had a success counts as a success for it.
 */
export async function updateEndpointHealth(
  trx: Transaction,
  deps: HealthDependencies,
  outcomes: ReadonlyMap<string, EndpointOutcome>,
  now: Date,
): Promise<void> {
  const healthy: string[] = [];
  const failing: [string, EndpointOutcome][] = [];
  for (const [endpointId, outcome] of outcomes) {
    if (outcome.succeeded) healthy.push(endpointId);
    else if (outcome.firstFailureAt !== null) failing.push([endpointId, outcome]);
  }
  await clearFailing(trx, healthy, deps.dialect);
  if (failing.length === 0) return;
  const cutoff = isoTime(new Date(now.getTime() - deps.disableAfterSeconds * 1000));
  for (const [endpointId, outcome] of failing.sort(([a], [b]) => (a < b ? -1 : 1))) {
    const row = await trx
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        failing_since: eb.fn.coalesce('failing_since', eb.val(outcome.firstFailureAt)),
        failed_deliveries: eb('failed_deliveries', '+', outcome.failedDeliveries),
      }))
      .where('id', '=', endpointId)
      .returning(['id', 'project_id', 'enabled', 'failing_since', 'failed_deliveries'])
      .executeTakeFirst();
    if (row === undefined || row.enabled !== 1 || row.failing_since === null) continue;
    if (row.failing_since <= cutoff && row.failed_deliveries >= FAILED_DELIVERIES_MIN) {
      await disableFailingEndpoint(trx, deps, { ...row, failing_since: row.failing_since }, isoTime(now));
    }
  }
}

/** Clears the failure window of endpoints that had a success (a no-op for those that were not failing). */
async function clearFailing(db: Kysely<Database>, endpointIds: readonly string[], dialect: Dialect): Promise<void> {
  if (endpointIds.length === 0) return;
  if (dialect === 'postgres') {
    await db.executeQuery(CompiledQuery.raw(PG_CLEAR_FAILING_SQL, [endpointIds]));
    return;
  }
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: null, failed_deliveries: 0 })
    .where('id', 'in', endpointIds)
    .where('failing_since', 'is not', null)
    .execute();
}

const PG_CLEAR_FAILING_SQL =
  `${PREPARED_STATEMENT} update webhook_endpoints set failing_since = null, failed_deliveries = 0 ` +
  'where id = any($1::text[]) and failing_since is not null';

async function disableFailingEndpoint(
  trx: Transaction,
  deps: HealthDependencies,
  endpoint: { readonly id: string; readonly project_id: string; readonly failing_since: string; readonly failed_deliveries: number },
  now: string,
): Promise<void> {
  const switched = await trx
    .updateTable('webhook_endpoints')
    .set({ enabled: 0, disabled_reason: 'failing', updated_at: now })
    .where('id', '=', endpoint.id)
    .where('enabled', '=', 1)
    .executeTakeFirst();
  if (switched.numUpdatedRows === 0n) return;
  const type = 'webhook_endpoint.disabled';
  const eventId = await recordEvent(trx, {
    projectId: endpoint.project_id,
    type,
    data: {
      endpoint_id: endpoint.id,
      reason: 'failing',
      failing_since: endpoint.failing_since,
      failed_deliveries: endpoint.failed_deliveries,
    },
    createdAt: now,
  });
  // Fanned out here, to the other endpoints only: the switched-off one must not be sent its own
  // notice, not even once it is switched back on.
  await markEventsDispatched(trx, [eventId], now, deps.dialect);
  const others = await store.findEnabledEndpoints(trx, [endpoint.project_id]);
  const deliveries = others
    .filter((other) => other.id !== endpoint.id && (JSON.parse(other.events) as string[]).some((t) => t === type || t === '*'))
    .map((other) =>
      store.pendingDelivery({
        id: newId('del'),
        projectId: endpoint.project_id,
        endpointId: other.id,
        eventId,
        eventType: type,
        nextAttemptAt: now,
        now,
      }),
    );
  await store.insertDeliveries(trx, deliveries, deps.dialect);
  await deps.audit.record(trx, SYSTEM_AUDIT_CONTEXT, {
    projectId: endpoint.project_id,
    action: 'webhook_endpoint.disable',
    resource: { type: 'webhook_endpoint', id: endpoint.id },
    changes: { reason: 'failing', failing_since: endpoint.failing_since, failed_deliveries: endpoint.failed_deliveries, event_id: eventId },
    createdAt: now,
  });
}
