import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { afterCursor, type KeysetCursor, keysetPage } from '../../db/pagination.js';
import { executePrepared } from '../../db/fixed-query.js';
import type { Database } from '../../db/schema.js';
import { canonicalJson } from '../../lib/crypto.js';
import {
  type AuditLedgerSource,
  type AuditRow,
  type ExportFilter,
  type LedgerPosition,
  ledgerCursorStart,
  ledgerEntryId,
  ledgerTransactionId,
  type ListFilter,
  mergeNewestFirst,
  mergeOldestFirst,
  type PendingMovement,
} from '../audit/audit.service.js';
import { exportHoldEntries, findHoldEntry, listHoldEntries } from './ledger.audit-holds.js';

type Executor = Kysely<Database>;

/** The ledger's types the audit log shows, and their actions. */
const ACTIONS = {
  credit: 'wallet.credit',
  debit: 'wallet.debit',
  transfer: 'wallet.transfer',
  expiry: 'wallet.expiry',
  reversal: 'wallet.reversal',
} as const;
type AuditedType = keyof typeof ACTIONS;
const AUDITED_TYPES = Object.keys(ACTIONS) as AuditedType[];

/** The order of movements in the audit log's list and export: their transactions'. */
const MOVEMENT_KEYSET = ['t.created_at', 't.id'] as const;

/** An audit entry's cursor as its transaction's: the entry id without its prefix. */
function transactionCursor(after: KeysetCursor | undefined): KeysetCursor | undefined {
  return after && { created_at: after.created_at, id: ledgerTransactionId(after.id) };
}

/** A movement as the audit log reads it: the transaction and its wallets' balances after it. */
interface MovementRow {
  id: string;
  project_id: string;
  type: AuditedType;
  amount: number;
  wallet_id: string | null;
  from_wallet_id: string | null;
  to_wallet_id: string | null;
  /** A reversal's original transaction. */
  reverses: string | null;
  created_at: string;
  actor_type: string;
  actor_id: string | null;
  actor_user_id: string | null;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  /** The wallet's (a transfer's source's) balance after the movement, and what the movement moved on it. */
  balance_after: number | null;
  entry_amount: number | null;
  /** A transfer's target's balance after it. */
  to_balance_after: number | null;
}

/**
 * The ledger as the audit log's source of money movements (docs/adr/0019-audit-reads-the-ledger.md):
 * each credit, debit, transfer, grant expiry and reversal is an entry `wallet.credit`, `wallet.debit`,
 * `wallet.transfer`, `wallet.expiry` or `wallet.reversal` (docs/adr/0024-reversals.md)
 * about its wallet (a transfer's source), outcome `success`, with the actor, request id, IP and
 * user agent the transaction stores (the last two since migration 0036) and the balances its
 * entries record; the entry's id is the transaction's with the prefix `aud_`. Transactions written
 * before migration 0025 have rows of `audit_log` and are not read here. Holds' entries
 * (`wallet.hold.…`) are read from their rows (ledger.audit-holds.ts) and merged in.
 */
