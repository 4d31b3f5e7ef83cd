import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database, HoldStatus } from '../../db/schema.js';
import { canonicalJson } from '../../lib/crypto.js';
import type { AuditRow, ExportFilter, ListFilter } from '../audit/audit.service.js';

type Executor = Kysely<Database>;

/**
 * Holds in the audit log, read from their rows (docs/adr/0019-audit-reads-the-ledger.md): each hold
 * is an entry `wallet.hold.created` at its creation and, once ended, one `wallet.hold.captured`,
 * `wallet.hold.voided` or `wallet.hold.expired` at its end, about its wallet, with the actor,
 * request, IP and user agent its row keeps of each (migration 0036). An entry's id is the hold's
 * with the prefix `aud_` and the event as a suffix (`hld_X` → `aud_X.created`), so it pages with
 * every other entry by `(created_at, id)`. These entries are not chained: the chain covers
 * `audit_log` and the ledger's transactions (a capture's debit is one of them).
 */

const HOLD_EVENTS = ['created', 'captured', 'voided', 'expired'] as const;
type HoldEvent = (typeof HOLD_EVENTS)[number];
type EndedEvent = Exclude<HoldEvent, 'created'>;
const ENDED_EVENTS: readonly (EndedEvent & HoldStatus)[] = ['captured', 'voided', 'expired'];

/** `wallet.hold.<event>`, the name of the hold's event (docs/api.md, "Events"). */
function actionOf(event: HoldEvent): string {
  return `wallet.hold.${event}`;
}

/** A hold's entry id of one of its events. */
export function holdEntryId(holdId: string, event: HoldEvent): string {
  return `aud_${holdId.slice('hld_'.length)}.${event}`;
}

/** The hold and event an entry id names, or undefined when it names no hold's event. */
function parseHoldEntryId(entryId: string): { holdId: string; event: HoldEvent } | undefined {
  const match = /^aud_([0-9A-Za-z]+)\.([a-z]+)$/.exec(entryId);
  const event = HOLD_EVENTS.find((name) => name === match?.[2]);
  if (match?.[1] === undefined || event === undefined) return undefined;
  return { holdId: `hld_${match[1]}`, event };
}

interface HoldEntryRow {
  id: string;
  project_id: string;
  wallet_id: string;
  amount: number;
  captured_amount: number;
  transaction_id: string | null;
  expires_at: string;
  event: string;
  at: string;
  actor_type: string;
  actor_id: string | null;
  actor_user_id: string | null;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
}

/** Which of a hold's entries a query reads: its creation, or its end (status no longer `pending`). */
type Side = 'created' | 'ended';

/** The columns of one side's entries: when, what, and who with which request and from where. */
function sideColumns(side: Side) {
  const created = side === 'created';
  return {
    at: created ? sql.ref<string>('h.created_at') : sql.ref<string>('h.updated_at'),
    event: created ? sql<string>`'created'` : sql<string>`h.status`,
    prefix: created ? '' : 'ended_',
  };
}

function sideQuery(db: Executor, projectId: string, side: Side) {
  const { at, event, prefix } = sideColumns(side);
  const query = db
    .selectFrom('wallet_holds as h')
    .select([
      'h.id',
      'h.project_id',
      'h.wallet_id',
      'h.amount',
      'h.captured_amount',
      'h.transaction_id',
      'h.expires_at',
      event.as('event'),
      at.as('at'),
      sql<string>`${sql.ref(`h.${prefix}actor_type`)}`.as('actor_type'),
      sql<string | null>`${sql.ref(`h.${prefix}actor_id`)}`.as('actor_id'),
      sql<string | null>`${sql.ref(`h.${prefix}actor_user_id`)}`.as('actor_user_id'),
      sql<string | null>`${sql.ref(`h.${prefix}request_id`)}`.as('request_id'),
      sql<string | null>`${sql.ref(`h.${prefix}ip`)}`.as('ip'),
      sql<string | null>`${sql.ref(`h.${prefix}user_agent`)}`.as('user_agent'),
    ])
    .where('h.project_id', '=', projectId);
  return side === 'created' ? query : query.where('h.status', 'in', ENDED_EVENTS);
}

/**
 * The entry id as SQL, to compare with a cursor's: `'aud_' || <hold id without hld_> || '.' || <event>`.
 * Hold ids are of one length and a hold has one entry per side, so ordering a side by hold id is
 * ordering it by entry id: the queries order by `(time, h.id)`, which the indexes of migration
 * 0036 (`(project_id, created_at, id)`, `(project_id, updated_at, id)`) and
 * `wallet_holds_wallet_created_idx` serve.
 */
