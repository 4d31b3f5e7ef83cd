import type { Db, SqliteStatements } from '../../db/database.js';
import { inTransaction, isUniqueViolation, type Transaction } from '../../db/transaction.js';
import { canonicalJson, sha256Hex } from '../../lib/crypto.js';
import { type AuditLedgerSource, findUnchainedMovement, linksWithAllEntries, sealLedger } from './audit.ledger.js';
import * as store from './audit.store.js';

/** The `prev_hash` of a project's first link. */
export const GENESIS_HASH = '0'.repeat(64);
/** Entries chained per sealing transaction at the most, so a pass never holds the write lock for long. */
export const SEAL_BATCH_MAX = 1000;
/** Sealing transactions per project and pass at the most. */
const SEAL_BATCHES_PER_PROJECT_MAX = 20;
/** Tries of a sealing transaction that lost a race for the next link to another sealer. */
const SEAL_ATTEMPTS_MAX = 5;
const VERIFY_PAGE_SIZE = 1000;

/**
 * What is hashed of an entry: every stored column, in a fixed order, and `changes` with its keys
 * sorted, so the same content hashes alike whatever JSON text a dialect or a statement wrote.
 */
export function entryContent(row: store.AuditRow): string {
  let changes: unknown;
  try {
    changes = JSON.parse(row.changes);
  } catch {
    changes = row.changes;
  }
  return contentWithChanges(row, canonicalJson(changes));
}

/**
 * `canonicalJson` of the columns and then `changes` (given as canonical JSON): the columns are
 * strings or null, so plain JSON of them is canonical already.
 */
function contentWithChanges(row: store.AuditRow, changesJson: string): string {
  const columns = JSON.stringify(store.columnValues(row));
  return `${columns.slice(0, -1)},${changesJson}]`;
}

/** SHA-256 (hex) of the previous link's hash and this entry's content. */
export function linkHash(prevHash: string, row: store.AuditRow): string {
  return sha256Hex(`${prevHash}\n${entryContent(row)}`);
}

/** `linkHash` of a row made by `AuditService.row`, whose `changes` is canonical JSON already: no parse on the write path. */
function writtenLinkHash(prevHash: string, row: store.AuditRow): string {
  return sha256Hex(`${prevHash}\n${contentWithChanges(row, row.changes)}`);
}

/**
 * Appends entries in the caller's transaction, each chained at once on SQLite and left to the
 * sealer on PostgreSQL. On SQLite every transaction holds the only write lock from its `BEGIN IMMEDIATE`,
 * so the chain head read in it is the head the entry's link follows, and chaining on the
 * write path costs a read of a hot page and a hash instead of a second pass. On PostgreSQL
 * transactions of one project run side by side, and a chain head read in each would serialize them
 * all; the sealer chains their entries a second later, in the order of the transactions that wrote
 * them (`sealPending`).
 */
export async function appendEntries(db: Db, trx: Transaction, rows: readonly store.AuditRow[]): Promise<void> {
  if (db.sqlite === undefined) return store.insertEntries(trx, rows);
  // `trx` holds the one connection unless it is the database itself (the pool, not a request's
  // transaction), which would run each statement in whatever transaction another caller has open:
  // go through it then.
  if (trx === (db.base ?? db.kysely)) return inTransaction(db, (inner) => appendEntries(db, inner, rows));
  for (const row of rows) appendChainedSqlite(db.sqlite, row);
}

/**
 * SQLite: one entry of `AuditService.row` (its `changes` canonical JSON already) and its link onto
 * the head of its project's chain, in the transaction open on the connection, which holds the
 * database's write lock. `appendEntries`' write path, and the benchmark's floor (bench/floor-server.js).
 */
export function appendChainedSqlite(sqlite: SqliteStatements, row: store.AuditRow): void {
  const head = store.sqliteChainHead(sqlite, row.project_id);
  const prevHash = head?.hash ?? GENESIS_HASH;
  store.insertChainedEntry(sqlite, row, {
    project_id: row.project_id,
    seq: (head?.seq ?? 0) + 1,
    entry_id: row.id,
    prev_hash: prevHash,
    hash: writtenLinkHash(prevHash, row),
    sealed_at: row.created_at,
  });
}

/**
 * Chains what waits for a project: its entries in `audit_unsealed` (written by a version before
 * migration 0013, or on SQLite by one that did not chain at once), then on PostgreSQL every pending
 * entry (of every project) whose transaction committed before this call, waiting up to
 * SEAL_WAIT_MAX_MS for transactions still running. `svc audit verify` and the tests call it.
 * Returns how many entries were chained.
 */
