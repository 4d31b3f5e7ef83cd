import type { Generated } from 'kysely';

/** The audit module's tables (modules/audit): the audit log and its hash chain. */
export interface AuditDatabase {
  audit_log: AuditLogTable;
  audit_unsealed: AuditUnsealedTable;
  audit_chain: AuditChainTable;
  audit_checkpoints: AuditCheckpointsTable;
  audit_seal_cursor: AuditSealCursorTable;
  audit_ledger_cursor: AuditLedgerCursorTable;
}

/**
 * One audit entry: who (actor), did what (action) to what (resource), from where (request id, IP,
 * user agent), with what outcome. Written in the change's transaction, never updated; see
 * docs/adr/0007-audit-log.md.
 */
export interface AuditLogTable {
  id: string;
  project_id: string;
  created_at: string;
  action: string;
  /** `secret_key`, `session`, `dashboard`, `system` or `anonymous`. */
  actor_type: string;
  /** The key id (`key_…`) or the session's name (`svc_ses_<ref>`, never the token). */
  actor_id: string | null;
  /** A session's user; null for other actors. */
  actor_user_id: string | null;
  resource_type: string;
  resource_id: string | null;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  /** `success` or the error code of the refusal. */
  outcome: string;
  /** A small JSON object of what changed (amounts, balances before and after). */
  changes: string;
}

/**
 * The sealing queue of versions before migration 0013: entries not chained yet, in insertion
 * order. Nothing queues any more; what an older version left is still sealed from it.
 */
export interface AuditUnsealedTable {
  seq: Generated<number>;
  project_id: string;
  entry_id: string;
}

/** A link of a project's hash chain: `hash` = SHA-256 of `prev_hash` and the entry's content. */
export interface AuditChainTable {
  project_id: string;
  seq: number;
  entry_id: string;
  prev_hash: string;
  hash: string;
  sealed_at: string;
}

/**
 * PostgreSQL only (migration 0013): the last entry the sealer chained, in the order of
 * `audit_log.txid` (the writing transaction's id, a column default the write path never names)
 * and then `id`. One row.
 */
export interface AuditSealCursorTable {
  id: number;
  txid: number;
  entry_id: string;
}

/**
 * The last ledger transaction the sealer chained (migration 0025): on PostgreSQL in the order of
 * `ledger_transactions.txid` and then `id`; on SQLite `txid` is its rowid, and `start` the last
 * rowid written before migration 0025 (whose movements have rows of `audit_log`). One row.
 */
export interface AuditLedgerCursorTable {
  id: number;
  start: number;
  txid: number;
  entry_id: string;
}

/** The last link retention removed, per project: verification starts from its hash. */
export interface AuditCheckpointsTable {
  project_id: string;
  seq: number;
  hash: string;
  updated_at: string;
}
