import type { Db } from '../../db/database.js';
import { listOf, startPage } from '../../db/pagination.js';
import { outsideRequestTransaction } from '../../db/request-transaction.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import { type Clock, isoTime, parseTimeParam } from '../../lib/clock.js';
import { canonicalJson } from '../../lib/crypto.js';
import { ApiError, isApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { type AuditAction, isAuditAction } from './audit.actions.js';
import { appendEntries, sealProject, verifyProject, type VerifyReport } from './audit.chain.js';
import { type AuditActor, type AuditContext, actorColumns, actorFromColumns } from './audit.context.js';
import { type AuditLedgerSource, mergeNewestFirst, mergeOldestFirst } from './audit.ledger.js';
import type { AuditEntry, AuditList, ExportAuditQuery, ListAuditQuery } from './audit.schemas.js';
import * as reads from './audit.reads.js';
import * as store from './audit.store.js';

// The audit module's public surface for other modules: the request's context and the action names.
export { actorColumns, actorFromColumns, type AuditActor, type AuditContext, auditContext, SYSTEM_AUDIT_CONTEXT } from './audit.context.js';
export type { AuditAction } from './audit.actions.js';
export {
  type AuditLedgerSource,
  ledgerCursorStart,
  ledgerEntryId,
  ledgerTransactionId,
  type LedgerPosition,
  mergeNewestFirst,
  mergeOldestFirst,
  type PendingMovement,
} from './audit.ledger.js';
export type { ExportFilter, ListFilter } from './audit.reads.js';
export type { AuditRow } from './audit.store.js';

/** A value of an entry's `changes`: small and flat, never a secret. */
export type AuditValue = string | number | boolean | null;

/** What a module records about one request or event; the context adds who and from where. */
export interface AuditRecord {
  readonly projectId: string;
  readonly action: AuditAction;
  readonly resource: { readonly type: string; readonly id: string | null };
  /** `success` (the default) or the error code of a refusal. */
  readonly outcome?: string;
  readonly changes?: Readonly<Record<string, AuditValue>>;
  /** The time of the change, when the caller has it; the clock's now otherwise. */
  readonly createdAt?: string;
}

export interface AuditServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  /** Money movements, read from the ledger (the wallets module's `ledgerAuditSource`). */
  readonly ledger: AuditLedgerSource;
  /**
   * False writes no entries at all. Only for the benchmark's baseline (a credit without its audit
   * write); never configurable by users.
   */
  readonly recording?: boolean;
}

const EXPORT_PAGE_SIZE = 500;

/** A refusal: a 4xx from the catalog, which the audit log records with its code. */
export function isRefusal(error: unknown): error is ApiError {
  return isApiError(error) && error.status < 500;
}

/**
 * The audit log (docs/adr/0007-audit-log.md): modules record entries with `record`, in the
 * transaction of the change; refusals whose transaction rolled back are recorded on their own.
 * Reading, export and the hash chain's sealing and verification are here too.
 */
