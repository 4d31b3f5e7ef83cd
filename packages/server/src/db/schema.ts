/**
 * Table types, shared by both dialects. Times are ISO 8601 UTC text (sortable, identical on SQLite
 * and PostgreSQL); money and counters are 64-bit integers read back as JavaScript numbers (see
 * `db/database.ts`); JSON documents are text. See docs/adr/0001-one-schema-two-dialects.md.
 */
export interface Database {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
}

export interface ProjectsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string | null;
  /** SHA-256 (hex) of the whole secret key; the key itself is never stored. */
  key_hash: string;
  /** `svc_sk_` and the first four characters after it, for display. */
  prefix: string;
  last4: string;
  created_at: string;
  revoked_at: string | null;
}

export interface IdempotencyKeysTable {
  project_id: string;
  /** '' for project-wide keys; a wallet id for credits and debits, whose keys are per wallet. */
  scope: string;
  key: string;
  /** SHA-256 of the method, route and canonical body: equal requests have equal hashes. */
  request_hash: string;
  /** JSON object of field name → SHA-256 of that field's value, to name the field that differs. */
  request_fields: string;
  state: 'running' | 'completed';
  /** Random token of the request that holds the key while it runs. */
  lock_id: string | null;
  /** A running key whose lock has passed this time was abandoned (crash) and may be taken over. */
  locked_until: string | null;
  response_status: number | null;
  response_body: string | null;
  created_at: string;
  /** Null for keys kept forever (ledger operations). */
  expires_at: string | null;
}