export async function sealProject(db: Db, ledger: AuditLedgerSource, projectId: string, now: () => string): Promise<number> {
  let sealed = await sealQueued(db, projectId, now);
  if (db.dialect === 'postgres') sealed += await sealPendingAfter(db, await store.newTransactionId(db.kysely), now);
  // After the entries' wait above, every movement committed before the call has ended too.
  return sealed + (await sealLedger(db, ledger, now, linkHash, GENESIS_HASH));
}

/**
 * The head of a project's chain, or else its checkpoint, in the caller's transaction (on SQLite
 * the one connection's, as in `appendEntries`).
 */
async function chainHeadIn(db: Db, trx: Transaction, projectId: string): Promise<Pick<store.ChainLink, 'seq' | 'hash'> | undefined> {
  if (db.sqlite !== undefined) return store.sqliteChainHead(db.sqlite, projectId);
  return (await store.chainHeads(trx, [projectId])).get(projectId);
}

/** Seals everything waiting, once, without waiting for running transactions (the periodic job). */
export async function sealAll(db: Db, ledger: AuditLedgerSource, now: () => string): Promise<number> {
  let sealed = 0;
  for (const projectId of await store.projectsWithUnsealed(db.kysely, 1000)) sealed += await sealQueued(db, projectId, now);
  if (db.dialect === 'postgres') sealed += (await sealPending(db, now)).sealed;
  return sealed + (await sealLedger(db, ledger, now, linkHash, GENESIS_HASH));
}

/** How long an explicit seal waits for transactions that were running when it was called. */
const SEAL_WAIT_MAX_MS = 10_000;
const SEAL_WAIT_STEP_MS = 10;

/**
 * Seals until every transaction up to `target` has ended and its entries are chained, or until
 * SEAL_WAIT_MAX_MS have passed (entries of a transaction still running then stay pending).
 */
async function sealPendingAfter(db: Db, target: number, now: () => string): Promise<number> {
  const deadline = Date.now() + SEAL_WAIT_MAX_MS;
  let sealed = 0;
  for (;;) {
    const pass = await sealPending(db, now);
    sealed += pass.sealed;
    // A pass cut short by its batch limit left entries behind, whatever the oldest running id.
    if ((pass.complete && pass.running > target) || Date.now() >= deadline) return sealed;
    await new Promise((resolve) => setTimeout(resolve, SEAL_WAIT_STEP_MS));
  }
}

/**
 * PostgreSQL: chains the entries after the sealing cursor whose transactions have ended, in the
 * order (txid, id), each onto its project's chain, and moves the cursor past them; a batch per
 * transaction. The cursor's row lock makes sealers take turns. No entry can commit behind the
 * cursor: an entry is sealed only once its transaction id is below the oldest one still running,
 * so every transaction that could still write one below it has ended. Returns the entries sealed,
 * the oldest running transaction id of the last batch, and whether the pass sealed all it could
 * (false when SEAL_BATCHES_PER_PASS_MAX cut it short).
 */
async function sealPending(db: Db, now: () => string): Promise<{ sealed: number; running: number; complete: boolean }> {
  let sealed = 0;
  for (let batch = 0; ; batch += 1) {
    const outcome = await retryingLostRaces(() =>
      inTransaction(db, async (trx) => {
        const cursor = await store.lockSealCursor(trx);
        const entries = await store.pendingEntries(trx, cursor, SEAL_BATCH_MAX);
        const last = entries[entries.length - 1];
        if (last === undefined) return { count: 0, running: cursor.running };
        const heads = await store.chainHeads(trx, [...new Set(entries.map((entry) => entry.project_id))]);
        const sealedAt = now();
        const links: store.ChainLink[] = [];
        for (const entry of entries) {
          const head = heads.get(entry.project_id);
          const seq = (head?.seq ?? 0) + 1;
          const prevHash = head?.hash ?? GENESIS_HASH;
          const hash = linkHash(prevHash, entry);
          links.push({ project_id: entry.project_id, seq, entry_id: entry.id, prev_hash: prevHash, hash, sealed_at: sealedAt });
          heads.set(entry.project_id, { seq, hash });
        }
        await store.insertLinks(trx, links, db.dialect);
        await store.moveSealCursor(trx, { txid: last.txid, entryId: last.id });
        return { count: entries.length, running: cursor.running };
      }),
    );
    sealed += outcome.count;
    const complete = outcome.count < SEAL_BATCH_MAX;
    if (complete || batch + 1 >= SEAL_BATCHES_PER_PASS_MAX) return { sealed, running: outcome.running, complete };
  }
}

