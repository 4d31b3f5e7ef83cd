import type { Transaction } from '../../db/transaction.js';
import { assert } from '../../shared/assert.js';
import { newId } from '../../shared/ids.js';

/** Every event type of docs/api.md section 5; an endpoint subscribes to these (or "*"). */
export const EVENT_TYPES = [
  'wallet.credit.added',
  'wallet.credit.deducted',
  'wallet.transfer.sent',
  'wallet.transfer.received',
  'wallet.balance.low',
  'user.created',
  'user.updated',
  'user.deleted',
  'user.email_verified',
  'session.created',
  'session.revoked',
  'organization.created',
  'organization.member.added',
  'organization.member.removed',
  'organization.invitation.accepted',
  'webhook.test',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export interface NewEvent {
  readonly projectId: string;
  readonly type: EventType;
  /** The event's `data`, stored as JSON. */
  readonly data: Readonly<Record<string, unknown>>;
  /** The time of the change it reports, so the event and the change carry the same time. */
  readonly createdAt: string;
  /**
   * What receivers de-duplicate by; unique across all events. Defaults to the event id. Pass one
   * derived from the change (for example its transaction id and the event type) when a change
   * must never produce the same event twice: the unique index then refuses the second.
   */
  readonly idempotencyKey?: string;
}

/**
 * Writes events to the outbox, in the caller's transaction: they exist if and only if the change
 * they report commits (docs/api.md section 5). Delivery happens later, from the outbox, never here.
 * Returns the new event ids, in order.
 */
export async function recordEvents(trx: Transaction, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((event) => {
    const id = newId('evt');
    return {
      id,
      project_id: event.projectId,
      type: event.type,
      data: JSON.stringify(event.data),
      idempotency_key: event.idempotencyKey ?? id,
      created_at: event.createdAt,
    };
  });
  await trx.insertInto('events').values(rows).execute();
  return rows.map((row) => row.id);
}

/** Writes one event to the outbox in the caller's transaction; see `recordEvents`. */
export async function recordEvent(trx: Transaction, event: NewEvent): Promise<string> {
  const [id] = await recordEvents(trx, [event]);
  assert(id !== undefined, 'recordEvents returned no id for one event');
  return id;
}
