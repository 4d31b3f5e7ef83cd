import { CompiledQuery, type Kysely } from 'kysely';
import { type Dialect, PREPARED_STATEMENT } from '../../db/database.js';
import { type KeysetCursor, keysetPage } from '../../db/pagination.js';
import type {
  Database,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookDeliveryStatus,
  WebhookEndpointsTable,
} from '../../db/schema.js';

type Executor = Kysely<Database>;

export type EndpointRow = WebhookEndpointsTable;
export type DeliveryRow = WebhookDeliveriesTable;
export type AttemptRow = WebhookAttemptsTable;

/**
 * Rows per INSERT: PostgreSQL takes at most 65,535 parameters per statement and SQLite 32,766;
 * a delivery row has 14 columns.
 */
const INSERT_ROWS_MAX = 1000;

// ---- Endpoints -------------------------------------------------------------------------------

export async function insertEndpoint(db: Executor, row: EndpointRow): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute();
}

export async function findEndpoint(db: Executor, projectId: string, endpointId: string): Promise<EndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('project_id', '=', projectId).where('id', '=', endpointId).executeTakeFirst();
}

/** Newest first; ties in `created_at` broken by id. */
export async function listEndpoints(
  db: Executor,
  projectId: string,
  filter: { readonly after: KeysetCursor | undefined; readonly limit: number },
): Promise<EndpointRow[]> {
  return keysetPage(db.selectFrom('webhook_endpoints').selectAll().where('project_id', '=', projectId), filter).execute();
}

export type EndpointChanges = Partial<
  Pick<
    EndpointRow,
    | 'url'
    | 'events'
    | 'description'
    | 'enabled'
    | 'secret'
    | 'previous_secret'
    | 'secret_sealed'
    | 'previous_secret_sealed'
    | 'previous_secret_expires_at'
    | 'disabled_reason'
    | 'failing_since'
    | 'failed_deliveries'
    | 'rate_limit_per_second'
  >
> & { readonly updated_at: string };

