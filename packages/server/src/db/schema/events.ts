/** The events module's table (modules/events): the outbox. */
export interface EventsDatabase {
  events: EventsTable;
}

/** The outbox: every event, written in the same transaction as the change it reports. */
export interface EventsTable {
  id: string;
  project_id: string;
  type: string;
  /** JSON object, the event's `data`. */
  data: string;
  /** Unique per event; the same on every delivery attempt, so receivers can de-duplicate. */
  idempotency_key: string;
  created_at: string;
  /**
   * Null until the delivery worker has created the event's webhook deliveries (migration
   * 0004_webhooks); writers of events leave it out.
   */
  dispatched_at: string | null;
}
