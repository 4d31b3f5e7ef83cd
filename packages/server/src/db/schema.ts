import type { Generated } from 'kysely';

/**
 * Table types, shared by both dialects. Times are ISO 8601 UTC text (sortable, identical on SQLite
 * and PostgreSQL); money and counters are 64-bit integers read back as JavaScript numbers (see
 * `db/database.ts`); JSON documents are text. See docs/adr/0001-one-schema-two-dialects.md.
 */
export interface Database {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  wallets: WalletsTable;
  ledger_transactions: LedgerTransactionsTable;
  ledger_entries: LedgerEntriesTable;
  events: EventsTable;
  users: UsersTable;
  roles: RolesTable;
  sessions: SessionsTable;
  email_tokens: EmailTokensTable;
  email_outbox: EmailOutboxTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
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

export type WalletStatus = 'active' | 'frozen' | 'closed';

export interface WalletsTable {
  id: string;
  project_id: string;
  /** The owner, `usr_…`. */
  user_id: string;
  /** Three upper-case letters. */
  currency: string;
  /** Credits; always the sum of the wallet's ledger entries, 0 to 2^53 - 1 (a CHECK constraint). */
  balance: number;
  status: WalletStatus;
  /** JSON object of string → string. */
  metadata: string;
  low_balance_threshold: number | null;
  created_at: string;
  updated_at: string;
}

export type LedgerTransactionType = 'credit' | 'debit' | 'transfer';

/** One movement of credits. Append-only: never updated or deleted (database triggers refuse it). */
export interface LedgerTransactionsTable {
  id: string;
  project_id: string;
  type: LedgerTransactionType;
  currency: string;
  /** Credits moved, 1 to 10^12. */
  amount: number;
  description: string | null;
  /** JSON object of string → string. */
  metadata: string;
  /** The key the request carried, or null. */
  idempotency_key: string | null;
  /**
   * Where the key is unique: the wallet id for credits and debits (keys are per wallet), '' for
   * transfers (per project). With `idempotency_key` it is unique per project, so a key is applied
   * at most once even if the idempotency table were wrong.
   */
  idempotency_scope: string;
  /** The wallet of a credit or debit; null for transfers. */
  wallet_id: string | null;
  /** The two wallets of a transfer; null for credits and debits. */
  from_wallet_id: string | null;
  to_wallet_id: string | null;
  created_at: string;
}

/**
 * One side of a movement. The entries of a transaction sum to zero. Append-only.
 *
 * `account_id` is a wallet id, or the project's issuance account for the currency
 * (`issuance:USD`), which takes the counter-entry of every credit and debit.
 */
export interface LedgerEntriesTable {
  /** Insertion order; for one wallet it is the order in which its balance changed. */
  seq: Generated<number>;
  project_id: string;
  transaction_id: string;
  account_id: string;
  /** Signed: positive adds to the account, negative takes from it. */
  amount: number;
  /** The wallet's balance after this entry; null on the issuance account, which keeps no running balance. */
  balance_after: number | null;
  created_at: string;
}

/** The outbox: every event, written in the same transaction as the change it reports. */
export interface EventsTable {
  id: string;
  project_id: string;
  type: string;
  /** JSON object, the event's `data`. */
  data: string;
  /** Unique per event; the same on every delivery attempt, so receivers can de-duplicate. */
  idempotency_key: string;
  created_at: string;
  /**
   * Null until the delivery worker has created the event's webhook deliveries (migration
   * 0004_webhooks); writers of events leave it out.
   */
  dispatched_at: string | null;
}

export interface UsersTable {
  id: string;
  project_id: string;
  /** As given, trimmed, with the domain lower-cased: what emails are sent to and users see. */
  email: string;
  /** The whole address lower-cased: unique per project, so emails compare case-insensitively. */
  email_key: string;
  name: string;
  /** argon2id PHC string; null for users without a password (OAuth, SSO). */
  password_hash: string | null;
  email_verified_at: string | null;
  /** JSON array of role keys. */
  roles: string;
  /** JSON object of string → string. */
  metadata: string;
  banned_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Custom roles of a project; the built-in `owner`, `admin` and `member` are not stored. */
export interface RolesTable {
  project_id: string;
  key: string;
  name: string;
  /** JSON array of permission strings. */
  permissions: string;
  created_at: string;
  updated_at: string;
}

export type SessionRevokedReason =
  'logout' | 'revoked' | 'refreshed' | 'refresh_token_reuse' | 'password_reset' | 'user_banned' | 'user_deleted';

/**
 * One session. Neither the session token nor the refresh token is stored: `id` is the token's name
 * (`svc_ses_<ref>`, the part before the dot) and `token_hash` the SHA-256 of the whole token.
 */
export interface SessionsTable {
  /** `svc_ses_<ref>`. */
  id: string;
  project_id: string;
  user_id: string;
  /** SHA-256 (hex) of the whole session token. */
  token_hash: string;
  /** SHA-256 (hex) of the whole refresh token; unique. */
  refresh_token_hash: string;
  refresh_expires_at: string;
  /** The first session of the refresh chain this one descends from (its own id for a fresh log in). */
  chain_id: string;
  /** When its refresh token was used; a refresh token is single use. */
  refreshed_at: string | null;
  /** The session its refresh token was exchanged for. */
  replaced_by: string | null;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  last_used_at: string;
  revoked_at: string | null;
  revoked_reason: SessionRevokedReason | null;
}

export type EmailTokenPurpose = 'verify_email' | 'password_reset';

/** Single-use tokens sent by email. Only their SHA-256 is stored. */
export interface EmailTokensTable {
  /** SHA-256 (hex) of the token. */
  token_hash: string;
  project_id: string;
  user_id: string;
  purpose: EmailTokenPurpose;
  /** The address the token was sent to; verification verifies this address only. */
  email: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export type EmailStatus = 'pending' | 'sent' | 'failed' | 'cancelled';

/**
 * Emails to send, written in the transaction of the change that asks for them and sent after the
 * commit by the email job. A row holds no secret: a template that needs a token (verification,
 * password reset) creates it when the email is composed, just before it is sent.
 */
export interface EmailOutboxTable {
  /** `eml_…`. */
  id: string;
  project_id: string;
  template: string;
  recipient: string;
  /** JSON object the template reads, e.g. `{user_id}`. */
  data: string;
  status: EmailStatus;
  attempts: number;
  next_attempt_at: string;
  /** A worker that claimed the row holds it until this time; after it, another may take it over. */
  locked_until: string | null;
  /** The last failure, short and without secrets. */
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

/** A URL that receives the project's events (migration 0004_webhooks). */
export interface WebhookEndpointsTable {
  id: string;
  project_id: string;
  url: string;
  /** JSON array of event types, or `["*"]`. */
  events: string;
  description: string | null;
  /** 1 or 0. */
  enabled: number;
  /** `whsec_…`. Kept in clear: signing needs it. Returned only at creation and rotation. */
  secret: string;
  /** The secret before the last rotation; it signs beside the new one until `previous_secret_expires_at`. */
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One event to one endpoint. Pending rows are the delivery worker's queue. */
export interface WebhookDeliveriesTable {
  id: string;
  project_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  /** Every attempt made, scheduled or manual; the next attempt's number is this plus one. */
  attempt_count: number;
  /** Scheduled attempts made: the position in `WEBHOOK_RETRY_SCHEDULE`. */
  scheduled_attempt_count: number;
  /** When the next scheduled attempt is due; null unless pending. */
  next_attempt_at: string | null;
  /** The worker that has claimed the next attempt, until `leased_until`. */
  lease_id: string | null;
  leased_until: string | null;
  last_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookAttemptKind = 'scheduled' | 'manual';

/** One HTTP request of a delivery and what came back. */
export interface WebhookAttemptsTable {
  delivery_id: string;
  /** 1, 2, … within the delivery. */
  attempt_number: number;
  project_id: string;
  kind: WebhookAttemptKind;
  created_at: string;
  /** Null when no HTTP answer came (timeout, refused address, connection error). */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  /** The first 4 KiB of the response body, as text. */
  response_body: string | null;
}