function entryIdSql(side: Side): RawBuilder<string> {
  return sql<string>`'aud_' || substr(h.id, 5) || '.' || ${sideColumns(side).event}`;
}

/** The sides whose events `action` names (both without a filter). */
function sidesOf(action: string | undefined): { side: Side; event: HoldEvent | undefined }[] {
  if (action === undefined)
    return [
      { side: 'created', event: undefined },
      { side: 'ended', event: undefined },
    ];
  const event = HOLD_EVENTS.find((name) => actionOf(name) === action);
  if (event === undefined) return [];
  return [{ side: event === 'created' ? 'created' : 'ended', event }];
}

/** Hold entries newest first, filtered as the audit log's list filters (at most `filter.limit` per side). */
export async function listHoldEntries(db: Executor, projectId: string, filter: ListFilter): Promise<AuditRow[][]> {
  return Promise.all(
    sidesOf(filter.action).map(async ({ side, event }) => {
      const { at, prefix } = sideColumns(side);
      let query = sideQuery(db, projectId, side);
      if (event !== undefined && event !== 'created') query = query.where('h.status', '=', event);
      if (filter.resourceId !== undefined) query = query.where('h.wallet_id', '=', filter.resourceId);
      if (filter.actorId !== undefined) query = query.where(sql.ref(`h.${prefix}actor_id`), '=', filter.actorId);
      if (filter.since !== undefined) query = query.where(sql<boolean>`${at} >= ${filter.since}`);
      if (filter.until !== undefined) query = query.where(sql<boolean>`${at} < ${filter.until}`);
      const after = filter.after;
      if (after !== undefined) {
        query = query.where(
          sql<boolean>`(${at} < ${after.created_at} or (${at} = ${after.created_at} and ${entryIdSql(side)} < ${after.id}))`,
        );
      }
      const rows = await query.orderBy(at, 'desc').orderBy('h.id', 'desc').limit(filter.limit).execute();
      return rows.map(toAuditRow);
    }),
  );
}

/** Hold entries oldest first, after the export's cursor (at most `filter.limit` per side). */
export async function exportHoldEntries(db: Executor, projectId: string, filter: ExportFilter): Promise<AuditRow[][]> {
  return Promise.all(
    (['created', 'ended'] as const).map(async (side) => {
      const { at } = sideColumns(side);
      let query = sideQuery(db, projectId, side);
      if (filter.since !== undefined) query = query.where(sql<boolean>`${at} >= ${filter.since}`);
      if (filter.until !== undefined) query = query.where(sql<boolean>`${at} < ${filter.until}`);
      const after = filter.after;
      if (after !== undefined) {
        query = query.where(
          sql<boolean>`(${at} > ${after.created_at} or (${at} = ${after.created_at} and ${entryIdSql(side)} > ${after.id}))`,
        );
      }
      const rows = await query.orderBy(at, 'asc').orderBy('h.id', 'asc').limit(filter.limit).execute();
      return rows.map(toAuditRow);
    }),
  );
}

/** One hold entry by its id. */
export async function findHoldEntry(db: Executor, projectId: string, entryId: string): Promise<AuditRow | undefined> {
  const named = parseHoldEntryId(entryId);
  if (named === undefined) return undefined;
  const side: Side = named.event === 'created' ? 'created' : 'ended';
  let query = sideQuery(db, projectId, side).where('h.id', '=', named.holdId);
  if (named.event !== 'created') query = query.where('h.status', '=', named.event);
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : toAuditRow(row);
}

function toAuditRow(row: HoldEntryRow): AuditRow {
  const event = row.event as HoldEvent;
  const changes: Record<string, string | number | null> = { hold_id: row.id, amount: row.amount };
  if (event === 'created') changes['expires_at'] = row.expires_at;
  if (event === 'captured') {
    changes['captured_amount'] = row.captured_amount;
    changes['transaction_id'] = row.transaction_id;
  }
  return {
    id: holdEntryId(row.id, event),
    project_id: row.project_id,
    created_at: row.at,
    action: actionOf(event),
    actor_type: row.actor_type,
    actor_id: row.actor_id,
    actor_user_id: row.actor_user_id,
    resource_type: 'wallet',
    resource_id: row.wallet_id,
    request_id: row.request_id,
    ip: row.ip,
    user_agent: row.user_agent,
    outcome: 'success',
    changes: canonicalJson(changes),
  };
}