/** Sealing transactions per pass at the most, so one pass of the job is bounded. */
const SEAL_BATCHES_PER_PASS_MAX = 20;

/**
 * Chains a project's entries queued in `audit_unsealed`, in queue order, onto its chain. Each batch
 * is one transaction that appends the links and empties their queue rows. Returns how many entries
 * were sealed.
 */
async function sealQueued(db: Db, projectId: string, now: () => string): Promise<number> {
  let sealed = 0;
  for (let batch = 0; batch < SEAL_BATCHES_PER_PROJECT_MAX; batch += 1) {
    const count = await retryingLostRaces(() => sealQueuedBatch(db, projectId, now));
    sealed += count;
    if (count < SEAL_BATCH_MAX) break;
  }
  return sealed;
}

/**
 * Two sealers of one project (the queue's and the pending one, or two processes' queue sealers)
 * both read the same head; the primary key (project_id, seq) lets only one append, and the other
 * tries again from the new head.
 */
async function retryingLostRaces<T>(seal: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await seal();
    } catch (error) {
      if (attempt < SEAL_ATTEMPTS_MAX && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

async function sealQueuedBatch(db: Db, projectId: string, now: () => string): Promise<number> {
  return inTransaction(db, async (trx) => {
    const queued = await store.unsealedEntries(trx, projectId, SEAL_BATCH_MAX);
    if (queued.length === 0) return 0;
    const head = await chainHeadIn(db, trx, projectId);
    let seq = head === undefined ? 0 : head.seq;
    let prevHash = head?.hash ?? GENESIS_HASH;
    const sealedAt = now();
    const links: store.ChainLink[] = [];
    for (const { entry, ordered } of queued) {
      // A queued entry whose row is gone was deleted around the log; verification finds no
      // link for it, and there is nothing left to chain. One with a transaction id (written by an
      // older version beside a newer one) is the pending sealer's, in transaction order.
      if (entry === undefined || ordered) continue;
      seq += 1;
      const hash = linkHash(prevHash, entry);
      links.push({ project_id: projectId, seq, entry_id: entry.id, prev_hash: prevHash, hash, sealed_at: sealedAt });
      prevHash = hash;
    }
    await store.insertLinks(trx, links, db.dialect);
    await store.deleteUnsealed(
      trx,
      projectId,
      queued.map((item) => item.queueSeq),
      db.dialect,
    );
    return links.length;
  });
}

export type BrokenLinkProblem = 'entry_altered' | 'entry_missing' | 'link_broken' | 'link_missing' | 'entry_unchained';

export interface VerifyReport {
  readonly project_id: string;
  readonly ok: boolean;
  /** Links recomputed. */
  readonly links_checked: number;
  /** Where verification started: the last link retention removed, or the start of the chain. */
  readonly checkpoint: { readonly seq: number; readonly hash: string } | null;
  /** The last link checked. */
  readonly head: { readonly seq: number; readonly hash: string } | null;
  /** The first problem found, in chain order. */
  readonly broken: {
    readonly problem: BrokenLinkProblem;
    readonly seq: number | null;
    readonly entry_id: string;
    readonly message: string;
  } | null;
}

/**
 * Recomputes a project's chain from its checkpoint (or the start) over the entries' current
 * content and reports the first link that does not hold: an entry whose content changed, an entry
 * deleted from under its link, a link whose `prev_hash` is not its predecessor's hash, a missing
 * link (a gap in `seq`), or an entry that is in the log but neither chained nor queued for sealing.
 */
export async function verifyProject(db: Db, ledger: AuditLedgerSource, projectId: string): Promise<VerifyReport> {
  const checkpoint = (await store.findCheckpoint(db.kysely, projectId)) ?? null;
  let prevHash = checkpoint?.hash ?? GENESIS_HASH;
  let lastSeq = checkpoint?.seq ?? 0;
  let checked = 0;
  const report = (broken: VerifyReport['broken']): VerifyReport => ({
    project_id: projectId,
    ok: broken === null,
    links_checked: checked,
    checkpoint,
    head: checked === 0 ? null : { seq: lastSeq, hash: prevHash },
    broken,
  });
  // The movements found linked, and (after a retention checkpoint) the time of the oldest entry
  // still chained: older movements' links may have been removed, never their ledger rows.
  const movements = new Set<string>();
  let since: string | undefined;
  for (;;) {
    const page = await linksWithAllEntries(db.kysely, ledger, projectId, lastSeq, VERIFY_PAGE_SIZE);
    for (const { link, entry, movement } of page) {
      if (checkpoint !== null && checked === 0) since = entry?.created_at;
      if (movement) movements.add(link.entry_id);
      const at = { seq: link.seq, entry_id: link.entry_id };
      if (link.seq !== lastSeq + 1) {
        return report({ problem: 'link_missing', ...at, message: `links ${lastSeq + 1} to ${link.seq - 1} are missing from the chain` });
      }
      if (link.prev_hash !== prevHash) {
        return report({ problem: 'link_broken', ...at, message: `link ${link.seq} does not follow the hash of link ${lastSeq}` });
      }
      if (entry === undefined) {
        return report({ problem: 'entry_missing', ...at, message: `entry ${link.entry_id} of link ${link.seq} was deleted` });
      }
      if (linkHash(prevHash, entry) !== link.hash) {
        return report({
          problem: 'entry_altered',
          ...at,
          message: `entry ${link.entry_id} of link ${link.seq} changed after it was sealed`,
        });
      }
      prevHash = link.hash;
      lastSeq = link.seq;
      checked += 1;
    }
    if (page.length < VERIFY_PAGE_SIZE) break;
  }
  const unchained = await store.findUnchainedEntry(db.kysely, projectId, db.dialect);
  if (unchained !== undefined) {
    return report({
      problem: 'entry_unchained',
      seq: null,
      entry_id: unchained.id,
      message: `entry ${unchained.id} is in the log but was never chained`,
    });
  }
  const movement = await findUnchainedMovement(db.kysely, ledger, projectId, movements, since);
  if (movement !== undefined) {
    return report({
      problem: 'entry_unchained',
      seq: null,
      entry_id: movement,
      message: `movement ${movement} is in the ledger, sealed, but not in the chain`,
    });
  }
  return report(null);
}

/** Links removed per retention transaction at the most. */
const RETENTION_BATCH_MAX = 1000;
/** Retention transactions per project and run at the most. */
const RETENTION_BATCHES_PER_PROJECT_MAX = 20;

export interface RetentionResult {
  readonly removed: number;
  /** A link that did not verify stopped the removal: evidence of tampering is never deleted. */
  readonly stoppedAt: { readonly projectId: string; readonly seq: number } | undefined;
}

/**
 * Removes, per project, the oldest whole prefix of sealed entries created before `cutoff`, with
 * their links, and moves the project's checkpoint to the last removed link, so verification starts
 * from its hash. Each batch recomputes its links first and stops at one that does not hold.
 * Unsealed entries are never removed (they are sealed first, at the head of the chain).
 */
export async function removeExpiredPrefix(
  db: Db,
  ledger: AuditLedgerSource,
  projectId: string,
  cutoff: string,
  now: string,
): Promise<RetentionResult> {
  let removed = 0;
  for (let batch = 0; batch < RETENTION_BATCHES_PER_PROJECT_MAX; batch += 1) {
    const outcome = await inTransaction(db, async (trx) => {
      const checkpoint = await store.findCheckpoint(trx, projectId);
      let prevHash = checkpoint?.hash ?? GENESIS_HASH;
      let lastSeq = checkpoint?.seq ?? 0;
      const entryIds: string[] = [];
      let stoppedAt: number | undefined;
      for (const { link, entry } of await linksWithAllEntries(trx, ledger, projectId, lastSeq, RETENTION_BATCH_MAX)) {
        if (entry !== undefined && entry.created_at >= cutoff) break;
        const holds =
          link.seq === lastSeq + 1 && link.prev_hash === prevHash && entry !== undefined && linkHash(prevHash, entry) === link.hash;
        if (!holds) {
          stoppedAt = link.seq;
          break;
        }
        entryIds.push(link.entry_id);
        prevHash = link.hash;
        lastSeq = link.seq;
      }
      if (entryIds.length > 0) await store.removePrefix(trx, projectId, { entryIds, lastSeq, lastHash: prevHash, now });
      return { count: entryIds.length, stoppedAt };
    });
    removed += outcome.count;
    if (outcome.stoppedAt !== undefined) return { removed, stoppedAt: { projectId, seq: outcome.stoppedAt } };
    if (outcome.count < RETENTION_BATCH_MAX) break;
  }
  return { removed, stoppedAt: undefined };
}