export async function updateEndpoint(
  db: Executor,
  projectId: string,
  endpointId: string,
  changes: EndpointChanges,
): Promise<EndpointRow | undefined> {
  return db
    .updateTable('webhook_endpoints')
    .set(changes)
    .where('project_id', '=', projectId)
    .where('id', '=', endpointId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the endpoint; its deliveries and their attempts go with it (ON DELETE CASCADE). */
export async function deleteEndpoint(db: Executor, projectId: string, endpointId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('project_id', '=', projectId)
    .where('id', '=', endpointId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * What signing needs of an endpoint: its sealed secrets, and the plain ones only for a row that an
 * older version wrote during a rolling upgrade and no start has sealed yet (migration 0014).
 */
export type TargetEndpointColumns = Pick<
  EndpointRow,
  | 'id'
  | 'project_id'
  | 'url'
  | 'secret'
  | 'previous_secret'
  | 'secret_sealed'
  | 'previous_secret_sealed'
  | 'previous_secret_expires_at'
  | 'rate_limit_per_second'
>;
const TARGET_SECRET_COLUMNS = [
  'secret',
  'previous_secret',
  'secret_sealed',
  'previous_secret_sealed',
  'previous_secret_expires_at',
] as const;

/**
 * The enabled endpoints of these projects, for the fan-out (which serves every project at once),
 * with what sending to them needs.
 */
export async function findEnabledEndpoints(
  db: Executor,
  projectIds: readonly string[],
): Promise<(Pick<EndpointRow, 'events'> & TargetEndpointColumns)[]> {
  if (projectIds.length === 0) return [];
  return db
    .selectFrom('webhook_endpoints')
    .select(['id', 'project_id', 'events', 'url', 'rate_limit_per_second', ...TARGET_SECRET_COLUMNS])
    .where('project_id', 'in', projectIds)
    .where('enabled', '=', 1)
    .execute();
}

// ---- Deliveries ------------------------------------------------------------------------------

/**
 * Inserts deliveries; one that exists for its (event, endpoint) already is left as it is. Returns
 * the ids of the rows inserted.
 */
export async function insertDeliveries(db: Executor, rows: readonly DeliveryRow[], dialect: Dialect): Promise<Set<string>> {
  const inserted = new Set<string>();
  if (rows.length === 0) return inserted;
  if (dialect === 'postgres') {
    const result = await db.executeQuery<{ id: string }>(
      CompiledQuery.raw(
        PG_INSERT_DELIVERIES_SQL,
        DELIVERY_COLUMNS.map((column) => rows.map((row) => row[column])),
      ),
    );
    for (const row of result.rows) inserted.add(row.id);
    return inserted;
  }
  for (let start = 0; start < rows.length; start += INSERT_ROWS_MAX) {
    const returned = await db
      .insertInto('webhook_deliveries')
      .values(rows.slice(start, start + INSERT_ROWS_MAX))
      .onConflict((conflict) => conflict.columns(['event_id', 'endpoint_id']).doNothing())
      .returning('id')
      .execute();
    for (const row of returned) inserted.add(row.id);
  }
  return inserted;
}

export async function findDelivery(
  db: Executor,
  projectId: string,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
}

/** Newest first, optionally one status. */
export async function listDeliveries(
  db: Executor,
  projectId: string,
  endpointId: string,
  filter: { readonly status: WebhookDeliveryStatus | undefined; readonly after: KeysetCursor | undefined; readonly limit: number },
): Promise<DeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('project_id', '=', projectId).where('endpoint_id', '=', endpointId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  return keysetPage(query, filter).execute();
}

/**
 * Deliveries by id alone, for recording attempts (each id came from a project-scoped read or a
 * claim). On PostgreSQL they are locked (`FOR UPDATE`, in id order), which serializes the
 * scheduled and manual attempts of one delivery.
 */
export async function findDeliveriesByIds(db: Executor, deliveryIds: readonly string[], dialect: Dialect): Promise<DeliveryRow[]> {
  if (deliveryIds.length === 0) return [];
  if (dialect === 'postgres') {
    return (await db.executeQuery<DeliveryRow>(CompiledQuery.raw(PG_LOCK_DELIVERIES_SQL, [deliveryIds]))).rows;
  }
  return db.selectFrom('webhook_deliveries').selectAll().where('id', 'in', deliveryIds).orderBy('id').execute();
}

/** The same change applied to several deliveries: counters move by the amounts given. */
export interface DeliveryGroupChange {
  readonly attemptsAdded: number;
  readonly scheduledAttemptsAdded: number;
  readonly status: WebhookDeliveryStatus;
  readonly next_attempt_at: string | null;
  readonly lease_id: string | null;
  readonly leased_until: string | null;
  readonly updated_at: string;
}

export async function updateDeliveries(
  db: Executor,
  deliveryIds: readonly string[],
  change: DeliveryGroupChange,
  dialect: Dialect,
): Promise<void> {
  if (deliveryIds.length === 0) return;
  if (dialect === 'postgres') {
    await db.executeQuery(
      CompiledQuery.raw(PG_UPDATE_DELIVERIES_SQL, [
        change.attemptsAdded,
        change.scheduledAttemptsAdded,
        change.status,
        change.next_attempt_at,
        change.lease_id,
        change.leased_until,
        change.updated_at,
        deliveryIds,
      ]),
    );
    return;
  }
  await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempt_count: eb('attempt_count', '+', change.attemptsAdded),
      scheduled_attempt_count: eb('scheduled_attempt_count', '+', change.scheduledAttemptsAdded),
      status: change.status,
      next_attempt_at: change.next_attempt_at,
      lease_id: change.lease_id,
      leased_until: change.leased_until,
      last_attempt_at: change.updated_at,
      updated_at: change.updated_at,
    }))
    .where('id', 'in', deliveryIds)
    .execute();
}

// ---- Attempts --------------------------------------------------------------------------------

export async function insertAttempts(db: Executor, rows: readonly AttemptRow[], dialect: Dialect): Promise<void> {
  if (rows.length === 0) return;
  if (dialect === 'postgres') {
    await db.executeQuery(
      CompiledQuery.raw(
        PG_INSERT_ATTEMPTS_SQL,
        ATTEMPT_COLUMNS.map((column) => rows.map((row) => row[column])),
      ),
    );
    return;
  }
  for (let start = 0; start < rows.length; start += INSERT_ROWS_MAX) {
    await db
      .insertInto('webhook_attempts')
      .values(rows.slice(start, start + INSERT_ROWS_MAX))
      .execute();
  }
}

/** The attempts of these deliveries (of one project), oldest first. */
export async function findAttempts(db: Executor, projectId: string, deliveryIds: readonly string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('attempt_number')
    .execute();
}

// ---- PostgreSQL: the worker's batch writes as fixed prepared texts ------------------------------
//
// A fan-out or a recording batch touches up to thousands of rows. As Kysely builds them, such
// statements carry 14 parameters per row (up to 14,000 placeholders in the text), are compiled on
// every batch and parsed and planned by PostgreSQL every time. Here each column is one array
// parameter, and the text, the same for every batch, is a named prepared statement (`PREPARED_STATEMENT`).

const DELIVERY_COLUMNS = [
  'id',
  'project_id',
  'endpoint_id',
  'event_id',
  'event_type',
  'status',
  'attempt_count',
  'scheduled_attempt_count',
  'next_attempt_at',
  'lease_id',
  'leased_until',
  'last_attempt_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof DeliveryRow)[];

const DELIVERY_INTEGER_COLUMNS: ReadonlySet<string> = new Set(['attempt_count', 'scheduled_attempt_count']);

const ATTEMPT_COLUMNS = [
  'delivery_id',
  'attempt_number',
  'project_id',
  'kind',
  'created_at',
  'status_code',
  'latency_ms',
  'error',
  'response_body',
] as const satisfies readonly (keyof AttemptRow)[];

const ATTEMPT_INTEGER_COLUMNS: ReadonlySet<string> = new Set(['attempt_number', 'status_code', 'latency_ms']);

/** `insert into <table> (<columns>) select * from unnest($1::text[], $2::integer[], …)`, one array per column. */
function unnestInsertSql(table: string, columns: readonly string[], integerColumns: ReadonlySet<string>): string {
  const arrays = columns.map((column, index) => `$${index + 1}::${integerColumns.has(column) ? 'integer' : 'text'}[]`);
  return `${PREPARED_STATEMENT} insert into ${table} (${columns.join(', ')}) select * from unnest(${arrays.join(', ')})`;
}

const PG_INSERT_DELIVERIES_SQL =
  `${unnestInsertSql('webhook_deliveries', DELIVERY_COLUMNS, DELIVERY_INTEGER_COLUMNS)} ` +
  'on conflict (event_id, endpoint_id) do nothing returning id';

const PG_INSERT_ATTEMPTS_SQL = unnestInsertSql('webhook_attempts', ATTEMPT_COLUMNS, ATTEMPT_INTEGER_COLUMNS);

const PG_LOCK_DELIVERIES_SQL =
  `${PREPARED_STATEMENT} select ${DELIVERY_COLUMNS.join(', ')} from webhook_deliveries ` +
  'where id = any($1::text[]) order by id for update';

const PG_UPDATE_DELIVERIES_SQL =
  `${PREPARED_STATEMENT} update webhook_deliveries set attempt_count = attempt_count + $1, ` +
  'scheduled_attempt_count = scheduled_attempt_count + $2, status = $3, next_attempt_at = $4, lease_id = $5, ' +
  'leased_until = $6, last_attempt_at = $7, updated_at = $7 where id = any($8::text[])';

/** A new pending delivery, due at `nextAttemptAt`, not leased. */
export function pendingDelivery(input: {
  readonly id: string;
  readonly projectId: string;
  readonly endpointId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly nextAttemptAt: string;
  readonly now: string;
}): DeliveryRow {
  return {
    id: input.id,
    project_id: input.projectId,
    endpoint_id: input.endpointId,
    event_id: input.eventId,
    event_type: input.eventType,
    status: 'pending',
    attempt_count: 0,
    scheduled_attempt_count: 0,
    next_attempt_at: input.nextAttemptAt,
    lease_id: null,
    leased_until: null,
    last_attempt_at: null,
    created_at: input.now,
    updated_at: input.now,
  };
}