export function ledgerAuditSource(db: Db): AuditLedgerSource {
  const postgres = db.dialect === 'postgres';
  // SQLite: the last rowid written before migration 0025; it never changes.
  let start: Promise<number> | undefined;
  const audited = async (query: MovementQuery): Promise<MovementQuery> => {
    if (postgres) return query.where(sql<boolean>`t.txid is not null`);
    start ??= ledgerCursorStart(db.kysely);
    return query.where(sql<boolean>`t.rowid > ${await start}`);
  };
  async function listMovements(projectId: string, filter: ListFilter): Promise<AuditRow[]> {
    const types = typesOf(filter.action);
    if (types.length === 0) return [];
    let query = await audited(movements(db.kysely, projectId, types));
    if (filter.actorId !== undefined) query = query.where('t.actor_id', '=', filter.actorId);
    // A wallet's movements: its own entries (the movement's `e`), newest first on their index
    // by time (ledger_entries_account_time_idx, migration 0027), so a page reads `limit` of
    // them, however long the wallet's history.
    if (filter.resourceId !== undefined) {
      query = query
        .where('e.project_id', '=', projectId)
        .where('e.account_id', '=', filter.resourceId)
        .where('e.balance_after', 'is not', null);
      if (filter.since !== undefined) query = query.where('e.created_at', '>=', filter.since);
      if (filter.until !== undefined) query = query.where('e.created_at', '<', filter.until);
      if (filter.after !== undefined) query = query.where('e.created_at', '<=', filter.after.created_at);
    }
    query = afterCursor(timeRange(query, filter.since, filter.until), { after: transactionCursor(filter.after), columns: MOVEMENT_KEYSET });
    const ordered = filter.resourceId !== undefined ? query.orderBy('e.created_at', 'desc') : query.orderBy('t.created_at', 'desc');
    const page = ordered.orderBy('t.id', 'desc').limit(filter.limit);
    // Prepared only by resource or actor, where PostgreSQL's generic plan is as good as a custom
    // one; the whole project's movements' generic plan took ten times as long (docs/performance.md,
    // "The audit log's reads prepared").
    const rows =
      filter.resourceId !== undefined || filter.actorId !== undefined ? await executePrepared(db.kysely, page) : await page.execute();
    return rows.map(toAuditRow);
  }

  async function exportMovements(projectId: string, filter: ExportFilter): Promise<AuditRow[]> {
    const query = timeRange(await audited(movements(db.kysely, projectId, AUDITED_TYPES)), filter.since, filter.until);
    const rows = await keysetPage(query, {
      after: transactionCursor(filter.after),
      limit: filter.limit,
      order: 'oldest first',
      columns: MOVEMENT_KEYSET,
    }).execute();
    return rows.map(toAuditRow);
  }

  return {
    async list(projectId, filter: ListFilter) {
      const [movementRows, holdRows] = await Promise.all([listMovements(projectId, filter), listHoldEntries(db.kysely, projectId, filter)]);
      return holdRows.reduce((merged, rows) => mergeNewestFirst(merged, rows, filter.limit), movementRows);
    },
    async exportPage(projectId, filter: ExportFilter) {
      const [movementRows, holdRows] = await Promise.all([
        exportMovements(projectId, filter),
        exportHoldEntries(db.kysely, projectId, filter),
      ]);
      return holdRows.reduce((merged, rows) => mergeOldestFirst(merged, rows, filter.limit), movementRows);
    },
    async find(projectId, entryId) {
      if (!entryId.startsWith('aud_')) return undefined;
      const hold = await findHoldEntry(db.kysely, projectId, entryId);
      if (hold !== undefined) return hold;
      const query = await audited(movements(db.kysely, projectId, AUDITED_TYPES));
      const row = await query.where('t.id', '=', ledgerTransactionId(entryId)).executeTakeFirst();
      return row === undefined ? undefined : toAuditRow(row);
    },
    async entries(executor, projectId, entryIds) {
      if (entryIds.length === 0) return [];
      const rows = await movements(executor, projectId, AUDITED_TYPES).where('t.id', 'in', entryIds.map(ledgerTransactionId)).execute();
      return rows.map(toAuditRow);
    },
    async pending(trx, after, running, limit): Promise<PendingMovement[]> {
      if (postgres) {
        const rows = await movementsOfAllProjects(trx)
          .select(sql<number>`t.txid`.as('position'))
          .where(sql<boolean>`(t.txid, t.id) > (${after.txid}, ${after.id})`)
          .where(sql<boolean>`t.txid < ${running ?? 0}`)
          .orderBy(sql`t.txid`)
          .orderBy('t.id')
          .limit(limit)
          .execute();
        return rows.map(({ position, ...row }) => ({ position: { txid: position, id: row.id }, row: toAuditRow(row) }));
      }
      const rows = await movementsOfAllProjects(trx)
        .select(sql<number>`t.rowid`.as('position'))
        .where(sql<boolean>`t.rowid > ${after.txid}`)
        .orderBy(sql`t.rowid`)
        .limit(limit)
        .execute();
      return rows.map(({ position, ...row }) => ({ position: { txid: position, id: '' }, row: toAuditRow(row) }));
    },
    async sealedIds(executor, projectId, upTo: LedgerPosition, since) {
      let query = movements(executor, projectId, AUDITED_TYPES);
      query = postgres
        ? query.where(sql<boolean>`t.txid is not null and (t.txid, t.id) <= (${upTo.txid}, ${upTo.id})`)
        : (await audited(query)).where(sql<boolean>`t.rowid <= ${upTo.txid}`);
      if (since !== undefined) query = query.where('t.created_at', '>=', since);
      const rows = await query.orderBy('t.created_at').orderBy('t.id').execute();
      return rows.map((row) => ledgerEntryId(row.id));
    },
  };
}

