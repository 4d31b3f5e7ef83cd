import { CompiledQuery, type Kysely } from 'kysely';
import type { Db } from '../../db/database.js';
import { PREPARED_STATEMENT } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { assert } from '../../lib/assert.js';
import type * as reads from './audit.reads.js';
import * as store from './audit.store.js';

type Executor = Kysely<Database>;

/**
 * Money movements in the audit log (docs/adr/0019-audit-reads-the-ledger.md). The ledger is their
 * record: the audit log writes no row of its own for a credit, debit or transfer, and reads them
 * from the ledger as entries of the same shape (`wallet.credit`, `wallet.debit`,
 * `wallet.transfer`, outcome `success`). The wallets module owns the ledger's tables and provides
 * this source; the audit module owns the chain, and seals the movements into it after they commit.
 */
export interface AuditLedgerSource {
  /** Movements as entries, newest first, filtered as `reads.listEntries` filters entries. */
  list(projectId: string, filter: reads.ListFilter): Promise<store.AuditRow[]>;
  /** Movements as entries, oldest first, after the cursor (the export). */
  exportPage(projectId: string, filter: reads.ExportFilter): Promise<store.AuditRow[]>;
  /** One movement by its entry id (`aud_…`, see `ledgerEntryId`). */
  find(projectId: string, entryId: string): Promise<store.AuditRow | undefined>;
  /** Movements by entry id, in the caller's transaction (the chain's verification and retention). */
  entries(db: Executor, projectId: string, entryIds: readonly string[]): Promise<store.AuditRow[]>;
  /**
   * Movements committed after `after`, in the sealer's order, at most `limit`: on PostgreSQL by
   * (txid, id), only of transactions below `running` (every one of them has ended); on SQLite by
   * rowid (one writer: the commit order), only after the rows that have `audit_log` entries.
   */
  pending(trx: Executor, after: LedgerPosition, running: number | undefined, limit: number): Promise<PendingMovement[]>;
  /** Entry ids of the project's movements up to `upTo`, created at or after `since`, oldest first. */
  sealedIds(db: Executor, projectId: string, upTo: LedgerPosition, since: string | undefined): Promise<string[]>;
}

/** Where the sealer is in the ledger: (txid, transaction id) on PostgreSQL, (rowid, '') on SQLite. */
export interface LedgerPosition {
  readonly txid: number;
  readonly id: string;
}

export interface PendingMovement {
  readonly position: LedgerPosition;
  readonly row: store.AuditRow;
}

/** A movement's entry id: its transaction's id with the prefix `aud_`, so it sorts and pages with the entries of `audit_log`. */
export function ledgerEntryId(transactionId: string): string {
  assert(transactionId.startsWith('txn_'), `${transactionId} is a transaction id`);
  return `aud_${transactionId.slice(4)}`;
}

/** The transaction id of a movement's entry id. */
export function ledgerTransactionId(entryId: string): string {
  return `txn_${entryId.replace(/^aud_/, '')}`;
}

/**
 * Two lists in newest-first order (created_at, then id, compared as the database compares them:
 * ids are ASCII, and the C collation and SQLite's BINARY order them by code unit) merged, at most
 * `limit`.
 */
export function mergeNewestFirst<T extends { created_at: string; id: string }>(a: readonly T[], b: readonly T[], limit: number): T[] {
  return merge(a, b, limit, (x, y) => compareEntries(y, x));
}

/** Two lists in oldest-first order merged, at most `limit`. */
export function mergeOldestFirst<T extends { created_at: string; id: string }>(a: readonly T[], b: readonly T[], limit: number): T[] {
  return merge(a, b, limit, compareEntries);
}

function compareEntries(x: { created_at: string; id: string }, y: { created_at: string; id: string }): number {
  if (x.created_at !== y.created_at) return x.created_at < y.created_at ? -1 : 1;
  return x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
}

function merge<T>(a: readonly T[], b: readonly T[], limit: number, order: (x: T, y: T) => number): T[] {
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (out.length < limit && (i < a.length || j < b.length)) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && order(x, y) <= 0)) {
      out.push(x as T);
      i += 1;
    } else {
      out.push(y);
      j += 1;
    }
  }
  return out;
}

/** Movements chained per sealing transaction at the most. */
const LEDGER_SEAL_BATCH_MAX = 1000;
/** Sealing transactions per pass at the most, so one pass of the job is bounded. */
const LEDGER_SEAL_BATCHES_PER_PASS_MAX = 20;

/**
 * Chains the movements committed since the ledger cursor onto their projects' chains, in the
 * cursor's order, and moves the cursor past them; a batch per transaction. On PostgreSQL it takes
 * the sealing cursor's lock first (sealers take turns) and only seals movements of transactions
 * that have ended (`pending`); on SQLite the write lock orders everything. Returns how many.
 */
