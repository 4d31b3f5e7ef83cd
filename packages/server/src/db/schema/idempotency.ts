/** The idempotency keys of requests (http/idempotency.ts) and of ledger operations (modules/wallets), docs/adr/0004-idempotency.md. */
export interface IdempotencyDatabase {
  idempotency_keys: IdempotencyKeysTable;
}

export interface IdempotencyKeysTable {
  project_id: string;
  /** '' for project-wide keys; a wallet id for credits and debits, whose keys are per wallet. */
  scope: string;
  key: string;
  /**
   * SHA-256 of the method, route and canonical body: equal requests have equal hashes. `sealed` for
   * keys claimed by the HTTP hook: their hashes are inside `request_fields`, since a body may hold a
   * password whose plain SHA-256 must not be stored.
   */
  request_hash: string;
  /**
   * JSON object of field name → SHA-256 of that field's value, to name the field that differs. For
   * keys claimed by the HTTP hook, `{hash, fields}` sealed with the associated data
   * `idempotency_request:["<project id>","<scope>","<key>"]`.
   */
  request_fields: string;
  state: 'running' | 'completed';
  /** Random token of the request that holds the key while it runs. */
  lock_id: string | null;
  /** A running key whose lock has passed this time was abandoned (crash) and may be taken over. */
  locked_until: string | null;
  response_status: number | null;
  /**
   * The response for replay. Sealed (lib/secret-box.ts, associated data
   * `idempotency_response:["<project id>","<scope>","<key>"]`) for every key claimed by the HTTP hook
   * (http/idempotency.ts), since a response may carry a credential; in clear for the ledger's own
   * keys, whose answers carry none (docs/adr/0015-secrets-at-rest.md).
   */
  response_body: string | null;
  created_at: string;
  /** Null for keys kept forever (ledger operations). */
  expires_at: string | null;
}
