import type { Db } from '../../db/database.js';
import { inTransaction, type Transaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { canonicalJson } from '../../lib/crypto.js';
import { ApiError, isApiError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { type AuditAction, isAuditAction } from './audit.actions.js';
import { appendEntries, sealProject, verifyProject, type VerifyReport } from './audit.chain.js';
import { type AuditActor, type AuditContext, actorColumns, actorFromColumns } from './audit.context.js';
import type { AuditEntry, AuditList, ExportAuditQuery, ListAuditQuery } from './audit.schemas.js';
import * as store from './audit.store.js';

// The audit module's public surface for other modules: the request's context and the action names.
export { actorColumns, actorFromColumns, type AuditActor, type AuditContext, auditContext, SYSTEM_AUDIT_CONTEXT } from './audit.context.js';
export type { AuditAction } from './audit.actions.js';

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
  /**
   * False writes no entries at all. Only for the benchmark's baseline (a credit without its audit
   * write); never configurable by users.
   */
  readonly recording?: boolean;
}

const LIST_LIMIT_DEFAULT = 20;
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
  /** Refusals already recorded in the transaction that refused them, so `recordingRefusals` does not record them twice. */
  readonly #recorded = new WeakSet<object>();

  constructor(options: AuditServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#recording = options.recording ?? true;
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
    let after: store.AuditRow | undefined;
    if (query.starting_after !== undefined) {
      after = await store.findEntry(this.#db.kysely, projectId, query.starting_after);
      if (after === undefined) {
        throw new ApiError('resource_missing', `No audit log entry ${query.starting_after} to start after.`, { param: 'starting_after' });
      }
    }
    const limit = query.limit ?? LIST_LIMIT_DEFAULT;
    const rows = await store.listEntries(this.#db.kysely, projectId, {
      action: query.action,
      actorId: query.actor_id,
      resourceId: query.resource_id,
      since: normalizedTime(query.since, 'since'),
      until: normalizedTime(query.until, 'until'),
      after,
      limit: limit + 1,
    });
    return { object: 'list', data: rows.slice(0, limit).map(toAuditEntry), has_more: rows.length > limit };
  }

  async get(projectId: string, entryId: string): Promise<AuditEntry> {
    const row = await store.findEntry(this.#db.kysely, projectId, entryId);
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
    return (async function* pages() {
      let after: store.AuditRow | undefined;
      for (;;) {
        const rows = await store.exportPage(db, projectId, { since, until, after, limit: EXPORT_PAGE_SIZE });
        if (rows.length > 0) yield rows.map((row) => `${JSON.stringify(toAuditEntry(row))}\n`).join('');
        if (rows.length < EXPORT_PAGE_SIZE) return;
        after = rows[rows.length - 1];
      }
    })();
  }

  /**
   * Chains the project's unsealed entries now, and on PostgreSQL every project's entries committed
   * before the call (waiting up to 10 s for transactions still running); returns how many.
   */
  async seal(projectId: string): Promise<number> {
    return sealProject(this.#db, projectId, () => isoTime(this.#clock.now()));
  }

  /** Seals what is waiting, then recomputes the whole chain (`svc audit verify`). */
  async verify(projectId: string): Promise<VerifyReport> {
    await this.seal(projectId);
    return verifyProject(this.#db, projectId);
  }
}

/** `since` and `until` compared as stored text: ISO 8601 UTC with milliseconds. */
function normalizedTime(value: string | undefined, param: string): string | undefined {
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new ApiError('parameter_invalid', `${param} must be an ISO 8601 time.`, { param });
  return isoTime(new Date(time));
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