type MovementQuery = SelectQueryBuilder<
  Database & { t: Database['ledger_transactions']; e: Database['ledger_entries']; r: Database['ledger_entries'] },
  't' | 'e' | 'r',
  MovementRow
>;

/** A project's movements of the given types, each with its wallets' entries (their balances after it). */
function movements(db: Executor, projectId: string, types: readonly AuditedType[]): MovementQuery {
  return movementsOfAllProjects(db).where('t.project_id', '=', projectId).where('t.type', 'in', types);
}

function movementsOfAllProjects(db: Executor) {
  return db
    .selectFrom('ledger_transactions as t')
    .leftJoin('ledger_entries as e', (join) =>
      join.onRef('e.transaction_id', '=', 't.id').on((eb) => eb('e.account_id', '=', eb.fn.coalesce('t.wallet_id', 't.from_wallet_id'))),
    )
    .leftJoin('ledger_entries as r', (join) => join.onRef('r.transaction_id', '=', 't.id').onRef('r.account_id', '=', 't.to_wallet_id'))
    .select([
      't.id',
      't.project_id',
      sql<AuditedType>`t.type`.as('type'),
      't.amount',
      't.wallet_id',
      't.from_wallet_id',
      't.to_wallet_id',
      't.reverses',
      't.created_at',
      't.actor_type',
      't.actor_id',
      't.actor_user_id',
      't.request_id',
      't.ip',
      't.user_agent',
      'e.balance_after as balance_after',
      'e.amount as entry_amount',
      'r.balance_after as to_balance_after',
    ])
    .where('t.type', 'in', AUDITED_TYPES);
}

function typesOf(action: string | undefined): AuditedType[] {
  if (action === undefined) return AUDITED_TYPES;
  return AUDITED_TYPES.filter((type) => ACTIONS[type] === action);
}

function timeRange(query: MovementQuery, since: string | undefined, until: string | undefined): MovementQuery {
  let out = query;
  if (since !== undefined) out = out.where('t.created_at', '>=', since);
  if (until !== undefined) out = out.where('t.created_at', '<', until);
  return out;
}

/** The movement as the entry the audit log showed before it read the ledger: same action, resource and changes. */
function toAuditRow(row: MovementRow): AuditRow {
  const amount = row.amount;
  const after = row.balance_after;
  let resourceId: string | null;
  let changes: Record<string, string | number | null>;
  if (row.type === 'transfer') {
    const toAfter = row.to_balance_after;
    resourceId = row.from_wallet_id;
    changes = {
      transaction_id: row.id,
      to_wallet_id: row.to_wallet_id,
      amount,
      from_balance_before: after === null ? null : after + amount,
      from_balance_after: after,
      to_balance_before: toAfter === null ? null : toAfter - amount,
      to_balance_after: toAfter,
    };
  } else if (row.type === 'reversal') {
    // A reversal's wallet is the one it gave credits back to, or (a credit reversed) took them from;
    // a transfer's reversal names the wallet that gave them back.
    resourceId = row.wallet_id;
    const delta = row.entry_amount ?? 0;
    changes = {
      transaction_id: row.id,
      reverses: row.reverses,
      amount,
      balance_before: after === null ? null : after - delta,
      balance_after: after,
      ...(row.from_wallet_id === null ? {} : { from_wallet_id: row.from_wallet_id }),
    };
  } else {
    resourceId = row.wallet_id;
    const delta = row.type === 'credit' ? amount : -amount; // debits and expiries take credits
    changes = { transaction_id: row.id, amount, balance_before: after === null ? null : after - delta, balance_after: after };
  }
  return {
    id: ledgerEntryId(row.id),
    project_id: row.project_id,
    created_at: row.created_at,
    action: ACTIONS[row.type],
    actor_type: row.actor_type,
    actor_id: row.actor_id,
    actor_user_id: row.actor_user_id,
    resource_type: 'wallet',
    resource_id: resourceId,
    request_id: row.request_id,
    ip: row.ip,
    user_agent: row.user_agent,
    outcome: 'success',
    changes: canonicalJson(changes),
  };
}