export class AuditService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #recording: boolean;
  readonly #ledger: AuditLedgerSource;
  /** Entries recorded after the response (`recordLater`), not written yet. */
  #later: store.AuditRow[] = [];
  /** The write of `#later` under way, if any. */
  #draining: Promise<void> | undefined;
  /** Why the last write of `#later` failed, while it stays queued. */
  #drainError: Error | undefined;
  /** Refusals already recorded in the transaction that refused them, so `recordingRefusals` does not record them twice. */
  readonly #recorded = new WeakSet<object>();

  constructor(options: AuditServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#recording = options.recording ?? true;
    this.#ledger = options.ledger;
  }

  /** The ledger's movements as entries (the chain's sealing and verification read them too). */
  get ledger(): AuditLedgerSource {
    return this.#ledger;
  }

  /** False only in the benchmark's baseline; the ledger's one-statement writes check it. */
  get recording(): boolean {
    return this.#recording;
  }

  /** Records one entry in the caller's transaction: it exists if and only if the change commits. */
  async record(trx: Transaction, context: AuditContext, record: AuditRecord): Promise<void> {
    if (!this.#recording) return;
    await appendEntries(this.#db, trx, [this.row(context, record)]);
  }

  /** Records entries built with `row` (and only such rows) in the caller's transaction, in one write. */
  async recordRows(trx: Transaction, rows: readonly store.AuditRow[]): Promise<void> {
    if (!this.#recording || rows.length === 0) return;
    await appendEntries(this.#db, trx, rows);
  }

  /** Records an entry built with `row` (and only such a row) in the caller's transaction, when the row had to be known first. */
  async recordRow(trx: Transaction, row: store.AuditRow): Promise<void> {
    if (!this.#recording) return;
    await appendEntries(this.#db, trx, [row]);
  }

  /** Records one entry in a transaction of its own: a refusal whose change rolled back, or an event with no transaction. */
  async recordAlone(context: AuditContext, record: AuditRecord): Promise<void> {
    if (!this.#recording) return;
    await inTransaction(this.#db, (trx) => appendEntries(this.#db, trx, [this.row(context, record)]));
  }

  /**
   * Records entries after the caller's response, off its write path: queued now, written together
   * in a transaction of their own on a later turn of the event loop (the ledger's refusals, docs/adr/0019-audit-reads-the-ledger.md).
   * Reads of the log (`list`, `get`, `exportLines`, `seal`) wait for what is queued first, so a
   * client that reads the log after its refused request finds the refusal.
   */
  recordLater(context: AuditContext, records: readonly AuditRecord[]): void {
    if (!this.#recording || records.length === 0) return;
    for (const record of records) this.#later.push(this.row(context, record));
    this.#scheduleDrain();
  }

  /**
   * Waits until every entry queued by `recordLater` is written (reads, shutdown, tests). Throws
   * the write's error when the database could not take them (they stay queued for the next try).
   */
  async settled(): Promise<void> {
    if (this.#later.length > 0) this.#scheduleDrain();
    while (this.#draining !== undefined) await this.#draining;
    if (this.#later.length > 0 && this.#drainError !== undefined) throw this.#drainError;
  }

  #scheduleDrain(): void {
    // Written for the whole process, after the answer: never inside the request transaction of
    // whichever request queued first (db/request-transaction.ts).
    this.#draining ??= outsideRequestTransaction(() => new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#drain()));
  }

  /** Writes what is queued, in one transaction per pass; never rejects (nobody may be waiting). */
  async #drain(): Promise<void> {
    try {
      while (this.#later.length > 0) {
        const rows = this.#later;
        this.#later = [];
        try {
          await inTransaction(this.#db, (trx) => appendEntries(this.#db, trx, rows));
          this.#drainError = undefined;
        } catch (error) {
          // Not lost on a passing failure: put back, tried again by the next refusal or read.
          this.#later = [...rows, ...this.#later];
          this.#drainError = error instanceof Error ? error : new Error(String(error));
          return;
        }
      }
    } finally {
      this.#draining = undefined;
    }
  }

  /**
   * Runs `change`; when it throws a refusal (a 4xx), records `refused` with the refusal's code as
   * the outcome, on its own (the change's transaction rolled back), and throws the refusal on.
   * `change` records its own entry when it succeeds, so each request leaves exactly one.
   */
  async recordingRefusals<T>(context: AuditContext, refused: AuditRecord | (() => AuditRecord), change: () => Promise<T>): Promise<T> {
    try {
      return await change();
    } catch (error) {
      if (isRefusal(error) && !this.#recorded.has(error)) {
        await this.recordAlone(context, { ...(typeof refused === 'function' ? refused() : refused), outcome: error.code });
      }
      throw error;
    }
  }

  /** Marks a refusal whose entry was committed with the transaction that refused it; returns it. */
  markRecorded<E extends object>(error: E): E {
    this.#recorded.add(error);
    return error;
  }

  /** The stored row of an entry; the ledger writes it inside its own statements with this. */
  row(context: AuditContext, record: AuditRecord): store.AuditRow {
    return {
      id: newId('aud'),
      project_id: record.projectId,
      created_at: record.createdAt ?? isoTime(this.#clock.now()),
      action: record.action,
      ...actorColumns(context.actor),
      resource_type: record.resource.type,
      resource_id: record.resource.id,
      request_id: context.requestId,
      ip: context.ip,
      user_agent: context.userAgent,
      outcome: record.outcome ?? 'success',
      // Canonical (sorted keys): the SQLite write path hashes this text as it is (audit.chain.ts).
      changes: canonicalJson(record.changes ?? {}),
    };
  }

  async list(projectId: string, query: ListAuditQuery): Promise<AuditList> {
    if (query.action !== undefined && !isAuditAction(query.action)) {
      throw new ApiError('parameter_invalid', `Unknown audit action "${query.action}".`, { param: 'action' });
    }
    await this.settled();
    const page = await startPage(query, {
      find: (id) => this.#find(projectId, id),
      missing: (id) => `No audit log entry ${id} to start after.`,
    });
    const filter: reads.ListFilter = {
      action: query.action,
      actorId: query.actor_id,
      resourceId: query.resource_id,
      since: normalizedTime(query.since, 'since'),
      until: normalizedTime(query.until, 'until'),
      after: page.after,
      limit: page.rowsToRead,
    };
    const [entries, movements] = await Promise.all([
      reads.listEntries(this.#db.kysely, projectId, filter),
      this.#ledger.list(projectId, filter).then((rows) => this.#withLinks(projectId, rows)),
    ]);
    return listOf(mergeNewestFirst(entries, movements, page.rowsToRead), page.limit, toAuditEntry);
  }

  async get(projectId: string, entryId: string): Promise<AuditEntry> {
    await this.settled();
    const row = await this.#find(projectId, entryId);
    if (row === undefined) throw new ApiError('resource_missing', `No audit log entry ${entryId}.`, { param: 'id' });
    return toAuditEntry(row);
  }

  /**
   * The project's entries oldest first, as JSON lines, read a page at a time as the consumer pulls.
   * The query is checked here, before the first line, so a bad one is a 400 and not a cut stream.
   */
  exportLines(projectId: string, query: ExportAuditQuery): AsyncGenerator<string> {
    const since = normalizedTime(query.since, 'since');
    const until = normalizedTime(query.until, 'until');
    const db = this.#db.kysely;
    const ledger = this.#ledger;
    const withLinks = (rows: store.AuditRow[]) => this.#withLinks(projectId, rows);
    const settled = () => this.settled();
    return (async function* pages() {
      await settled();
      let after: store.AuditRow | undefined;
      for (;;) {
        const filter = { since, until, after, limit: EXPORT_PAGE_SIZE };
        const [entries, movements] = await Promise.all([
          reads.exportPage(db, projectId, filter),
          ledger.exportPage(projectId, filter).then(withLinks),
        ]);
        const rows = mergeOldestFirst(entries, movements, EXPORT_PAGE_SIZE);
        if (rows.length > 0) yield rows.map((row) => `${JSON.stringify(toAuditEntry(row))}\n`).join('');
        if (rows.length < EXPORT_PAGE_SIZE) return;
        after = rows[rows.length - 1];
      }
    })();
  }

  /** An entry of `audit_log`, or else a movement read from the ledger. */
  async #find(projectId: string, entryId: string): Promise<store.AuditRowWithLink | undefined> {
    const entry = await reads.findEntry(this.#db.kysely, projectId, entryId);
    if (entry !== undefined) return entry;
    const movement = await this.#ledger.find(projectId, entryId);
    return movement === undefined ? undefined : (await this.#withLinks(projectId, [movement]))[0];
  }

  /** Movements read from the ledger with their links of the chain (null until sealed). */
  async #withLinks(projectId: string, rows: store.AuditRow[]): Promise<store.AuditRowWithLink[]> {
    const links = await reads.linksOf(
      this.#db.kysely,
      this.#db.dialect,
      projectId,
      rows.map((row) => row.id),
    );
    return rows.map((row) => ({ ...row, hash: links.get(row.id)?.hash ?? null, prev_hash: links.get(row.id)?.prev_hash ?? null }));
  }

  /**
   * Chains the project's unsealed entries now, and on PostgreSQL every project's entries committed
   * before the call (waiting up to 10 s for transactions still running); returns how many.
   */
  async seal(projectId: string): Promise<number> {
    await this.settled();
    return sealProject(this.#db, this.#ledger, projectId, () => isoTime(this.#clock.now()));
  }

  /** Seals what is waiting, then recomputes the whole chain (`svc audit verify`). */
  async verify(projectId: string): Promise<VerifyReport> {
    await this.seal(projectId);
    return verifyProject(this.#db, this.#ledger, projectId);
  }
}

/** `since` and `until` compared as stored text: ISO 8601 UTC with milliseconds. */
function normalizedTime(value: string | undefined, param: string): string | undefined {
  if (value === undefined) return undefined;
  return isoTime(new Date(parseTimeParam(value, param)));
}

export function toAuditEntry(row: store.AuditRowWithLink): AuditEntry {
  const actor: AuditActor = actorFromColumns(row);
  return {
    id: row.id,
    object: 'audit_log',
    created_at: row.created_at,
    action: row.action,
    actor,
    resource: { type: row.resource_type, id: row.resource_id },
    request_id: row.request_id,
    ip: row.ip,
    user_agent: row.user_agent,
    outcome: row.outcome,
    changes: JSON.parse(row.changes) as Record<string, AuditValue>,
    hash: row.hash,
    prev_hash: row.prev_hash,
  };
}