export async function sealLedger(
  db: Db,
  source: AuditLedgerSource,
  now: () => string,
  linkHash: (prevHash: string, row: store.AuditRow) => string,
  genesis: string,
): Promise<number> {
  let sealed = 0;
  for (let batch = 0; batch < LEDGER_SEAL_BATCHES_PER_PASS_MAX; batch += 1) {
    const count = await inTransaction(db, async (trx) => {
      const running = db.dialect === 'postgres' ? (await store.lockSealCursor(trx)).running : undefined;
      const cursor = await ledgerCursor(trx);
      const pending = await source.pending(trx, cursor, running, LEDGER_SEAL_BATCH_MAX);
      const last = pending[pending.length - 1];
      if (last === undefined) return 0;
      const projectIds = [...new Set(pending.map((item) => item.row.project_id))];
      const heads = await chainHeads(db, trx, projectIds);
      const sealedAt = now();
      const links: store.ChainLink[] = [];
      for (const { row } of pending) {
        const head = heads.get(row.project_id);
        const seq = (head?.seq ?? 0) + 1;
        const prevHash = head?.hash ?? genesis;
        const hash = linkHash(prevHash, row);
        links.push({ project_id: row.project_id, seq, entry_id: row.id, prev_hash: prevHash, hash, sealed_at: sealedAt });
        heads.set(row.project_id, { seq, hash });
      }
      await store.insertLinks(trx, links, db.dialect);
      await trx
        .updateTable('audit_ledger_cursor')
        .set({ txid: last.position.txid, entry_id: last.position.id })
        .where('id', '=', 1)
        .execute();
      return pending.length;
    });
    sealed += count;
    if (count < LEDGER_SEAL_BATCH_MAX) break;
  }
  return sealed;
}

/** The heads of the projects' chains (or else their checkpoints), in the sealing transaction. */
async function chainHeads(
  db: Db,
  trx: Executor,
  projectIds: readonly string[],
): Promise<Map<string, Pick<store.ChainLink, 'seq' | 'hash'>>> {
  const sqlite = db.sqlite;
  if (sqlite === undefined) return store.chainHeads(trx, projectIds);
  const heads = new Map<string, Pick<store.ChainLink, 'seq' | 'hash'>>();
  for (const projectId of projectIds) {
    const head = store.sqliteChainHead(sqlite, projectId);
    if (head !== undefined) heads.set(projectId, head);
  }
  return heads;
}

/** The ledger cursor: the last movement chained (migration 0025 creates its one row). */
export async function ledgerCursor(db: Executor): Promise<LedgerPosition & { start: number }> {
  const { rows } = await db.executeQuery<{ start: number | string; txid: number | string; entry_id: string }>(
    CompiledQuery.raw(LEDGER_CURSOR_SQL, []),
  );
  const row = rows[0];
  assert(row !== undefined, 'migration 0025 creates the audit ledger cursor row');
  return { start: Number(row.start), txid: Number(row.txid), id: row.entry_id };
}

const LEDGER_CURSOR_SQL = `${PREPARED_STATEMENT} select start, txid, entry_id from audit_ledger_cursor where id = 1`;

/**
 * The first of the project's movements that the sealer passed but that has no link: written
 * around the chain, or its link deleted. `chained` are the movements' entry ids the verification
 * found linked; `since` the time of the oldest entry still chained after a retention checkpoint
 * (retention removes older links, never the ledger's rows).
 */
export async function findUnchainedMovement(
  db: Executor,
  source: AuditLedgerSource,
  projectId: string,
  chained: ReadonlySet<string>,
  since: string | undefined,
): Promise<string | undefined> {
  const cursor = await ledgerCursor(db);
  const ids = await source.sealedIds(db, projectId, cursor, since);
  return ids.find((id) => !chained.has(id));
}

/**
 * SQLite: the last ledger rowid written before migration 0025, whose movements have rows of
 * `audit_log` (the source reads only the ones after it). 0 on PostgreSQL, where `txid` tells them apart.
 */
export async function ledgerCursorStart(db: Executor): Promise<number> {
  return (await ledgerCursor(db)).start;
}

/**
 * `store.linksWithEntries`, with the entries that are movements read from the ledger filled in
 * (`movement` true for them); an entry found in neither is gone.
 */
export async function linksWithAllEntries(
  db: Executor,
  ledger: AuditLedgerSource,
  projectId: string,
  afterSeq: number,
  limit: number,
): Promise<{ link: store.ChainLink; entry: store.AuditRow | undefined; movement: boolean }[]> {
  const page = await store.linksWithEntries(db, projectId, afterSeq, limit);
  const missing = page.filter((item) => item.entry === undefined).map((item) => item.link.entry_id);
  const movements = new Map((await ledger.entries(db, projectId, missing)).map((row) => [row.id, row]));
  return page.map(({ link, entry }) => {
    const movement = entry === undefined ? movements.get(link.entry_id) : undefined;
    return { link, entry: entry ?? movement, movement: movement !== undefined };
  });
}
